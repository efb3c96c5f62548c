"""`torchmetrics.clustering` on torchtally against its oracles: scikit-learn (every score it
has, on arbitrary integer labelings, with hypothesis), SciPy's linear assignment (cluster
accuracy), a direct NumPy Dunn index, and TorchMetrics 1.9 itself (classes batch by batch and
functions), apart from the three edge cases where TorchMetrics departs from scikit-learn's
definitions (checked against scikit-learn)."""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torchmetrics.clustering as tm_classes
import torchmetrics.functional.clustering as tm_functions
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment
from sklearn import metrics as skm
from sklearn.metrics import cluster as skc

import torchtally.compat.torchmetrics as ttm
from torchtally._errors import MetricValueError
from torchtally.compat.torchmetrics import clustering as ours
from torchtally.compat.torchmetrics.functional import clustering as our_functions
from torchtally.functional import clustering as native
from torchtally.testing import assert_traceable

#: (native function, scikit-learn function of (labels_true, labels_pred))
SKLEARN_PAIRS = {
    "mutual_info_score": skm.mutual_info_score,
    "normalized_mutual_info_score": skm.normalized_mutual_info_score,
    "adjusted_mutual_info_score": skm.adjusted_mutual_info_score,
    "rand_score": skm.rand_score,
    "adjusted_rand_score": skm.adjusted_rand_score,
    "fowlkes_mallows_index": skm.fowlkes_mallows_score,
    "homogeneity_score": skm.homogeneity_score,
    "completeness_score": skm.completeness_score,
    "v_measure_score": skm.v_measure_score,
}

#: class name -> (functional name, constructor keyword arguments)
CLASSES = {
    "MutualInfoScore": ("mutual_info_score", {}),
    "NormalizedMutualInfoScore": ("normalized_mutual_info_score", {"average_method": "min"}),
    "AdjustedMutualInfoScore": ("adjusted_mutual_info_score", {"average_method": "geometric"}),
    "RandScore": ("rand_score", {}),
    "AdjustedRandScore": ("adjusted_rand_score", {}),
    "FowlkesMallowsIndex": ("fowlkes_mallows_index", {}),
    "HomogeneityScore": ("homogeneity_score", {}),
    "CompletenessScore": ("completeness_score", {}),
    "VMeasureScore": ("v_measure_score", {"beta": 2.0}),
}

labelings = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-3, 4), min_size=n, max_size=n),
        st.lists(st.sampled_from([-(2**40), -7, 0, 5, 2**33, 99]), min_size=n, max_size=n),
    )
)


