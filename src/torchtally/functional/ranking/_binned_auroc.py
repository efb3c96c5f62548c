"""Binned AUROC: constant-memory histograms of the scores, with an exact error bound.

Scores in a known range `[low, high]` fall into `num_bins` equal-width bins; each class keeps
a histogram of its negatives' and its positives' bins. The AUROC over bins counts a
(positive, negative) pair in different bins exactly and a pair in the same bin as a tie (1/2),
so it differs from the exact AUROC by at most

    bound = 1/2 * sum_b pos_b * neg_b / (P * N)

(each same-bin pair contributes 0, 1/2 or 1 exactly, and 1/2 here). The bin map is monotone
in the score, rounding included, so the bound holds exactly; it is computable from the state.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int, tracing
from torchtally.functional._blocks import blocked, cached_ones, eager_at_least, may_cache
from torchtally.functional._checks import (
    ErrorCounts,
    check_tensor,
    count_nonfinite,
    count_nonfinite_rows,
)
from torchtally.functional.ranking._auroc import AVERAGES, average_classes
from torchtally.functional.ranking._inputs import (
    check_score_range,
    count_invalid_labels,
    flatten_scores,
)
from torchtally.functional.ranking._keys import bits_to_keys_

__all__ = [
    "SLOT_ABOVE",
    "SLOT_BELOW",
    "SLOT_NAN",
    "SLOT_NEG_INF",
    "SLOT_POS_INF",
    "add_binned_counts",
    "add_binned_slots",
    "bin_slot_edges",
    "binned_auroc",
    "binned_auroc_compute",
    "binned_auroc_error_bound",
    "binned_auroc_update",
    "binned_slot_auroc",
    "binned_slot_errors",
    "count_out_of_range",
    "fold_binned_slots",
    "prepare_slot_tables",
    "slot_constants",
    "slot_edges",
    "slot_width",
]


def binned_auroc_update(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    score_range: Sequence[float] = (0.0, 1.0),
    num_classes: int | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """One batch's histograms, with one `index_add_`.

    Scores outside `score_range` go to the end bins (the metric reports them as errors);
    NaN scores go to bin 0. Binary labels > 0 are positive; multiclass labels outside
    `[0, num_classes)` are left out.

    Args:
        labels: Binary labels shaped like `predictions`, or `(N,)` class indices.
        predictions: Binary scores, or `(N, num_classes)` class scores.
        num_bins: Number of equal-width bins over `score_range`.
        score_range: `(low, high)`, both included.
        num_classes: None for binary, else the number of classes.
        out: A contiguous float64 `(K, 2, num_bins)` histogram to add the counts into, in
            place (a metric's state: saves allocating, then adding, a histogram per batch).

    Returns:
        float64 counts of shape `(K, 2, num_bins)`: `[k, 0]` negatives and `[k, 1]` positives
        of class k (K = 1 for binary); `out` itself when given.
    """
    check_int("num_bins", num_bins, 1)
    low, high = check_score_range(score_range)
    size = 2 * num_bins * (1 if num_classes is None else num_classes)
    if out is not None and (
        out.dtype != torch.float64 or out.numel() != size or not out.is_contiguous()
    ):
        raise ValueError(
            f"Argument `out` must be a contiguous float64 tensor of {size} elements "
            f"(K, 2, num_bins). Received: dtype={out.dtype}, shape={tuple(out.shape)}"
        )
    if out is None:
        check_tensor("predictions", predictions)  # before reading its device
        histogram = torch.zeros(size, dtype=torch.float64, device=predictions.device)
    else:
        histogram = out
    add_binned_counts(labels, predictions, num_bins, low, high, num_classes, histogram)
    return histogram if out is not None else histogram.view(-1, 2, num_bins)


def add_binned_counts(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    low: float,
    high: float,
    num_classes: int | None,
    histogram: Tensor,
    *,
    count_errors: bool = False,
    width: int | None = None,
) -> ErrorCounts | None:
    """`binned_auroc_update` into a contiguous float64 `histogram` of the right size, for a
    caller that checked `num_bins`, `(low, high)` and the histogram once (a metric's
    constructor) instead of on every batch. The labels and predictions are checked here.

    With `count_errors`, also returns the counts of invalid labels (`invalid_labels`; binary:
    not 0/1, None for bool labels; multiclass: outside `[0, num_classes)`), of non-finite
    scores (binary) or rows with one (multiclass) (`nonfinite_predictions`), and of scores
    outside `[low, high]` (`predictions_outside`), read in the same blocks as the bins (a
    large batch makes no batch-sized check temporaries).

    `width`: binary only, the stride between the negatives' and the positives' bins in the
    flat `histogram` (default `num_bins`): the checked slot layout (`slot_width`) passes a
    view starting at its first negative bin.
    """
    # rows with a non-finite score for (N, C) class scores; elements otherwise (as before)
    by_rows = num_classes is not None and isinstance(predictions, Tensor) and predictions.dim() == 2
    labels, scores = flatten_scores(labels, predictions, num_classes)
    row = 1 if num_classes is None else num_classes
    rows = blocked(scores, row, from_elements=_BLOCK_FROM, block_elements=_BLOCK)
    if rows is None:
        _add_counts(labels, scores, num_bins, low, high, num_classes, histogram, width)
        return (
            _count_errors(labels, scores, low, high, num_classes, by_rows) if count_errors else None
        )
    # Eager CPU, a large batch: in blocks, so that the bin indices are cache-sized buffers
    # reused by every block instead of fresh batch-sized allocations.
    totals: ErrorCounts | None = None
    for start in range(0, scores.shape[0], rows):
        stop = start + rows
        piece_labels, piece = labels[start:stop], scores[start:stop]
        _add_counts(piece_labels, piece, num_bins, low, high, num_classes, histogram, width)
        if not count_errors:
            continue
        counts = _count_errors(piece_labels, piece, low, high, num_classes, by_rows)
        if totals is None:
            totals = counts
        else:
            for kind, total in totals.items():
                count = counts[kind]
                if total is not None and count is not None:
                    total.add_(count)
    return totals


def _count_errors(
    labels: Tensor,
    scores: Tensor,
    low: float,
    high: float,
    num_classes: int | None,
    by_rows: bool,
) -> ErrorCounts:
    # Multiclass: a NaN anywhere in a row shows in its maximum (one reading pass)
    nonfinite = count_nonfinite_rows(scores) if by_rows else count_nonfinite(scores)
    return {
        "invalid_labels": count_invalid_labels(labels, num_classes),
        "nonfinite_predictions": nonfinite,
        "predictions_outside": _count_outside(scores, low, high),
    }


#: From this many scores an eager CPU update works in blocks of about `_BLOCK` scores.
_BLOCK_FROM = 1 << 17
_BLOCK = 1 << 16


def _add_counts(
    labels: Tensor,
    scores: Tensor,
    num_bins: int,
    low: float,
    high: float,
    num_classes: int | None,
    histogram: Tensor,
    width: int | None = None,
) -> None:
    x = scores if scores.dtype in (torch.float64, torch.float32) else scores.float()
    # Clamping to [0, num_bins - 1] and then truncating (the integer conversion) is a floor:
    # every step is monotone. The label's offset is added after it, in integers: added to
    # the fraction (2.9999999999999996 + 30 rounds to 33.0) it would put equal scores of a
    # positive and a negative in different bins. int32 indices (`index_add_` takes them):
    # float -> int32 is vectorized on CPU where float -> int64 is not, and half the bytes.
    scale = num_bins / (high - low)
    # x - 0.0 is x: the common (0, 1) range skips the subtraction (x * scale makes the copy)
    bins = (x.mul(scale) if low == 0.0 else x.sub(low).mul_(scale)).nan_to_num_(nan=0.0)
    index_dtype = torch.int32 if histogram.numel() < 1 << 31 else torch.int64
    index = bins.clamp_(0, num_bins - 1).to(index_dtype)
    flat = histogram.view(-1)
    if num_classes is None:
        index.add_(_positive(labels, index_dtype), alpha=num_bins if width is None else width)
        flat.index_add_(0, index, cached_ones(index.shape[0], flat))
        return
    classes = torch.arange(num_classes, device=index.device, dtype=index_dtype)
    index = index.add_(labels[:, None] == classes, alpha=num_bins)
    index.add_(classes, alpha=2 * num_bins)
    valid = torch.logical_and(labels >= 0, labels < num_classes)
    weight = valid.to(torch.float64)[:, None].expand(index.shape).reshape(-1)
    flat.index_add_(0, index.reshape(-1), weight)


def _positive(labels: Tensor, dtype: torch.dtype) -> Tensor:
    """1 where a binary label is > 0, else 0, as `dtype` integers for integer labels (a clamp
    is one cheap pass where a comparison writes a bool mask, several times slower on CPU;
    and adding a same-dtype tensor is about twice as fast as a mixed int32 + int64 add)."""
    if labels.dtype == torch.bool or labels.is_floating_point() or labels.is_complex():
        return labels > 0
    return labels.clamp(0, 1).to(dtype)


def binned_auroc_compute(histogram: Tensor, average: str = "macro") -> Tensor:
    """AUROC from `(K, 2, num_bins)` histograms, same-bin pairs counting as ties.

    Args:
        histogram: As returned by `binned_auroc_update` (summed over batches).
        average: For K > 1: "macro" (mean over classes with positives and negatives) or
            "none" (per-class values).

    Returns:
        float64: 0-d, or `(K,)` for multiclass `average="none"`.
    """
    check_choice("average", average, AVERAGES)
    negatives, positives = histogram[:, 0], histogram[:, 1]
    below = negatives.cumsum(-1) - negatives
    twice_u = (positives * (2 * below + negatives)).sum(-1)
    return _reduce(twice_u / (2 * _pairs(histogram)), average)


def binned_auroc_error_bound(histogram: Tensor, average: str = "macro") -> Tensor:
    """Bound on |binned AUROC - exact AUROC|: `1/2 * sum_b pos_b * neg_b / (P * N)`.

    Args:
        histogram: `(K, 2, num_bins)` histograms.
        average: As in `binned_auroc_compute`; the macro bound is the mean of the per-class
            bounds (over the classes with positives and negatives).

    Returns:
        float64, shaped like `binned_auroc_compute`'s result.
    """
    check_choice("average", average, AVERAGES)
    same_bin = (histogram[:, 0] * histogram[:, 1]).sum(-1)
    return _reduce(same_bin / (2 * _pairs(histogram)), average)


def binned_auroc(
    labels: Tensor,
    predictions: Tensor,
    num_bins: int,
    score_range: Sequence[float] = (0.0, 1.0),
    num_classes: int | None = None,
    average: str = "macro",
) -> Tensor:
    """AUROC over `num_bins` score bins (constant memory; see the module doc for the bound).

    Args:
        labels: Binary labels shaped like `predictions`, or `(N,)` class indices.
        predictions: Binary scores, or `(N, num_classes)` class scores, within `score_range`.
        num_bins: Number of equal-width bins.
        score_range: `(low, high)` of the scores; probabilities by default.
        num_classes: None for binary, else the number of classes.
        average: "macro" or "none" (multiclass only).

    Returns:
        A float64 tensor.

    Example:
        >>> labels, scores = torch.tensor([1, 0, 0, 1]), torch.tensor([0.1, 0.2, 0.3, 0.8])
        >>> binned_auroc(labels, scores, num_bins=10)
        tensor(0.5000, dtype=torch.float64)
        >>> binned_auroc(labels, scores, num_bins=2)  # exact 0.5, bound 0.25
        tensor(0.7500, dtype=torch.float64)
    """
    histogram = binned_auroc_update(labels, predictions, num_bins, score_range, num_classes)
    return binned_auroc_compute(histogram, average)


def count_out_of_range(scores: Tensor, score_range: Sequence[float]) -> Tensor:
    """Number of scores outside `[low, high]` (a 0-d count; NaN is not counted here)."""
    low, high = check_score_range(score_range)
    return _count_outside(scores, low, high)


def _count_outside(scores: Tensor, low: float, high: float) -> Tensor:
    if (
        eager_at_least(scores, _FLOAT_MASKS_FROM)
        and scores.device.type == "cpu"
        and scores.numel() <= _SUMMED_EXACTLY_UP_TO
        and not tracing(scores)
    ):
        # Eager CPU: comparisons that write float32 0/1 are vectorized where those writing
        # bools are not (about 3x faster here); their float sum is exact below 2**24.
        below = torch.lt(scores, low, out=scores.new_empty(scores.shape, dtype=torch.float32))
        above = torch.gt(scores, high, out=torch.empty_like(below))
        return below.add_(above).sum().to(torch.int64)
    # one count of one mask: four ops where two counts and their sum take five
    return torch.count_nonzero(torch.logical_or(scores < low, scores > high))


#: From this many scores the out-of-range count uses float masks (below, the two extra
#: buffers cost more dispatch than the faster comparisons save).
_FLOAT_MASKS_FROM = 1 << 15
_SUMMED_EXACTLY_UP_TO = 1 << 24


def _pairs(histogram: Tensor) -> Tensor:
    return histogram[:, 0].sum(-1) * histogram[:, 1].sum(-1)


def _reduce(per_class: Tensor, average: str) -> Tensor:
    if per_class.shape[0] == 1:
        return per_class[0]
    return average_classes(per_class, average)


# ------------------------------------------------------------------ checked slot layout
#
# Off the CPU, binary binned AUROC folds its value checks into the bin index: each score goes
# to one of `slot_width(num_bins)` slots, its bin (slot `SLOT_BELOW + 1 + bin`) or one that
# names a bad value, found by one `bucketize` against edges that reproduce the bin rule of
# `_add_counts` exactly; each label to one of four kinds (below 0, 0, 1, above 1). Compute
# folds the bad slots and kinds back where `_add_counts` puts them (`fold_binned_slots`): the
# same histogram, and the counts of each error kind, with no check op in `update`.

#: Slots of the checked layout besides the bins: -inf, finite below `low` (the bins follow),
#: then finite above `high`, +inf and NaN after the bins.
SLOT_NEG_INF, SLOT_BELOW = 0, 1
SLOT_ABOVE, SLOT_POS_INF, SLOT_NAN = -3, -2, -1


def slot_width(num_bins: int) -> int:
    """Slots per label kind in the checked layout: the bins and five bad-value slots."""
    return num_bins + 5


def bin_slot_edges(num_bins: int, low: float, high: float, dtype: torch.dtype) -> Tensor | None:
    """Edges for `torch.bucketize(x, edges)` (`right=False`) that give each `dtype` score its
    slot of the checked layout: the bin `_add_counts` gives it (the floor of
    `(x - low) * num_bins / (high - low)` as computed there, clamped), or a bad-value slot.

    The scaled score is a rounded, monotone function of the score, so bin `k` starts at the
    least score whose scaled value reaches `k`: found by bisecting the scores' order keys. None
    when the rule cannot be reproduced so (a range that `dtype` cannot hold, or rounding that
    leaves the top bin short of `high`): then the arithmetic path runs.
    """
    key_dtype = torch.int32 if dtype == torch.float32 else torch.int64
    bounds = torch.tensor([low, high], dtype=torch.float64).to(dtype)
    scale = num_bins / (high - low)

    def scaled(x: Tensor) -> Tensor:  # exactly as `_add_counts` scales
        return x.mul(scale) if low == 0.0 else x.sub(low).mul_(scale)

    def value(keys: Tensor) -> Tensor:
        return bits_to_keys_(keys.to(key_dtype, copy=True)).view(dtype)

    if not bool(torch.isfinite(bounds).all()) or not bool(bounds[0] < bounds[1]):
        return None
    top = scaled(bounds[1:])
    if not bool(torch.isfinite(top).all()) or float(top) < num_bins - 1:
        return None
    targets = torch.arange(1, num_bins, dtype=dtype)
    keys = bits_to_keys_(bounds.view(key_dtype).clone()).to(torch.int64)
    # Invariant: scaled(value(lo)) < k <= scaled(value(hi)), for each bin k >= 1.
    lo = keys[0].expand(num_bins - 1).clone()
    hi = keys[1].expand(num_bins - 1).clone()
    for _ in range(torch.iinfo(key_dtype).bits + 1):
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # the floor of the mean, without overflow
        reached = scaled(value(mid)) >= targets
        hi = torch.where(reached, mid, hi)
        lo = torch.where(reached, lo, mid)
    starts = value(hi)
    inf = torch.tensor([float("inf")], dtype=dtype)
    largest = torch.tensor([torch.finfo(dtype).max], dtype=dtype)
    # `x > nextafter(t, -inf)` iff `x >= t`: a bin's edge just below its start.
    below = torch.nextafter(torch.cat([bounds[:1], starts]), -inf)
    edges = torch.cat([-inf, below, bounds[1:], largest, inf])
    if not bool((edges[1:] > edges[:-1]).all()):
        return None
    return edges


def add_binned_slots(
    labels: Tensor,
    scores: Tensor,
    edges: Tensor,
    kinds: Tensor,
    histogram: Tensor,
    num_bins: int,
) -> Tensor | None:
    """Binary: add a batch into the flat checked-layout `histogram` of 4 label kinds by
    `slot_width(num_bins)` slots. `edges`: `bin_slot_edges` for the scores' dtype (float64
    edges of float32 scores compare alike: each is a float32 value); `kinds`: the label edges
    `[0, 1, 2]`. Integer labels below 0 and above 1 get kinds of their own (counted at
    compute); bool labels are valid; float labels are kinds 0 / 1 by `label > 0`, and their
    invalid count (not 0 or 1) is returned, the one check this path makes in `update`."""
    width = slot_width(num_bins)
    x = scores if scores.dtype in (torch.float64, torch.float32) else scores.float()
    slot = torch.bucketize(x, edges)
    if labels.dtype == torch.bool or labels.is_floating_point():
        positive = labels if labels.dtype == torch.bool else labels > 0
        index = torch.add(slot, positive, alpha=width)
        histogram[width:].index_add_(0, index, cached_ones(index.shape[0], histogram))
        if labels.dtype == torch.bool:
            return None
        return torch.count_nonzero(torch.logical_and(labels != 0, labels != 1))
    # kind: 0 below 0, 1 for 0, 2 for 1, 3 above 1 (labels compared as they are)
    index = torch.add(slot, torch.bucketize(labels, kinds, right=True), alpha=width)
    histogram.index_add_(0, index, cached_ones(index.shape[0], histogram))
    return None


def slot_constants(num_bins: int, low: float, high: float) -> tuple[Tensor, frozenset[torch.dtype]]:
    """What a binary binned metric keeps as a constant state for `add_binned_slots`: the
    float32 scores' edges, the float64 scores' edges and the label edges `[0, 1, 2]`, in one
    float64 tensor (`slot_edges` cuts it), and the score dtypes whose edges reproduce the
    bin rule (the others take the arithmetic path)."""
    size = slot_width(num_bins) - 1
    parts, exact = [], set()
    with torch.device("cpu"):  # host work, whatever device a metric is built under
        for dtype in (torch.float32, torch.float64):
            edges = bin_slot_edges(num_bins, low, high, dtype)
            if edges is not None:
                exact.add(dtype)
            parts.append(torch.zeros(size) if edges is None else edges)
        parts.append(torch.tensor([0.0, 1.0, 2.0]))
        return torch.cat([part.double() for part in parts]), frozenset(exact)


def slot_edges(constants: Tensor, num_bins: int, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """The score edges for `dtype` (float32 or float64) and the label edges, as views of
    `slot_constants`'s tensor."""
    size = slot_width(num_bins) - 1
    start = 0 if dtype == torch.float32 else size
    return constants[start : start + size], constants[2 * size :]


