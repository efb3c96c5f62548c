"""TorchMetrics 1.9's retrieval rule for scores <= 0, against real TorchMetrics (the oracle).

TorchMetrics' MAP, MRR, precision and recall (`functional/retrieval/average_precision.py`,
`reciprocal_rank.py`, `precision.py`, `recall.py`) zero the target of every candidate scored
<= 0 before ranking, so such a candidate is never retrieved; recall's denominator and the
empty-query test still use the original target. Its hit rate, NDCG, R-precision, fall-out,
AUROC and precision-recall curve do not. The compatible classes and functions follow both.

Positive scores are distinct (TorchMetrics orders tied candidates by an unstable sort);
scores <= 0 may tie, since such candidates rank after every positive one and are never a hit,
so their order cannot change the rule's metrics.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torchmetrics
import torchmetrics.functional as tm_root
import torchmetrics.functional.retrieval as tmq
import torchmetrics.retrieval as tmr
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.compat.torchmetrics import functional as our_root
from torchtally.compat.torchmetrics import retrieval as ocr
from torchtally.compat.torchmetrics.functional import retrieval as ocq

assert torchmetrics.__version__.startswith("1.9"), torchmetrics.__version__

RULE_CLASSES = ("RetrievalMAP", "RetrievalMRR", "RetrievalPrecision", "RetrievalRecall")
RULE_FUNCTIONS = (
    "retrieval_average_precision",
    "retrieval_reciprocal_rank",
    "retrieval_precision",
    "retrieval_recall",
)
TOP_KS = (None, 1, 2, 3, 5, 30)
NEGATIVES = (-0.25, -0.5, -1.0, -3.0)


@st.composite
def _scores(draw: st.DrawFn, n: int) -> torch.Tensor:
    """`n` float32 scores: all zero, all negative, all <= 0, or mixed (distinct positives)."""
    mode = draw(st.sampled_from(["all_zero", "all_negative", "nonpositive", "mixed"]))
    zero = st.sampled_from([0.0, -0.0])
    negative = st.sampled_from(NEGATIVES)
    if mode == "all_zero":
        values = draw(st.lists(zero, min_size=n, max_size=n))
    elif mode == "all_negative":
        values = draw(st.lists(negative, min_size=n, max_size=n))
    elif mode == "nonpositive":
        values = draw(st.lists(st.one_of(zero, negative), min_size=n, max_size=n))
    else:
        ranks = draw(st.permutations(range(1, n + 1)))
        signs = draw(st.lists(st.sampled_from(["pos", "zero", "neg"]), min_size=n, max_size=n))
        values = [
            rank / n if sign == "pos" else (0.0 if sign == "zero" else -rank / n)
            for rank, sign in zip(ranks, signs, strict=True)
        ]
    return torch.tensor(values, dtype=torch.float32)


@st.composite
def _flat_inputs(
    draw: st.DrawFn, ignore: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Flat `(preds, target, indexes)` over up to 5 queries; with `ignore`, targets of -1."""
    n = draw(st.integers(1, 24))
    queries = draw(st.integers(1, 5))
    preds = draw(_scores(n))
    target = torch.tensor(
        draw(st.lists(st.integers(-1 if ignore else 0, 1), min_size=n, max_size=n))
    )
    indexes = torch.tensor(draw(st.lists(st.integers(0, queries - 1), min_size=n, max_size=n)))
    # Each of the two updates keeps a candidate (TorchMetrics refuses an update without one).
    target[0] = target[0].clamp(min=0)
    target[n // 2] = target[n // 2].clamp(min=0)
    return preds, target, indexes


def _assert_same_or_same_error(theirs: Callable[[], Any], ours: Callable[[], Any]) -> None:
    try:
        expected = theirs()
    except ValueError:
        with pytest.raises(ValueError, match="no positive target"):
            ours()
        return
    got = ours()
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for a, b in zip(expected, got, strict=True):
            torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-5, check_dtype=False)
        return
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)


def _run_class(module: Any, name: str, kwargs: dict[str, Any], batches: list[Any]) -> Any:
    metric = getattr(module, name)(**kwargs)
    for preds, target, indexes in batches:
        metric.update(preds, target, indexes)
    return metric.compute()


def _batches(
    preds: torch.Tensor, target: torch.Tensor, indexes: torch.Tensor
) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    half = preds.shape[0] // 2
    if half == 0:
        return [(preds, target, indexes)]
    return [
        (preds[:half], target[:half], indexes[:half]),
        (preds[half:], target[half:], indexes[half:]),
    ]