def _sk(function: Any, target: list[int], preds: list[int], **kwargs: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(function(np.array(target), np.array(preds), **kwargs))


# ------------------------------------------------------------------ native vs scikit-learn


@settings(max_examples=150, deadline=None)
@given(labelings)
def test_native_scores_are_scikit_learns(pair: tuple[list[int], list[int]]) -> None:
    preds, target = pair
    p, t = torch.tensor(preds), torch.tensor(target)
    for name, reference in SKLEARN_PAIRS.items():
        got = float(getattr(native, name)(p, t))
        assert got == pytest.approx(_sk(reference, target, preds), abs=1e-12), name
    # Only one labeling with a sample per cluster: MI is its expectation, and AMI's "min"
    # normalizer is that expectation too; scikit-learn's ratio of the two roundings is any
    # number (-1, 0.5, 2, ...), torchtally's is 0 (the porting guide lists it).
    one_per_cluster = [len(set(x)) == len(x) for x in (preds, target)]
    chance_only = one_per_cluster.count(True) == 1
    for method in native.AVERAGE_METHODS:
        for name in ("normalized_mutual_info_score", "adjusted_mutual_info_score"):
            got = float(getattr(native, name)(p, t, method))
            if chance_only and name == "adjusted_mutual_info_score":
                assert got == 0.0, method
                if method == "min":
                    continue
            expected = _sk(SKLEARN_PAIRS[name], target, preds, average_method=method)
            assert got == pytest.approx(expected, abs=1e-12), (name, method)
    beta = 0.5
    assert float(native.v_measure_score(p, t, beta)) == pytest.approx(
        _sk(skm.v_measure_score, target, preds, beta=beta), abs=1e-12
    )
    np.testing.assert_array_equal(
        native.pair_confusion_matrix(p, t).numpy(), skc.pair_confusion_matrix(target, preds)
    )
    np.testing.assert_array_equal(
        native.contingency_matrix(p, t).numpy(), skc.contingency_matrix(target, preds)
    )


def test_ami_with_only_one_labeling_of_a_sample_per_cluster_is_zero() -> None:
    # the labeling hypothesis found: MI = E[MI] = min(H) = log 2 in exact arithmetic
    preds, target = torch.tensor([0, 0, 1, 1]), torch.tensor([-(2**40), -7, 0, 5])
    for method in native.AVERAGE_METHODS:
        assert float(native.adjusted_mutual_info_score(preds, target, method)) == 0.0
        assert float(native.adjusted_mutual_info_score(target, preds, method)) == 0.0
        if method != "min":  # elsewhere scikit-learn's rounding stays at 0
            expected = _sk(
                skm.adjusted_mutual_info_score,
                target.tolist(),
                preds.tolist(),
                average_method=method,
            )
            assert expected == pytest.approx(0.0, abs=1e-12)
    # its MI and expectation agree to rounding, as the claim says
    table = native.contingency_matrix(preds, target)
    mi = float(native.mutual_info_score(preds, target))
    emi = float(native.expected_mutual_info(table.sum(1), table.sum(0)))
    assert mi == pytest.approx(emi, rel=1e-12) and mi == pytest.approx(np.log(2), rel=1e-12)


def test_expected_mutual_info_blocks_agree_with_scikit_learn() -> None:
    # large clusters: the (rows x columns x counts) grid is split in several blocks
    generator = np.random.default_rng(3)
    target = generator.integers(0, 3, 6000)
    preds = generator.integers(0, 40, 6000)
    got = float(native.adjusted_mutual_info_score(torch.tensor(preds), torch.tensor(target)))
    assert got == pytest.approx(_sk(skm.adjusted_mutual_info_score, target, preds), abs=1e-10)


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 40), st.integers(1, 5), st.integers(0, 2**31 - 1))
@example(31, 1, 522)  # a score of 4795, where scikit-learn is 1.4e-6 off
def test_native_intrinsic_scores_are_scikit_learns(samples: int, features: int, seed: int) -> None:
    generator = np.random.default_rng(seed)
    data = generator.normal(size=(samples, features))
    labels = generator.integers(0, max(2, samples // 3), samples) * 11 - 3
    if not 1 < len(np.unique(labels)) < samples:
        with pytest.raises(ValueError, match="Argument `labels` must name"):
            native.calinski_harabasz_score(torch.tensor(data), torch.tensor(labels))
        return
    x, y = torch.tensor(data), torch.tensor(labels)
    assert float(native.calinski_harabasz_score(x, y)) == pytest.approx(
        skm.calinski_harabasz_score(data, labels), rel=1e-10
    )
    # scikit-learn's Euclidean distances go through dot products (about 1e-8 off for a
    # point at its centroid, relative to the score: 2.8e-10 of 4795 at samples=31, features=1,
    # seed=522, past an absolute 1e-6); ours are direct, and held to the 60-digit value
    davies_bouldin = float(native.davies_bouldin_score(x, y))
    assert davies_bouldin == pytest.approx(
        skm.davies_bouldin_score(data, labels), rel=1e-8, abs=1e-6
    )
    assert davies_bouldin == pytest.approx(_davies_bouldin_mpmath(data, labels), rel=1e-12)


def _davies_bouldin_mpmath(data: np.ndarray, labels: np.ndarray) -> float:
    """Davies-Bouldin's index in 60-digit arithmetic, written directly: the mean over clusters
    of the largest (s_i + s_j) / d(c_i, c_j), s the mean distance of a cluster's points to its
    centroid c."""
    import mpmath

    with mpmath.workdps(60):
        clusters = sorted(set(labels.tolist()))
        points = {
            c: [[mpmath.mpf(float(v)) for v in row] for row, k in zip(data, labels) if k == c]
            for c in clusters
        }
        centroids = {
            c: [sum(column) / len(points[c]) for column in zip(*points[c])] for c in clusters
        }

        def distance(a: list[Any], b: list[Any]) -> Any:
            return mpmath.sqrt(sum((u - v) ** 2 for u, v in zip(a, b)))

        spread = {
            c: sum(distance(p, centroids[c]) for p in points[c]) / len(points[c]) for c in clusters
        }
        total = sum(
            max(
                (spread[i] + spread[j]) / distance(centroids[i], centroids[j])
                for j in clusters
                if j != i
            )
            for i in clusters
        )
        return float(total / len(clusters))


def _dunn_numpy(data: np.ndarray, labels: np.ndarray, p: float) -> float:
    """Dunn's index in TorchMetrics' centroid form, written directly."""
    clusters = np.unique(labels)
    centroids = [data[labels == c].mean(0) for c in clusters]
    between = min(
        np.sum(np.abs(centroids[i] - centroids[j]) ** p) ** (1 / p)
        for i in range(len(clusters))
        for j in range(i + 1, len(clusters))
    )
    within = max(
        np.max(np.sum(np.abs(data[labels == c] - centroids[k]) ** p, axis=1) ** (1 / p))
        for k, c in enumerate(clusters)
    )
    return float(between / within)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.5])
