"""Exact AUROC: the Mann-Whitney statistic over every stored (key, label code) row.

AUROC is the probability that a random positive outscores a random negative, ties counting
one half: `U / (P * N)` with `U = #{pos > neg} + #{pos == neg} / 2`. `exact_auroc_compute`
gets `2U` with one integer radix sort and a few linear passes, without host syncs or
data-dependent shapes: rows of any key whose label code is 0 (empty) count as neither class,
so a preallocated, partly filled buffer needs no masking. Nor do multiclass codes above
`num_classes` (an invalid label the metric keeps for its check at compute:
`checked_label_codes`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice
from torchtally.functional.ranking._inputs import flatten_scores
from torchtally.functional.ranking._keys import EMPTY_CODE, bits_to_keys_, label_codes, score_bits

__all__ = ["AVERAGES", "auroc", "average_classes", "exact_auroc_compute", "exact_auroc_update"]

AVERAGES = ("macro", "none")


def exact_auroc_update(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor]:
    """The rows exact AUROC stores for one batch: score bits and label codes.

    Args:
        labels: Binary labels shaped like `predictions` (values > 0 are positive), or `(N,)`
            class indices when `num_classes` is set.
        predictions: Binary scores, or `(N, num_classes)` class scores (logits or
            probabilities: only their order within each class matters).
        num_classes: None for binary, else the number of classes (one-vs-rest).
        dtype: Storage precision of the scores, `torch.float32` or `torch.float64`.

    Returns:
        `(bits, codes)`: `(N,)` or `(N, num_classes)` integer score bits (see `score_bits`;
        possibly a view of `predictions`) and `(N,)` label codes (see `label_codes`).
    """
    labels, scores = flatten_scores(labels, predictions, num_classes)
    return score_bits(scores, dtype), label_codes(labels, num_classes)


def exact_auroc_compute(
    bits: Tensor,
    codes: Tensor,
    num_classes: int | None = None,
    average: str = "macro",
    *,
    in_place: bool = False,
    filled: bool = False,
) -> Tensor:
    """AUROC from stored score bits and label codes (rows with code 0 are ignored).

    Args:
        bits: `(M,)` or `(M, num_classes)` score bits (see `score_bits`).
        codes: `(M,)` label codes (multiclass codes above `num_classes` count as no sample).
        num_classes: None for binary, else the number of classes.
        average: "macro" (mean over the classes that have both positives and negatives) or
            "none" (per-class values); ignored for binary.
        in_place: Binary only: turn `bits` into keys, sort them in place (stable) with
            `codes` permuted alike, and turn them back into bits, instead of working on a
            copy. The rows keep their (score, code) pairs, so a buffer of samples stays a valid
            buffer of the same samples, needing no sorted copy.
        filled: With `in_place`: the rows are exactly a buffer's filled rows (no empty rows
            after them to keep there), so their sort need not be stable (see `_unstable`).

    Returns:
        float64: 0-d, or `(num_classes,)` for `average="none"`. NaN where a class has no
        positive or no negative.
    """
    check_choice("average", average, AVERAGES)
    if bits.shape[0] != codes.shape[0]:
        raise ValueError(
            "Arguments `bits` and `codes` must have the same number of rows. "
            f"Received: bits.shape={tuple(bits.shape)}, codes.shape={tuple(codes.shape)}"
        )
    if num_classes is None:
        if not in_place:
            # A private copy of the keys, never turned back into bits: few rows sort out of
            # place (no copy of the codes, fewer ops), many in place (less memory).
            keys = bits_to_keys_(bits.clone())
            if keys.shape[0] <= _COPIED_ROWS:
                return _ratio(*_twice_mann_whitney_u(keys, codes, 2, in_place=False, stable=False))
            counted = _twice_mann_whitney_u(keys, codes.clone(), 2, in_place=True, stable=False)
            return _ratio(*counted)
        keys = bits_to_keys_(bits)
        # A stable sort keeps a buffer's empty rows (the largest key) after its samples
        result = _ratio(*_twice_mann_whitney_u(keys, codes, 2, in_place=True, stable=not filled))
        _keys_to_bits_(keys)
        return result
    rows = bits.shape[0]
    if bits.dtype == torch.int32 and 0 < rows <= _GROUPED_ROWS:
        # Few rows: several classes per sort (see _twice_mann_whitney_u_classes)
        step = max(1, _GROUP_ELEMENTS // rows)
        parts = [
            _twice_mann_whitney_u_classes(
                bits, codes, first, min(step, num_classes - first), num_classes
            )
            for first in range(0, num_classes, step)
        ]
        if len(parts) == 1:
            twice_u, positives, negatives = parts[0]
        else:
            twice_u, positives, negatives = (torch.cat(p) for p in zip(*parts, strict=True))
        return average_classes(_ratio(twice_u, positives, negatives), average)
    per_class = torch.stack(
        [
            _ratio(
                *_twice_mann_whitney_u(
                    _column_keys(bits, c), codes, c + 1, False, False, top=num_classes
                )
            )
            for c in range(num_classes)
        ]
    )
    return average_classes(per_class, average)


def auroc(
    labels: Tensor, predictions: Tensor, num_classes: int | None = None, average: str = "macro"
) -> Tensor:
    """Exact area under the ROC curve (scikit-learn's `roc_auc_score`, ties counting 1/2).

    Binary when `num_classes` is None; else one-vs-rest per class, averaged like
    `roc_auc_score(multi_class="ovr", average="macro")` over the classes that have both
    positives and negatives. float64 scores are compared in float64, others in float32.

    Args:
        labels: Binary labels shaped like `predictions` (values > 0 are positive), or `(N,)`
            class indices.
        predictions: Binary scores, or `(N, num_classes)` class scores.
        num_classes: None for binary, else the number of classes.
        average: "macro" or "none" (per-class values); ignored for binary.

    Returns:
        float64 tensor: 0-d, or `(num_classes,)` for `average="none"`.

    Example:
        >>> auroc(torch.tensor([0, 0, 1, 1]), torch.tensor([0.1, 0.4, 0.35, 0.8]))
        tensor(0.7500, dtype=torch.float64)
    """
    wide = predictions.dtype in (torch.float64, torch.int32, torch.int64)
    dtype = torch.float64 if wide else torch.float32
    bits, codes = exact_auroc_update(labels, predictions, num_classes, dtype)
    return exact_auroc_compute(bits, codes, num_classes, average)


#: Multiclass compute over at most this many rows sorts several classes at once: CPU sorts a
#: few thousand int32 keys with a comparison sort at ~35 ns a key (a 1-D radix sort from
#: larger sizes reaches ~8), and each class costs ~30 small ops besides; above it, one class
#: per sort. Also keeps the int32 sums of `_twice_mann_whitney_u_classes` exact (rows^2 < 2^31).
_GROUPED_ROWS = 1 << 14
#: Rows x classes per grouped sort (a few MiB of int64 temporaries).
_GROUP_ELEMENTS = 1 << 18
#: torch sorts 1-D integer tensors of this many keys or more by radix on CPU
#: (`at::internal::GRAIN_SIZE`), fewer by comparison (35-50 ns a key from 6,400 keys).
_RADIX_KEYS = 1 << 15
#: From this many composite keys, a grouped multiclass sort pads them to `_RADIX_KEYS`: a
#: comparison sort's speed depends on the scores, and from here padding is 1.4-2x faster for
#: distinct (random) ones and at most 1.13x slower for a few repeated values (at 16,384 keys:
#: 1.03x faster and 1.45x slower).
_PADDED_KEYS = 24_576
#: Binary compute of a private copy of at most this many rows sorts it out of place (a few
#: MiB at most).
_COPIED_ROWS = 1 << 16
#: Below this many rows, a sum of counts each at most the row count fits int32 (rows^2 < 2^31).
_INT32_SUM_ROWS = 46340


def _twice_mann_whitney_u_classes(
    bits: Tensor, codes: Tensor, first: int, classes: int, top: int
) -> tuple[Tensor, Tensor, Tensor]:
    """`(2U, P, N)`, each `(classes,)`, for the int32 bit columns `first .. first + classes - 1`
    of `bits` (class c: rows coded c + 1 against the other rows coded 1 to `top`), with one
    1-D sort.

    Each column's keys, offset to unsigned and prefixed by the column index in the high 32
    bits, make int64 keys that sort column by column: the sorted keys, viewed
    `(classes, rows)`, hold each column sorted in its own row, so that the tie groups and the
    running counts of `_twice_mann_whitney_u` become row-wise ops over all columns at once.
    """
    rows = bits.shape[0]
    device = bits.device
    # an explicit copy: `contiguous()` may return a view (one row), which keys would overwrite
    columns = bits[:, first : first + classes].t()
    keys = bits_to_keys_(columns.clone(memory_format=torch.contiguous_format))
    elements = classes * rows
    # CPU sorts by comparison below _RADIX_KEYS keys and by radix from there: from
    # _PADDED_KEYS, sort _RADIX_KEYS keys, those larger than every column's after the columns
    padded_keys = _RADIX_KEYS if _PADDED_KEYS <= elements < _RADIX_KEYS and bits.is_cpu else 0
    composite = torch.empty(max(elements, padded_keys), dtype=torch.int64, device=device)
    if padded_keys > elements:
        composite[elements:].fill_(classes << 32)
    columns_composite = composite[:elements].view(classes, rows)
    columns_composite.copy_(keys)
    del keys
    # column c's prefix: c << 32, plus 1 << 31 to offset its int32 keys to unsigned
    prefix = torch.arange(1 << 31, classes << 32, 1 << 32, dtype=torch.int64, device=device)
    columns_composite.add_(prefix[:, None])
    # the column prefixes keep each column's rows together, and the order of tied rows
    # changes no count: a stable sort only where it is the faster (see `_unstable`)
    sorted_keys, order = torch.sort(composite, stable=not _unstable(composite.shape[0]))
    del composite, columns_composite
    sorted_keys, order = sorted_keys[:elements].view(classes, rows), order[:elements]
    # flat position of each column's first row: the sort's indices are flat positions too
    offsets = torch.arange(0, classes * rows, rows, dtype=torch.int64, device=device)[:, None]
    sorted_codes = codes[order.view(classes, rows).sub_(offsets)]
    del order
    wanted = torch.arange(first + 1, first + classes + 1, dtype=codes.dtype, device=device)
    pos = sorted_codes == wanted[:, None]
    neg = _samples(sorted_codes, top).logical_xor_(pos)
    del sorted_codes
    # Each row's tie group starts at the last row up to it that is not tied to its
    # predecessor (a running max over those rows' positions; others hold -1), per column.
    starts = torch.arange(rows, dtype=torch.int32, device=device).expand(classes, rows).clone()
    starts[:, 1:].masked_fill_(sorted_keys[:, 1:] == sorted_keys[:, :-1], -1)
    del sorted_keys
    # flat positions in `counts` below, whose rows are one longer
    padded = torch.arange(0, classes * (rows + 1), rows + 1, dtype=torch.int32, device=device)
    group_start = starts.cummax(1).values.add_(padded[:, None]).view(-1)
    del starts
    # counts[c, i]: column c's `counted` rows before row i (an exclusive running count)
    counts = torch.empty((classes, rows + 1), dtype=torch.int32, device=device)
    counts[:, :1].zero_()  # one fill, where an item assignment takes two ops

    def before_group(counted: Tensor, over: Tensor) -> Tensor:
        # per column: the `counted` rows before each row's tie group, summed over `over` rows
        # (a copy into the strided view, not `out=` it: compiled graphs take contiguous outs)
        counts[:, 1:] = torch.cumsum(counted, 1, dtype=torch.int32)
        found = torch.index_select(counts.view(-1), 0, group_start).view(classes, rows)
        # int32 sums are exact here (rows^2 < 2^31)
        return found.mul_(over).sum(1, dtype=torch.int32)

    pos_before = before_group(pos, neg)
    neg_before = before_group(neg, pos)
    num_pos, num_neg = torch.count_nonzero(pos, dim=1), torch.count_nonzero(neg, dim=1)
    # 2U per column, as in _twice_mann_whitney_u
    return num_pos * num_neg + neg_before - pos_before, num_pos, num_neg


#: Below this many keys an unstable sort, where allowed, is the faster on CPU (6,400 random
#: int32 keys: 2.5x; 64 distinct keys repeated 100 times: 1.3x). From about 10,000 keys
#: the unstable comparison sort (introsort) slows down on repeated runs of keys (12,800 keys,
#: 128 distinct repeated: 2x slower than stable), so sorts from there stay stable.
_UNSTABLE_BELOW = 8192


def _unstable(keys: int) -> bool:
    """Whether to sort `keys` keys unstably when the order of ties does not matter."""
    return keys < _UNSTABLE_BELOW


def _keys_to_bits_(keys: Tensor) -> Tensor:
    """In place: `bits_to_keys_`'s inverse for keys it made (three ops where it takes five:
    no key is -1, the key -0.0 had, so nothing needs that fix on the way back)."""
    return keys.bitwise_xor_(
        (keys >> (torch.iinfo(keys.dtype).bits - 1)) & torch.iinfo(keys.dtype).max
    )


def _column_keys(bits: Tensor, column: int) -> Tensor:
    # an explicit contiguous copy: `contiguous()` may return a view, which keys would overwrite
    return bits_to_keys_(bits[:, column].clone(memory_format=torch.contiguous_format))


def average_classes(per_class: Tensor, average: str) -> Tensor:
    """Macro-average per-class values over the defined (non-NaN) ones, or return them all."""
    return per_class if average == "none" else per_class.nanmean()


def _ratio(twice_u: Tensor, positives: Tensor, negatives: Tensor) -> Tensor:
    """`twice_u / (2 * positives * negatives)` in float64 (0/0, no positive or no negative,
    gives NaN: AUROC is undefined there). The integer product converted to float64 as it is
    written, halved after the division: both exact steps, so the same bits as converting
    `2PN` and `2U` and dividing, in three ops instead of five."""
    pairs = torch.empty(positives.shape, dtype=torch.float64, device=positives.device)
    torch.mul(positives, negatives, out=pairs)
    return torch.div(twice_u, pairs).mul_(0.5)


def _twice_mann_whitney_u(
    keys: Tensor,
    codes: Tensor,
    positive: int,
    in_place: bool,
    stable: bool = True,
    *,
    top: int | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """`(2U, P, N)` over one column of keys: rows coded `positive` against the other non-empty
    rows (with `top`: those coded 1 to `top`). `stable`: whether the sort keeps tied rows in
    their order (only an in-place sort of a buffer with empty rows needs it; no count depends
    on it).

    This runs over millions of rows, so it reuses buffers instead of allocating one per step
    (on CPU, first-touching fresh memory costs as much as the arithmetic). The peak beyond
    the inputs is the sort's: the int64 order and the radix scratch (a key and an int64 per
    row), plus the sorted keys unless `in_place`: about 20 bytes per row for int32 keys.
    """
    rows = keys.shape[0]
    if rows == 0:
        zero = torch.zeros((), dtype=torch.int64, device=keys.device)
        return zero, zero, zero
    index_dtype = torch.int32 if rows < 2**31 - 1 else torch.int64
    if in_place:
        order = torch.empty(rows, dtype=torch.int64, device=keys.device)
        # 1-D integer keys: a (stable) radix sort on CPU from 32,768 keys.
        torch.sort(keys, stable=stable or not _unstable(rows), out=(keys, order))
        sorted_keys, sorted_codes = keys, codes
        codes.copy_(codes.index_select(0, order))
    else:
        sorted_keys, order = torch.sort(keys, stable=stable or not _unstable(rows))
        sorted_codes = codes.index_select(0, order)
    pos = sorted_codes == positive
    # binary: code 1 (one op); else every sample that is not positive
    neg = (
        sorted_codes == 1
        if positive == 2 and top is None
        else _samples(sorted_codes, top).logical_xor_(pos)
    )
    del sorted_codes
    tied = sorted_keys[1:] == sorted_keys[:-1]
    # Each row's tie group starts at the last row up to it that is not tied to its
    # predecessor: a running max over those rows' positions (others hold -1).
    if sorted_keys.dtype == index_dtype and not in_place:
        starts = sorted_keys  # no longer needed as keys: reuse its memory
    else:
        starts = torch.empty_like(sorted_keys, dtype=index_dtype)
    torch.arange(rows, out=starts)
    starts[1:].masked_fill_(tied, -1)
    del tied
    group_start = torch.empty_like(starts)
    torch.cummax(starts, 0, out=(group_start, order))
    del order
    # Per row, the positives (negatives) that sort strictly before its tie group, masked to
    # the negative (positive) rows, summed. `counts[i]` is a running count over rows < i.
    counts = torch.empty(rows + 1, dtype=starts.dtype, device=starts.device)
    counts[:1].zero_()  # one fill, where an item assignment takes two ops
    pos_before = _sum_before_group(pos, neg, group_start, counts, starts)
    neg_before = _sum_before_group(neg, pos, group_start, counts, starts)
    num_pos, num_neg = torch.count_nonzero(pos), torch.count_nonzero(neg)  # no int64 copy
    # 2U = sum over positives of (#neg below + #neg below or tied). Over all (pos, neg) pairs,
    # this equals P*N + sum_pos neg_before - sum_neg pos_before: a pair in different groups
    # adds 1 + 1 (pos above) or 1 - 1 (pos below), a tied pair adds 1 + 0 - 0.
    twice_u = num_pos * num_neg + neg_before - pos_before
    return twice_u, num_pos, num_neg


def _samples(codes: Tensor, top: int | None) -> Tensor:
    """Where `codes` hold a sample: not the empty code (and, with `top`, at most `top`)."""
    if top is None:
        return codes != EMPTY_CODE
    if codes.dtype == torch.uint8:
        return torch.lt(codes - 1, top)  # code - 1 wraps the empty code to 255 > top
    return torch.logical_and(codes != EMPTY_CODE, codes <= top)


def _sum_before_group(
    counted: Tensor, over: Tensor, group_start: Tensor, counts: Tensor, out: Tensor
) -> Tensor:
    """Sum over the rows in `over` of the `counted` rows before their tie group (0-d).
    `counts` (one row longer, `counts[0] == 0`) and `out` are scratch buffers of
    `group_start`'s dtype."""
    # counts[i]: the `counted` rows before row i (an exclusive running count, in one op)
    torch.cumsum(counted, 0, dtype=counts.dtype, out=counts[1:])
    torch.index_select(counts, 0, group_start, out=out)
    out.mul_(over)  # zero outside `over`: one op where a mask's negation and a fill take two
    return _chunked_sum(out)


def _chunked_sum(values: Tensor) -> Tensor:
    """Exact sum of non-negative int32 counts, each at most `len(values)` (int32 when the
    count of values guarantees it fits, else int64).

    `Tensor.sum` of int32 first copies the whole tensor to int64; summing rows of a 2-D view
    in int32 (each row small enough not to overflow) and then the row sums avoids that copy.
    """
    total = values.shape[0]
    if values.dtype != torch.int32 or total < 2:
        return values.sum()
    if total <= _INT32_SUM_ROWS:  # the whole sum fits int32
        return values.sum(dtype=torch.int32)
    width = max(1, (2**31 - 1) // total)
    whole = total - total % width
    head = values[:whole].view(-1, width).sum(1, dtype=torch.int32)
    return head.sum() + values[whole:].sum()
