"""Reliability: the machinery around the maths (pickling, held batches, merges, collections,
the compute cache, the input boundary) gives the number the plain path gives, or a clear
error that names the argument (issue 25's defect classes 1, 3-7, 9 and 10).

Every expected value is computed independently: by hand, in float64 NumPy, or by a fresh
metric fed the same data with every mechanism off.
"""

from __future__ import annotations

import copy
import pickle
import re
from collections.abc import Callable
from typing import Any

import cases_calibration
import cases_classification
import cases_core
import cases_curves
import cases_histogram
import cases_image
import cases_multilabel
import cases_ranking
import cases_retrieval
import numpy as np
import pytest
import torch
from cases import Case

from torchtally.metrics import (
    AccuracyMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MetricValueError,
    MSEMetric,
    PrecisionMetric,
    QuantileMetric,
    R2ScoreMetric,
    RecallMetric,
)

NAN, INF = float("nan"), float("inf")
CASES: list[Case] = [
    *cases_core.CASES,
    *cases_classification.CASES,
    *cases_ranking.CASES,
    *cases_retrieval.CASES,
    *cases_calibration.CASES,
    *cases_curves.CASES,
    *cases_image.CASES,
    *cases_histogram.CASES,
    *cases_multilabel.CASES,
]
BAD_CASES = [(c, b) for c in CASES for b in c.bad]
BAD_IDS = [f"{c.id}-{i}" for c in CASES for i in range(len(c.bad))]


def _state(metric: Metric) -> dict[str, torch.Tensor]:
    """Every buffer (state and bookkeeping), cloned, for before/after comparisons."""
    return {name: b.detach().clone() for name, b in metric.named_buffers()}


def _assert_same_state(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].shape == b[name].shape, name
        assert torch.equal(a[name].nan_to_num(7.5), b[name].nan_to_num(7.5)), name


# ---------------------------------------------------------------- 1: pickle round trip


@pytest.mark.parametrize(("case", "bad"), BAD_CASES, ids=BAD_IDS)
def test_bad_values_after_a_pickle_round_trip_still_raise(case: Case, bad: tuple) -> None:
    """A metric updated once (a small eager batch), pickled and restored (a multiprocessing
    hand-off, a plain-pickle checkpoint), then given bad values raises at compute, as the
    same metric without the round trip does (test_common)."""
    positional, keyword, fragment = bad
    metric = case.make()
    args, kwargs = case.batch(torch.Generator().manual_seed(1), 3)
    metric.update(*args, **kwargs)
    restored = pickle.loads(pickle.dumps(metric))
    restored.update(*positional, **keyword)
    dropped = re.fullmatch(r"(\d+) samples were dropped", fragment)
    if dropped:  # a capacity overflow: the good batch's 3 samples overflow too
        fragment = f"{int(dropped.group(1)) + 3} samples were dropped"
    with pytest.raises(MetricValueError, match=re.escape(fragment)):
        restored.compute()


@pytest.mark.parametrize(
    ("make", "good", "bad"),
    [
        (MeanMetric, (torch.tensor([1.0, 2.0]),), (torch.tensor([NAN]),)),
        (MeanMetric, (torch.tensor([1.0, 2.0]),), (torch.tensor([INF, 1.0]),)),
        (
            MSEMetric,
            (torch.tensor([1.0]), torch.tensor([2.0])),
            (torch.tensor([0.0]), torch.tensor([-INF])),
        ),
        (
            lambda: AccuracyMetric(num_classes=3),
            (torch.tensor([0, 1]), torch.tensor([[0.9, 0.0, 0.1], [0.1, 0.8, 0.1]])),
            (torch.tensor([5]), torch.tensor([[0.2, 0.3, 0.5]])),
        ),
        (
            lambda: ConfusionMatrixMetric(3),
            (torch.tensor([2]), torch.tensor([[0.0, 0.0, 1.0]])),
            (torch.tensor([-1]), torch.tensor([[1.0, 0.0, 0.0]])),
        ),
    ],
    ids=["mean-nan", "mean-inf", "mse-inf", "accuracy-label-5", "confusion-label--1"],
)
def test_pickled_metric_keeps_counting_bad_values(
    make: Callable[[], Metric], good: tuple, bad: tuple
) -> None:
    metric = make()
    metric.update(*good)
    restored = pickle.loads(pickle.dumps(metric))
    restored.update(*bad)
    with pytest.raises(MetricValueError):
        restored.compute()


# ------------------------------------------------- 3: held batches with a broadcast weight