def test_dunn_index_against_direct_numpy(p: float) -> None:
    generator = np.random.default_rng(7)
    data = generator.normal(size=(50, 3))
    labels = generator.integers(0, 4, 50) * 100
    got = float(native.dunn_index(torch.tensor(data), torch.tensor(labels), p))
    assert got == pytest.approx(_dunn_numpy(data, labels, p), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(0, 2**31 - 1))
def test_linear_assignment_is_optimal_as_scipys(size: int, seed: int) -> None:
    weights = np.random.default_rng(seed).integers(0, 30, (size, size))
    for maximize in (False, True):
        assignment = native.linear_assignment(torch.tensor(weights), maximize=maximize).numpy()
        assert sorted(assignment.tolist()) == list(range(size))  # a permutation
        rows, cols = linear_sum_assignment(weights, maximize=maximize)
        assert weights[np.arange(size), assignment].sum() == weights[rows, cols].sum()


def test_native_refuses_what_has_no_value() -> None:
    empty = torch.zeros(0, dtype=torch.long)
    with pytest.raises(ValueError, match="at least one sample"):
        native.rand_score(empty, empty)
    with pytest.raises(ValueError, match="integer cluster labels"):
        native.mutual_info_score(torch.tensor([0.0, 1.0]), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="one label per sample"):
        native.mutual_info_score(torch.tensor([0, 1, 1]), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="Argument `average_method` must be one of"):
        native.normalized_mutual_info_score(torch.tensor([0, 1]), torch.tensor([0, 1]), "mean")
    with pytest.raises(ValueError, match="at least 2 clusters"):
        native.dunn_index(torch.randn(4, 2), torch.zeros(4, dtype=torch.long))


# -------------------------------------------------------- compat vs TorchMetrics 1.9


def _same_partition(preds: torch.Tensor, target: torch.Tensor) -> bool:
    pairs = torch.stack([preds, target], 1).unique(dim=0).shape[0]
    return pairs == preds.unique().numel() == target.unique().numel()


@settings(max_examples=80, deadline=None)
@given(labelings)
def test_functions_are_torchmetrics(pair: tuple[list[int], list[int]]) -> None:
    p, t = torch.tensor(pair[0]), torch.tensor(pair[1])
    for name in SKLEARN_PAIRS:
        got, expected = getattr(our_functions, name)(p, t), getattr(tm_functions, name)(p, t)
        assert got.dtype == torch.get_default_dtype()
        if name == "v_measure_score" and float(native.homogeneity_score(p, t)) == 0.0:
            # TorchMetrics 1.9 returns 1 when homogeneity and completeness are both 0
            assert float(got) == 0.0
            continue
        single = p.unique().numel() == 1 and t.unique().numel() == 1
        if (name == "normalized_mutual_info_score" and single) or (
            name == "adjusted_mutual_info_score" and _same_partition(p, t)
        ):
            # scikit-learn's: the same partition; TorchMetrics 1.9 gives 0 for two single
            # clusters, and for a sample per cluster 0/0 (0 after its clamp)
            assert float(got) == 1.0
            continue
        torch.testing.assert_close(got, expected.to(got.dtype), atol=1e-5, rtol=1e-5)


