"""`AUROCMetric`: Burn's AUROC, exact (preallocated buffer) or binned (constant memory)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int, raise_for_counts, tracing
from torchtally.functional._checks import count_nonfinite
from torchtally.functional.ranking._auroc import (
    _COPIED_ROWS,
    _RADIX_KEYS,
    AVERAGES,
    exact_auroc_compute,
)
from torchtally.functional.ranking._binned_auroc import (
    SLOT_BELOW,
    add_binned_counts,
    add_binned_slots,
    binned_auroc_compute,
    binned_auroc_error_bound,
    binned_slot_auroc,
    binned_slot_errors,
    fold_binned_slots,
    prepare_slot_tables,
    slot_constants,
    slot_edges,
    slot_width,
)
from torchtally.functional.ranking._inputs import (
    check_score_range,
    count_invalid_labels,
    count_nonfinite_score_rows,
    flatten_scores,
)
from torchtally.functional.ranking._keys import (
    EMPTY_CODE,
    KEY_DTYPES,
    checked_label_codes,
    code_dtype,
    label_codes,
    score_bits,
)
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
    write each batch straight into the next rows, on any device: one copy of the scores, the
    label codes (two ops) and one add of the fill counts; the value checks run over the
    stored rows at compute (a score stored as float32 counts as non-finite if a float64 score
    overflowed it). `compute` sorts the stored samples once
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
    `1/2 * sum_b pos_b * neg_b / (P * N)` per class. Binary, the state also has bins for bad
    values: off the CPU an update is one `bucketize` of the scores, one of the labels, an add
    and the `index_add_`, its checks read off those bins at compute (`binned_histogram()` is
    the histogram the value is computed from).

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
            if num_classes is None:
                # Four label kinds (below 0, 0, 1, above 1) by the bins and the slots of bad
                # scores (`slot_width`): checks folded into the bin index.
                histogram = torch.zeros(1, 4, slot_width(num_bins), dtype=torch.float64)
                constants, self._slot_dtypes = slot_constants(num_bins, *low_high)
                # The slots' `bucketize` edges, a constant: the "max" of equal copies is it.
                self.register_internal_state("_slot_constants", constants, reduction="max")
            else:
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
        labels, scores = flatten_scores(labels, predictions, self.num_classes)
        binary = self.num_classes is None
        # Invalid labels keep codes of their own, counted at compute with the non-finite
        # scores over the stored rows (multiclass compute ignores them, checked or not).
        # Float binary labels (0.5 has no code of its own) are counted here; unchecked
        # binary labels > 0 are positive.
        float_labels = binary and labels.is_floating_point()
        checked = not binary or (self.check_values and not float_labels)
        states = (self.cat_state("score_bits"), self.cat_state("codes"))
        rows = labels.shape[0]
        start = CatState.reserve(states, rows, labels, scores)
        if start is not None:
            # Eagerly, with a current fill note: straight into the next rows (the copy
            # converts the scores to the storage float as it writes their bits).
            end = start + rows
            states[0].buffer[start:end].view(self.dtype).copy_(scores)
            codes = states[1].buffer[start:end]
            if checked:
                checked_label_codes(labels, self.num_classes, codes)
            else:
                torch.add(labels > 0, 1, out=codes)  # the add converts the mask to a code
            CatState.commit(states, start, rows)
        else:
            bits = score_bits(scores, self.dtype)
            codes = (
                checked_label_codes(labels, self.num_classes)
                if checked
                else label_codes(labels, None)
            )
            CatState.append_rows(states, (bits, codes))
        if self.check_values and float_labels:
            self.record_errors(invalid_labels=count_invalid_labels(labels, None))

    def stored_error_counts(self) -> Tensor | None:
        """The value errors the state holds rather than the error counts of `update`, by
        kind, for the first kinds: exact mode, over the stored rows, invalid labels and
        non-finite scores; binary binned mode, in its bad-value bins, those and scores outside
        `score_range`. None without `check_values`, multiclass binned, or while tracing
        (compute checks nothing then). Exact mode reads the fill count unless it is noted (a
        device sync off the CPU), and notes it."""
        if not self.check_values or tracing(self._buffers["_errors"]):  # type: ignore[arg-type]
            return None
        if self.num_bins is not None:
            if self.num_classes is not None:
                return None
            return binned_slot_errors(self.histogram, self.num_bins)
        return self._stored_counts(self._stored_fill())

    def _stored_fill(self) -> int:
        """The rows appended (overflow included), from the notes or one read of the count,
        then noted. The held batches are applied first."""
        states = (self.cat_state("score_bits"), self.cat_state("codes"))
        fill = CatState.common_fill(states)
        if fill is None:
            fill = int(states[0].count)
            CatState.note_fill(states, fill)  # where a note can be trusted
        return fill

    def _stored_counts(self, fill: int) -> Tensor:
        """Invalid labels and non-finite scores of the first `fill` stored rows (at most the
        capacity), as `update`'s checks counted them (the states as stored: `_stored_fill`
        has applied any held batches)."""
        assert self.capacity is not None
        rows = min(fill, self.capacity)
        state: dict[str, Tensor] = self._buffers  # type: ignore[assignment]
        scores = dict.__getitem__(state, "score_bits")[:rows].view(self.dtype)
        codes = dict.__getitem__(state, "codes")[:rows]
        top = 2 if self.num_classes is None else self.num_classes
        if codes.dtype == torch.uint8:
            # code - 1 wraps the empty code 0 to 255: one compare finds it and codes above top
            invalid = torch.count_nonzero(torch.ge(codes - 1, top))
        else:
            invalid = torch.count_nonzero(torch.logical_or(codes == EMPTY_CODE, codes > top))
        if self.num_classes is None:
            nonfinite = count_nonfinite(scores)
        else:
            # Rows whose maximum is not finite, as the checks of `update` counted them
            nonfinite = count_nonfinite_score_rows(scores)
        assert nonfinite is not None  # float scores
        return torch.stack([invalid, nonfinite])

    def check_errors(self) -> None:
        """As `Metric.check_errors`, with the errors the state holds (`stored_error_counts`)
        added to those of `update`, all read in one host read, then the capacity checked.
        (It does not ask `Metric.check_errors`, which would read the counts again: an AUROC
        metric shares its statistic only with AUROC metrics, so no collection hands it an
        error of another metric's kinds to raise first.)"""
        errors: Tensor = self._buffers["_errors"]  # type: ignore[assignment]
        if (
            not self.check_values
            or tracing(errors)
            or (self.num_classes is not None and self.num_bins is not None)
        ):
            super().check_errors()
            return
        names = tuple(self.error_kinds.values())
        if self.num_bins is not None:
            stored = binned_slot_errors(self.histogram, self.num_bins)
            raise_for_counts(self.name, names, errors + stored)
            return
        fill = self._stored_fill()
        # kind 3, scores outside score_range, is binned mode's alone
        raise_for_counts(self.name, names[:2], errors[:2] + self._stored_counts(fill))
        assert self.capacity is not None
        if fill > self.capacity:
            self.cat_state("score_bits").check_capacity()  # raises, naming the rows dropped

    def _update_binned(self, labels: Tensor, predictions: Tensor) -> None:
        # The histogram buffer itself (`self.histogram` costs a failed attribute lookup and
        # __getattr__), and no re-check of num_bins and score_range: the constructor did.
        num_bins, num_classes = self.num_bins, self.num_classes
        assert num_bins is not None
        low, high = self.score_range
        histogram: Tensor = self._buffers["histogram"]  # type: ignore[assignment]
        width = None
        if num_classes is None:
            flat = histogram.view(-1)
            dtype = torch.float64 if predictions.dtype == torch.float64 else torch.float32
            if dtype in self._slot_dtypes and not arithmetic_bins(histogram):
                # One bucketize of the scores, one of the labels, an add and the index_add_;
                # the checks are read off the bad-value slots at compute.
                constants: Tensor = self._buffers["_slot_constants"]  # type: ignore[assignment]
                edges, kinds = slot_edges(constants, num_bins, dtype)
                labels, scores = flatten_scores(labels, predictions, None)
                invalid = add_binned_slots(labels, scores, edges, kinds, flat, num_bins)
                if invalid is not None and self.check_values:
                    self.record_errors(invalid_labels=invalid)
                prepare_slot_tables(num_bins, histogram)  # compute's, made once, eagerly
                return
            # The CPU (and any range the edges cannot reproduce): the bins by arithmetic,
            # into the negatives' and positives' bins of the slot layout, checks counted here.
            width = slot_width(num_bins)
            histogram = flat[width + SLOT_BELOW + 1 :]
        errors = add_binned_counts(
            labels,
            predictions,
            num_bins,
            low,
            high,
            num_classes,
            histogram,
            count_errors=self.check_values,
            width=width,
        )
        if errors is not None:
            self.record_errors(**errors)

    def binned_histogram(self) -> Tensor:
        """Binned mode: the `(K, 2, num_bins)` histogram the value is computed from (binary:
        the bad-value slots folded into the end bins, invalid labels into the classes a
        label > 0 means, as the checks off the CPU leave them)."""
        if self.num_bins is None:
            raise ValueError(
                "`binned_histogram()` needs binned mode (num_bins=...). "
                f"Received: capacity={self.capacity}"
            )
        histogram: Tensor = self.histogram
        if self.num_classes is not None:
            return histogram
        return fold_binned_slots(histogram, self.num_bins)

    def compute(self) -> Tensor:
        if self.num_bins is not None:
            if self.num_classes is None:
                return binned_slot_auroc(self.histogram, self.num_bins)
            return binned_auroc_compute(self.histogram, self.average)
        # Eagerly the filled rows alone (a stale fill note is renewed by one read of the
        # count), so that compute costs in proportion to the samples seen; traced, the whole
        # buffer, its empty rows counting as no sample.
        bits_state, codes_state = self.cat_state("score_bits"), self.cat_state("codes")
        fill = bits_state.stored_fill()
        codes_state.stored_fill()
        if fill is None:
            bits, codes = bits_state.rows(), codes_state.rows()
        else:
            bits, codes = bits_state.buffer[:fill], codes_state.buffer[:fill]
        # Binary: sort the buffer itself (a stable sort keeps the filled rows first), which
        # saves a sorted copy of it; the stored samples are unchanged, only reordered. With a
        # known fill the rows are the filled ones alone, and need no stable sort; off the CPU
        # a copy of few rows is sorted instead (fewer ops: nothing to write back).
        in_place = self.num_classes is None and (fill is None or bits.is_cpu or fill > _COPIED_ROWS)
        filled = fill is not None
        assert self.capacity is not None  # exact mode
        if (
            in_place
            and fill is not None
            and bits.is_cpu
            and _PADDED_FROM <= fill < _RADIX_KEYS <= self.capacity
        ):
            # CPU sorts by comparison below _RADIX_KEYS keys (35-50 ns a key from 6,400) and
            # by radix from there (~8): sort that many rows, the samples and empty rows made
            # after them (the largest key, code 0; a stable sort keeps them last, and they
            # count as no class). 20,480-32,000 random scores: 2-3x faster.
            bits = bits_state.buffer[:_RADIX_KEYS]
            codes = codes_state.buffer[:_RADIX_KEYS]
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
                return binned_auroc_error_bound(self.binned_histogram(), self.average)
        shape: tuple[int, ...] = ()
        if self.num_classes is not None and self.average == "none":
            shape = (self.num_classes,)
        return torch.zeros(shape, dtype=torch.float64, device=self._errors.device)

    def _load_from_state_dict(
        self, state_dict: Any, prefix: str, *args: Any, **kwargs: Any
    ) -> None:
        saved = state_dict.get(prefix + "histogram")
        if (
            self.num_bins is not None
            and self.num_classes is None
            and isinstance(saved, Tensor)
            and tuple(saved.shape) == (1, 2, self.num_bins)
        ):
            # A checkpoint of the binary layout before the bad-value slots: its negatives'
            # and positives' bins go to label kinds 0 and 1 of the slot layout.
            slotted = torch.zeros(1, 4, slot_width(self.num_bins), dtype=saved.dtype)
            slotted[0, 1:3, SLOT_BELOW + 1 : SLOT_BELOW + 1 + self.num_bins] = saved[0]
            state_dict[prefix + "histogram"] = slotted
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_repr(self) -> str:
        mode = f"num_bins={self.num_bins}" if self.num_bins else f"capacity={self.capacity}"
        return f"name={self.name!r}, num_classes={self.num_classes}, {mode}"

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        # Histogram counts, or rows appended (in call order): AUROC reads neither the order
        # nor a batch as a whole
        return len(args) == 2


def arithmetic_bins(histogram: Tensor) -> bool:
    """Whether binary binned updates into `histogram` find the bins by arithmetic (the CPU,
    where `bucketize`'s binary search costs several times the arithmetic) rather than by the
    checked slots' `bucketize` (elsewhere: fewer kernels, the checks folded in). Both give
    the same histogram and value; tests switch it to run either on the CPU."""
    return histogram.is_cpu
