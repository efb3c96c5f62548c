"""`AUROCMetric`: Burn's AUROC, exact (preallocated buffer) or binned (constant memory)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int
from torchtally.functional._checks import count_nonfinite, count_nonfinite_rows
from torchtally.functional.ranking._auroc import (
    _RADIX_KEYS,
    AVERAGES,
    exact_auroc_compute,
    exact_auroc_update,
)
from torchtally.functional.ranking._binned_auroc import (
    add_binned_counts,
    binned_auroc_compute,
    binned_auroc_error_bound,
)
from torchtally.functional.ranking._inputs import (
    check_score_range,
    count_invalid_classes,
    count_invalid_labels,
    count_nonfinite_score_rows,
    flatten_scores,
)
from torchtally.functional.ranking._keys import EMPTY_CODE, KEY_DTYPES, code_dtype, label_codes
from torchtally.metrics._base import CatState, Metric

__all__ = ["DEFAULT_CAPACITY", "AUROCMetric"]

#: Samples the exact mode stores by default (2**16): modest memory and a cheap `compute` (which
#: sorts the whole buffer); pass `capacity=` the expected sample count for more.
DEFAULT_CAPACITY = 1 << 16

#: From this many samples, binary compute sorts `_RADIX_KEYS` rows (padded with empty ones),
#: by radix, rather than the samples alone by comparison. The comparison sort's speed depends
#: on the scores: distinct (random) ones are 1.1x faster padded from 12,000 samples, but a few
#: repeated values are 1.65x slower at 12,800; from 20,480 padding is 2x faster for the one
#: and at most 1.12x slower for the other.
_PADDED_FROM = 20_480
#: The buffers an eager in-place append writes: the states and their fill counts.
_APPEND_NAMES = ("score_bits", "codes", "score_bits_count", "codes_count")


@final
class AUROCMetric(Metric):
    """Area under the ROC curve over every sample seen, exact or binned.

    Binary when `num_classes` is None: labels 0/1 and one score per sample (any shape, same
    for both). Multiclass otherwise: `(N,)` class indices and `(N, num_classes)` scores
    (logits or probabilities), one-vs-rest per class and macro-averaged over the classes
    that have both positives and negatives, as scikit-learn's
    `roc_auc_score(multi_class="ovr", average="macro")`. NaN where undefined.

    **Exact mode** (default) stores every sample in a preallocated buffer of `capacity` rows:
    per sample a score key of `dtype`'s width per class (4 bytes for float32) and a label code
    (1 byte below 255 classes, 2 below 32767, else 4). The default capacity, 2**16 = 65,536
    samples, takes 320 KiB binary, or `2**16 * (4 * num_classes + 1)` bytes multiclass
    (2.6 MiB for 10 classes); float64 doubles the keys. Give `capacity` the number of
    samples you expect (e.g. the evaluation set's size) when it is larger. Eager updates
    write each batch straight into the next rows. `compute` sorts the stored samples once
    per class (several classes per sort when they are few) and counts ties as 1/2, so it
    equals scikit-learn; eagerly it reads only the rows filled (its cost grows with the
    samples seen), while in a compiled or traced step it sorts the whole buffer with no
    host sync. Binary `compute` sorts the buffer in place, reordering
    the stored samples (their order means nothing to AUROC) instead of sorting a copy: its
    peak memory is about 20 bytes per buffered sample. Samples beyond `capacity` are dropped, and `compute`
    then raises `MetricValueError` saying how many and what capacity to use, even with
    `check_values=False`. float64 scores are rounded to float32 unless `dtype=torch.float64`.

    **Binned mode** (`num_bins=B`) keeps, per class, histograms of the positives' and
    negatives' scores over `B` equal-width bins of `score_range` (probabilities, [0, 1], by
    default): constant memory, one `index_add_` per update, exactly additive over batches
    and ranks. Scores outside the range are counted as errors (not silently clamped). Pairs
    in the same bin count as ties, so the value is within `error_bound()` of the exact AUROC:
    `1/2 * sum_b pos_b * neg_b / (P * N)` per class.

    Args:
        num_classes: None for binary, else the number of classes (>= 2).
        capacity: Exact mode: the samples the buffer holds, i.e. the expected sample count
            (default `DEFAULT_CAPACITY`, 2**16). A checkpoint stores only the filled rows.
        num_bins: Binned mode: the number of score bins; excludes `capacity`.
        name: Metric name; defaults to "auroc".
        score_range: Binned mode: `(low, high)` of the scores.
        average: Multiclass: "macro" or "none" (per-class values).
        dtype: Exact mode: score precision, `torch.float32` or `torch.float64`.
        check_values: Count invalid labels (binary: not 0/1; multiclass: outside
            `[0, num_classes)`, those are then ignored), non-finite scores and, binned,
            scores outside `score_range`, and raise them at compute.

    Example:
        >>> labels, scores = torch.tensor([0, 0, 1, 1]), torch.tensor([0.1, 0.4, 0.35, 0.8])
        >>> AUROCMetric(capacity=1024)(labels, scores)
        tensor(0.7500, dtype=torch.float64)
        >>> binned = AUROCMetric(num_bins=2)
        >>> binned(labels, scores), binned.error_bound()
        (tensor(0.7500, dtype=torch.float64), tensor(0.2500, dtype=torch.float64))
    """

    input_kind = "ranking"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True

    array_inputs = ("labels", "predictions", "weights")
    error_kinds = ErrorKinds(
        invalid_labels="invalid labels",
        nonfinite_predictions="non-finite predictions",
        predictions_outside="predictions outside score_range",
    )
    cat_overflow_terms = ("samples", "use binned mode (num_bins=...) for constant memory")

    def __init__(
        self,
        num_classes: int | None = None,
        capacity: int | None = None,
        num_bins: int | None = None,
        name: str | None = None,
        *,
        score_range: Sequence[float] = (0.0, 1.0),
        average: str = "macro",
        dtype: torch.dtype = torch.float32,
        check_values: bool = True,
    ) -> None:
        check_int("num_classes", num_classes, 2, allow_none=True)
        check_int("capacity", capacity, 1, allow_none=True)
        check_int("num_bins", num_bins, 1, allow_none=True)
        check_choice("average", average, AVERAGES)
        check_choice("dtype", dtype, tuple(KEY_DTYPES))
        if capacity is not None and num_bins is not None:
            raise ValueError(
                "Arguments `capacity` (exact mode) and `num_bins` (binned mode) are exclusive. "
                f"Received: capacity={capacity}, num_bins={num_bins}"
            )
        low_high = check_score_range(score_range)
        super().__init__(name, check_values=check_values)
        self.num_classes = num_classes
        self.num_bins = num_bins
        self.score_range = low_high
        self.average = average
        self.dtype = dtype
        classes = 1 if num_classes is None else num_classes
        if num_bins is not None:
            self.capacity = None
            histogram = torch.zeros(classes, 2, num_bins, dtype=torch.float64)
            self.register_state("histogram", histogram)
            return
        self.capacity = DEFAULT_CAPACITY if capacity is None else capacity
        shape = (self.capacity,) if num_classes is None else (self.capacity, num_classes)
        # Empty rows: code 0 (no sample) and the largest key (whose bits are the same), so
        # that sorting the buffer in place (binary compute) leaves them after the samples,
        # where appends go.
        key_dtype = KEY_DTYPES[dtype]
        bits = torch.full(shape, torch.iinfo(key_dtype).max, dtype=key_dtype)
        codes = torch.zeros(self.capacity, dtype=code_dtype(num_classes))
        self.register_state("score_bits", bits, reduction="cat")
        self.register_state("codes", codes, reduction="cat")

    def shared_statistic(self) -> Hashable:
        """Equal for AUROC metrics with identical updates (e.g. "macro" and "none")."""
        mode = ("binned", self.num_bins, self.score_range) if self.num_bins else ("exact",)
        return ("auroc", self.num_classes, self.capacity, self.dtype, *mode, self.check_values)

    def update(self, labels: Tensor, predictions: Tensor) -> None:
        """Add one batch.

        Args:
            labels: Binary labels shaped like `predictions`, or `(N,)` class indices.
            predictions: Binary scores, or `(N, num_classes)` class scores.
        """
        if self.num_bins is not None:
            self._update_binned(labels, predictions)
            return
        if self._append_in_place(labels, predictions):
            return
        bits, codes = exact_auroc_update(labels, predictions, self.num_classes, self.dtype)
        self.cat_state("score_bits").append(bits)
        self.cat_state("codes").append(codes)
        if self.check_values:
            if self.num_classes is not None:
                # exact multiclass: a label outside [0, num_classes) is an empty code, so
                # counting those is two ops where comparing the labels again is five
                invalid: Tensor | None = torch.count_nonzero(codes == EMPTY_CODE)
            else:
                invalid = count_invalid_labels(labels, self.num_classes)
            # Multiclass: a NaN anywhere in a row shows in its maximum (one reading pass)
            multiclass = self.num_classes is not None and predictions.dim() == 2
            nonfinite = (
                count_nonfinite_rows(predictions) if multiclass else count_nonfinite(predictions)
            )
            self.record_errors(invalid_labels=invalid, nonfinite_predictions=nonfinite)

    def _append_in_place(self, labels: Tensor, predictions: Tensor) -> bool:
        """Exact mode, eager, with current fill notes and room for the batch: write its rows
        straight into the buffers' next rows (no intermediate bits or codes tensors, no
        positions) and count its errors; False, having written nothing, otherwise.

        The same rows and error counts as the general path for valid inputs. With
        `check_values` on, an invalid label may be stored under another code than the general
        path gives it (a label byte plus one): it is counted as an error, so `compute` raises
        and no value is ever computed from such a row.
        """
        labels, scores = flatten_scores(labels, predictions, self.num_classes)
        states = (self.cat_state("score_bits"), self.cat_state("codes"))
        fill = CatState.common_fill(states, labels, scores)
        if fill is None:
            return False
        end = fill + labels.shape[0]
        assert self.capacity is not None  # exact mode
        if end > self.capacity:
            return False
        # The state tensors as stored: `common_fill` has just applied any held batches, so
        # the reads need not check for them again (a StateBuffers read does, 0.5 µs each)
        state: dict[str, Tensor] = self._buffers  # type: ignore[assignment]
        bits, codes, bits_count, codes_count = (
            dict.__getitem__(state, name) for name in _APPEND_NAMES
        )
        # The score copy converts to the storage float (if needed) as it writes the bits.
        bits[fill:end].view(self.dtype).copy_(scores)
        codes = codes[fill:end]
        multiclass = self.num_classes is not None
        invalid: Tensor | None = None
        if not self.check_values:
            codes.copy_(label_codes(labels, self.num_classes))
        elif multiclass:
            invalid = count_invalid_classes(labels, self.num_classes)  # type: ignore[arg-type]
            # class + 1, converted to the code dtype by the copy itself
            codes.copy_(labels).add_(1)
        else:
            invalid = count_invalid_labels(labels, None)
            # a valid label's byte plus one is its code; converting labels to a byte costs a
            # copy, where `labels > 0` on int64 labels is several times slower
            codes.copy_(labels).add_(1)
        # both fill counts in one dispatch
        torch._foreach_add_([bits_count, codes_count], end - fill)
        CatState.note_fill(states, end)
        if self.check_values:
            # Counted exactly as the general path counts them (rows of 2-D multiclass scores)
            rows = multiclass and predictions.dim() == 2
            nonfinite = count_nonfinite_score_rows(scores) if rows else count_nonfinite(predictions)
            self.record_errors(invalid_labels=invalid, nonfinite_predictions=nonfinite)
        return True

    def _update_binned(self, labels: Tensor, predictions: Tensor) -> None:
        # The histogram buffer itself (`self.histogram` costs a failed attribute lookup and
        # __getattr__), and no re-check of num_bins and score_range: the constructor did.
        num_bins, num_classes = self.num_bins, self.num_classes
        assert num_bins is not None
        low, high = self.score_range
        histogram: Tensor = self._buffers["histogram"]  # type: ignore[assignment]
        errors = add_binned_counts(
            labels,
            predictions,
            num_bins,
            low,
            high,
            num_classes,
            histogram,
            count_errors=self.check_values,
        )
        if errors is not None:
            self.record_errors(**errors)

    def compute(self) -> Tensor:
        if self.num_bins is not None:
            return binned_auroc_compute(self.histogram, self.average)
        # Renew stale fill notes (after a compiled step, a merge or a load): compute then
        # reads only the filled rows, and later eager updates append in place again.
        bits_state, codes_state = self.cat_state("score_bits"), self.cat_state("codes")
        fill = bits_state.known_fill(read=True)
        codes_state.known_fill(read=True)
        bits, codes = bits_state.rows(), codes_state.rows()
        # Binary: sort the buffer itself (a stable sort keeps the filled rows first), which
        # saves a sorted copy of it; the stored samples are unchanged, only reordered. With a
        # current fill the rows are the filled ones alone, and need no stable sort.
        in_place = self.num_classes is None
        filled = fill is not None and bits.shape[0] == fill
        assert self.capacity is not None  # exact mode
        if in_place and filled and _PADDED_FROM <= bits.shape[0] < _RADIX_KEYS <= self.capacity:
            # CPU sorts by comparison below _RADIX_KEYS keys (35-50 ns a key from 6,400) and
            # by radix from there (~8): sort that many rows, the samples and empty rows made
            # after them (the largest key, code 0; a stable sort keeps them last, and they
            # count as no class). 20,480-32,000 random scores: 2-3x faster.
            state: dict[str, Tensor] = self._buffers  # type: ignore[assignment]
            bits = dict.__getitem__(state, "score_bits")[:_RADIX_KEYS]
            codes = dict.__getitem__(state, "codes")[:_RADIX_KEYS]
            bits[fill:].fill_(torch.iinfo(bits.dtype).max)
            codes[fill:].zero_()
            filled = False
        return exact_auroc_compute(
            bits, codes, self.num_classes, self.average, in_place=in_place, filled=filled
        )

    def error_bound(self) -> Tensor:
        """Bound on |this metric's value - the exact AUROC| (0 in exact mode), shaped like
        `compute()`'s result: `1/2 * sum_b pos_b * neg_b / (P * N)` (macro: averaged).

        Returns:
            A float64 tensor; NaN where the AUROC is undefined.
        """
        with self.synced():
            self.check_errors()
            if self.num_bins is not None:
                return binned_auroc_error_bound(self.histogram, self.average)
        shape: tuple[int, ...] = ()
        if self.num_classes is not None and self.average == "none":
            shape = (self.num_classes,)
        return torch.zeros(shape, dtype=torch.float64, device=self._errors.device)

    def extra_repr(self) -> str:
        mode = f"num_bins={self.num_bins}" if self.num_bins else f"capacity={self.capacity}"
        return f"name={self.name!r}, num_classes={self.num_classes}, {mode}"

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        # Histogram counts, or rows appended (in call order): AUROC reads neither the order
        # nor a batch as a whole
        return len(args) == 2