def _batches(seed: int, n: int = 3, size: int = 20) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randint(-2, 6, (size,), generator=generator) * 1000,
            torch.randint(0, 4, (size,), generator=generator),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_classes_are_torchmetrics_batch_by_batch(name: str) -> None:
    _, kwargs = CLASSES[name]
    mine, theirs = getattr(ours, name)(**kwargs), getattr(tm_classes, name)(**kwargs)
    for preds, target in _batches(hash(name) % 1000):
        torch.testing.assert_close(mine(preds, target), theirs(preds, target), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(mine.compute(), theirs.compute(), atol=1e-5, rtol=1e-5)
    mine.reset()
    preds, target = _batches(5)[0]
    mine.update(preds, target)
    function, _ = CLASSES[name]
    expected = getattr(tm_functions, function)(preds, target, *kwargs.values())
    torch.testing.assert_close(mine.compute(), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_label_update_is_traceable(name: str) -> None:
    metric = getattr(ours, name)(capacity=64, **CLASSES[name][1])
    assert_traceable(
        metric, torch.tensor([3, 3, -1, 8]), torch.tensor([0, 1, 1, 0]), check_compute=False
    )


def test_merge_state_is_the_union_of_the_samples() -> None:
    (p1, t1), (p2, t2) = _batches(11, n=2)
    first, second, both = (
        ours.AdjustedRandScore(),
        ours.AdjustedRandScore(),
        ours.AdjustedRandScore(),
    )
    first.update(p1, t1)
    second.update(p2, t2)
    both.update(p1, t1)
    both.update(p2, t2)
    first.merge_state(second)
    expected = tm_functions.adjusted_rand_score(torch.cat([p1, p2]), torch.cat([t1, t2]))
    torch.testing.assert_close(first.compute(), expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(both.compute(), expected, atol=1e-6, rtol=1e-6)


def test_more_samples_than_capacity_raise_at_compute() -> None:
    metric = ours.RandScore(capacity=10)
    metric.update(torch.arange(8), torch.arange(8))
    metric.update(torch.arange(8), torch.arange(8))
    with pytest.raises(MetricValueError, match=r"received 16 samples .* capacity=10"):
        metric.compute()


def test_compute_of_no_samples_raises() -> None:
    metric = ours.MutualInfoScore()
    with (
        pytest.warns(UserWarning, match="before the ``update``"),
        pytest.raises(ValueError, match="at least one sample"),
    ):
        metric.compute()


def test_torchmetrics_input_errors() -> None:
    metric = ours.RandScore()
    with pytest.raises(RuntimeError, match="expected to have the same shape"):
        metric.update(torch.tensor([0, 1]), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="Expected arguments to be 1-d tensors"):
        metric.update(torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="Expected real, discrete values"):
        metric.update(torch.tensor([0.0, 1.0]), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="Expected argument `average_method` to be one of"):
        ours.NormalizedMutualInfoScore(average_method="mean")
    with pytest.raises(ValueError, match="Argument `beta` should be a positive float"):
        ours.VMeasureScore(beta=1)
    with pytest.raises(ValueError, match="Argument `num_classes` should be a positive integer"):
        ours.ClusterAccuracy(num_classes=0)
    with pytest.raises(ValueError, match="Expected 2D data"):
        ours.CalinskiHarabaszScore().update(torch.randn(4), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="Expected floating point data"):
        ours.DaviesBouldinScore().update(torch.ones(4, 2, dtype=torch.long), torch.zeros(4))


# ------------------------------------------------------------ intrinsic classes


@pytest.mark.parametrize("name", ["CalinskiHarabaszScore", "DaviesBouldinScore", "DunnIndex"])
def test_intrinsic_classes_are_torchmetrics(name: str) -> None:
    generator = torch.Generator().manual_seed(2)
    mine, theirs = getattr(ours, name)(), getattr(tm_classes, name)()
    for _ in range(3):
        data = torch.randn(30, 4, generator=generator)
        labels = torch.randint(0, 4, (30,), generator=generator) * 7
        torch.testing.assert_close(mine(data, labels), theirs(data, labels), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mine.compute(), theirs.compute(), atol=1e-4, rtol=1e-4)


def test_intrinsic_update_is_traceable() -> None:
    metric = ours.CalinskiHarabaszScore(capacity=32, data_capacity=128)
    assert_traceable(
        metric, torch.randn(6, 3), torch.tensor([0, 0, 1, 1, 2, 2]), check_compute=False
    )


def test_intrinsic_buffers_report_their_overflow_and_mixed_widths() -> None:
    metric = ours.CalinskiHarabaszScore(data_capacity=20)
    metric.update(torch.randn(8, 3), torch.arange(8) % 3)
    with pytest.raises(MetricValueError, match=r"24 data values .* data_capacity >= 24"):
        metric.compute()
    metric = ours.DunnIndex()
    metric.update(torch.randn(4, 3), torch.tensor([0, 0, 1, 1]))
    metric.update(torch.randn(4, 2), torch.tensor([0, 0, 1, 1]))
    with pytest.raises(ValueError, match="different feature counts"):
        metric.compute()


# ----------------------------------------------------------------- cluster accuracy


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 60), st.integers(0, 2**31 - 1))
def test_cluster_accuracy_is_the_best_matching(classes: int, samples: int, seed: int) -> None:
    generator = np.random.default_rng(seed)
    preds, target = generator.integers(0, classes, samples), generator.integers(0, classes, samples)
    confmat = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(confmat, (target, preds), 1)
    rows, cols = linear_sum_assignment(confmat, maximize=True)
    expected = confmat[rows, cols].sum() / samples
    metric = ours.ClusterAccuracy(classes)
    half = samples // 2
    metric.update(torch.tensor(preds[:half]), torch.tensor(target[:half]))
    metric.update(torch.tensor(preds[half:]), torch.tensor(target[half:]))
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-6)
    function = our_functions.cluster_accuracy(torch.tensor(preds), torch.tensor(target), classes)
    assert float(function) == pytest.approx(expected, abs=1e-6)