# ------------------------------------------------------------------ classes with the rule


@pytest.mark.parametrize("name", RULE_CLASSES)
@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    top_k=st.sampled_from(TOP_KS),
    action=st.sampled_from(["neg", "pos", "skip", "error"]),
    aggregation=st.sampled_from(["mean", "median", "min", "max"]),
    ignore=st.booleans(),
    adaptive_k=st.booleans(),
)
def test_rule_classes_match_torchmetrics(
    name: str,
    data: st.DataObject,
    top_k: int | None,
    action: str,
    aggregation: str,
    ignore: bool,
    adaptive_k: bool,
) -> None:
    preds, target, indexes = data.draw(_flat_inputs(ignore))
    kwargs: dict[str, Any] = {
        "empty_target_action": action,
        "aggregation": aggregation,
        "top_k": top_k,
        "ignore_index": -1 if ignore else None,
    }
    if name == "RetrievalPrecision":
        kwargs["adaptive_k"] = adaptive_k
    batches = _batches(preds, target, indexes)
    _assert_same_or_same_error(
        lambda: _run_class(tmr, name, kwargs, batches),
        lambda: _run_class(ocr, name, kwargs, batches),
    )


# ---------------------------------------------------------------- functions with the rule


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(RULE_FUNCTIONS),
    top_k=st.sampled_from(TOP_KS),
    adaptive_k=st.booleans(),
)
def test_rule_functions_match_torchmetrics(
    data: st.DataObject, name: str, top_k: int | None, adaptive_k: bool
) -> None:
    n = data.draw(st.integers(1, 16))
    preds = data.draw(_scores(n))
    target = torch.tensor(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    kwargs: dict[str, Any] = {"top_k": top_k}
    if name == "retrieval_precision":
        kwargs["adaptive_k"] = adaptive_k
    expected = getattr(tmq, name)(preds, target, **kwargs)
    torch.testing.assert_close(getattr(ocq, name)(preds, target, **kwargs), expected)
    # The deprecated root names (`torchmetrics.functional.retrieval_*`); no top_k for MRR there.
    if name == "retrieval_reciprocal_rank":
        kwargs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        expected = getattr(tm_root, name)(preds, target, **kwargs)
        torch.testing.assert_close(getattr(our_root, name)(preds, target, **kwargs), expected)


# ------------------------------------------------------- metrics TorchMetrics leaves alone


@st.composite
def _distinct_scores(draw: st.DrawFn, n: int) -> torch.Tensor:
    """Distinct float32 scores, most <= 0 (at most one exactly 0): no ties to order."""
    ranks = draw(st.permutations(range(n)))
    shift = draw(st.integers(0, n))
    return (torch.tensor(ranks, dtype=torch.float32) - shift) / n


@pytest.mark.parametrize(
    "name", ["RetrievalHitRate", "RetrievalNormalizedDCG", "RetrievalRPrecision"]
)
@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    top_k=st.sampled_from(TOP_KS),
    action=st.sampled_from(["neg", "pos", "skip"]),
)
def test_classes_without_the_rule_match_torchmetrics(
    name: str, data: st.DataObject, top_k: int | None, action: str
) -> None:
    n = data.draw(st.integers(1, 24))
    preds = data.draw(_distinct_scores(n))
    high = 3 if name == "RetrievalNormalizedDCG" else 1
    target = torch.tensor(data.draw(st.lists(st.integers(0, high), min_size=n, max_size=n)))
    indexes = torch.tensor(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    kwargs: dict[str, Any] = {"empty_target_action": action}
    if name != "RetrievalRPrecision":
        kwargs["top_k"] = top_k
    batches = _batches(preds, target, indexes)
    _assert_same_or_same_error(
        lambda: _run_class(tmr, name, kwargs, batches),
        lambda: _run_class(ocr, name, kwargs, batches),
    )


@settings(max_examples=80, deadline=None)
@given(data=st.data(), top_k=st.sampled_from(TOP_KS), adaptive_k=st.booleans())
def test_functions_without_the_rule_match_torchmetrics(
    data: st.DataObject, top_k: int | None, adaptive_k: bool
) -> None:
    n = data.draw(st.integers(1, 16))
    preds = data.draw(_distinct_scores(n))
    target = torch.tensor(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    graded = torch.tensor(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    for name in ("retrieval_hit_rate", "retrieval_fall_out", "retrieval_auroc"):
        expected = getattr(tmq, name)(preds, target, top_k=top_k)
        torch.testing.assert_close(getattr(ocq, name)(preds, target, top_k=top_k), expected)
    torch.testing.assert_close(
        ocq.retrieval_normalized_dcg(preds, graded, top_k=top_k),
        tmq.retrieval_normalized_dcg(preds, graded, top_k=top_k),
    )
    torch.testing.assert_close(
        ocq.retrieval_r_precision(preds, target), tmq.retrieval_r_precision(preds, target)
    )
    _assert_same_or_same_error(
        lambda: tmq.retrieval_precision_recall_curve(preds, target, top_k, adaptive_k),
        lambda: ocq.retrieval_precision_recall_curve(preds, target, top_k, adaptive_k),
    )


# ------------------------------------------------------------ hand-computed, all scores 0

ZEROS = torch.zeros(4)
TARGET = torch.tensor([1, 0, 1, 0])
ONE_QUERY = torch.zeros(4, dtype=torch.long)

#: (class, function, kwargs, value): with every score 0 no candidate is retrieved, so MAP, MRR,
#: precision and recall are 0 (recall's denominator is still 2); the native ranking would give
#: MAP (1 + 2/3) / 2, MRR 1, precision@2 1/2 and recall@1 1/2.
ALL_ZERO = [
    ("RetrievalMAP", "retrieval_average_precision", {}, 0.0),
    ("RetrievalMRR", "retrieval_reciprocal_rank", {}, 0.0),
    ("RetrievalPrecision", "retrieval_precision", {"top_k": 2}, 0.0),
    ("RetrievalRecall", "retrieval_recall", {"top_k": 1}, 0.0),
    # No rule here: every candidate is ranked (all tied); one of the 4 is relevant in any order.
    ("RetrievalHitRate", "retrieval_hit_rate", {}, 1.0),
    # All tied: each rank gets the mean gain 1/2; ideal is the two relevant first.
    (
        "RetrievalNormalizedDCG",
        "retrieval_normalized_dcg",
        {},
        0.5
        * (1 + 1 / 1.584962500721156 + 1 / 2 + 1 / 2.321928094887362)
        / (1 + 1 / 1.584962500721156),
    ),
]


@pytest.mark.parametrize(("cls", "fn", "kwargs", "value"), ALL_ZERO, ids=[c[0] for c in ALL_ZERO])
def test_hand_computed_all_zero_predictions(
    cls: str, fn: str, kwargs: dict[str, Any], value: float
) -> None:
    for library in (ocq, tmq):
        assert float(getattr(library, fn)(ZEROS, TARGET, **kwargs)) == pytest.approx(value)
    for library in (ocr, tmr):
        metric = getattr(library, cls)(**kwargs)
        assert float(metric(ZEROS, TARGET, ONE_QUERY)) == pytest.approx(value)


def test_hand_computed_recall_keeps_nonpositive_relevant_in_denominator() -> None:
    # Ranked: 0.9 (relevant), 0.5, 0.4 (relevant), 0.0 (relevant, never retrieved).
    preds = torch.tensor([0.9, 0.0, 0.4, 0.5])
    target = torch.tensor([1, 1, 1, 0])
    expected = {
        ("retrieval_recall", "RetrievalRecall", None): 2 / 3,
        ("retrieval_recall", "RetrievalRecall", 1): 1 / 3,
        ("retrieval_precision", "RetrievalPrecision", None): 2 / 4,
        ("retrieval_average_precision", "RetrievalMAP", None): (1 + 2 / 3) / 2,
        ("retrieval_reciprocal_rank", "RetrievalMRR", None): 1.0,
    }
    for (fn, cls, top_k), value in expected.items():
        for functions, classes in ((ocq, ocr), (tmq, tmr)):
            assert float(getattr(functions, fn)(preds, target, top_k=top_k)) == pytest.approx(value)
            metric = getattr(classes, cls)(top_k=top_k)
            assert float(metric(preds, target, torch.zeros(4, dtype=torch.long))) == pytest.approx(
                value
            )


@pytest.mark.parametrize("name", RULE_CLASSES)
def test_rule_classes_stay_traceable(name: str) -> None:
    from torchtally.testing import assert_traceable

    metric = getattr(ocr, name)(top_k=2, capacity=64)
    preds = torch.tensor([0.9, 0.0, -0.4, 0.5, 0.0, 0.3, -1.0, 0.2])
    target = torch.tensor([1, 1, 1, 0, 1, 0, 1, 1])
    indexes = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    report = assert_traceable(metric, preds, target, indexes)
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked
