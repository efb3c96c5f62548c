"""The native retrieval AUROC@k, fall-out@k and precision-recall curve (the maths the
TorchMetrics-compatible classes and functions use) against scikit-learn's `roc_auc_score` and
plain numpy loops, over padded `(B, K)` candidate lists and the flat `indexes` form."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from torchtally.functional.retrieval import (
    aggregate_query_values,
    counted_query_values,
    flat_query_curves,
    flat_query_values,
    grouped_query_curves,
    grouped_query_values,
    recall_at_fixed_precision,
    retrieval_auroc,
    retrieval_fall_out,
    retrieval_precision_recall_curve,
)


@st.composite
def _lists(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`(B, K)` scores (with ties), 0/1 targets and a mask with at least one real candidate
    per row (real candidates first: ranks do not depend on where padding sits)."""
    rows, width = draw(st.integers(1, 5)), draw(st.integers(1, 9))
    values = st.sampled_from([-1.0, 0.0, 0.2, 0.4, 0.5, 0.7, 0.9, 3.0])
    preds = torch.tensor(draw(st.lists(values, min_size=rows * width, max_size=rows * width)))
    target = torch.tensor(
        draw(st.lists(st.integers(0, 1), min_size=rows * width, max_size=rows * width))
    )
    sizes = torch.tensor(draw(st.lists(st.integers(1, width), min_size=rows, max_size=rows)))
    mask = torch.arange(width)[None, :] < sizes[:, None]
    return preds.reshape(rows, width), target.reshape(rows, width), mask


def _ranked(p: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best score first, ties in input order (the order the native maths defines)."""
    order = np.argsort(-p, kind="stable")
    return p[order], t[order]


def _auroc_at_k(p: np.ndarray, t: np.ndarray, k: int | None, max_fpr: float | None) -> float:
    p, t = _ranked(p, t)
    p, t = p[:k], t[:k]
    if t.min() == t.max():
        return 0.0
    return float(roc_auc_score(t, p, max_fpr=max_fpr))


@settings(max_examples=150, deadline=None)
@given(
    data=_lists(),
    top_k=st.sampled_from([None, 1, 2, 4]),
    max_fpr=st.sampled_from([None, 0.2, 0.5, 1.0]),
)
def test_auroc_is_sklearns_on_the_top_k(
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor], top_k: int | None, max_fpr: float | None
) -> None:
    preds, target, mask = data
    values, candidates, relevance = grouped_query_values(
        "auroc", preds, target, top_k, mask, max_fpr=max_fpr
    )
    for row in range(preds.shape[0]):
        real = mask[row]
        p, t = preds[row][real].numpy(), target[row][real].numpy()
        assert float(candidates[row]) == len(p) and float(relevance[row]) == t.sum()
        expected = _auroc_at_k(p, t, top_k, max_fpr)
        assert float(values[row]) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(data=_lists(), top_k=st.sampled_from([None, 1, 2, 4]))
def test_fall_out_is_the_share_of_negatives_in_the_top_k(
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor], top_k: int | None
) -> None:
    preds, target, mask = data
    values, _, negatives = grouped_query_values("fall_out", preds, target, top_k, mask)
    for row in range(preds.shape[0]):
        real = mask[row]
        _, t = _ranked(preds[row][real].numpy(), target[row][real].numpy())
        assert float(negatives[row]) == (t == 0).sum()
        if (t == 0).sum():
            expected = (t[:top_k] == 0).sum() / (t == 0).sum()
            assert float(values[row]) == pytest.approx(expected)


@settings(max_examples=150, deadline=None)
@given(data=_lists(), max_k=st.sampled_from([None, 1, 3, 12]), adaptive_k=st.booleans())
def test_curves_are_precision_and_recall_at_every_k(
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor], max_k: int | None, adaptive_k: bool
) -> None:
    preds, target, mask = data
    precision, recall, _, relevance = grouped_query_curves(
        preds, target, max_k, mask, adaptive_k=adaptive_k
    )
    cutoffs = preds.shape[1] if max_k is None else max_k
    assert precision.shape == recall.shape == (preds.shape[0], cutoffs)
    for row in range(preds.shape[0]):
        real = mask[row]
        _, t = _ranked(preds[row][real].numpy(), target[row][real].numpy())
        for k in range(1, cutoffs + 1):
            hits = t[:k].sum()
            denominator = min(k, len(t)) if adaptive_k else k
            assert float(precision[row, k - 1]) == pytest.approx(hits / denominator)
            if t.sum():
                assert float(recall[row, k - 1]) == pytest.approx(hits / t.sum())
        assert float(relevance[row]) == t.sum()


@settings(max_examples=100, deadline=None)
@given(data=_lists(), kind=st.sampled_from(["auroc", "fall_out"]), top_k=st.sampled_from([None, 2]))
def test_flat_form_equals_grouped_form(
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor], kind: str, top_k: int | None
) -> None:
    preds, target, mask = data
    grouped, _, _ = grouped_query_values(kind, preds, target, top_k, mask)
    # The same queries, flattened with shuffled query ids (sorted ids give the row order).
    ids = torch.arange(preds.shape[0]) * 3 + 5
    flat, candidates, _ = flat_query_values(
        kind, preds[mask], target[mask], ids[:, None].expand_as(preds)[mask], top_k
    )
    queries = int((candidates > 0).sum())
    torch.testing.assert_close(flat[:queries], grouped, equal_nan=True)  # 0 / 0: no negative
    precision, recall, _, _ = grouped_query_curves(preds, target, 4, mask)
    flat_precision, flat_recall, _, _ = flat_query_curves(
        preds[mask], target[mask], ids[:, None].expand_as(preds)[mask], 4, compact=True
    )
    torch.testing.assert_close(flat_precision, precision)
    torch.testing.assert_close(flat_recall, recall, equal_nan=True)


def test_functionals_average_over_queries() -> None:
    preds = torch.tensor([[0.9, 0.5, 0.5, 0.1], [0.8, 0.7, 0.2, 0.0]])
    target = torch.tensor([[1, 0, 1, 0], [1, 1, 1, 1]])
    # Row 0: pairs 1 + 1 + 1/2 + 1 of 4; row 1 has no negative: AUROC 0, fall-out empty.
    assert float(retrieval_auroc(preds, target)) == pytest.approx((3.5 / 4 + 0.0) / 2)
    assert float(retrieval_fall_out(preds, target, 2)) == pytest.approx((1 / 2 + 0.0) / 2)
    assert float(retrieval_fall_out(preds, target, 2, empty_target_action="skip")) == 0.5
    with pytest.raises(ValueError, match="no non-relevant candidate"):
        retrieval_fall_out(preds, target, empty_target_action="error")
    precision, recall, k = retrieval_precision_recall_curve(preds, target, 2)
    # Row 0 ranks 1, 0 (stable tie order), row 1 ranks 1, 1.
    torch.testing.assert_close(precision, torch.tensor([1.0, 0.75], dtype=torch.float64))
    torch.testing.assert_close(recall, torch.tensor([0.375, 0.5], dtype=torch.float64))
    torch.testing.assert_close(k, torch.tensor([1, 2]))


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [("mean", [0.5, 4 / 3]), ("median", [0.0, 1.0]), ("min", [0.0, 0.0]), ("max", [1.5, 3.0])],
)
def test_aggregation_over_counted_curves(aggregation: str, expected: list[float]) -> None:
    values = torch.tensor([[0.0, 1.0], [1.5, 3.0], [9.0, 9.0], [0.0, 2.0]], dtype=torch.float64)
    candidates = torch.tensor([2.0, 3.0, 0.0, 1.0], dtype=torch.float64)  # row 2: no query
    relevance = torch.tensor([1.0, 2.0, 0.0, 0.0], dtype=torch.float64)  # row 3: empty
    set_values, counted = counted_query_values(values, candidates, relevance, "skip")
    assert counted.tolist() == [True, True, False, False]
    kept = aggregate_query_values(set_values, counted, aggregation)
    # Over rows 0 and 1 only ("skip"); the median of two is the lower one, as torch.median.
    lower = {"mean": [0.75, 2.0], "median": [0.0, 1.0], "min": [0.0, 1.0], "max": [1.5, 3.0]}
    torch.testing.assert_close(kept, torch.tensor(lower[aggregation], dtype=torch.float64))
    # "neg": row 3 counts as zeros (rows 0, 1, 3; the median of three is the middle one).
    set_values, counted = counted_query_values(values, candidates, relevance, "neg")
    got = aggregate_query_values(set_values, counted, aggregation)
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))


def test_callable_aggregation_gets_the_counted_rows() -> None:
    seen: list[Any] = []

    def spread(values: torch.Tensor, dim: int | None = None) -> torch.Tensor:
        seen.append((values.clone(), dim))
        return values.amax(dim=dim) - values.amin(dim=dim)

    values = torch.tensor([0.25, 0.75, 0.5], dtype=torch.float64)
    counted = torch.tensor([True, False, True])
    assert float(aggregate_query_values(values, counted, spread)) == 0.25
    torch.testing.assert_close(seen[0][0], torch.tensor([0.25, 0.5], dtype=torch.float64))
    assert seen[0][1] is None
    nothing = aggregate_query_values(values, torch.zeros(3, dtype=torch.bool), spread)
    assert float(nothing) == 0.0 and len(seen) == 1


def test_recall_at_fixed_precision_takes_the_largest_k_at_the_best_recall() -> None:
    precision = torch.tensor([1.0, 0.5, 0.6, 0.5])
    recall = torch.tensor([0.25, 0.5, 0.75, 0.75])
    assert recall_at_fixed_precision(precision, recall, 0.5) == (0.75, 4)
    assert recall_at_fixed_precision(precision, recall, 0.55) == (0.75, 3)
    assert recall_at_fixed_precision(precision, recall, 0.9) == (0.25, 1)
    # None reaches the precision, or the best recall is 0: recall 0 at the last k.
    assert recall_at_fixed_precision(precision, recall, 1.5) == (0.0, 4)
    assert recall_at_fixed_precision(precision, torch.zeros(4), 0.0) == (0.0, 4)


def test_bad_options_are_clear_errors() -> None:
    preds, target = torch.rand(2, 3), torch.randint(0, 2, (2, 3))
    with pytest.raises(ValueError, match=r"`max_fpr` should be a float in range \(0, 1\]"):
        grouped_query_values("auroc", preds, target, max_fpr=1.5)
    with pytest.raises(ValueError, match="`max_fpr` is for kind='auroc' only"):
        grouped_query_values("recall", preds, target, max_fpr=0.5)
    with pytest.raises(ValueError, match="`sigmoid_out_of_range` must be a bool"):
        grouped_query_values("fall_out", preds, target, sigmoid_out_of_range=True)
    with pytest.raises(ValueError, match="`nonpositive_never_retrieved` must be False"):
        grouped_query_values("auroc", preds, target, nonpositive_never_retrieved=True)
    with pytest.raises(ValueError, match="`max_k` must be an integer >= 1"):
        grouped_query_curves(preds, target, 0)


def test_sigmoid_rule_ties_scores_that_round_to_one() -> None:
    # float32 sigmoid(20) == sigmoid(30) == 1.0: one tie under TorchMetrics' rule.
    preds, target = torch.tensor([[30.0, 20.0, -1.0]]), torch.tensor([[0, 1, 0]])
    plain, _, _ = grouped_query_values("auroc", preds, target)
    tied, _, _ = grouped_query_values("auroc", preds, target, sigmoid_out_of_range=True)
    assert float(plain[0]) == pytest.approx(0.5)  # 20 beats -1, loses to 30
    assert float(tied[0]) == pytest.approx(0.75)  # 20 ties 30 (1/2), beats -1
    assert (
        float(roc_auc_score([0, 1, 0], np.float32(1) / (1 + np.exp(-np.float32([30, 20, -1])))))
        == 0.75
    )


@pytest.mark.parametrize("kind", ["auroc", "fall_out"])
def test_flat_values_trace(kind: str) -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        preds, target = torch.rand(16), torch.randint(0, 2, (16,))
        indexes, valid = torch.randint(0, 4, (16,)), torch.rand(16) > 0.2
        values, _, _ = flat_query_values(kind, preds, target, indexes, 3, valid)
        precision, _, _, _ = flat_query_curves(preds, target, indexes, 3, valid)
    assert values.shape == (16,) and precision.shape == (16, 3)