def test_cluster_accuracy_update_is_traceable_and_counts_bad_ids() -> None:
    # the matching at compute is host work on the (C, C) matrix; the update traces
    assert_traceable(
        ours.ClusterAccuracy(3),
        torch.tensor([0, 2, 1]),
        torch.tensor([1, 2, 0]),
        check_compute=False,
    )
    metric = ours.ClusterAccuracy(3)
    metric.update(torch.tensor([0, 3]), torch.tensor([0, 1]))
    with pytest.raises(MetricValueError, match=r"outside \[0, num_classes\)"):
        metric.compute()


# ------------------------------------------------------------------------ the API


def test_layout_signatures_and_constants_are_torchmetrics() -> None:
    assert sorted(ours.__all__) == sorted(tm_classes.__all__)
    assert sorted(our_functions.__all__) == sorted(tm_functions.__all__)
    for name in tm_classes.__all__:
        theirs = getattr(tm_classes, name)
        module = theirs.__module__.replace("torchmetrics.", "torchtally.compat.torchmetrics.", 1)
        assert getattr(importlib.import_module(module), name) is getattr(ours, name)
        assert issubclass(getattr(ours, name), ttm.Metric)
        for attribute in (
            "full_state_update",
            "is_differentiable",
            "higher_is_better",
            "plot_lower_bound",
            "plot_upper_bound",
            "plot_legend_name",
        ):
            assert getattr(getattr(ours, name), attribute) == getattr(theirs, attribute), (
                name,
                attribute,
            )
        expected = list(inspect.signature(theirs).parameters)
        got = list(inspect.signature(getattr(ours, name)).parameters)
        assert got[: len(expected) - 1] == expected[:-1] and got[-1] == "kwargs", name
    for name in tm_functions.__all__:
        theirs = getattr(tm_functions, name)
        module = theirs.__module__.replace("torchmetrics.", "torchtally.compat.torchmetrics.", 1)
        assert getattr(importlib.import_module(module), name) is getattr(our_functions, name)
        expected_parameters = inspect.signature(theirs).parameters
        got_parameters = inspect.signature(getattr(our_functions, name)).parameters
        assert [(p.name, p.default) for p in expected_parameters.values()] == [
            (p.name, p.default) for p in got_parameters.values()
        ], name
