"""Top-k accuracy: a sample is right when its label is among its k highest scores.

Ties are broken as scikit-learn's `top_k_accuracy_score` breaks them (a stable sort, reversed):
among equal scores the higher class index ranks first. So the label's rank is the number of
classes scoring strictly higher, plus the number of higher-indexed classes scoring the same,
and the sample is a hit when that rank is below k. Computing the rank this way needs no sort
and no data-dependent shape: two comparisons and a sum over the class dimension (NaN scores
compare false, so they never rank ahead). Eagerly on CPU the comparisons write float masks
(`_Plan`), several times faster there than bool masks; the result is the same count.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict

import torch
from torch import Tensor

from torchtally._errors import check_int, tracing
from torchtally.functional._blocks import eager_at_least
from torchtally.functional._checks import (
    ErrorCounts,
    check_same_shape,
    check_tensor,
    count_negative,
    count_nonfinite,
    count_outside,
)
from torchtally.functional.classification._fused import device_constant
from torchtally.functional.classification._inputs import check_index_labels

__all__ = [
    "count_nonfinite_rows",
    "top_k_accuracy",
    "top_k_accuracy_compute",
    "top_k_accuracy_cpu_tallies",
    "top_k_accuracy_errors",
    "top_k_accuracy_tallies",
    "top_k_accuracy_update",
]


def _check_inputs(labels: Tensor, predictions: Tensor) -> None:
    check_index_labels(labels)
    check_tensor("predictions", predictions)
    if not predictions.is_floating_point() or predictions.shape[:-1] != labels.shape:
        raise ValueError(
            "Argument `predictions` must hold floating-point class scores of shape "
            "labels.shape + (num_classes,). Received: "
            f"labels.shape={tuple(labels.shape)}, predictions.shape={tuple(predictions.shape)}, "
            f"predictions.dtype={predictions.dtype}"
        )


def top_k_accuracy_update(
    labels: Tensor, predictions: Tensor, k: int, weights: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(Weighted) hit count and total weight of one batch, both 0-d float64.

    Labels outside `[0, num_classes)` count in neither; `top_k_accuracy_errors` counts them.

    Args:
        labels: Integer class indices of any shape.
        predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
        k: How many of the highest scores count as a hit (>= 1).
        weights: Optional sample weights shaped like `labels`.

    Returns:
        `(hits, total)`.

    Example:
        >>> top_k_accuracy_update(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3]] * 2), 2)
        (tensor(2., dtype=torch.float64), tensor(2., dtype=torch.float64))
    """
    check_int("k", k, 1)
    _check_inputs(labels, predictions)
    hit, valid, _ = _hits(labels, predictions, k)
    if weights is None:
        weight = valid.to(torch.float64)
    else:
        check_tensor("weights", weights)
        check_same_shape("labels", labels, "weights", weights)
        weight = torch.where(valid, weights.to(torch.float64), _zero(valid))
    return torch.where(hit, weight, _zero(weight)).sum(), weight.sum()


def top_k_accuracy_tallies(
    labels: Tensor, predictions: Tensor, k: int, check_values: bool
) -> Tensor:
    """Unweighted `top_k_accuracy_update` in fewer ops, packed for one `index_add_` into a
    float64 state: the float64 counts `(labels outside [0, num_classes), valid labels, hits,
    samples with a NaN or infinite score)`, or without `check_values` `(valid labels, hits)`.

    Example:
        >>> scores = torch.tensor([[0.5, 0.2, 0.3]] * 2)
        >>> top_k_accuracy_tallies(torch.tensor([2, 5]), scores, 2, check_values=True)
        tensor([1., 1., 1., 0.], dtype=torch.float64)
    """
    check_int("k", k, 1)
    _check_inputs(labels, predictions)
    if _eager_cpu(predictions, _float_ranks_from(predictions.shape[-1])):
        return _eager_tallies(labels, predictions, k, check_values)
    hit, valid, nonfinite = _hits(labels, predictions, k, with_nonfinite=check_values)
    total = torch.count_nonzero(valid)
    hits = torch.count_nonzero(hit.logical_and_(valid))
    if nonfinite is None:
        return torch.stack([total, hits]).to(torch.float64)
    outside = torch.rsub(total, labels.numel())
    return torch.stack([outside, total, hits, nonfinite]).to(torch.float64)


