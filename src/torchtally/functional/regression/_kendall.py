"""Kendall's rank correlation (tau a, b and c, and its asymptotic test) over a whole sample.

The pair counts come from sorts, scatters and a merge count, never from the n² pairs: with the
rows ordered by (x, y), a discordant pair is an inversion of y (x-ties are ordered by y, so
they add none), and the inversions are counted level by level as in a merge sort — at each
level every element of a block's right half counts the elements of its left half above it,
with one batched sort and one batched `searchsorted` (log2 n levels). Everything has fixed
shapes and reads no value on the host, so it traces and compiles; rows whose `valid` entry is
False (a preallocated buffer's unfilled rows) are left out.
"""

from __future__ import annotations

import math
from typing import NamedTuple, cast

import torch
from torch import Tensor

from torchtally._errors import check_choice

__all__ = [
    "KENDALL_ALTERNATIVES",
    "KENDALL_VARIANTS",
    "KendallStatistics",
    "kendall_p_value",
    "kendall_statistics",
    "kendall_tau",
    "kendall_tau_from_statistics",
]

KENDALL_VARIANTS = ("a", "b", "c")
"""Kendall's tau variants: "a" (ties ignored), "b" (tie-corrected), "c" (Stuart's)."""
KENDALL_ALTERNATIVES = ("two-sided", "less", "greater")
"""The alternative hypotheses of Kendall's test."""


class KendallStatistics(NamedTuple):
    """Per column (float64 `(k,)`): the pair counts and tie sums Kendall's tau and its test need.

    `ties_*` is Σ t(t - 1)/2 over the groups of t tied values, `ties_*_p1` Σ t(t - 1)(t - 2)
    and `ties_*_p2` Σ t(t - 1)(2t + 5); `distinct_*` counts the distinct values.
    """

    concordant: Tensor
    discordant: Tensor
    samples: Tensor
    ties_x: Tensor
    ties_x_p1: Tensor
    ties_x_p2: Tensor
    ties_y: Tensor
    ties_y_p1: Tensor
    ties_y_p2: Tensor
    distinct_x: Tensor
    distinct_y: Tensor


def _columns(values: Tensor) -> Tensor:
    return values.reshape(-1, 1) if values.dim() < 2 else values


def _order(values: Tensor, invalid: Tensor) -> Tensor:
    """Row order per column sorting by value with the invalid rows last (two stable sorts:
    a valid value may itself be +inf, so it cannot stand in for "invalid")."""
    by_value = torch.sort(values, dim=0, stable=True).indices
    invalid_then = torch.sort(invalid.gather(0, by_value).to(torch.uint8), dim=0, stable=True)
    return by_value.gather(0, invalid_then.indices)


