"""Retrieval metrics over queries: NDCG@k, MRR, MAP, HitRate@k, Precision@k, Recall@k and
R-precision, with TorchMetrics' definitions and `empty_target_action`.

Two input forms feed one computation:

* **Grouped** (the fast path): `(B, K)` scores and relevance targets, one row per query, with
  an optional `(B, K)` mask of real candidates (padding is `False`). One row sort per batch,
  then per-query values with fixed-shape tensor ops; a fully masked row is no query.
* **Flat** (TorchMetrics' form): `(N,)` scores, targets and query `indexes`, grouped at compute
  time by two stable sorts over the whole buffer. Exact but slower: its cost grows with the
  buffer's capacity, not with the batch.

Both reduce to per-element tensors in ranked order (query id, rank in the query, relevance,
relevant-so-far, tie-group mean gain) from which every metric is a scatter into per-query sums.

Definitions (per query, ranked by score, best first; `k` = `top_k`, or every candidate):

* precision@k = relevant in the top k / k (`adaptive_k`: / min(k, candidates));
* recall@k = relevant in the top k / relevant;
* hit rate@k = 1 if any relevant in the top k;
* reciprocal rank = 1 / rank of the first relevant in the top k (0 if none);
* average precision = mean over the relevant in the top k of the precision at their rank;
* R-precision = relevant in the top R / R, R = relevant;
* NDCG@k = DCG@k / ideal DCG@k with linear gains and discount 1 / log2(rank + 1); tied scores
  share their tie group's mean gain, as scikit-learn's `ndcg_score` and TorchMetrics.

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

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional._checks import check_tensor

__all__ = [
    "AGGREGATIONS",
    "EMPTY_TARGET_ACTIONS",
    "KINDS",
    "NONPOSITIVE_RULE_KINDS",
    "check_retrieval_args",
    "flat_query_values",
    "grouped_query_values",
    "query_statistics",
    "retrieval_aggregate",
    "retrieval_hit_rate",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_r_precision",
    "retrieval_recall",
]

KINDS = ("ndcg", "mrr", "map", "hit_rate", "precision", "recall", "r_precision")
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


def _per_query(
    kind: str,
    top_k: int | None,
    adaptive_k: bool,
    num_groups: int,
    group: Tensor,
    rank: Tensor,
    gain: Tensor,
    valid: Tensor,
    relevant_so_far: Tensor,
    tie_gain: Tensor,
    ideal_dcg: Tensor,
    retrieved: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-query values from per-element tensors in ranked order (all flat, same length).

    `retrieved` (bool), where given, is False for candidates that never count as a hit (their
    relevance still counts in `relevance`, recall's denominator); `relevant_so_far` must count
    only hits that are retrieved.

    Returns `(values, candidates, relevance)`, each `(num_groups,)` float64: the metric, the
    number of real candidates and the summed relevance of each query.
    """
    f64 = torch.float64

    def per_group(values: Tensor) -> Tensor:
        out = torch.zeros(num_groups, dtype=f64, device=gain.device)
        return out.scatter_add_(0, group, values.to(f64))

    candidates = per_group(valid)
    relevance = per_group(gain)
    cut = candidates if top_k is None else torch.full_like(candidates, float(top_k))
    in_top = torch.logical_and(valid, rank.to(f64) < cut[group])
    hit = torch.logical_and(in_top, gain > 0)
    if retrieved is not None:
        hit = torch.logical_and(hit, retrieved)
    hits = per_group(hit)
    if kind == "precision":
        if top_k is None:
            denominator = candidates
        elif adaptive_k:
            denominator = candidates.clamp(max=float(top_k))
        else:
            denominator = cut
        values = hits / denominator
    elif kind == "recall":
        values = hits / relevance
    elif kind == "hit_rate":
        values = (hits > 0).to(f64)
    elif kind == "mrr":
        inverse_rank = torch.where(hit, 1.0 / (rank.to(f64) + 1.0), 0.0)
        values = torch.zeros(num_groups, dtype=f64, device=gain.device)
        values.scatter_reduce_(0, group, inverse_rank, "amax")
    elif kind == "map":
        precision_at_hit = torch.where(hit, relevant_so_far.to(f64) / (rank.to(f64) + 1.0), 0.0)
        values = per_group(precision_at_hit) / hits.clamp(min=1.0)
    elif kind == "r_precision":
        in_r = torch.logical_and(valid, rank.to(f64) < relevance[group])
        values = per_group(torch.logical_and(in_r, gain > 0)) / relevance
    else:  # ndcg
        dcg = per_group(torch.where(in_top, _discount(rank) * tie_gain, 0.0))
        values = torch.where(ideal_dcg > 0, dcg / ideal_dcg.clamp(min=1e-300), 0.0)
    return values, candidates, relevance


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

    Returns:
        `(values, candidates, relevance)`, each `(B,)` float64.
    """
    _check_pair(preds, target, 2)
    _check_nonpositive_rule(kind, nonpositive_never_retrieved)
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
    # Padding sorts last (-inf); a real -inf or NaN score is a data error counted elsewhere.
    scores = torch.where(valid, preds, float("-inf"))
    sorted_scores, order = torch.sort(scores, dim=1, descending=True, stable=True)
    valid_sorted = valid.gather(1, order)
    gain = torch.where(valid_sorted, target.gather(1, order).to(torch.float64), 0.0)
    rank = torch.arange(width, device=preds.device).expand(rows, width)
    retrieved = sorted_scores > 0 if nonpositive_never_retrieved else None
    is_hit = gain > 0 if retrieved is None else torch.logical_and(gain > 0, retrieved)
    relevant_so_far = torch.cumsum(is_hit.to(torch.int32), dim=1)
    # Tie groups: runs of equal scores in a row (ids unique over the batch).
    changed = torch.ones_like(valid_sorted)
    changed[:, 1:] = sorted_scores[:, 1:] != sorted_scores[:, :-1]
    ties = torch.cumsum(changed.to(torch.int64), dim=1) - 1
    ties = ties + torch.arange(rows, device=preds.device)[:, None] * width
    tie_sum = torch.zeros(rows * width, dtype=torch.float64, device=preds.device)
    tie_sum.scatter_add_(0, ties.reshape(-1), gain.reshape(-1))
    tie_size = torch.zeros_like(tie_sum).scatter_add_(
        0, ties.reshape(-1), torch.ones_like(gain).reshape(-1)
    )
    tie_gain = (tie_sum / tie_size.clamp(min=1.0))[ties]
    ideal = torch.sort(gain, dim=1, descending=True).values
    cut = valid.sum(1, keepdim=True) if top_k is None else top_k
    ideal_dcg = torch.where(rank < cut, _discount(rank) * ideal, 0.0).sum(1)
    group = torch.arange(rows, device=preds.device)[:, None].expand(rows, width)
    return _per_query(
        kind,
        top_k,
        adaptive_k,
        rows,
        group.reshape(-1),
        rank.reshape(-1),
        gain.reshape(-1),
        valid_sorted.reshape(-1),
        relevant_so_far.reshape(-1),
        tie_gain.reshape(-1),
        ideal_dcg,
        None if retrieved is None else retrieved.reshape(-1),
    )


def _sort_by_query(indexes: Tensor, keys: Tensor) -> Tensor:
    """Order by query id, then by `keys` descending, ties in input order (two stable sorts)."""
    by_key = torch.sort(keys, descending=True, stable=True).indices
    by_query = torch.sort(indexes[by_key], stable=True).indices
    return by_key[by_query]


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

    Returns:
        `(values, candidates, relevance)`, each `(N,)` float64 and indexed by query rank
        (queries in increasing id order, then rows that hold no query: 0 candidates).
    """
    _check_pair(preds, target, 1)
    _check_nonpositive_rule(kind, nonpositive_never_retrieved)
    check_tensor("indexes", indexes)
    if indexes.shape != preds.shape or indexes.is_floating_point():
        raise ValueError(
            "Argument `indexes` must be an integer tensor shaped like `preds` "
            f"{tuple(preds.shape)}. Received: indexes.shape={tuple(indexes.shape)}, "
            f"indexes.dtype={indexes.dtype}"
        )
    n = preds.shape[0]
    device = preds.device
    valid = torch.ones(n, dtype=torch.bool, device=device) if valid is None else valid
    # Unused rows form one last pseudo-query with no real candidate.
    ids = torch.where(valid, indexes.to(torch.int64), torch.iinfo(torch.int64).max)
    scores = torch.where(valid, preds.to(torch.float64), float("-inf"))
    gains = torch.where(valid, target.to(torch.float64), 0.0)
    order = _sort_by_query(ids, scores)
    ids_sorted, scores_sorted = ids[order], scores[order]
    gain, valid_sorted = gains[order], valid[order]
    position = torch.arange(n, device=device)
    new_query = torch.ones(n, dtype=torch.bool, device=device)
    new_query[1:] = ids_sorted[1:] != ids_sorted[:-1]
    group = torch.cumsum(new_query.to(torch.int64), 0) - 1
    start = torch.full((n,), n, dtype=torch.int64, device=device)
    start.scatter_reduce_(0, group, position, "amin")
    rank = position - start[group]
    retrieved = scores_sorted > 0 if nonpositive_never_retrieved else None
    is_hit = (gain > 0 if retrieved is None else torch.logical_and(gain > 0, retrieved)).to(
        torch.int64
    )
    hits_before = torch.cumsum(is_hit, 0) - is_hit
    relevant_so_far = torch.cumsum(is_hit, 0) - hits_before[start[group]]
    new_tie = new_query.clone()
    new_tie[1:] = torch.logical_or(new_query[1:], scores_sorted[1:] != scores_sorted[:-1])
    ties = torch.cumsum(new_tie.to(torch.int64), 0) - 1
    tie_sum = torch.zeros(n, dtype=torch.float64, device=device).scatter_add_(0, ties, gain)
    tie_size = torch.zeros_like(tie_sum).scatter_add_(0, ties, torch.ones_like(gain))
    tie_gain = (tie_sum / tie_size.clamp(min=1.0))[ties]
    # The ideal order: the same query order, relevance descending; dense ids are the same.
    ideal_order = _sort_by_query(ids, gains)
    ideal_gain = gains[ideal_order]
    candidates = torch.zeros(n, dtype=torch.float64, device=device)
    candidates.scatter_add_(0, group, valid_sorted.to(torch.float64))
    cut = candidates[group] if top_k is None else torch.full_like(gain, float(top_k))
    ideal_terms = torch.where(rank.to(torch.float64) < cut, _discount(rank) * ideal_gain, 0.0)
    ideal_dcg = torch.zeros(n, dtype=torch.float64, device=device)
    ideal_dcg.scatter_add_(0, group, ideal_terms)
    return _per_query(
        kind,
        top_k,
        adaptive_k,
        n,
        group,
        rank,
        gain,
        valid_sorted,
        relevant_so_far,
        tie_gain,
        ideal_dcg,
        retrieved,
    )


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


def _batch_value(
    kind: str,
    preds: Tensor,
    target: Tensor,
    top_k: int | None,
    mask: Tensor | None,
    empty_target_action: str,
    adaptive_k: bool = False,
    nonpositive_never_retrieved: bool = False,
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
    )
    if empty_target_action == "error" and bool((candidates > 0).logical_and(relevance <= 0).any()):
        raise ValueError(
            "Argument `target` has a query with no relevant candidate, which "
            "empty_target_action='error' forbids."
        )
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