def top_k_accuracy_cpu_tallies(
    labels: object, predictions: object, k: int, check_values: bool
) -> Tensor | None:
    """`top_k_accuracy_tallies` of a batch of eager CPU scores that the float ranks take, else
    None (any other batch, or under a dispatch mode), for a caller with other paths.

    The one test of the path, made first: a metric's update that tried its other paths first
    paid their tests on every call, each a few microseconds with the caches cold after the
    previous call's ranks (in one process, interleaved: 168 against 160 µs a metric's update
    at 1024 x 100, 95 against 89 at 64 x 1000, 523 against 512 at 16384 x 10)."""
    if not (
        isinstance(predictions, Tensor)
        and predictions.dim() > 0
        and _eager_cpu(predictions, _float_ranks_from(predictions.shape[-1]))
        # after the test for compiling in `_eager_cpu`: Dynamo cannot trace this one
        and not torch._C._len_torch_dispatch_stack()
    ):
        return None
    check_int("k", k, 1)
    labels = check_tensor("labels", labels)
    _check_inputs(labels, predictions)
    return _eager_tallies(labels, predictions, k, check_values)


def _eager_tallies(labels: Tensor, predictions: Tensor, k: int, check_values: bool) -> Tensor:
    """`top_k_accuracy_tallies` from the float ranks. Each count is a float32 0/1 row of the
    plan's table, written by the comparison that decides it, and the rows are summed by one
    reduction: on this path an op is a dispatch of a few microseconds, as much as the
    arithmetic of a mid-sized batch, and a count of its own (a reduction, a conversion and an
    add into the state) cost three. float32 rows because a CPU comparison writes its own dtype
    several times faster than another (a float64 row of a float32 comparison is a bool pass
    and a conversion). A label outside `[0, num_classes)` is pushed to rank >= k by the bias of
    the rank sums (its 0/1 row, times k), so the hits need no valid mask."""
    num_classes = predictions.shape[-1]
    flat_labels = labels if labels.dim() == 1 else labels.reshape(-1)
    if flat_labels.dtype != torch.int64:
        flat_labels = flat_labels.long()
    flat = predictions if predictions.dim() == 2 else predictions.reshape(-1, num_classes)
    plan = _plan(flat)
    outside, valid, hits, nonfinite = plan.counts
    torch.clamp(flat_labels, 0, num_classes - 1, out=plan.clamped)
    torch.ne(plan.clamped, flat_labels, out=outside)
    torch.eq(outside, _float32_scalar(0), out=valid)
    ranks = plan.ranks_of(flat, check_values, k)
    # NaN ranks (a row with a non-finite score) compare false: never a hit
    torch.lt(ranks, _float32_scalar(k), out=hits)
    if check_values:
        torch.ne(ranks, ranks, out=nonfinite)  # true exactly for NaN
        return _exact_row_sums(plan.table)
    return _exact_row_sums(plan.unchecked)


#: Sums of float32 0/1 are exact while every partial sum stays below 2**24.
_EXACT_FLOAT32_ROWS = 1 << 23


def _exact_row_sums(table: Tensor) -> Tensor:
    """The float64 row sums of a float32 0/1 table: one float32 reduction, exact below 2**24
    ones a row; longer rows in pieces of `_EXACT_FLOAT32_ROWS`, each exact, added in float64."""
    columns = table.shape[1]
    if columns < 2 * _EXACT_FLOAT32_ROWS:
        return table.sum(1).to(torch.float64)
    pieces = [
        table[:, start : start + _EXACT_FLOAT32_ROWS].sum(1).to(torch.float64)
        for start in range(0, columns, _EXACT_FLOAT32_ROWS)
    ]
    return torch.stack(pieces).sum(0)


def _hits(
    labels: Tensor, predictions: Tensor, k: int, *, with_nonfinite: bool = False
) -> tuple[Tensor, Tensor, Tensor | None]:
    """Whether each label ranks in the top k, whether it names a class at all, and (with
    `with_nonfinite`) the number of samples with a NaN or infinite score."""
    num_classes = predictions.shape[-1]
    as_long = labels if labels.dtype == torch.int64 else labels.long()  # skip a no-op dispatch
    if _eager_cpu(predictions, _float_ranks_from(num_classes)):
        flat = predictions.reshape(-1, num_classes)
        plan = _plan(flat)
        clamped = torch.clamp(as_long.reshape(-1), 0, num_classes - 1, out=plan.clamped)
        ranks = plan.ranks_of(flat, with_nonfinite)
        # NaN counts as non-zero; 0 * a finite rank is 0
        nonfinite = torch.count_nonzero(ranks * 0.0) if with_nonfinite else None
        valid = clamped.view(labels.shape) == as_long
        return ranks.view(labels.shape) < k, valid, nonfinite
    # Compiled, traced, off the CPU or a small batch (every larger eager CPU batch takes the
    # float ranks above, in blocks): the form a compiled graph fuses into one pass.
    clamped = as_long.clamp(0, num_classes - 1)
    nonfinite = count_nonfinite_rows(predictions) if with_nonfinite else None
    columns = device_constant(
        ("top-k columns", num_classes),
        labels,
        lambda d: torch.arange(num_classes, device=d),
    )
    ranks = _ranks(predictions, clamped.unsqueeze(-1), columns)
    return ranks < k, clamped == as_long, nonfinite


#: The float-mask ranks pay from this many scores: below, their extra dispatches (output
#: buffers, the table of counts) cost more than the bool masks they replace (64 x 100 scores:
#: even).
_FLOAT_RANKS_FROM = 1 << 13
#: Rows shorter than this compare poorly against a broadcast label score (the kernels loop
#: over a few classes per row), so for them the label scores are first copied out to a full
#: `(N, C)` tensor, and the comparisons run as one flat pass.
_SHORT_ROWS = 16
#: Short rows take the float ranks from this many scores (the copy of the label scores is
#: one more op, and short-row kernels are slow in both forms).
_SHORT_FLOAT_RANKS_FROM = 1 << 14


def _float_ranks_from(num_classes: int) -> int:
    """How many scores the eager float ranks pay from, for rows of `num_classes`."""
    return _SHORT_FLOAT_RANKS_FROM if num_classes < _SHORT_ROWS else _FLOAT_RANKS_FROM


def _eager_cpu(predictions: Tensor, elements: int) -> bool:
    """Eager on CPU with at least `elements` scores (never while compiling or tracing)."""
    return (
        predictions.is_cpu  # first: the cheapest test, and false on every accelerator
        and eager_at_least(predictions, elements)
        and not torch.jit.is_tracing()
        and not tracing(predictions)
    )


def _ranks(predictions: Tensor, clamped: Tensor, columns: Tensor) -> Tensor:
    """Per sample, how many classes rank ahead of its label: a higher score, or the same
    score and a higher index (int32). The form a compiled graph fuses into one pass."""
    label_score = predictions.gather(-1, clamped)
    ahead = torch.gt(predictions, label_score).logical_or_(
        torch.eq(predictions, label_score).logical_and_(columns > clamped)
    )
    # int32: a sum of bools in int64 first copies the whole mask to int64 (8 bytes a score)
    return ahead.sum(-1, dtype=torch.int32)


class _Plan:
    """The buffers of the eager float ranks for batches of one shape and score dtype, and
    their views per block, made once and reused by this thread's calls of that shape.

    Why: on this path a slice, a view or an allocation is a dispatch of a microsecond or more,
    and a call made a dozen of them per block (at 1024 x 100, one script run before and after
    the change: 227 µs a metric update with them made per call, 194 µs with them made once).

    The ranks: a CPU comparison that writes bools is several times slower than the same
    comparison writing floats (the float kernels are vectorized), and a bool mask then costs a
    logical op per combination; so the comparisons write float32 0/1 and combine by
    arithmetic: rank = sum(score > label score) + sum((score == label score) * (class >
    label)). Large batches go through the masks in blocks that stay in the L2 cache. The
    non-finite check rides on the rank sum: `0 * score` added to the row's mask is NaN exactly
    where a score is NaN or infinite, so such a row's rank is NaN (never below k), and the NaN
    ranks are the count of such rows.
    """

    __slots__ = ("block", "blocks", "clamped", "counts", "ranks", "table", "unchecked")

    def __init__(self, rows: int, num_classes: int, dtype: torch.dtype, block: int) -> None:
        # Normal tensors even when first made inside `torch.inference_mode()`: an inference
        # tensor could not be written by a later call outside it.
        with torch.inference_mode(False):
            masks = torch.empty(3, block, num_classes)
            # Short rows compare poorly against a broadcast (N, 1) operand (the kernels loop
            # over a few classes per row): their label scores are spread to a full copy, in
            # the scores' own dtype (a float64 score must not be rounded to float32).
            spread = (
                torch.empty(block, num_classes, dtype=dtype) if num_classes < _SHORT_ROWS else None
            )
            # Per row, float32 0/1: labels outside [0, C), valid labels, hits, non-finite rows.
            self.table = torch.empty(4, rows)
            self.clamped = torch.empty(rows, dtype=torch.int64)
            label_scores = torch.empty(rows, 1, dtype=dtype)
            self.ranks = torch.empty(rows)
        self.block = block
        self.counts = self.table.unbind()
        self.unchecked = self.table[1:3]
        ahead, ties, above = masks.unbind()
        # each block's labels, and as the `(n, 1)` column its gather and comparison take (a
        # view made per call is a dispatch)
        self.blocks = [
            (
                self.clamped[start : start + block],
                self.clamped[start : start + block].view(-1, 1),
                label_scores[start : start + block],
                ahead[: min(block, rows - start)],
                ties[: min(block, rows - start)],
                above[: min(block, rows - start)],
                None if spread is None else spread[: min(block, rows - start)],
                self.ranks[start : start + block],
                self.counts[0][start : start + block],
            )
            for start in range(0, rows, block)
        ]

    def ranks_of(self, flat: Tensor, with_nonfinite: bool, beta: int = 0) -> Tensor:
        """`_ranks` of the `(N, C)` scores `flat` for the labels the caller put in `clamped`,
        as float32 counts (exact below 2**24), plus `beta` times the table's first row; with
        `with_nonfinite`, NaN for the rows with a NaN or infinite score. The result is the
        plan's buffer, valid until the thread's next call of this shape."""
        num_classes = flat.shape[1]
        if flat.requires_grad:  # model outputs passed undetached: out= ops refuse them
            flat = flat.detach()
        pieces = (flat,) if len(self.blocks) == 1 else flat.split(self.block)
        ones = _ones(num_classes)
        for piece, (labels, column, label_score, ahead, ties, above, spread, out, bias) in zip(
            pieces, self.blocks, strict=True
        ):
            torch.gather(piece, 1, column, out=label_score)
            if spread is None:
                compared = label_score
                # int64 labels against float32 class numbers: one comparison that converts
                # the (N, 1) labels on the fly, cheaper than converting them first
                torch.gt(_classes(num_classes), column, out=above)
            else:
                compared = _spread(label_score, spread)
                # The classes above each label as rows of a cached table: one indexed copy
                # (the broadcast comparison took 2.5x as long at 16384 x 10).
                torch.index_select(_above_table(num_classes), 0, labels, out=above)
            torch.gt(piece, compared, out=ahead)
            torch.eq(piece, compared, out=ties)
            ahead.addcmul_(ties, above)
            if with_nonfinite:
                ahead.add_(piece, alpha=0.0)
            if beta:
                torch.addmv(bias, ahead, ones, beta=beta, out=out)
            else:
                torch.mv(ahead, ones, out=out)
        return self.ranks


#: This thread's kept plans, the most recently used last.
_LOCAL = threading.local()
#: Plans kept per thread (an eval loop's batch shape and its ragged last batch, for a couple
#: of metrics with other class counts), and the most rows between them. A plan holds about 36
#: bytes a row and its masks (2.5 MiB at most), so the kept ones about 20 MiB at most. A
#: larger batch's plan is made per call: its page faults are small against the batch's work,
#: and plans kept at the largest batches ever seen would hold that memory for good.
_PLANS_KEPT = 4
_KEPT_ROWS = 1 << 18


def _plan(flat: Tensor) -> _Plan:
    """This thread's plan for `(N, C)` scores of `flat`'s shape and dtype (from `_BLOCK_FROM`
    scores in blocks of about `_BLOCK` scores, of as even sizes as whole rows allow)."""
    plans: OrderedDict[tuple[int, int, torch.dtype, int], _Plan] = _LOCAL.__dict__.setdefault(
        "plans", OrderedDict()
    )
    rows, num_classes = flat.shape
    block = rows
    scores = rows * num_classes
    if scores >= _BLOCK_FROM:
        # as many blocks as `_BLOCK` scores take, evenly (no short last block of a few rows)
        pieces = -(-scores // _BLOCK)
        block = -(-rows // pieces)
    key = (rows, num_classes, flat.dtype, block)
    plan = plans.get(key)
    if plan is not None:
        plans.move_to_end(key)
        return plan
    plan = _Plan(rows, num_classes, flat.dtype, block)
    if rows <= _KEPT_ROWS:
        plans[key] = plan
        # the oldest go first: the new plan alone is within both bounds
        while len(plans) > _PLANS_KEPT or sum(kept[0] for kept in plans) > _KEPT_ROWS:
            plans.popitem(last=False)
    return plan


def _spread(label_score: Tensor, buffer: Tensor) -> Tensor:
    """The `(N, 1)` label scores copied out to the `(N, C)` `buffer` of their dtype: for
    float32 as an outer product with ones (a BLAS call, exact: each score times 1; 0.44x the
    time of an expanded copy at 16384 x 10), else as an expanded copy."""
    if label_score.dtype != torch.float32:
        return buffer.copy_(label_score.expand(-1, buffer.shape[1]))
    return torch.mm(label_score, _ones(buffer.shape[1]).view(1, -1), out=buffer)


def _zero(like: Tensor) -> Tensor:
    """A 0-d float64 zero on `like`'s device (a Python 0.0 in a `where` is a scalar tensor
    made on the device, an op)."""
    return device_constant(
        ("zero", torch.float64), like, lambda d: torch.zeros((), dtype=torch.float64, device=d)
    )


def count_nonfinite_rows(predictions: Tensor) -> Tensor:
    """Samples (rows of the last dimension) of `predictions` holding a NaN or an infinite
    score: what top-k accuracy's value checks count, the row that a ranking of them cannot
    be trusted for (a 0-d int64 tensor)."""
    # 0 * score is 0, or NaN for a NaN or an infinity; a row's sum is NaN exactly then, and
    # NaN counts as non-zero
    return torch.count_nonzero((predictions * 0.0).sum(-1))


#: From this many scores the eager ranks go in even blocks of about `_BLOCK` scores, through
#: the thread's reused float32 mask buffers: four masks and the scores of a block stay within
#: this CPU's 2 MiB L2. (Blocks of 2^16 against 2^18 from 2^19, interleaved thread-CPU medians,
#: 2026-11-29: 16384 x 100 2.44 vs 3.27 ms, 1024 x 1000 1.38 vs 2.06 ms, 262144 x 10 9.4 vs
#: 10.7 ms; blocks of 2^14 were slower than both, each block repeating every dispatch.) From
#: 1.5 x 2^16, where each of two blocks still holds 2^15 scores or more: whole evaluations
#: against torcheval's, interleaved, 2026-11-30, one piece / even blocks: 1024 x 100 1.17-1.19
#: / 1.12-1.13x, 16384 x 10 (blocks of 6553, 6553, 3278 rows before) 1.17-1.20 / 1.13-1.14x;
#: from 2^16, two blocks of 384 rows at 768 x 100 were 10 % slower than one piece.
_BLOCK_FROM = 3 << 15
_BLOCK = 1 << 16


@functools.lru_cache(maxsize=16)
def _ones(num_classes: int) -> Tensor:
    """float32 ones to sum rows by: a matrix-vector product of 0/1 rows is exact (sums below
    2**24) and, over short rows, several times faster than `sum(1)`."""
    return torch.ones(num_classes, dtype=torch.float32, device="cpu")


@functools.lru_cache(maxsize=16)
def _float32_scalar(value: int) -> Tensor:
    """`value` as a 0-d float32 CPU tensor, to compare float32 against: a comparison with a
    Python number makes it a tensor and converts that first (an allocation and a copy, about
    1.7 µs a comparison here). The same rounding: the number is converted to float32 either way."""
    return torch.tensor(float(value), dtype=torch.float32, device="cpu")


@functools.lru_cache(maxsize=16)
def _above_table(num_classes: int) -> Tensor:
    """float32 `(C, C)` table whose row `l` marks the classes above `l` (1 where j > l)."""
    classes = torch.arange(num_classes, device="cpu")
    return (classes.view(1, -1) > classes.view(-1, 1)).to(torch.float32)


@functools.lru_cache(maxsize=16)
def _classes(num_classes: int) -> Tensor:
    """The class numbers as float32 (exact below 2**24), compared against each label."""
    return torch.arange(num_classes, dtype=torch.float32, device="cpu")


def top_k_accuracy_errors(
    labels: Tensor, predictions: Tensor, weights: Tensor | None = None
) -> ErrorCounts:
    """Counts of labels outside `[0, num_classes)`, samples with a NaN or infinite score,
    negative weights and NaN or infinite weights, by kind name
    (`TopKAccuracyMetric.error_kinds`)."""
    return {
        "invalid_labels": count_outside(labels, 0, predictions.shape[-1]),
        "nonfinite_predictions": count_nonfinite_rows(predictions),
        "negative_weights": count_negative(weights),
        "nonfinite_weights": None if weights is None else count_nonfinite(weights),
    }


def top_k_accuracy_compute(hits: Tensor, total: Tensor) -> Tensor:
    """Hits over total weight; NaN when nothing was counted."""
    return hits.double() / total.double()


def top_k_accuracy(
    labels: Tensor, predictions: Tensor, k: int = 1, weights: Tensor | None = None
) -> Tensor:
    """Fraction of samples whose label is among their `k` highest scores.

    Args:
        labels: Integer class indices of any shape.
        predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
        k: How many of the highest scores count (ties as scikit-learn: higher index first).
        weights: Optional sample weights shaped like `labels`: the weighted mean of the hits,
            as scikit-learn's `sample_weight` (with 0/1 weights, the plain mean over weight 1).

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> top_k_accuracy(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3]] * 2), k=1)
        tensor(0.5000, dtype=torch.float64)
    """
    return top_k_accuracy_compute(*top_k_accuracy_update(labels, predictions, k, weights))
