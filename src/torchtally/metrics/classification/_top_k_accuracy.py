"""`TopKAccuracyMetric`: Burn's top-k accuracy, accumulated over batches."""

from __future__ import annotations

from collections.abc import Hashable
from typing import final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_int
from torchtally.functional.classification._fused import (
    class_score_rows,
    device_constant,
    fuses,
    top_k_codes,
    unit_constant,
)
from torchtally.functional.classification._top_k_accuracy import (
    top_k_accuracy_compute,
    top_k_accuracy_cpu_tallies,
    top_k_accuracy_errors,
    top_k_accuracy_tallies,
    top_k_accuracy_update,
)
from torchtally.metrics.classification._held_errors import HeldErrors

__all__ = ["TopKAccuracyMetric"]

#: The flat state: one slot per error kind, then the fused path's bins by code (see
#: `top_k_codes`): [total, invalid, spare, spare] for row 0 and [hits, misses, spare,
#: non-finite rows] for row 1. Without value checks the codes (0 or 1) land in (total, spare)
#: and (hits, spare): an invalid label counts nowhere then.
_KINDS = 4
_TOTAL, _INVALID_BIN, _HITS, _NONFINITE_BIN = _KINDS, _KINDS + 1, _KINDS + 4, _KINDS + 7
_SIZE = _KINDS + 8
#: Where `top_k_accuracy_tallies` adds: with value checks the invalid labels (the first kind of
#: `error_kinds`), the valid ones, the hits and the non-finite rows (the second kind); without,
#: the valid labels and the hits.
_TALLY_SLOTS = {True: (0, _TOTAL, _HITS, 1), False: (_TOTAL, _HITS)}
#: The same on the CPU, for eager CPU updates (`top_k_accuracy_cpu_tallies`): made once here,
#: as `device_constant`'s tests for compiling and fake tensors are what that path has passed.
_CPU_TALLY_SLOTS = {
    checked: torch.tensor(slots, dtype=torch.int64) for checked, slots in _TALLY_SLOTS.items()
}


