"""Retrieval metrics against TorchMetrics 1.9 (flat `indexes` form), scikit-learn's
`ndcg_score` and hand computations.

Scores are drawn in (0, 1] without ties, where TorchMetrics' unstable sort and its `preds > 0`
filter (see `torchtally.functional.retrieval._core`) cannot differ from our definitions; NDCG
ties are tested against scikit-learn, which averages them as we do.
"""

from __future__ import annotations

import doctest
import importlib
from typing import Any

import numpy as np
import pytest
import torch
import torchmetrics.retrieval as tmr
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from torchtally._errors import MetricValueError
from torchtally.functional.retrieval import (
    flat_query_values,
    grouped_query_values,
    retrieval_hit_rate,
    retrieval_map,
    retrieval_mrr,
    retrieval_ndcg,
    retrieval_precision,
    retrieval_r_precision,
    retrieval_recall,
)
from torchtally.metrics.retrieval import (
    RetrievalHitRateMetric,
    RetrievalMAPMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
    RetrievalRPrecisionMetric,
)
from torchtally.testing import assert_traceable

OURS_AND_THEIRS: list[tuple[type, Any, bool]] = [
    (RetrievalNDCGMetric, tmr.RetrievalNormalizedDCG, True),
    (RetrievalMRRMetric, tmr.RetrievalMRR, True),
    (RetrievalMAPMetric, tmr.RetrievalMAP, True),
    (RetrievalHitRateMetric, tmr.RetrievalHitRate, True),
    (RetrievalPrecisionMetric, tmr.RetrievalPrecision, True),
    (RetrievalRecallMetric, tmr.RetrievalRecall, True),
    (RetrievalRPrecisionMetric, tmr.RetrievalRPrecision, False),
]
IDS = [ours.__name__ for ours, _, _ in OURS_AND_THEIRS]


