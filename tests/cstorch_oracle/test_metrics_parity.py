"""Parity of torchtally's metrics with the real `cerebras.pytorch.metrics` (2.10.0), run eagerly.

Every one of Cerebras' ten metrics is fed the same random batches (weights, ignore lists,
thresholds, average types, several batches, 40+ seeds) on both sides; the values agree within
1e-6 and `compute()` returns the same type and dtype. Inputs stay where Cerebras is well
defined (no prediction equal to `num_classes`, which Cerebras silently folds into another cell).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from torch import Tensor

import torchtally.metrics as tt

SEEDS = range(48)


def _batches(seed: int, make: Callable[[torch.Generator], tuple]) -> Iterator[tuple]:
    gen = torch.Generator().manual_seed(seed)
    for _ in range(int(torch.randint(1, 4, (1,), generator=gen))):
        yield make(gen)


def _weights(gen: torch.Generator, shape: tuple[int, ...], kind: int) -> Tensor | None:
    if kind == 0:
        return None
    if kind == 1:  # masks only
        return torch.randint(0, 2, shape, generator=gen).float()
    return torch.rand(shape, generator=gen) * (torch.rand(shape, generator=gen) > 0.3)


def _assert_same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, Tensor):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        torch.testing.assert_close(
            torch.tensor(ours), torch.tensor(theirs), rtol=1e-6, atol=1e-6, equal_nan=True
        )


def _feed(ours: Any, theirs: Any, batches: Iterator[tuple], **kwargs: Any) -> None:
    for batch in batches:
        *args, weights = batch
        extra = dict(kwargs) if weights is None else {"weights": weights, **kwargs}
        ours.update(*args, **extra)
        theirs.update(*args, **extra)
    _assert_same(ours.compute(), theirs.compute())
    _assert_same(ours.compute(), theirs.compute())  # the cached value too


def _dtype(seed: int) -> dict[str, Any]:
    return {} if seed % 4 else {"dtype": (torch.float16, torch.bfloat16, torch.float64)[seed % 3]}


def _labels_predictions(gen: torch.Generator, num_classes: int, kind: int) -> tuple:
    shape = (
        int(torch.randint(1, 5, (1,), generator=gen)),
        int(torch.randint(1, 7, (1,), generator=gen)),
    )
    labels = torch.randint(0, num_classes, shape, generator=gen)
    # Skewed predictions leave some classes out entirely (absent classes are the hard case).
    predictions = torch.where(
        torch.rand(shape, generator=gen) < 0.5,
        labels,
        torch.randint(0, num_classes, shape, generator=gen),
    )
    return labels, predictions, _weights(gen, shape, kind)


@pytest.mark.parametrize("seed", SEEDS)
def test_accuracy(cs_metrics: types.ModuleType, seed: int) -> None:
    kind = seed % 3
    batches = _batches(seed, lambda g: _labels_predictions(g, 5, kind))
    _feed(tt.AccuracyMetric("acc"), cs_metrics.AccuracyMetric("acc"), batches, **_dtype(seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_fbeta(cs_metrics: types.ModuleType, seed: int) -> None:
    gen = torch.Generator().manual_seed(10_000 + seed)
    num_classes = int(torch.randint(2, 8, (1,), generator=gen))
    beta = float(torch.rand(1, generator=gen)) * 3 + 0.1
    average = ("micro", "macro")[seed % 2]
    ignore = [c for c in range(num_classes) if torch.rand(1, generator=gen) < 0.25] or None
    if ignore is not None and len(ignore) == num_classes:
        ignore = ignore[:-1]
    args = (num_classes, beta, average, ignore, "f")
    batches = _batches(seed, lambda g: (*_labels_predictions(g, num_classes, 0)[:2], None))
    _feed(tt.FBetaScoreMetric(*args), cs_metrics.FBetaScoreMetric(*args), batches, **_dtype(seed))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["MeanIOUMetric", "DiceCoefficientMetric"])
def test_overlap(cs_metrics: types.ModuleType, seed: int, name: str) -> None:
    gen = torch.Generator().manual_seed(20_000 + seed)
    num_classes = int(torch.randint(2, 8, (1,), generator=gen))
    ignore = [c for c in range(num_classes) if torch.rand(1, generator=gen) < 0.3] or None
    kind = seed % 3
    batches = _batches(seed, lambda g: _labels_predictions(g, num_classes, kind))
    ours, theirs = (
        getattr(tt, name)(num_classes, ignore, "m"),
        getattr(cs_metrics, name)(num_classes, ignore, "m"),
    )
    _feed(ours, theirs, batches, **_dtype(seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_mean_per_class_accuracy(cs_metrics: types.ModuleType, seed: int) -> None:
    gen = torch.Generator().manual_seed(30_000 + seed)
    num_classes = int(torch.randint(2, 9, (1,), generator=gen))
    kind = seed % 3
    batches = _batches(seed, lambda g: _labels_predictions(g, num_classes, kind))
    ours, theirs = (
        tt.MeanPerClassAccuracyMetric(num_classes, "m"),
        cs_metrics.MeanPerClassAccuracyMetric(num_classes, "m"),
    )
    _feed(ours, theirs, batches, **_dtype(seed))


def _mean_batch(gen: torch.Generator, kind: int) -> tuple:
    value = torch.randn(int(torch.randint(1, 6, (1,), generator=gen)), generator=gen)
    if kind == 0:
        return value, None
    weight: Any = (
        torch.rand(value.shape, generator=gen) if kind == 1 else float(torch.rand(1, generator=gen))
    )
    return value, weight


@pytest.mark.parametrize("seed", SEEDS)
def test_mean(cs_metrics: types.ModuleType, seed: int) -> None:
    ours, theirs = tt.MeanMetric("m"), cs_metrics.MeanMetric("m")
    for value, weight in _batches(seed, lambda g: _mean_batch(g, seed % 3)):
        extra = {} if weight is None else {"weight": weight}
        ours.update(value, **extra, **_dtype(seed))
        theirs.update(value, **extra, **_dtype(seed))
    _assert_same(ours.compute(), theirs.compute())


def _perplexity_batch(gen: torch.Generator, kind: int) -> tuple:
    labels = torch.randint(0, 50, (2, int(torch.randint(1, 6, (1,), generator=gen))), generator=gen)
    weights = _weights(gen, tuple(labels.shape), kind)
    loss = torch.rand((), generator=gen) * labels.numel()
    return labels, loss, weights


@pytest.mark.parametrize("seed", SEEDS)
def test_perplexity(cs_metrics: types.ModuleType, seed: int) -> None:
    batches = _batches(seed, lambda g: _perplexity_batch(g, seed % 3))
    _feed(tt.PerplexityMetric("p"), cs_metrics.PerplexityMetric("p"), batches, **_dtype(seed))


def _at_k_batch(
    gen: torch.Generator, num_classes: int, num_labels: int, kind: int, distinct: bool
) -> tuple:
    rows = int(torch.randint(1, 6, (1,), generator=gen))
    if distinct:
        order = torch.rand(rows, num_classes, generator=gen).argsort(dim=1)
        labels = order[:, : min(num_labels, num_classes)]
    else:
        labels = torch.randint(0, num_classes, (rows, num_labels), generator=gen)
    predictions = torch.randn(rows, num_classes, generator=gen)
    weights = (
        None
        if kind == 0
        else torch.rand(rows, generator=gen) * (torch.rand(rows, generator=gen) > 0.2)
    )
    return labels, predictions, weights


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["PrecisionAtKMetric", "RecallAtKMetric"])
def test_at_k(cs_metrics: types.ModuleType, seed: int, name: str) -> None:
    gen = torch.Generator().manual_seed(40_000 + seed)
    num_classes = int(torch.randint(2, 10, (1,), generator=gen))
    k = int(torch.randint(1, num_classes + 1, (1,), generator=gen))
    num_labels = int(torch.randint(1, 4, (1,), generator=gen))
    # Recall counts a label repeated in a row at each occurrence, as cstorch. Precision does
    # not (cstorch's count can exceed k): see test_precision_at_k_counts_a_repeated_label_once.
    distinct = name == "PrecisionAtKMetric"
    batches = _batches(seed, lambda g: _at_k_batch(g, num_classes, num_labels, seed % 2, distinct))
    _feed(getattr(tt, name)(k, "m"), getattr(cs_metrics, name)(k, "m"), batches)


def _auc_batch(gen: torch.Generator, kind: int) -> tuple:
    n = int(torch.randint(1, 40, (1,), generator=gen))
    labels = torch.randint(0, 3, (n,), generator=gen)  # labels > 1 count as positive
    predictions = torch.rand(n, generator=gen)
    predictions[torch.rand(n, generator=gen) < 0.1] = 1.0
    return labels, predictions, _weights(gen, (n,), kind)


@pytest.mark.parametrize("seed", SEEDS)
def test_auc(cs_metrics: types.ModuleType, seed: int) -> None:
    gen = torch.Generator().manual_seed(50_000 + seed)
    curve = ("ROC", "PR")[seed % 2]
    summation = ("interpolation", "minoring", "majoring")[(seed // 2) % 3]
    if seed % 5 == 4:
        thresholds = sorted(
            float(t)
            for t in torch.rand(int(torch.randint(1, 30, (1,), generator=gen)), generator=gen)
        )
        args: tuple = (200, curve, "auc", summation, thresholds)
    else:
        args = (int(torch.randint(2, 300, (1,), generator=gen)), curve, "auc", summation)
    batches = _batches(seed, lambda g: _auc_batch(g, seed % 3))
    _feed(tt.AUCMetric(*args), cs_metrics.AUCMetric(*args), batches)


def test_precision_at_k_counts_a_repeated_label_once(cs_metrics: types.ModuleType) -> None:
    """The one intended difference: cstorch matches a repeated label against the same top-k
    slot twice, so its precision exceeds 1; ours counts each top-k slot once."""
    labels, scores = torch.tensor([[2, 2]]), torch.tensor([[0.1, 0.2, 0.7]])
    theirs = cs_metrics.PrecisionAtKMetric(1, "p")
    assert theirs(labels, scores) == 2.0
    assert tt.PrecisionAtKMetric(1, "p")(labels, scores) == 1.0
    assert tt.RecallAtKMetric(1, "r")(labels, scores) == cs_metrics.RecallAtKMetric(1, "r")(
        labels, scores
    )


def test_at_k_accepts_1d_labels_as_one_label_per_row(cs_metrics: types.ModuleType) -> None:
    """cstorch needs `(B, 1)` labels; ours also takes `(B,)` and gives the same value."""
    gen = torch.Generator().manual_seed(7)
    labels, scores = torch.randint(0, 6, (9,), generator=gen), torch.randn(9, 6, generator=gen)
    for name in ("PrecisionAtKMetric", "RecallAtKMetric"):
        want = getattr(cs_metrics, name)(3, "m")(labels[:, None], scores)
        assert getattr(tt, name)(3, "m")(labels, scores) == pytest.approx(want, rel=1e-6)
        assert getattr(tt, name)(3, "m")(labels[:, None], scores) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize(
    "name", ["AccuracyMetric", "MeanMetric", "PerplexityMetric", "DiceCoefficientMetric"]
)
def test_dtype_of_the_last_update_wins(cs_metrics: types.ModuleType, name: str) -> None:
    """cstorch sets the output dtype at every update (None included) and clears it on reset."""
    make = {
        "AccuracyMetric": lambda m: m("a"),
        "MeanMetric": lambda m: m("a"),
        "PerplexityMetric": lambda m: m("a"),
        "DiceCoefficientMetric": lambda m: m(3, None, "a"),
    }[name]
    batch = {
        "MeanMetric": (torch.tensor([1.0, 2.0]),),
        "PerplexityMetric": (torch.tensor([1, 2]), torch.tensor(1.5)),
    }.get(name, (torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1])))
    ours, theirs = make(getattr(tt, name)), make(getattr(cs_metrics, name))
    for dtype in (torch.float16, None, torch.bfloat16):
        for metric in (ours, theirs):
            metric.update(*batch, dtype=dtype)
        _assert_same(ours.compute(), theirs.compute())
    ours.reset()
    theirs.reset()
    for metric in (ours, theirs):
        metric.update(*batch)
    _assert_same(ours.compute(), theirs.compute())


def test_empty_overlap_metrics_return_zero_as_cstorch(cs_metrics: types.ModuleType) -> None:
    """No valid class (everything ignored or masked): cstorch returns 0, not NaN."""
    for name in ("MeanIOUMetric", "DiceCoefficientMetric"):
        ours, theirs = getattr(tt, name)(3, [0, 1], "m"), getattr(cs_metrics, name)(3, [0, 1], "m")
        labels = predictions = torch.tensor([0, 1, 0])
        _feed(ours, theirs, iter([(labels, predictions, None)]))


def test_accuracy_reshapes_index_predictions_of_another_shape(cs_metrics: types.ModuleType) -> None:
    """cstorch warns and reshapes predictions with as many elements as the labels."""
    labels, predictions = torch.tensor([0, 1, 1, 2]), torch.tensor([[0], [1], [0], [2]])
    theirs = cs_metrics.AccuracyMetric("a")
    with pytest.warns(UserWarning):
        theirs.update(labels, predictions)
    ours = tt.AccuracyMetric("a")
    with pytest.warns(UserWarning, match="reshaped to the shape of `labels`"):
        ours.update(labels, predictions)
    _assert_same(ours.compute(), theirs.compute())