def _weighted_mean(calls: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """MeanMetric's definition: the weight broadcast against the value, summed in float64."""
    num = den = 0.0
    for value, weight in calls:
        w = np.broadcast_to(weight, value.shape).astype(np.float64)
        num += float((w * value.astype(np.float64)).sum())
        den += float(w.sum())
    return num / den


def _broadcast_calls(kind: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(3)
    if kind == "scalar-weight-row-values":  # a 0-d weight with (1, 3) values
        return [(torch.randn(1, 3, generator=g), torch.tensor(float(i + 1))) for i in range(7)]
    # a (3,) weight with (3, 3) values, many calls
    return [(torch.randn(3, 3, generator=g), torch.rand(3, generator=g) + 0.5) for _ in range(40)]


@pytest.mark.parametrize("kind", ["scalar-weight-row-values", "vector-weight-square-values"])
def test_held_batches_with_a_broadcast_weight_give_the_plain_mean(kind: str) -> None:
    """Held (coalesced) small batches give the mean the direct path gives for the same calls;
    a call the held path cannot take may instead be refused at that call, naming `weight`.
    Either way, nothing taken is lost or changed at compute, and two reads agree."""
    calls = _broadcast_calls(kind)
    direct = MeanMetric().coalesce_updates(False)
    held = MeanMetric()  # coalescing on: the default
    taken = []
    for value, weight in calls:
        direct.update(value, weight)
        try:
            held.update(value, weight)
        except ValueError as error:  # a clear refusal at the call is allowed
            assert "`weight`" in str(error)
            continue
        taken.append((value.numpy(), weight.numpy()))
    assert float(direct.compute()) == pytest.approx(
        _weighted_mean([(v.numpy(), w.numpy()) for v, w in calls]), rel=1e-6
    )
    expected = _weighted_mean(taken) if taken else float("nan")
    first, second = float(held.compute()), float(held.compute())
    assert first == pytest.approx(expected, rel=1e-6, nan_ok=True)
    assert second == pytest.approx(expected, rel=1e-6, nan_ok=True)


def test_a_held_batch_is_not_dropped_by_a_failed_read() -> None:
    """Two reads agree: the second compute never sees fewer batches than the first, whatever
    the first did."""
    calls = _broadcast_calls("scalar-weight-row-values")
    metric = MeanMetric()
    taken = []
    for value, weight in calls:
        try:
            metric.update(value, weight)
        except ValueError:
            continue
        taken.append((value.numpy(), weight.numpy()))
    outcomes = []
    for _ in range(2):
        try:
            outcomes.append(float(metric.compute()))
        except ValueError as error:
            outcomes.append(type(error).__name__)
    expected = _weighted_mean(taken) if taken else float("nan")
    assert outcomes == [pytest.approx(expected, rel=1e-6, nan_ok=True)] * 2


# ---------------------------------------------------- 4: float32 sums that overflow float32


def test_mean_of_many_large_float32_values_is_finite() -> None:
    values = torch.full((4096,), 1e35, dtype=torch.float32)
    metric = MeanMetric()
    metric.update(values)
    expected = float(values.numpy().astype(np.float64).mean())  # 1e35 as float32, exactly
    got = float(metric.compute())
    assert np.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-6)


def test_mean_of_cancelling_float32_extremes_is_finite() -> None:
    high = torch.full((4096,), 3e38, dtype=torch.float32)
    metric = MeanMetric()
    metric.update(high)
    metric.update(-high)
    more = torch.full((8,), 2.0, dtype=torch.float32)
    metric.update(more)
    expected = float(
        np.concatenate([high.numpy(), -high.numpy(), more.numpy()]).astype(np.float64).mean()
    )
    got = float(metric.compute())
    assert np.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-12)


# ---------------------------------------------------- 5: merging another configuration


def _filled(metric: Metric, *args: torch.Tensor) -> Metric:
    metric.update(*args)
    return metric


@pytest.mark.parametrize(
    ("make_self", "make_other", "data"),
    [
        (
            lambda: R2ScoreMetric(num_outputs=3),
            lambda: R2ScoreMetric(num_outputs=1),
            lambda: (
                (torch.arange(12.0).reshape(4, 3), torch.arange(12.0).reshape(4, 3) * 0.9),
                (torch.arange(4.0), torch.arange(4.0) + 0.5),
            ),
        ),
        (
            lambda: QuantileMetric(0.0, 1.0, num_bins=8),
            lambda: QuantileMetric(0.0, 1.0, num_bins=1),
            lambda: ((torch.linspace(0, 1, 9),), (torch.linspace(0, 1, 5),)),
        ),
        (
            lambda: AUROCMetric(num_bins=10),
            lambda: AUROCMetric(num_bins=1),
            lambda: (
                (torch.tensor([0, 1, 0, 1]), torch.tensor([0.1, 0.8, 0.3, 0.6])),
                (torch.tensor([1, 0]), torch.tensor([0.7, 0.2])),
            ),
        ),
    ],
    ids=["r2-outputs-3-from-1", "quantile-bins-8-from-1", "binned-auroc-10-from-1"],
)
def test_merge_state_refuses_another_configuration(
    make_self: Callable[[], Metric], make_other: Callable[[], Metric], data: Callable[[], tuple]
) -> None:
    mine, theirs = data()
    metric = _filled(make_self(), *mine)
    other = _filled(make_other(), *theirs)
    before, value_before = _state(metric), metric.compute().clone()
    with pytest.raises(ValueError, match="others"):
        metric.merge_state(other)
    _assert_same_state(before, _state(metric))
    assert torch.equal(metric.compute().nan_to_num(7.5), value_before.nan_to_num(7.5))


# ------------------------------------- 6: a held batch is judged with the settings it came in


def test_a_held_bad_batch_raises_after_checks_are_switched_off() -> None:
    metric = MeanMetric()
    metric.update(torch.tensor([1.0]))
    metric.update(torch.tensor([NAN]))  # taken while check_values is True
    metric.check_values = False
    with pytest.raises(MetricValueError, match="non-finite"):
        metric.compute()


def test_a_held_out_of_range_label_raises_after_checks_are_switched_off() -> None:
    metric = AccuracyMetric(num_classes=3)
    metric.update(torch.tensor([0]), torch.tensor([[0.7, 0.2, 0.1]]))
    metric.update(torch.tensor([7]), torch.tensor([[0.1, 0.2, 0.7]]))
    metric.check_values = False
    with pytest.raises(MetricValueError, match="labels outside"):
        metric.compute()


# -------------------------------------- 7: a collection member also updated on its own