def _distinct_scores(g: torch.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Scores in (0, 1] with no ties anywhere (a random permutation of a grid)."""
    n = int(np.prod(shape))
    return ((torch.randperm(n, generator=g) + 1).double() / n).reshape(shape).float()


@st.composite
def _query_lists(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    seed = draw(st.integers(0, 2**31 - 1))
    rows, width = draw(st.integers(1, 7)), draw(st.integers(1, 9))
    g = torch.Generator().manual_seed(seed)
    preds = _distinct_scores(g, (rows, width))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.9]))
    target = (torch.rand(rows, width, generator=g) < density).long()
    mask = torch.rand(rows, width, generator=g) < 0.8
    mask[0, 0] = True  # TorchMetrics refuses an update with no candidate at all
    return preds, target, mask


def _theirs_flat(
    theirs: Any, kwargs: dict[str, Any], preds: torch.Tensor, target: torch.Tensor, mask: Any
) -> float:
    rows, width = preds.shape
    indexes = torch.arange(rows)[:, None].expand(rows, width)
    keep = mask.reshape(-1)
    metric = theirs(**kwargs)
    metric.update(preds.reshape(-1)[keep], target.reshape(-1)[keep], indexes.reshape(-1)[keep])
    return float(metric.compute())


@settings(max_examples=40, deadline=None)
@given(
    data=_query_lists(),
    pair=st.sampled_from(OURS_AND_THEIRS),
    top_k=st.sampled_from([None, 1, 3]),
    action=st.sampled_from(["neg", "pos", "skip"]),
    aggregation=st.sampled_from(["mean", "min", "max"]),
)
def test_grouped_and_flat_forms_match_torchmetrics(
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    pair: tuple[type, Any, bool],
    top_k: int | None,
    action: str,
    aggregation: str,
) -> None:
    preds, target, mask = data
    ours_cls, theirs_cls, takes_k = pair
    kwargs: dict[str, Any] = {"empty_target_action": action, "aggregation": aggregation}
    if takes_k:
        kwargs["top_k"] = top_k
    expected = _theirs_flat(theirs_cls, kwargs, preds, target, mask)
    grouped = ours_cls(**kwargs)
    grouped.update(preds[:2], target[:2], mask=mask[:2])
    grouped.update(preds[2:], target[2:], mask=mask[2:])
    assert float(grouped.compute()) == pytest.approx(expected, abs=1e-6)
    # The flat form, with queries split over two updates in shuffled order.
    flat = ours_cls(**kwargs, capacity=preds.numel())
    rows, width = preds.shape
    keep = mask.reshape(-1)
    indexes = (torch.arange(rows)[:, None].expand(rows, width).reshape(-1) * 7 - 3)[keep]
    p, t = preds.reshape(-1)[keep], target.reshape(-1)[keep]
    perm = torch.randperm(p.shape[0], generator=torch.Generator().manual_seed(rows))
    p, t, indexes = p[perm], t[perm], indexes[perm]
    half = p.shape[0] // 2
    flat.update(p[:half], t[:half], indexes[:half])
    flat.update(p[half:], t[half:], indexes[half:])
    assert float(flat.compute()) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("adaptive_k", [False, True])
def test_precision_adaptive_k_matches_torchmetrics(adaptive_k: bool) -> None:
    g = torch.Generator().manual_seed(5)
    preds = _distinct_scores(g, (6, 4))
    target = torch.randint(0, 2, (6, 4), generator=g)
    target[:, 0] = 1  # no empty query
    expected = _theirs_flat(
        tmr.RetrievalPrecision,
        {"top_k": 6, "adaptive_k": adaptive_k},
        preds,
        target,
        torch.ones(6, 4, dtype=torch.bool),
    )
    ours = RetrievalPrecisionMetric(top_k=6, adaptive_k=adaptive_k)
    assert float(ours(preds, target)) == pytest.approx(expected)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    top_k=st.sampled_from([None, 1, 2, 5]),
    levels=st.integers(1, 4),
)
def test_ndcg_matches_sklearn_with_ties_and_graded_relevance(
    seed: int, top_k: int | None, levels: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    rows, width = 5, 6
    # Coarse scores: many ties, which both average over the tie group.
    preds = torch.randint(0, 3, (rows, width), generator=g).double()
    target = torch.randint(0, levels + 1, (rows, width), generator=g)
    target[:, 0] = 1  # sklearn's ndcg of an all-zero row is 0, as "neg"; keep rows non-empty
    expected = ndcg_score(target.numpy(), preds.numpy(), k=top_k)
    assert float(retrieval_ndcg(preds, target, top_k)) == pytest.approx(expected)
    flat = RetrievalNDCGMetric(top_k=top_k, capacity=rows * width)
    flat.update(preds.reshape(-1), target.reshape(-1), torch.arange(rows).repeat_interleave(width))
    assert float(flat.compute()) == pytest.approx(expected)


def test_hand_computed_values() -> None:
    preds = torch.tensor([[0.9, 0.8, 0.7, 0.6, 0.5]])
    target = torch.tensor([[0, 1, 0, 1, 1]])
    # Relevant at ranks 2, 4, 5.
    assert float(retrieval_mrr(preds, target)) == pytest.approx(1 / 2)
    assert float(retrieval_map(preds, target)) == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3)
    assert float(retrieval_map(preds, target, top_k=4)) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert float(retrieval_precision(preds, target, 2)) == pytest.approx(1 / 2)
    assert float(retrieval_recall(preds, target, 2)) == pytest.approx(1 / 3)
    assert float(retrieval_hit_rate(preds, target, 1)) == 0.0
    assert float(retrieval_hit_rate(preds, target, 2)) == 1.0
    assert float(retrieval_r_precision(preds, target)) == pytest.approx(1 / 3)  # top 3: 1
    dcg = 1 / np.log2(3) + 1 / np.log2(5) + 1 / np.log2(6)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert float(retrieval_ndcg(preds, target)) == pytest.approx(dcg / ideal)


def test_padding_is_not_a_candidate() -> None:
    """A masked candidate neither ranks nor counts, whatever its score and target."""
    preds = torch.tensor([[0.9, 0.8, 0.7], [0.1, 0.2, 0.3]])
    target = torch.tensor([[1, 1, 0], [1, 1, 1]])
    mask = torch.tensor([[False, True, True], [False, False, False]])  # row 2: no query
    metric = RetrievalPrecisionMetric(top_k=1)
    metric.update(preds, target, mask=mask)
    assert float(metric.compute()) == 1.0  # one query: [0.8 (rel), 0.7]
    assert float(metric.weight) == 1.0
    ignored = RetrievalMRRMetric(ignore_index=-1)
    ignored.update(preds[:1], torch.tensor([[-1, 0, 1]]))
    assert float(ignored.compute()) == pytest.approx(1 / 2)


def test_weights_weigh_queries() -> None:
    preds = torch.tensor([[0.9, 0.1], [0.9, 0.1]])
    target = torch.tensor([[1, 0], [0, 1]])
    metric = RetrievalMRRMetric()
    metric.update(preds, target, weights=torch.tensor([3.0, 1.0]))
    assert float(metric.compute()) == pytest.approx((3 * 1 + 1 * 0.5) / 4)


def test_empty_target_actions() -> None:
    preds = torch.tensor([[0.9, 0.1], [0.9, 0.1]])
    target = torch.tensor([[0, 1], [0, 0]])
    values = {
        a: float(RetrievalMRRMetric(empty_target_action=a)(preds, target))
        for a in ("neg", "pos", "skip")
    }
    assert values == {"neg": 0.25, "pos": 0.75, "skip": 0.5}
    assert float(RetrievalMRRMetric(empty_target_action="skip")(preds[1:], target[1:])) == 0.0
    for metric in (
        RetrievalMRRMetric(empty_target_action="error"),
        RetrievalMRRMetric(empty_target_action="error", capacity=8),
    ):
        if metric.capacity is None:
            metric.update(preds, target)
        else:
            metric.update(preds.reshape(-1), target.reshape(-1), torch.tensor([0, 0, 1, 1]))
        with pytest.raises(MetricValueError, match="no relevant target"):
            metric.compute()
    with pytest.raises(ValueError, match="empty_target_action='error'"):
        retrieval_mrr(preds, target, empty_target_action="error")


def test_flat_form_overflow_raises() -> None:
    metric = RetrievalMAPMetric(capacity=4)
    metric.update(torch.rand(6), torch.ones(6, dtype=torch.long), torch.zeros(6, dtype=torch.long))
    with pytest.raises(MetricValueError, match="2 samples were dropped"):
        metric.compute()


def test_argument_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"`top_k` must be an integer >= 1.*top_k=0"):
        RetrievalNDCGMetric(top_k=0)
    with pytest.raises(ValueError, match="empty_target_action"):
        RetrievalNDCGMetric(empty_target_action="ignore")
    with pytest.raises(ValueError, match="aggregation"):
        RetrievalNDCGMetric(aggregation="median")
    with pytest.raises(ValueError, match=r"capacity=\.\.\.") as info:
        RetrievalNDCGMetric().update(torch.rand(4), torch.ones(4), torch.zeros(4, dtype=int))
    assert "flat form" in str(info.value)
    with pytest.raises(ValueError, match="takes `update\\(preds, target, indexes\\)`"):
        RetrievalNDCGMetric(capacity=4).update(torch.rand(4), torch.ones(4))
    with pytest.raises(ValueError, match=r"shape \(num_queries, num_candidates\)"):
        RetrievalNDCGMetric().update(torch.rand(4), torch.ones(4))
    with pytest.raises(ValueError, match="`mask` must be a bool tensor"):
        retrieval_ndcg(torch.rand(2, 3), torch.ones(2, 3), mask=torch.ones(2, 3))
    with pytest.raises(ValueError, match="one weight per query"):
        RetrievalMRRMetric().update(torch.rand(2, 3), torch.ones(2, 3), weights=torch.ones(3))


@pytest.mark.parametrize("capacity", [None, 256])
def test_flat_and_grouped_forms_are_traceable(capacity: int | None) -> None:
    metric = RetrievalNDCGMetric(top_k=3, capacity=capacity)
    g = torch.Generator().manual_seed(0)
    preds, target = torch.rand(4, 5, generator=g), torch.randint(0, 3, (4, 5), generator=g)
    if capacity is None:
        report = assert_traceable(metric, preds, target, mask=torch.rand(4, 5, generator=g) > 0.2)
    else:
        indexes = torch.arange(4).repeat_interleave(5)
        report = assert_traceable(metric, preds.reshape(-1), target.reshape(-1), indexes)
    assert report.graphs == 1


@pytest.mark.parametrize(
    "name",
    ["torchtally.functional.retrieval._core", "torchtally.metrics.retrieval._retrieval"],
)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(
        importlib.import_module(name), extraglobs={"torch": torch}, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted > 0 and result.failed == 0


# The native metrics rank every candidate whatever its score's sign (the default); TorchMetrics
# 1.9's "scored <= 0 is never retrieved" rule is opt-in (`nonpositive_never_retrieved=True`)
# for the compat layer. Values: (all scores 0, mixed signs) for
# preds [[0, 0, 0, 0], [0.9, 0.0, 0.4, 0.5]], target [[1, 0, 1, 0], [1, 1, 1, 0]].
NATIVE_NONPOSITIVE: list[tuple[type, dict[str, Any], tuple[float, float]]] = [
    (RetrievalMAPMetric, {}, ((1 + 2 / 3) / 2, (1 + 2 / 3 + 3 / 4) / 3)),
    (RetrievalMRRMetric, {}, (1.0, 1.0)),
    (RetrievalPrecisionMetric, {}, (2 / 4, 3 / 4)),
    (RetrievalPrecisionMetric, {"top_k": 2}, (1 / 2, 1 / 2)),
    (RetrievalRecallMetric, {}, (1.0, 1.0)),
    (RetrievalRecallMetric, {"top_k": 1}, (1 / 2, 1 / 3)),
    (RetrievalHitRateMetric, {"top_k": 1}, (1.0, 1.0)),
    (RetrievalRPrecisionMetric, {}, (1 / 2, 2 / 3)),
]
NONPOSITIVE_PREDS = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.9, 0.0, 0.4, 0.5]])
NONPOSITIVE_TARGET = torch.tensor([[1, 0, 1, 0], [1, 1, 1, 0]])


@pytest.mark.parametrize(
    ("cls", "kwargs", "values"),
    NATIVE_NONPOSITIVE,
    ids=[f"{c.__name__}{k}" for c, k, _ in NATIVE_NONPOSITIVE],
)
def test_native_metrics_count_candidates_scored_nonpositive(
    cls: type, kwargs: dict[str, Any], values: tuple[float, float]
) -> None:
    for row, value in enumerate(values):
        preds, target = NONPOSITIVE_PREDS[row : row + 1], NONPOSITIVE_TARGET[row : row + 1]
        assert float(cls(**kwargs)(preds, target)) == pytest.approx(value)
        flat = cls(**kwargs, capacity=8)
        flat.update(preds.reshape(-1), target.reshape(-1), torch.zeros(4, dtype=torch.long))
        assert float(flat.compute()) == pytest.approx(value)


def test_functional_rule_is_opt_in() -> None:
    preds, target = NONPOSITIVE_PREDS, NONPOSITIVE_TARGET
    # Default: every candidate ranks (the native values above, mean over the two rows).
    assert float(retrieval_map(preds, target)) == pytest.approx(
        ((1 + 2 / 3) / 2 + (1 + 2 / 3 + 3 / 4) / 3) / 2
    )
    # TorchMetrics 1.9's rule: row 1 retrieves nothing; row 2 retrieves 0.9 and 0.4 (of 3).
    rule = {"nonpositive_never_retrieved": True}
    assert float(retrieval_map(preds, target, **rule)) == pytest.approx((0 + (1 + 2 / 3) / 2) / 2)
    assert float(retrieval_mrr(preds, target, **rule)) == pytest.approx((0 + 1) / 2)
    assert float(retrieval_precision(preds, target, **rule)) == pytest.approx((0 + 2 / 4) / 2)
    assert float(retrieval_recall(preds, target, **rule)) == pytest.approx((0 + 2 / 3) / 2)
    assert float(retrieval_recall(preds, target, 1, **rule)) == pytest.approx((0 + 1 / 3) / 2)
    # "pos" still sees row 1 as non-empty: its relevance counts every relevant candidate.
    assert float(retrieval_mrr(preds, target, empty_target_action="pos", **rule)) == 0.5


def test_rule_argument_errors_name_the_argument() -> None:
    preds, target = NONPOSITIVE_PREDS, NONPOSITIVE_TARGET
    with pytest.raises(
        ValueError,
        match=r"Argument `nonpositive_never_retrieved` must be False for kind='hit_rate'.*"
        r"Received: nonpositive_never_retrieved=True",
    ):
        grouped_query_values("hit_rate", preds, target, nonpositive_never_retrieved=True)
    with pytest.raises(ValueError, match=r"must be False for kind='ndcg'"):
        flat_query_values(
            "ndcg",
            preds.reshape(-1),
            target.reshape(-1),
            torch.zeros(8, dtype=torch.long),
            nonpositive_never_retrieved=True,
        )
    with pytest.raises(
        ValueError,
        match=r"`nonpositive_never_retrieved` must be a bool\. "
        r"Received: nonpositive_never_retrieved=1",
    ):
        retrieval_recall(preds, target, nonpositive_never_retrieved=1)  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    pair=st.sampled_from(OURS_AND_THEIRS),
    top_k=st.sampled_from([None, 1, 3]),
)
def test_native_values_do_not_depend_on_the_scores_sign(
    seed: int, pair: tuple[type, Any, bool], top_k: int | None
) -> None:
    """Shifting every score by +2 (exact on a grid of eighths in [-1, 1]) keeps the ranking and
    its ties, so the native values, which only rank, cannot change."""
    ours_cls, _, takes_k = pair
    g = torch.Generator().manual_seed(seed)
    preds = torch.randint(-8, 9, (5, 6), generator=g).float() / 8
    target = torch.randint(0, 2, (5, 6), generator=g)
    kwargs: dict[str, Any] = {"top_k": top_k} if takes_k else {}
    assert bool((preds + 2.0 > 0).all())
    grouped = [float(ours_cls(**kwargs)(preds + shift, target)) for shift in (0.0, 2.0)]
    assert grouped[0] == pytest.approx(grouped[1])
    indexes = torch.arange(5).repeat_interleave(6)
    flat = []
    for shift in (0.0, 2.0):
        metric = ours_cls(**kwargs, capacity=30)
        metric.update((preds + shift).reshape(-1), target.reshape(-1), indexes)
        flat.append(float(metric.compute()))
    assert flat[0] == pytest.approx(flat[1]) and flat[0] == pytest.approx(grouped[0])