def fold_binned_slots(histogram: Tensor, num_bins: int) -> Tensor:
    """The `(1, 2, num_bins)` histogram of a binary checked layout `(1, 4, slot_width)`, as
    `_add_counts` builds it: a label below 0 negative, above 1 positive; a score below the
    range, -inf or NaN in bin 0, one above it or +inf in the last bin."""
    kinds = histogram.view(1, 2, 2, -1).sum(2)  # negatives (kinds 0, 1), positives (2, 3)
    bins = kinds[..., SLOT_BELOW + 1 : SLOT_BELOW + 1 + num_bins].clone()
    bins[..., 0] += kinds[..., SLOT_NEG_INF] + kinds[..., SLOT_BELOW] + kinds[..., SLOT_NAN]
    bins[..., -1] += kinds[..., SLOT_ABOVE] + kinds[..., SLOT_POS_INF]
    return bins


def binned_slot_errors(histogram: Tensor, num_bins: int) -> Tensor:
    """The value errors a binary checked layout `(1, 4, slot_width)` holds, as int64 counts
    of the binned AUROC's error kinds: invalid labels, non-finite scores (NaN, +-inf), scores
    outside the range (+-inf included). One matrix product with a constant 0/1 table (exact:
    integer counts)."""
    table = _slot_tables(num_bins, histogram.device, histogram)[1]
    return torch.mv(table, histogram.view(-1)).to(torch.int64)