def _batches(seed: int, count: int, n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        labels = torch.randint(0, 3, (n,), generator=g)
        scores = torch.randn(n, 3, generator=g)
        scores[torch.arange(n), labels] += 0.7
        out.append((labels, scores))
    return out


def _plain(make: Callable[[], Metric], batches: list[tuple[torch.Tensor, ...]]) -> torch.Tensor:
    metric = make().coalesce_updates(False)
    for batch in batches:
        metric.update(*batch)
    return metric.compute()


def _macro(kind: type[Metric]) -> Callable[[], Metric]:
    return lambda: kind(3, average_type="macro")


SHARED = {
    "precision": _macro(PrecisionMetric),
    "recall": _macro(RecallMetric),
    "f1": _macro(F1ScoreMetric),
}


def test_own_updates_of_a_sharing_member_count_for_it_alone() -> None:
    together, alone = _batches(10, 3, 20), _batches(11, 2, 15)
    collection = MetricCollection({name: make() for name, make in SHARED.items()})
    for batch in together:
        collection.update(*batch)
    for batch in alone:
        collection["precision"].update(*batch)
    values = collection.compute()
    assert torch.allclose(values["precision"], _plain(SHARED["precision"], together + alone))
    assert torch.allclose(values["recall"], _plain(SHARED["recall"], together))
    assert torch.allclose(values["f1"], _plain(SHARED["f1"], together))


def test_own_updates_of_a_derived_member_count_for_it() -> None:
    together, alone = _batches(12, 3, 20), _batches(13, 2, 15)
    collection = MetricCollection(
        {"cm": ConfusionMatrixMetric(3), "precision": _macro(PrecisionMetric)()}
    )
    for batch in together:
        collection.update(*batch)
    for batch in alone:
        collection["precision"].update(*batch)
    values = collection.compute()
    assert torch.allclose(values["precision"], _plain(_macro(PrecisionMetric), together + alone))
    assert torch.equal(values["cm"], _plain(lambda: ConfusionMatrixMetric(3), together))


@pytest.mark.parametrize("reset", list(SHARED))
def test_resetting_one_member_leaves_its_siblings(reset: str) -> None:
    together = _batches(14, 3, 20)
    collection = MetricCollection({name: make() for name, make in SHARED.items()})
    for batch in together:
        collection.update(*batch)
    collection[reset].reset()
    for name, make in SHARED.items():
        value = collection[name].compute()
        if name == reset:
            assert torch.equal(value, make().compute())  # the empty value
        else:
            assert torch.allclose(value, _plain(make, together)), name


def test_a_derived_member_computed_directly_gives_its_value() -> None:
    together = _batches(15, 3, 20)
    collection = MetricCollection(
        {"cm": ConfusionMatrixMetric(3), "accuracy": AccuracyMetric(num_classes=3)}
    )
    assert "accuracy" in collection.derived
    for batch in together:
        collection.update(*batch)
    labels = torch.cat([b[0] for b in together]).numpy()
    predicted = torch.cat([b[1] for b in together]).argmax(-1).numpy()
    expected = float((labels == predicted).mean())
    assert float(collection["accuracy"].compute()) == pytest.approx(expected, rel=1e-6)
    assert float(collection.compute()["accuracy"]) == pytest.approx(expected, rel=1e-6)


def test_a_checkpoint_of_members_with_their_own_history_loads_each_one() -> None:
    """Found by the long stateful run: F1 derived from the matrix and accuracy derived from F1
    in the loading collection; filling accuracy filled F1 from the (reset) matrix before F1's
    own loaded state was judged, so F1 stayed derived and lost its error count (0.0 instead of
    the data error that F1 alone raises)."""

    def members() -> dict[str, Any]:
        return {
            "precision": PrecisionMetric(4, "macro"),
            "f1": F1ScoreMetric(4, "micro"),
            "matrix": ConfusionMatrixMetric(4),
            "accuracy": AccuracyMetric(num_classes=4),
        }

    bad = (torch.tensor([0, 4]), torch.zeros(2, 4))  # label 4 is outside [0, 4)
    saved = MetricCollection(members())
    saved["precision"].check_values = False  # it leaves the sharing
    saved.update(*bad)  # counted, raised at compute
    saved["matrix"].reset()  # used on its own
    loaded = MetricCollection(members()).persistent()
    loaded["precision"].check_values = False
    loaded.load_state_dict(saved.persistent().state_dict())
    for name, alone in members().items():
        alone.check_values = name != "precision"
        if name == "matrix":
            expected = alone.compute()  # reset: the empty value
        else:
            alone.update(*bad)
            expected = _outcome(alone.compute)
        assert _same_outcome(_outcome(loaded[name].compute), expected), name


def test_a_loaded_member_that_leads_a_group_leaves_it_before_its_own_use() -> None:
    """Found by the long stateful run: F-beta derived from the matrix and precision sharing
    F-beta's state in the loading collection. F-beta's loaded state had a history of its own
    (the matrix was reset before the save), so it stopped being derived, but it was also
    marked as out of the sharing while precision still shared its state: a merge into F-beta
    alone then changed precision (0.25 instead of 0.0)."""

    def members() -> dict[str, Any]:
        return {
            "fbeta": FBetaScoreMetric(4, beta=0.5, average_type="none"),
            "matrix": ConfusionMatrixMetric(4),
            "precision": PrecisionMetric(4, "macro"),
        }

    empty = (torch.zeros(0, dtype=torch.int64), torch.zeros(0, 4))
    saved = MetricCollection(members())
    saved.update(*empty)
    saved["matrix"].reset()  # used on its own
    saved.update(*empty)
    loaded = MetricCollection(members()).persistent()
    loaded.load_state_dict(saved.persistent().state_dict())
    other = members()["fbeta"]
    other.update(torch.tensor([1]), torch.tensor([[0.0, 1.0, 0.0, 0.0]]))
    loaded["fbeta"].merge_state(other)
    alone = members()["precision"]
    alone.update(*empty)
    alone.update(*empty)
    assert torch.equal(loaded["precision"].compute(), alone.compute())
    loaded.update(torch.tensor([2]), torch.tensor([[0.0, 0.0, 1.0, 0.0]]))
    alone.update(torch.tensor([2]), torch.tensor([[0.0, 0.0, 1.0, 0.0]]))
    assert torch.equal(loaded["precision"].compute(), alone.compute())


def _outcome(compute: Callable[[], Any]) -> Any:
    try:
        return compute()
    except MetricValueError as error:
        return type(error)


def _same_outcome(got: Any, expected: Any) -> bool:
    if isinstance(expected, type) or isinstance(got, type):
        return got is expected
    return bool(torch.equal(got, expected))


# ------------------------------------------------------------- 9: errors at the boundary


@pytest.mark.parametrize("layout", ["sparse_coo", "mkldnn"])
def test_an_unsupported_layout_is_refused_naming_the_argument(layout: str) -> None:
    dense = torch.tensor([1.0, 2.0, 3.0])
    value = dense.to_sparse() if layout == "sparse_coo" else dense.to_mkldnn()
    metric = MeanMetric()
    with pytest.raises((TypeError, ValueError), match="`value`") as error:
        metric.update(value)
        metric.compute()
    assert re.search("sparse|mkldnn|layout|dense|strided", str(error.value), re.IGNORECASE)


def test_sparse_labels_are_refused_naming_the_argument() -> None:
    metric = AccuracyMetric(num_classes=3)
    with pytest.raises((TypeError, ValueError), match="`labels`"):
        metric.update(torch.tensor([0, 1, 2]).to_sparse(), torch.eye(3))
        metric.compute()


@pytest.mark.parametrize(
    ("make", "argument"),
    [
        # 10^12 float64 cells: no machine allocates them
        (lambda: ConfusionMatrixMetric(1_000_000), "num_classes"),
        (lambda: F1ScoreMetric(10**11), "num_classes"),  # 2.4 TB of per-class counts
        (lambda: AUROCMetric(capacity=10**13), "capacity"),
    ],
    ids=["confusion-matrix-num-classes", "f1-num-classes", "auroc-capacity"],
)
def test_a_state_too_large_to_allocate_names_the_argument(
    make: Callable[[], Metric], argument: str
) -> None:
    with pytest.raises((ValueError, MemoryError, RuntimeError)) as error:
        make()
    assert f"`{argument}`" in str(error.value) or f"{argument}=" in str(error.value)


# ----------------------------------------------------- 10: compute hands out its own value


@pytest.mark.parametrize(
    ("make", "batch"),
    [
        (MeanMetric, (torch.tensor([1.0, 2.0]),)),
        (lambda: ConfusionMatrixMetric(2), (torch.tensor([0, 1]), torch.tensor([0.2, 0.9]))),
        (MSEMetric, (torch.tensor([1.0, 2.0]), torch.tensor([1.5, 2.0]))),
    ],
    ids=["mean", "confusion-matrix", "mse"],
)
def test_an_in_place_op_on_the_result_does_not_change_the_next_compute(
    make: Callable[[], Metric], batch: tuple[Any, ...]
) -> None:
    metric = make()
    metric.update(*batch)
    first = metric.compute()
    expected = first.clone()
    first.add_(1)
    assert torch.equal(metric.compute(), expected)


def test_deepcopy_and_pickle_give_the_same_value() -> None:
    """Control for class 1: the round trips themselves keep the value of good data."""
    metric = MeanMetric()
    metric.update(torch.tensor([1.0, 2.0, 4.0]))
    for restored in (copy.deepcopy(metric), pickle.loads(pickle.dumps(metric))):
        restored.update(torch.tensor([5.0]))
        assert float(restored.compute()) == 3.0


def test_a_member_derived_from_a_statistic_whose_update_refused_the_call_takes_it_alone() -> None:
    """Found by the long stateful run: labels of shape (N, 1) with index predictions of shape
    (N,): the confusion statistic refuses them, accuracy alone reshapes the predictions (as
    cstorch does) and counts them. Accuracy is derived from that statistic in the collection;
    it must still hold what it holds alone, and the statistic what it holds alone."""
    from torchtally.metrics import AccuracyMetric, ConfusionMatrixMetric, MetricCollection

    labels, predictions = torch.tensor([[0], [1], [2]]), torch.tensor([0, 1, 1])
    matrix, accuracy = ConfusionMatrixMetric(4), AccuracyMetric(num_classes=4)
    with pytest.raises(ValueError):
        matrix.update(labels, predictions)
    with pytest.warns(UserWarning, match="reshaped"):
        accuracy.update(labels, predictions)
    collection = MetricCollection(
        {"matrix": ConfusionMatrixMetric(4), "accuracy": AccuracyMetric(num_classes=4)}
    )
    assert collection.derived == {"accuracy": "matrix"}
    with pytest.raises(ValueError), pytest.warns(UserWarning, match="reshaped"):
        collection.update(labels, predictions)
    assert collection["accuracy"].num_updates == accuracy.num_updates == 1
    assert collection["matrix"].num_updates == matrix.num_updates == 0
    assert float(collection["accuracy"].compute()) == float(accuracy.compute())
    assert float(accuracy.compute()) == pytest.approx(2 / 3)  # float32, as cstorch