def _groups(keys: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """Group index (in sorted order) and size per group of equal consecutive `keys` (sorted,
    `(n, k)`); `weight` (1 for a valid row, 0 else) sizes the groups."""
    new_group = torch.ones_like(keys, dtype=torch.bool)
    new_group[1:] = keys[1:] != keys[:-1]
    group = torch.cumsum(new_group.to(torch.int64), 0) - 1
    size = torch.zeros_like(weight).scatter_add_(0, group, weight)
    return group, size


def _tie_sums(size: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Σ t(t-1)/2, Σ t(t-1)(t-2), Σ t(t-1)(2t+5) and the number of groups, per column."""
    pairs = size * (size - 1)
    return (
        (pairs / 2).sum(0),
        (pairs * (size - 2)).sum(0),
        (pairs * (2 * size + 5)).sum(0),
        (size > 0).to(size.dtype).sum(0),
    )


def _dense_ranks(values: Tensor, invalid: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """0-based dense ranks in the rows' own positions (an invalid row ranks after every valid
    one) and the group sizes, per column."""
    order = _order(values, invalid)
    ordered = values.gather(0, order)
    ordered_invalid = invalid.gather(0, order)
    # A valid row never shares a group with an invalid one, whatever their values.
    keys = torch.where(ordered_invalid, math.inf, ordered)
    new_group = torch.ones_like(ordered, dtype=torch.bool)
    new_group[1:] = (keys[1:] != keys[:-1]) | (ordered_invalid[1:] != ordered_invalid[:-1])
    group = torch.cumsum(new_group.to(torch.int64), 0) - 1
    size = torch.zeros_like(weight).scatter_add_(0, group, weight.gather(0, order))
    ranks = torch.empty_like(group).scatter_(0, order, group)
    return ranks, size


def _inversions(ranks: Tensor, valid: Tensor) -> Tensor:
    """Σ over valid positions i of #{j < i valid: ranks[j] > ranks[i]}, per column of `(n, k)`
    integer ranks (invalid rows hold a rank above every valid one)."""
    rows, columns = ranks.shape
    size = 1 << max(0, (rows - 1).bit_length())
    sentinel = rows  # above every valid rank
    seq = ranks.t().to(torch.float64)
    mask = valid.t()
    if size > rows:
        seq = torch.cat([seq, seq.new_full((columns, size - rows), float(sentinel))], 1)
        mask = torch.cat([mask, mask.new_zeros((columns, size - rows))], 1)
    seq = torch.where(mask, seq, float(sentinel))
    total = seq.new_zeros(columns)
    block = 1
    while block < size:
        blocks = seq.view(columns, size // (2 * block), 2, block)
        masks = mask.view(columns, size // (2 * block), 2, block)
        left = torch.sort(blocks[:, :, 0], dim=-1).values.contiguous()
        right = blocks[:, :, 1].contiguous()
        not_above = torch.searchsorted(left, right, right=True).to(torch.float64)
        left_valid = masks[:, :, 0].to(torch.float64).sum(-1, keepdim=True)
        above = torch.where(masks[:, :, 1], left_valid - not_above, 0.0)
        total = total + above.sum((1, 2))
        block *= 2
    return total


def kendall_statistics(x: Tensor, y: Tensor, valid: Tensor | None = None) -> KendallStatistics:
    """Concordant and discordant pair counts, tie sums and distinct values of `(n,)` or
    `(n, k)` samples `x` and `y` (per column; rows with `valid` False left out).

    A pair tied in x or in y is neither concordant nor discordant.
    """
    x2, y2 = _columns(x).to(torch.float64), _columns(y).to(torch.float64)
    rows = x2.shape[0]
    if valid is None:
        valid = torch.ones(rows, dtype=torch.bool, device=x2.device)
    valid2 = valid.reshape(-1, 1).expand_as(x2)
    invalid = ~valid2
    weight = valid2.to(torch.float64)
    rank_x, size_x = _dense_ranks(x2, invalid, weight)
    rank_y, size_y = _dense_ranks(y2, invalid, weight)
    # Invalid rows rank `rows` in x, so their joint keys sort after every valid row's.
    rank_x = torch.where(valid2, rank_x, rows)
    rank_y = torch.where(valid2, rank_y, rows)
    joint = rank_x * (rows + 1) + rank_y
    joint_sorted, order = torch.sort(joint, dim=0)
    _, size_xy = _groups(joint_sorted, weight.gather(0, order))
    discordant = _inversions(rank_y.gather(0, order), valid2.gather(0, order))
    count = weight.sum(0)
    ties_x, ties_x_p1, ties_x_p2, distinct_x = _tie_sums(size_x)
    ties_y, ties_y_p1, ties_y_p2, distinct_y = _tie_sums(size_y)
    ties_xy = (size_xy * (size_xy - 1) / 2).sum(0)
    total_pairs = count * (count - 1) / 2
    concordant = total_pairs - discordant - ties_x - ties_y + ties_xy
    return KendallStatistics(
        concordant,
        discordant,
        count,
        ties_x,
        ties_x_p1,
        ties_x_p2,
        ties_y,
        ties_y_p1,
        ties_y_p2,
        distinct_x,
        distinct_y,
    )


def kendall_tau_from_statistics(stats: KendallStatistics, variant: str = "b") -> Tensor:
    """Tau per column, clamped to [-1, 1] (NaN where it is undefined).

    `"a"`: (C - D) / (C + D), TorchMetrics' tau-a (the textbook tau-a divides by all
    n(n-1)/2 pairs; the two agree without ties); `"b"`: (C - D) / sqrt((n0 - Tx)(n0 - Ty));
    `"c"`: 2 (C - D) / (n² (m - 1) / m), m the fewer distinct values of x and y (scipy's).
    """
    check_choice("variant", variant, KENDALL_VARIANTS)
    difference = stats.concordant - stats.discordant
    if variant == "a":
        tau = difference / (stats.concordant + stats.discordant)
    elif variant == "b":
        pairs = stats.samples * (stats.samples - 1) / 2
        tau = difference / ((pairs - stats.ties_x) * (pairs - stats.ties_y)).sqrt()
    else:
        classes = torch.minimum(stats.distinct_x, stats.distinct_y)
        tau = 2 * difference / ((classes - 1) / classes * stats.samples**2)
    return tau.clamp(-1.0, 1.0)


def kendall_p_value(
    stats: KendallStatistics, variant: str = "b", alternative: str = "two-sided"
) -> Tensor:
    """The asymptotic (normal) p-value of Kendall's test per column: for tau-a the variance
    without ties, else the tie-corrected one (scipy's `kendalltau(method="asymptotic")`)."""
    check_choice("variant", variant, KENDALL_VARIANTS)
    check_choice("alternative", alternative, KENDALL_ALTERNATIVES)
    n = stats.samples
    difference = stats.concordant - stats.discordant
    base = n * (n - 1) * (2 * n + 5)
    if variant == "a":
        statistic = 3 * difference / (base / 2).sqrt()
    else:
        m = n * (n - 1)
        variance = (base - stats.ties_x_p2 - stats.ties_y_p2) / 18
        variance = variance + 2 * stats.ties_x * stats.ties_y / m
        variance = variance + stats.ties_x_p1 * stats.ties_y_p1 / (9 * m * (n - 2))
        statistic = difference / variance.sqrt()
        # A constant sample has no test (its variance is 0 up to rounding): NaN, as scipy's.
        pairs = n * (n - 1) / 2
        constant = (stats.ties_x == pairs) | (stats.ties_y == pairs)
        statistic = torch.where(constant, math.nan, statistic)
    if alternative == "two-sided":
        return cast(Tensor, 2 * torch.special.ndtr(-statistic.abs()))
    if alternative == "greater":
        return cast(Tensor, torch.special.ndtr(-statistic))
    return cast(Tensor, torch.special.ndtr(statistic))


def kendall_tau(
    x: Tensor,
    y: Tensor,
    variant: str = "b",
    alternative: str | None = None,
    valid: Tensor | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """Kendall's tau of `(n,)` or `(n, k)` samples (float64, 0-d for one column, else
    `(k,)`); with `alternative` ("two-sided", "less", "greater"), `(tau, p_value)`.

    Example:
        >>> kendall_tau(torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 1.0]))
        tensor(0.3333, dtype=torch.float64)
    """
    stats = kendall_statistics(x, y, valid)
    tau = kendall_tau_from_statistics(stats, variant)
    one = x.dim() < 2
    if alternative is None:
        return tau[0] if one else tau
    p_value = kendall_p_value(stats, variant, alternative)
    return (tau[0], p_value[0]) if one else (tau, p_value)
