"""Retrieval metrics over queries: NDCG@k, MRR, MAP, HitRate@k, Precision@k, Recall@k,
R-precision, fall-out@k, AUROC@k and the precision-recall curve over k, with TorchMetrics'
definitions and `empty_target_action`.

Two input forms feed one computation:

* **Grouped** (the fast path): `(B, K)` scores and relevance targets, one row per query, with
  an optional `(B, K)` mask of real candidates (padding is `False`). One row sort per batch,
  then per-query values with fixed-shape tensor ops; a fully masked row is no query.
* **Flat** (TorchMetrics' form): `(N,)` scores, targets and query `indexes`, grouped at compute
  time by two stable sorts over the whole buffer. Exact but slower: its cost grows with the
  buffer's capacity, not with the batch.

Both reduce to per-element tensors in ranked order (query slot, rank in the query, relevance,
score) from which every metric is a scatter into per-query sums.

Definitions (per query, ranked by score, best first; `k` = `top_k`, or every candidate):

* precision@k = relevant in the top k / k (`adaptive_k`: / min(k, candidates));
* recall@k = relevant in the top k / relevant;
* fall-out@k = non-relevant in the top k / non-relevant (its "empty" query has no non-relevant
  candidate);
* hit rate@k = 1 if any relevant in the top k;
* reciprocal rank = 1 / rank of the first relevant in the top k (0 if none);
* average precision = mean over the relevant in the top k of the precision at their rank;
* R-precision = relevant in the top R / R, R = relevant;
* NDCG@k = DCG@k / ideal DCG@k with linear gains and discount 1 / log2(rank + 1); tied scores
  share their tie group's mean gain, as scikit-learn's `ndcg_score` and TorchMetrics;
* AUROC@k = the binary AUROC of the top k candidates (tied scores as one ROC point, as
  scikit-learn's `roc_auc_score`), 0 when they hold one class only; `max_fpr`: the
  McClish-standardized partial area up to that false positive rate;
* the precision-recall curve: precision@k and recall@k for every k = 1 .. `max_k`.

Ties elsewhere go to the earlier candidate (a stable sort); TorchMetrics leaves them to an
unstable sort.

TorchMetrics 1.9 never counts a candidate whose score is <= 0 as retrieved for MAP, MRR,
precision and recall (it zeroes such targets before ranking), while recall's denominator and
the empty-query test still count every relevant candidate. Here every candidate counts unless
`nonpositive_never_retrieved=True` (MAP, MRR, precision and recall only), which reproduces that
rule: the two agree on positive scores (probabilities) either way.

A query with no relevant candidate is "empty"; `empty_target_action` decides its value:
"neg" 0, "pos" 1, "skip" leaves it out, "error" counts it as a data error (raised at compute).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional._checks import check_tensor
from torchtally.functional.curves import mcclish_standardized, partial_roc_areas

__all__ = [
    "AGGREGATIONS",
    "EMPTY_TARGET_ACTIONS",
    "KINDS",
    "NONPOSITIVE_RULE_KINDS",
    "aggregate_query_values",
    "check_max_fpr",
    "check_retrieval_args",
    "counted_query_values",
    "flat_query_curves",
    "flat_query_values",
    "grouped_query_curves",
    "grouped_query_values",
    "query_statistics",
    "recall_at_fixed_precision",
    "retrieval_aggregate",
    "retrieval_auroc",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
]

KINDS = (
    "ndcg",
    "mrr",
    "map",
    "hit_rate",
    "precision",
    "recall",
    "r_precision",
    "fall_out",
    "auroc",
)
NONPOSITIVE_RULE_KINDS = ("map", "mrr", "precision", "recall")
"""The kinds that take `nonpositive_never_retrieved=True`: those TorchMetrics 1.9 applies its
rule to (a candidate scored <= 0 is never retrieved)."""
EMPTY_TARGET_ACTIONS = ("neg", "pos", "skip", "error")
AGGREGATIONS = ("mean", "min", "max")


def check_retrieval_args(
    kind: str, top_k: int | None, empty_target_action: str, aggregation: str = "mean"
) -> None:
    """Validate the constructor-time arguments shared by every retrieval metric."""
    check_choice("kind", kind, KINDS)
    check_int("top_k", top_k, 1, allow_none=True)
    if kind == "r_precision" and top_k is not None:
        raise ValueError(
            f"Argument `top_k` must be None for R-precision (its cut-off is the number of "
            f"relevant candidates). Received: top_k={top_k!r}"
        )
    check_choice("empty_target_action", empty_target_action, EMPTY_TARGET_ACTIONS)
    check_choice("aggregation", aggregation, AGGREGATIONS)


def _check_nonpositive_rule(kind: str, nonpositive_never_retrieved: object) -> None:
    if not isinstance(nonpositive_never_retrieved, bool):
        raise ValueError(
            "Argument `nonpositive_never_retrieved` must be a bool. Received: "
            f"nonpositive_never_retrieved={nonpositive_never_retrieved!r}"
        )
    if nonpositive_never_retrieved and kind not in NONPOSITIVE_RULE_KINDS:
        raise ValueError(
            f"Argument `nonpositive_never_retrieved` must be False for kind={kind!r}: "
            f"TorchMetrics 1.9 applies that rule only to {', '.join(NONPOSITIVE_RULE_KINDS)}. "
            f"Received: nonpositive_never_retrieved={nonpositive_never_retrieved!r}"
        )


def _check_pair(preds: Tensor, target: Tensor, dims: int) -> None:
    check_tensor("preds", preds)
    check_tensor("target", target)
    if not preds.is_floating_point():
        raise TypeError(
            f"Argument `preds` must be a floating-point tensor. Received: preds.dtype={preds.dtype}"
        )
    if target.is_complex():
        raise TypeError(f"Argument `target` must be real. Received: target.dtype={target.dtype}")
    if preds.dim() != dims or preds.shape != target.shape:
        shape = "(num_queries, num_candidates)" if dims == 2 else "(N,)"
        raise ValueError(
            f"Arguments `preds` and `target` must both have shape {shape}. "
            f"Received: preds.shape={tuple(preds.shape)}, target.shape={tuple(target.shape)}"
        )


def _discount(rank: Tensor) -> Tensor:
    return 1.0 / torch.log2(rank.to(torch.float64) + 2.0)


class _Ranked(NamedTuple):
    """Every candidate in ranked order: queries one after another, each best score first.

    All fields but `num_groups` and `ideal_dcg` are flat `(M,)` tensors.
    """

    num_groups: int
    group: Tensor  # int64: the query slot of each candidate
    rank: Tensor  # int64: its 0-based rank in the query
    gain: Tensor  # float64: its relevance (0 for padding)
    valid: Tensor  # bool: False for padding
    scores: Tensor  # its score (-inf for padding)
    first: Tensor  # int64: the flat position of its query's first candidate
    ideal_dcg: Tensor | None  # (num_groups,) float64, NDCG only


def _check_kind_options(
    kind: str, nonpositive_never_retrieved: object, max_fpr: object, sigmoid_out_of_range: object
) -> None:
    _check_nonpositive_rule(kind, nonpositive_never_retrieved)
    if max_fpr is not None:
        check_max_fpr(max_fpr)
        if kind != "auroc":
            raise ValueError(
                f"Argument `max_fpr` is for kind='auroc' only. Received: kind={kind!r}, "
                f"max_fpr={max_fpr!r}"
            )
    if not isinstance(sigmoid_out_of_range, bool) or (sigmoid_out_of_range and kind != "auroc"):
        raise ValueError(
            "Argument `sigmoid_out_of_range` must be a bool, True for kind='auroc' only. "
            f"Received: kind={kind!r}, sigmoid_out_of_range={sigmoid_out_of_range!r}"
        )


def check_max_fpr(max_fpr: object) -> None:
    """Raise unless `max_fpr` is None or a float in (0, 1] (TorchMetrics' partial AUROC)."""
    if max_fpr is not None and (not isinstance(max_fpr, float) or not 0 < max_fpr <= 1):
        raise ValueError(
            f"Arguments `max_fpr` should be a float in range (0, 1], but got: {max_fpr!r}"
        )


def _rank_grouped(
    kind: str,
    preds: Tensor,
    target: Tensor,
    top_k: int | None,
    mask: Tensor | None,
    ignore_index: int | None,
) -> _Ranked:
    """Rank `(B, K)` candidate lists: one row sort, rows flattened in order."""
    valid = torch.ones_like(preds, dtype=torch.bool) if mask is None else mask
    if mask is not None:
        check_tensor("mask", mask)
        if mask.shape != preds.shape or mask.dtype != torch.bool:
            raise ValueError(
                f"Argument `mask` must be a bool tensor shaped like `preds` {tuple(preds.shape)}."
                f" Received: mask.shape={tuple(mask.shape)}, mask.dtype={mask.dtype}"
            )
    if ignore_index is not None:
        valid = torch.logical_and(valid, target != ignore_index)
    rows, width = preds.shape
    relevance = target.to(torch.float64)
    if kind == "fall_out":  # fall-out is the recall of the non-relevant candidates
        relevance = 1.0 - relevance
    # Padding sorts last (-inf); a real -inf or NaN score is a data error counted elsewhere.
    scores = torch.where(valid, preds, float("-inf"))
    sorted_scores, order = torch.sort(scores, dim=1, descending=True, stable=True)
    valid_sorted = valid.gather(1, order)
    gain = torch.where(valid_sorted, relevance.gather(1, order), 0.0)
    rank = torch.arange(width, device=preds.device).expand(rows, width)
    group = torch.arange(rows, device=preds.device)[:, None].expand(rows, width)
    ideal_dcg = None
    if kind == "ndcg":
        ideal = torch.sort(gain, dim=1, descending=True).values
        cut = valid.sum(1, keepdim=True) if top_k is None else top_k
        ideal_dcg = torch.where(rank < cut, _discount(rank) * ideal, 0.0).sum(1)
    return _Ranked(
        rows,
        group.reshape(-1),
        rank.reshape(-1),
        gain.reshape(-1),
        valid_sorted.reshape(-1),
        sorted_scores.reshape(-1),
        (group * width).reshape(-1),
        ideal_dcg,
    )


def _sort_by_query(indexes: Tensor, keys: Tensor) -> Tensor:
    """Order by query id, then by `keys` descending, ties in input order (two stable sorts)."""
    by_key = torch.sort(keys, descending=True, stable=True).indices
    by_query = torch.sort(indexes[by_key], stable=True).indices
    return by_key[by_query]


def _rank_flat(
    kind: str,
    preds: Tensor,
    target: Tensor,
    indexes: Tensor,
    top_k: int | None,
    valid: Tensor | None,
) -> _Ranked:
    """Rank flat `(N,)` candidates grouped by `indexes`: two stable sorts of the whole input.

    Query slots are dense, in increasing id order; unused rows (`valid` False) form one last
    pseudo-query with no real candidate.
    """
    n = preds.shape[0]
    device = preds.device
    valid = torch.ones(n, dtype=torch.bool, device=device) if valid is None else valid
    ids = torch.where(valid, indexes.to(torch.int64), torch.iinfo(torch.int64).max)
    scores = torch.where(valid, preds.to(torch.float64), float("-inf"))
    relevance = target.to(torch.float64)
    if kind == "fall_out":  # fall-out is the recall of the non-relevant candidates
        relevance = 1.0 - relevance
    gains = torch.where(valid, relevance, 0.0)
    order = _sort_by_query(ids, scores)
    ids_sorted = ids[order]
    position = torch.arange(n, device=device)
    new_query = torch.ones(n, dtype=torch.bool, device=device)
    new_query[1:] = ids_sorted[1:] != ids_sorted[:-1]
    group = torch.cumsum(new_query.to(torch.int64), 0) - 1
    start = torch.full((n,), n, dtype=torch.int64, device=device)
    start.scatter_reduce_(0, group, position, "amin")
    first = start[group]
    rank = position - first
    valid_sorted = valid[order]
    ideal_dcg = None
    if kind == "ndcg":
        # The ideal order: the same query order, relevance descending; dense ids are the same.
        ideal_gain = gains[_sort_by_query(ids, gains)]
        candidates = torch.zeros(n, dtype=torch.float64, device=device)
        candidates.scatter_add_(0, group, valid_sorted.to(torch.float64))
        cut = candidates[group] if top_k is None else torch.full_like(ideal_gain, float(top_k))
        ideal_terms = torch.where(rank.to(torch.float64) < cut, _discount(rank) * ideal_gain, 0.0)
        ideal_dcg = torch.zeros(n, dtype=torch.float64, device=device)
        ideal_dcg.scatter_add_(0, group, ideal_terms)
    return _Ranked(n, group, rank, gains[order], valid_sorted, scores[order], first, ideal_dcg)


def _tie_groups(scores: Tensor, first: Tensor) -> Tensor:
    """Ids of the runs of equal scores within each query (increasing along the ranking)."""
    position = torch.arange(scores.shape[0], device=scores.device)
    new_tie = position == first
    new_tie[1:] = torch.logical_or(new_tie[1:], scores[1:] != scores[:-1])
    return torch.cumsum(new_tie.to(torch.int64), 0) - 1


def _count_before(flags: Tensor, at: Tensor) -> Tensor:
    """How many of `flags` (int64, in ranked order) precede flat position `at`."""
    exclusive = torch.cumsum(flags, 0) - flags
    return exclusive[at]


def _per_query(
    kind: str,
    ranked: _Ranked,
    top_k: int | None,
    adaptive_k: bool,
    nonpositive_never_retrieved: bool = False,
    max_fpr: float | None = None,
    sigmoid_out_of_range: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-query values of ranked candidates.

    Returns `(values, candidates, relevance)`, each `(num_groups,)` float64: the metric, the
    number of real candidates and the summed relevance of each query (for fall-out, the number
    of non-relevant candidates: a query without any is its "empty" query).
    """
    f64 = torch.float64
    group, rank, gain, valid = ranked.group, ranked.rank, ranked.gain, ranked.valid
    num_groups = ranked.num_groups

    def per_group(values: Tensor) -> Tensor:
        out = torch.zeros(num_groups, dtype=f64, device=gain.device)
        return out.scatter_add_(0, group, values.to(f64))

    candidates = per_group(valid)
    relevance = per_group(gain)
    cut = candidates if top_k is None else torch.full_like(candidates, float(top_k))
    in_top = torch.logical_and(valid, rank.to(f64) < cut[group])
    if kind == "auroc":
        values = _auroc_values(ranked, in_top, per_group, max_fpr, sigmoid_out_of_range)
        return values, candidates, relevance
    # A candidate that is never retrieved is no hit; its relevance still counts in `relevance`.
    is_hit = gain > 0
    if nonpositive_never_retrieved:
        is_hit = torch.logical_and(is_hit, ranked.scores > 0)
    hit = torch.logical_and(in_top, is_hit)
    hits = per_group(hit)
    if kind == "precision":
        if top_k is None:
            denominator = candidates
        elif adaptive_k:
            denominator = candidates.clamp(max=float(top_k))
        else:
            denominator = cut
        values = hits / denominator
    elif kind in ("recall", "fall_out"):
        values = hits / relevance
    elif kind == "hit_rate":
        values = (hits > 0).to(f64)
    elif kind == "mrr":
        inverse_rank = torch.where(hit, 1.0 / (rank.to(f64) + 1.0), 0.0)
        values = torch.zeros(num_groups, dtype=f64, device=gain.device)
        values.scatter_reduce_(0, group, inverse_rank, "amax")
    elif kind == "map":
        flags = is_hit.to(torch.int64)
        relevant_so_far = torch.cumsum(flags, 0) - _count_before(flags, ranked.first)
        precision_at_hit = torch.where(hit, relevant_so_far.to(f64) / (rank.to(f64) + 1.0), 0.0)
        values = per_group(precision_at_hit) / hits.clamp(min=1.0)
    elif kind == "r_precision":
        in_r = torch.logical_and(valid, rank.to(f64) < relevance[group])
        values = per_group(torch.logical_and(in_r, gain > 0)) / relevance
    else:  # ndcg: tied scores share their tie group's mean gain
        ties = _tie_groups(ranked.scores, ranked.first)
        tie_sum = torch.zeros(gain.shape[0], dtype=f64, device=gain.device)
        tie_sum.scatter_add_(0, ties, gain)
        tie_size = torch.zeros_like(tie_sum).scatter_add_(0, ties, torch.ones_like(gain))
        tie_gain = (tie_sum / tie_size.clamp(min=1.0))[ties]
        dcg = per_group(torch.where(in_top, _discount(rank) * tie_gain, 0.0))
        assert ranked.ideal_dcg is not None
        ideal_dcg = ranked.ideal_dcg
        values = torch.where(ideal_dcg > 0, dcg / ideal_dcg.clamp(min=1e-300), 0.0)
    return values, candidates, relevance


def _auroc_values(
    ranked: _Ranked,
    in_top: Tensor,
    per_group: Callable[[Tensor], Tensor],
    max_fpr: float | None,
    sigmoid_out_of_range: bool,
) -> Tensor:
    """Binary AUROC of each query's top-k candidates (0 when they hold one class only).

    The ROC curve has one point per run of tied scores (TorchMetrics' and scikit-learn's);
    its area is the trapezoids between them. With `max_fpr`, the area up to that false
    positive rate (the last segment cut by linear interpolation), McClish-standardized.
    """
    f64 = torch.float64
    scores = ranked.scores
    if sigmoid_out_of_range:
        # TorchMetrics' binary AUROC takes probabilities: a query whose top-k scores leave
        # [0, 1] is ranked by their float32 sigmoid, which ties scores it rounds together.
        scores = scores.to(torch.float32)
        outside = torch.logical_and(in_top, torch.logical_or(scores < 0, scores > 1))
        squash = per_group(outside)[ranked.group] > 0
        scores = torch.where(squash, torch.sigmoid(scores), scores)
    positive = torch.logical_and(in_top, ranked.gain > 0).to(torch.int64)
    negative = torch.logical_and(in_top, ranked.gain <= 0).to(torch.int64)
    num_pos, num_neg = per_group(positive), per_group(negative)
    ties = _tie_groups(scores, ranked.first)
    n = scores.shape[0]
    position = torch.arange(n, device=scores.device)
    tie_first = torch.full((n,), n, dtype=torch.int64, device=scores.device)
    tie_first.scatter_reduce_(0, ties, position, "amin")
    head = tie_first[ties]
    # Per run of ties, read at its first candidate: the counts before it in its query, in it.
    tp0 = (_count_before(positive, head) - _count_before(positive, ranked.first)).to(f64)
    fp0 = (_count_before(negative, head) - _count_before(negative, ranked.first)).to(f64)
    tie_pos = torch.zeros(n, dtype=f64, device=scores.device).scatter_add_(
        0, ties, positive.to(f64)
    )
    tie_neg = torch.zeros(n, dtype=f64, device=scores.device).scatter_add_(
        0, ties, negative.to(f64)
    )
    dp, dn = tie_pos[ties], tie_neg[ties]
    is_head = position == head
    pos_g, neg_g = num_pos[ranked.group].clamp(min=1.0), num_neg[ranked.group].clamp(min=1.0)
    if max_fpr is None or max_fpr == 1.0:
        area = dn * (tp0 + 0.5 * dp) / (pos_g * neg_g)
        value = per_group(torch.where(is_head, area, 0.0))
    else:
        x0, x1 = fp0 / neg_g, (fp0 + dn) / neg_g
        y0, y1 = tp0 / pos_g, (tp0 + dp) / pos_g
        areas = partial_roc_areas(x0, x1, y0, y1, max_fpr)
        value = mcclish_standardized(per_group(torch.where(is_head, areas, 0.0)), max_fpr)
    both = torch.logical_and(num_pos > 0, num_neg > 0)
    return torch.where(both, value, 0.0)


def grouped_query_values(
    kind: str,
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    *,
    adaptive_k: bool = False,
    ignore_index: int | None = None,
    nonpositive_never_retrieved: bool = False,
    max_fpr: float | None = None,
    sigmoid_out_of_range: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-query values of `(B, K)` candidate lists.

    Args:
        kind: One of `KINDS`.
        preds: `(B, K)` floating-point scores, higher ranks first.
        target: `(B, K)` relevance: 0/1 (bool or integer), or graded (>= 0) for NDCG.
        top_k: The cut-off k; None ranks every candidate.
        mask: Optional `(B, K)` bool, `False` for padding.
        adaptive_k: Precision: divide by min(k, candidates) instead of k.
        ignore_index: Candidates whose target equals it are padding (TorchMetrics' option).
        nonpositive_never_retrieved: TorchMetrics 1.9's rule (kinds in
            `NONPOSITIVE_RULE_KINDS` only): a candidate scored <= 0 never counts as retrieved
            (a hit), while recall's denominator and `relevance` still count every relevant
            candidate. False (every candidate counts) by default.
        max_fpr: AUROC only: the standardized partial area up to this false positive rate,
            a float in (0, 1] (None: the whole area).
        sigmoid_out_of_range: AUROC only: TorchMetrics 1.9's binary AUROC input rule, under
            which a query whose top-k scores are not all in [0, 1] is ranked by their float32
            sigmoid (scores that round to the same probability tie). False by default.

    Returns:
        `(values, candidates, relevance)`, each `(B,)` float64. For fall-out, `relevance`
        counts the non-relevant candidates.
    """
    _check_pair(preds, target, 2)
    _check_kind_options(kind, nonpositive_never_retrieved, max_fpr, sigmoid_out_of_range)
    ranked = _rank_grouped(kind, preds, target, top_k, mask, ignore_index)
    return _per_query(
        kind, ranked, top_k, adaptive_k, nonpositive_never_retrieved, max_fpr, sigmoid_out_of_range
    )


def _check_indexes(preds: Tensor, indexes: Tensor) -> None:
    check_tensor("indexes", indexes)
    if indexes.shape != preds.shape or indexes.is_floating_point():
        raise ValueError(
            "Argument `indexes` must be an integer tensor shaped like `preds` "
            f"{tuple(preds.shape)}. Received: indexes.shape={tuple(indexes.shape)}, "
            f"indexes.dtype={indexes.dtype}"
        )


def flat_query_values(
    kind: str,
    preds: Tensor,
    target: Tensor,
    indexes: Tensor,
    top_k: int | None = None,
    valid: Tensor | None = None,
    *,
    adaptive_k: bool = False,
    nonpositive_never_retrieved: bool = False,
    max_fpr: float | None = None,
    sigmoid_out_of_range: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-query values of flat `(N,)` inputs grouped by `indexes` (TorchMetrics' form).

    Args:
        kind: One of `KINDS`.
        preds: `(N,)` scores.
        target: `(N,)` relevance.
        indexes: `(N,)` integer query ids.
        top_k: The cut-off k; None ranks every candidate.
        valid: Optional `(N,)` bool, `False` for entries to ignore (unused buffer rows).
        adaptive_k: Precision: divide by min(k, candidates) instead of k.
        nonpositive_never_retrieved: TorchMetrics 1.9's rule (kinds in
            `NONPOSITIVE_RULE_KINDS` only): a candidate scored <= 0 never counts as retrieved
            (a hit), while recall's denominator and `relevance` still count every relevant
            candidate. False (every candidate counts) by default.
        max_fpr: AUROC only: the standardized partial area up to this false positive rate.
        sigmoid_out_of_range: AUROC only: TorchMetrics 1.9's rule of ranking a query whose
            top-k scores leave [0, 1] by their float32 sigmoid (see `grouped_query_values`).

    Returns:
        `(values, candidates, relevance)`, each `(N,)` float64 and indexed by query rank
        (queries in increasing id order, then rows that hold no query: 0 candidates). For
        fall-out, `relevance` counts the non-relevant candidates.
    """
    _check_pair(preds, target, 1)
    _check_kind_options(kind, nonpositive_never_retrieved, max_fpr, sigmoid_out_of_range)
    _check_indexes(preds, indexes)
    ranked = _rank_flat(kind, preds, target, indexes, top_k, valid)
    return _per_query(
        kind, ranked, top_k, adaptive_k, nonpositive_never_retrieved, max_fpr, sigmoid_out_of_range
    )


def _curves(
    ranked: _Ranked, max_k: int, adaptive_k: bool, rows: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Precision@k and recall@k for k = 1 .. `max_k` of the first `rows` query slots."""
    f64 = torch.float64
    group, rank, gain, valid = ranked.group, ranked.rank, ranked.gain, ranked.valid
    device = gain.device
    kept = group < rows
    candidates = torch.zeros(rows + 1, dtype=f64, device=device)
    candidates.scatter_add_(0, torch.where(kept, group, rows), valid.to(f64))
    relevance = torch.zeros(rows + 1, dtype=f64, device=device)
    relevance.scatter_add_(0, torch.where(kept, group, rows), gain)
    # Each hit in the first max_k ranks lands in its (query, rank) cell; the rest in a spare one.
    hit = kept & valid & (gain > 0) & (rank < max_k)
    cell = torch.where(hit, group * max_k + rank, rows * max_k)
    hits = torch.zeros(rows * max_k + 1, dtype=f64, device=device)
    hits.scatter_add_(0, cell, hit.to(f64))
    found = hits[:-1].reshape(rows, max_k).cumsum(1)
    k = torch.arange(1, max_k + 1, device=device, dtype=f64)
    candidates, relevance = candidates[:rows], relevance[:rows]
    denominator = torch.minimum(k, candidates[:, None]) if adaptive_k else k.expand(rows, max_k)
    return found / denominator, found / relevance[:, None], candidates, relevance


def grouped_query_curves(
    preds: Tensor,
    target: Tensor,
    max_k: int | None = None,
    mask: Tensor | None = None,
    *,
    adaptive_k: bool = False,
    ignore_index: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-query precision@k and recall@k, k = 1 .. `max_k`, of `(B, K)` candidate lists.

    Args:
        preds: `(B, K)` floating-point scores, higher ranks first.
        target: `(B, K)` 0/1 relevance.
        max_k: The largest cut-off; None: K.
        mask: Optional `(B, K)` bool, `False` for padding.
        adaptive_k: Precision@k divides by min(k, candidates) instead of k.
        ignore_index: Candidates whose target equals it are padding.

    Returns:
        `(precision, recall, candidates, relevance)`: `(B, max_k)`, `(B, max_k)`, `(B,)`,
        `(B,)`, float64 (recall is NaN for a query without relevant candidates).
    """
    _check_pair(preds, target, 2)
    max_k = preds.shape[1] if max_k is None else max_k
    check_int("max_k", max_k, 1)
    ranked = _rank_grouped("recall", preds, target, None, mask, ignore_index)
    return _curves(ranked, max_k, adaptive_k, ranked.num_groups)


def flat_query_curves(
    preds: Tensor,
    target: Tensor,
    indexes: Tensor,
    max_k: int | None = None,
    valid: Tensor | None = None,
    *,
    adaptive_k: bool = False,
    compact: bool = False,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-query precision@k and recall@k, k = 1 .. `max_k`, of flat `(N,)` inputs.

    Args:
        preds: `(N,)` scores.
        target: `(N,)` 0/1 relevance.
        indexes: `(N,)` integer query ids.
        max_k: The largest cut-off; None: the largest query's candidate count (read from the
            device: not traceable).
        valid: Optional `(N,)` bool, `False` for entries to ignore.
        adaptive_k: Precision@k divides by min(k, candidates) instead of k.
        compact: One row per query (their number read from the device: not traceable) instead
            of one per input row, most of them empty: `N * max_k` cells can be large.

    Returns:
        `(precision, recall, candidates, relevance)`: `(Q, max_k)`, `(Q, max_k)`, `(Q,)`,
        `(Q,)`, float64, queries in increasing id order; `Q` is `N`, or the number of queries
        with `compact` (rows without a query have 0 candidates).
    """
    _check_pair(preds, target, 1)
    _check_indexes(preds, indexes)
    ranked = _rank_flat("recall", preds, target, indexes, None, valid)
    rows = ranked.num_groups
    if compact or max_k is None:
        sizes = torch.zeros(rows, dtype=torch.int64, device=preds.device)
        sizes.scatter_add_(0, ranked.group, ranked.valid.to(torch.int64))
        if compact:
            rows = int(torch.count_nonzero(sizes))
        if max_k is None:
            max_k = max(int(sizes.max()), 1) if sizes.numel() else 1
    check_int("max_k", max_k, 1)
    return _curves(ranked, max_k, adaptive_k, rows)


def query_statistics(
    values: Tensor,
    candidates: Tensor,
    relevance: Tensor,
    empty_target_action: str,
    weights: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Fold per-query values into additive statistics, applying `empty_target_action`.

    Returns:
        `(total, weight, minimum, maximum, empty)`: the weighted sum of counted values, their
        weight, the min and max of counted values (+inf / -inf if none), and the number of
        empty queries (each 0-d float64; `empty` int64).
    """
    is_query = candidates > 0
    empty = torch.logical_and(is_query, relevance <= 0)
    if empty_target_action == "neg":
        values = torch.where(empty, 0.0, values)
    elif empty_target_action == "pos":
        values = torch.where(empty, 1.0, values)
    counted = is_query
    if empty_target_action in ("skip", "error"):
        counted = torch.logical_and(is_query, empty.logical_not())
    w = counted.to(torch.float64)
    if weights is not None:
        w = w * weights.to(torch.float64)
        counted = torch.logical_and(counted, w > 0)
    # where, not multiply: an uncounted query's value may be NaN (0 / 0).
    total = torch.where(counted, values * w, 0.0).sum()
    minimum = torch.where(counted, values, float("inf")).amin() if values.numel() else None
    maximum = torch.where(counted, values, float("-inf")).amax() if values.numel() else None
    # torch.full, not torch.tensor: a copy of a host tensor to a GPU synchronizes
    inf = torch.full((), float("inf"), dtype=torch.float64, device=values.device)
    return (
        total,
        w.sum(),
        inf if minimum is None else minimum,
        -inf if maximum is None else maximum,
        torch.count_nonzero(empty),
    )


def retrieval_aggregate(
    total: Tensor, weight: Tensor, minimum: Tensor, maximum: Tensor, aggregation: str
) -> Tensor:
    """The aggregated value; 0.0 when no query was counted (as TorchMetrics)."""
    if aggregation == "min":
        value = minimum
    elif aggregation == "max":
        value = maximum
    else:
        value = total / weight.clamp(min=1e-300)
    return torch.where(weight > 0, value, 0.0)


def counted_query_values(
    values: Tensor, candidates: Tensor, relevance: Tensor, empty_target_action: str
) -> tuple[Tensor, Tensor]:
    """Apply `empty_target_action` to per-query values and say which queries count.

    Args:
        values: `(Q,)` per-query values, or `(Q, K)` per-query curves.
        candidates: `(Q,)` real candidates per query (0: the slot holds no query).
        relevance: `(Q,)` summed relevance per query (0: an empty query).
        empty_target_action: "neg" (an empty query is 0), "pos" (1), "skip" or "error" (it
            does not count).

    Returns:
        `(values, counted)`: the values with empty queries set, and a `(Q,)` bool mask of the
        queries that count.
    """
    check_choice("empty_target_action", empty_target_action, EMPTY_TARGET_ACTIONS)
    is_query = candidates > 0
    empty = torch.logical_and(is_query, relevance <= 0)
    rows = empty if values.dim() == 1 else empty[:, None]
    if empty_target_action == "neg":
        values = torch.where(rows, 0.0, values)
    elif empty_target_action == "pos":
        values = torch.where(rows, 1.0, values)
    counted = is_query
    if empty_target_action in ("skip", "error"):
        counted = torch.logical_and(is_query, empty.logical_not())
    return values, counted


def aggregate_query_values(
    values: Tensor, counted: Tensor, aggregation: str | Callable[..., Tensor] = "mean"
) -> Tensor:
    """Aggregate the counted queries' values (over dim 0); zeros when no query counts.

    Args:
        values: `(Q,)` per-query values or `(Q, K)` per-query curves.
        counted: `(Q,)` bool, the queries that count.
        aggregation: "mean", "median" (the lower middle value, as `torch.median`), "min" and
            "max" (traceable), or a callable TorchMetrics' way: `aggregation(kept, dim=None)`
            for values, `aggregation(kept, dim=0)` for curves, over the counted rows (selected
            on the host).

    Returns:
        A 0-d tensor for `(Q,)` values, `(K,)` for curves.
    """
    rows = counted if values.dim() == 1 else counted[:, None]
    if callable(aggregation):
        kept = values[counted]
        if kept.shape[0] == 0:
            return torch.zeros(values.shape[1:], dtype=values.dtype, device=values.device)
        return torch.as_tensor(aggregation(kept, dim=None if values.dim() == 1 else 0))
    check_choice("aggregation", aggregation, (*AGGREGATIONS, "median"))
    if aggregation == "mean":
        count = counted.sum().to(values.dtype).clamp(min=1.0)
        value = torch.where(rows, values, 0.0).sum(0) / count
    elif aggregation == "min":
        value = torch.where(rows, values, float("inf")).amin(0)
    elif aggregation == "max":
        value = torch.where(rows, values, float("-inf")).amax(0)
    else:
        value = torch.where(rows, values, float("nan")).nanmedian(0).values
    return torch.where(counted.any(), value, 0.0)


def recall_at_fixed_precision(
    precision: Tensor, recall: Tensor, min_precision: float
) -> tuple[Tensor, Tensor]:
    """The largest recall@k whose precision@k is at least `min_precision`, and its k.

    Of the cut-offs k = 1 .. K that tie at that recall, the largest; K when no precision
    reaches `min_precision` or the best recall is 0 (TorchMetrics' rule). Traceable.

    Args:
        precision: `(K,)` precision@k for k = 1 .. K.
        recall: `(K,)` recall@k.
        min_precision: The precision to reach.

    Returns:
        `(max_recall, best_k)`: 0-d, in `recall`'s dtype and int64.

    Example:
        >>> recall_at_fixed_precision(torch.tensor([1.0, 0.5, 2 / 3]),
        ...                           torch.tensor([0.5, 0.5, 1.0]), 0.6)
        (tensor(1.), tensor(3))
    """
    size = precision.shape[0]
    k = torch.arange(1, size + 1, device=precision.device)
    reached = precision >= min_precision
    best = torch.where(reached, recall, float("-inf")).amax()
    any_reached = reached.any()
    max_recall = torch.where(any_reached, best, 0.0).to(recall.dtype)
    at_best = torch.logical_and(reached, recall == best)
    best_k = torch.where(at_best, k, 0).amax()
    keep = torch.logical_and(any_reached, max_recall != 0)
    return max_recall, torch.where(keep, best_k, size)


def _empty_error(kind: str) -> ValueError:
    what = "non-relevant" if kind == "fall_out" else "relevant"
    return ValueError(
        f"Argument `target` has a query with no {what} candidate, which "
        "empty_target_action='error' forbids."
    )


def _batch_value(
    kind: str,
    preds: Tensor,
    target: Tensor,
    top_k: int | None,
    mask: Tensor | None,
    empty_target_action: str,
    adaptive_k: bool = False,
    nonpositive_never_retrieved: bool = False,
    max_fpr: float | None = None,
) -> Tensor:
    check_retrieval_args(kind, top_k, empty_target_action)
    values, candidates, relevance = grouped_query_values(
        kind,
        preds,
        target,
        top_k,
        mask,
        adaptive_k=adaptive_k,
        nonpositive_never_retrieved=nonpositive_never_retrieved,
        max_fpr=max_fpr,
    )
    if empty_target_action == "error" and bool((candidates > 0).logical_and(relevance <= 0).any()):
        raise _empty_error(kind)
    total, weight, minimum, maximum, _ = query_statistics(
        values, candidates, relevance, empty_target_action
    )
    return retrieval_aggregate(total, weight, minimum, maximum, "mean")


def retrieval_ndcg(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
) -> Tensor:
    """Mean NDCG@k over the queries (rows) of `(B, K)` scores and graded relevance.

    Example:
        >>> preds = torch.tensor([[0.9, 0.2, 0.5], [0.1, 0.8, 0.3]])
        >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
        >>> retrieval_ndcg(preds, target)  # row 1: 1.0; row 2: 1.0 (both relevant first)
        tensor(1., dtype=torch.float64)
    """
    return _batch_value("ndcg", preds, target, top_k, mask, empty_target_action)


def retrieval_mrr(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
    *,
    nonpositive_never_retrieved: bool = False,
) -> Tensor:
    """Mean reciprocal rank of the first relevant candidate (within the top k).

    `nonpositive_never_retrieved=True` applies TorchMetrics 1.9's rule: a candidate scored <= 0
    never counts as retrieved.

    Example:
        >>> retrieval_mrr(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[0, 0, 1]]))
        tensor(0.5000, dtype=torch.float64)
    """
    return _batch_value(
        "mrr", preds, target, top_k, mask, empty_target_action, False, nonpositive_never_retrieved
    )


def retrieval_map(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
    *,
    nonpositive_never_retrieved: bool = False,
) -> Tensor:
    """Mean average precision over the queries.

    `nonpositive_never_retrieved=True` applies TorchMetrics 1.9's rule: a candidate scored <= 0
    never counts as retrieved.

    Example:
        >>> retrieval_map(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 1, 0]]))
        tensor(0.8333, dtype=torch.float64)
    """
    return _batch_value(
        "map", preds, target, top_k, mask, empty_target_action, False, nonpositive_never_retrieved
    )


def retrieval_hit_rate(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
) -> Tensor:
    """Fraction of queries with a relevant candidate in their top k.

    Example:
        >>> retrieval_hit_rate(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[0, 1, 0]]), 2)
        tensor(0., dtype=torch.float64)
    """
    return _batch_value("hit_rate", preds, target, top_k, mask, empty_target_action)


def retrieval_precision(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
    adaptive_k: bool = False,
    *,
    nonpositive_never_retrieved: bool = False,
) -> Tensor:
    """Mean precision@k over the queries.

    `nonpositive_never_retrieved=True` applies TorchMetrics 1.9's rule: a candidate scored <= 0
    never counts as retrieved.

    Example:
        >>> retrieval_precision(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 1, 0]]), 2)
        tensor(0.5000, dtype=torch.float64)
    """
    return _batch_value(
        "precision",
        preds,
        target,
        top_k,
        mask,
        empty_target_action,
        adaptive_k,
        nonpositive_never_retrieved,
    )


def retrieval_recall(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
    *,
    nonpositive_never_retrieved: bool = False,
) -> Tensor:
    """Mean recall@k over the queries.

    `nonpositive_never_retrieved=True` applies TorchMetrics 1.9's rule: a candidate scored <= 0
    never counts as retrieved (it still counts in the denominator).

    Example:
        >>> retrieval_recall(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 1, 0]]), 2)
        tensor(0.5000, dtype=torch.float64)
    """
    return _batch_value(
        "recall",
        preds,
        target,
        top_k,
        mask,
        empty_target_action,
        False,
        nonpositive_never_retrieved,
    )


def retrieval_r_precision(
    preds: Tensor,
    target: Tensor,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
) -> Tensor:
    """Mean R-precision (precision at R, the number of relevant candidates).

    Example:
        >>> retrieval_r_precision(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 1, 0]]))
        tensor(0.5000, dtype=torch.float64)
    """
    return _batch_value("r_precision", preds, target, None, mask, empty_target_action)


def retrieval_fall_out(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
) -> Tensor:
    """Mean fall-out@k: the fraction of each query's non-relevant candidates in its top k
    (lower is better). A query without a non-relevant candidate is the empty one here.

    Example:
        >>> retrieval_fall_out(torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 0, 0]]), 2)
        tensor(0.5000, dtype=torch.float64)
    """
    return _batch_value("fall_out", preds, target, top_k, mask, empty_target_action)


def retrieval_auroc(
    preds: Tensor,
    target: Tensor,
    top_k: int | None = None,
    mask: Tensor | None = None,
    empty_target_action: str = "neg",
    max_fpr: float | None = None,
) -> Tensor:
    """Mean over queries of the binary AUROC of each query's top-k candidates (0 for a query
    whose top k hold one class only); `max_fpr`: the McClish-standardized partial AUROC.

    Example:
        >>> retrieval_auroc(torch.tensor([[0.9, 0.2, 0.5, 0.4]]), torch.tensor([[1, 0, 0, 1]]))
        tensor(0.7500, dtype=torch.float64)
    """
    check_max_fpr(max_fpr)
    return _batch_value("auroc", preds, target, top_k, mask, empty_target_action, max_fpr=max_fpr)


def retrieval_precision_recall_curve(
    preds: Tensor,
    target: Tensor,
    max_k: int | None = None,
    mask: Tensor | None = None,
    adaptive_k: bool = False,
    empty_target_action: str = "neg",
) -> tuple[Tensor, Tensor, Tensor]:
    """Mean precision@k and recall@k over the queries for every k = 1 .. `max_k` (None: K).

    Returns:
        `(precision, recall, k)`: `(max_k,)` float64, float64 and int64.

    Example:
        >>> precision, recall, k = retrieval_precision_recall_curve(
        ...     torch.tensor([[0.9, 0.2, 0.5]]), torch.tensor([[1, 1, 0]]))
        >>> precision, recall, k
        (tensor([1.0000, 0.5000, 0.6667], dtype=torch.float64), tensor([0.5000, 0.5000, 1.0000], dtype=torch.float64), tensor([1, 2, 3]))
    """
    check_choice("empty_target_action", empty_target_action, EMPTY_TARGET_ACTIONS)
    precision, recall, candidates, relevance = grouped_query_curves(
        preds, target, max_k, mask, adaptive_k=adaptive_k
    )
    if empty_target_action == "error" and bool((candidates > 0).logical_and(relevance <= 0).any()):
        raise _empty_error("recall")
    precision, counted = counted_query_values(precision, candidates, relevance, empty_target_action)
    recall, _ = counted_query_values(recall, candidates, relevance, empty_target_action)
    k = torch.arange(1, precision.shape[1] + 1, device=precision.device)
    return aggregate_query_values(precision, counted), aggregate_query_values(recall, counted), k