@final
class TopKAccuracyMetric(HeldErrors):
    """Fraction of samples whose label is among their `k` highest scores, as scikit-learn's
    `top_k_accuracy_score`.

    Ties are broken as scikit-learn does: among equal scores the higher class index ranks
    first (so with all scores equal, only the `k` highest classes are hits). With `weights`
    it is the weighted mean of the hits (scikit-learn's `sample_weight`; with 0/1 weights, the
    plain mean over the weight-1 samples). NaN before any sample.

    Args:
        k: How many of the highest scores count as a hit (>= 1; k >= num_classes always hits).
        name: Metric name; defaults to "top_k_accuracy".
        check_values: Count labels outside `[0, num_classes)`, samples with a NaN or infinite
            score (each ranks wrongly, or not at all) and negative weights and raise them at
            compute.

    Example:
        >>> top2 = TopKAccuracyMetric(2)
        >>> top2(torch.tensor([2, 0]), torch.tensor([[0.5, 0.2, 0.3], [0.1, 0.6, 0.3]]))
        tensor(0.5000, dtype=torch.float64)
    """

    input_kind = "classification"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = "%"
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    #: Held batches are ranked in blocks of 2^16 scores, so a batch of more than 2^15 gains
    #: nothing from holding but its copy (evaluations of 40 updates, 2026-11-29: 64 x 1000
    #: held 127-131 µs an update, direct 117-118; 48 x 1000 104 and 97; 32 x 1000 69 and 83).
    max_held_elements = 1 << 15

    error_kinds = ErrorKinds(
        invalid_labels="labels outside [0, num_classes)",
        nonfinite_predictions="non-finite predictions",
        negative_weights="negative weights",
        nonfinite_weights="NaN or infinite weights",
    )

    def __init__(self, k: int, name: str | None = None, *, check_values: bool = True) -> None:
        check_int("k", k, 1)
        super().__init__(name, check_values=check_values)
        self.k = k
        # One state: the error counts (see HeldErrors), the hits and the total, and the
        # fused path's other bins, so that a batch of class scores fills it with one scatter.
        self.register_state("counts", torch.zeros(_SIZE, dtype=torch.float64))

    @property
    def hits(self) -> Tensor:
        """The (weighted) count of hits so far (0-d float64)."""
        counts: Tensor = self.counts
        return counts[_HITS]

    @property
    def total(self) -> Tensor:
        """The (weighted) count of samples with a valid label so far (0-d float64)."""
        counts: Tensor = self.counts
        return counts[_TOTAL]

    def _held_state(self) -> Tensor | None:
        return self._buffers["counts"]

    def _held_totals(self, values: list[float]) -> list[float]:
        totals = list(values[:_KINDS])
        totals[0] += values[_INVALID_BIN]
        totals[1] += values[_NONFINITE_BIN]
        return totals

    def _held_device_totals(self, state: Tensor) -> Tensor:
        bins = torch.stack([state[_INVALID_BIN], state[_NONFINITE_BIN]])
        return torch.cat([state[:2] + bins, state[2:_KINDS]])

    def _add_counts(self, state: Tensor, hits: Tensor, total: Tensor) -> None:
        self._state_view(state, "counts[hits]", lambda s: s[_HITS]).add_(hits)
        self._state_view(state, "counts[total]", lambda s: s[_TOTAL]).add_(total)

    def shared_statistic(self) -> Hashable:
        """`("top_k_hits", k, check_values)`."""
        return ("top_k_hits", self.k, self.check_values)

    def update(self, labels: Tensor, predictions: Tensor, weights: Tensor | None = None) -> None:
        """Count one batch.

        Args:
            labels: Integer class indices of any shape.
            predictions: Scores or logits of shape `labels.shape + (num_classes,)`.
            weights: Optional sample weights shaped like `labels`.
        """
        # The buffer itself: a state read as `self.counts` costs a failed attribute lookup and
        # __getattr__ per call.
        state: Tensor = self._buffers["counts"]  # type: ignore[assignment]
        if weights is None:
            tallies = top_k_accuracy_cpu_tallies(labels, predictions, self.k, self.check_values)
            if tallies is not None:
                state.index_add_(0, _CPU_TALLY_SLOTS[self.check_values], tallies)
                return
            if self._fused_update(state, labels, predictions):
                return
            tallies = top_k_accuracy_tallies(labels, predictions, self.k, self.check_values)
            state.index_add_(0, self._tally_slots(state), tallies)  # every count in one add
            return
        hits, total = top_k_accuracy_update(labels, predictions, self.k, weights)
        if self.check_values:
            self.record_errors(**top_k_accuracy_errors(labels, predictions, weights))
        self._add_counts(state, hits, total)

    def _tally_slots(self, state: Tensor) -> Tensor:
        """The state positions `top_k_accuracy_tallies` adds to, on the state's device."""
        slots = _TALLY_SLOTS[self.check_values]
        return device_constant(
            ("top-k tally slots", *slots),
            state,
            lambda d: torch.tensor(slots, dtype=torch.int64, device=d),
        )

    def _fused_update(self, state: Tensor, labels: object, predictions: object) -> bool:
        """Int64 labels and class scores (`class_score_rows`) off the CPU: the codes of
        `top_k_codes` scattered into the state (the hits and the total, and the invalid
        labels), and the non-finite scores counted. False for anything else."""
        rows_of = class_score_rows(labels, predictions)
        if rows_of is None or rows_of[1].shape[1] < 1 or not fuses(rows_of[1]):
            return False
        labels, predictions = rows_of
        rows = labels.shape[0]
        codes = top_k_codes(labels, predictions, self.k, self.check_values)
        if self.check_values:
            bins = state.as_strided((2, 4), (4, 1), _TOTAL)
        else:
            bins = state.as_strided((2, 2), (4, 2), _TOTAL)
        bins.scatter_add_(1, codes, unit_constant(state).expand(2, rows))
        return True

    def compute(self) -> Tensor:
        counts: Tensor = self.counts
        return top_k_accuracy_compute(counts[_HITS], counts[_TOTAL])

    def extra_repr(self) -> str:
        return f"name={self.name!r}, k={self.k}"

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) in (2, 3)  # hits and totals are sums over rows