def binned_slot_auroc(histogram: Tensor, num_bins: int) -> Tensor:
    """`binned_auroc_compute` of `fold_binned_slots(histogram)`, to the bit, in fewer ops.

    `2U = sum_b pos_b * (2 * neg_<b + neg_b)` and `2PN` are quadratic forms of the positives'
    and negatives' slot counts: with a constant `(2, W, W)` table (a slot's bin against
    another's: 2 below, 1 tied, 0 above; and 2 everywhere), two matrix-vector products give
    both, the same exact integers as the folded histogram's (every partial sum an integer
    below them), divided the same way. Past 512 slots (the table would take megabytes), the
    running counts of the folded bins instead.
    """
    ends, _, forms = _slot_tables(num_bins, histogram.device, histogram)
    kinds = histogram.view(2, 2, -1).sum(1)  # (2, slot_width): negatives, positives
    if forms is not None:
        width = kinds.shape[1]
        both = torch.mv(torch.mv(forms, kinds[0]).view(2, width), kinds[1])
        return both[0] / both[1]  # 2U / 2PN
    # running counts through each bin; NaN scores (the last slot) are bin 0's, so in all
    running = kinds.cumsum(1).index_select(1, ends).add_(kinds[:, -1:])
    padded = torch.nn.functional.pad(running, (1, 0))  # a zero before the first bin
    positives = padded[1, 1:] - padded[1, :-1]
    twice_u = torch.dot(positives, padded[0, 1:] + padded[0, :-1])
    return twice_u / (2 * (running[0, -1] * running[1, -1]))


#: Slots up to which `binned_slot_auroc` takes its value by two matrix-vector products.
_FORM_SLOTS = 512


def _slot_tables(
    num_bins: int, device: torch.device, like: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor | None]:
    """The last slot of each bin, the `(3, 4 * slot_width)` table of the error kinds each
    slot of each label kind counts toward (`binned_slot_errors`), and the `(2 * slot_width,
    slot_width)` quadratic forms of `binned_slot_auroc` (None past `_FORM_SLOTS` slots)."""
    key = (device, num_bins)
    cached = None if torch.compiler.is_compiling() else _SLOT_TABLES.get(key)
    if cached is not None and not (like is not None and tracing(like)):
        return cached
    # Made with device ops alone (no host data copied over): a first update makes them.
    width = slot_width(num_bins)
    slots = torch.arange(width, device=device)
    # each slot's bin: the bad-value slots are the end bins' (NaN, the last, bin 0's)
    bins = (slots - (SLOT_BELOW + 1)).clamp_(0, num_bins - 1).masked_fill_(slots == width - 1, 0)
    ends = torch.arange(SLOT_BELOW + 1, SLOT_BELOW + 1 + num_bins, device=device)
    ends[-1:].fill_(width + SLOT_POS_INF)  # the last bin runs to +inf
    kind = torch.arange(4, device=device)[:, None]
    invalid = (kind == 0) | (kind == 3)  # labels below 0 or above 1
    # -inf, +inf, NaN; and -inf, below, above, +inf (the SLOT_* constants, from the ends)
    nonfinite = (slots == SLOT_NEG_INF) | (slots >= width + SLOT_POS_INF)
    outside = (slots <= SLOT_BELOW) | ((slots >= width + SLOT_ABOVE) & (slots < width + SLOT_NAN))
    table = torch.stack(
        [invalid.expand(4, width), nonfinite.expand(4, width), outside.expand(4, width)]
    ).to(torch.float64)
    forms = None
    if width <= _FORM_SLOTS:
        # [positive slot, negative slot]: 2 when the negative's bin is lower, 1 tied
        lower = (bins[None, :] < bins[:, None]).double().mul_(2)
        ties = lower.add_(bins[None, :] == bins[:, None])
        forms = torch.stack([ties, torch.full_like(ties, 2.0)]).view(2 * width, width)
    cached = (ends, table.view(3, -1), forms)
    if may_cache(*(() if like is None else (like,))):
        _SLOT_TABLES[key] = cached
    return cached


def prepare_slot_tables(num_bins: int, like: Tensor) -> None:
    """Make `binned_slot_auroc`'s tables on `like`'s device now (a metric's first update
    there), so that no compute pays for them."""
    if (like.device, num_bins) not in _SLOT_TABLES and may_cache(like):
        _slot_tables(num_bins, like.device, like)


#: `_slot_tables` by device and bin count.
_SLOT_TABLES: dict[tuple[torch.device, int], tuple[Tensor, Tensor, Tensor | None]] = {}
