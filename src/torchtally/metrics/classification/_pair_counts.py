"""The pair-count state shared by the confusion matrix and the multiclass class-count metrics.

One flat float64 tensor: one slot per error kind (see `HeldErrors`), then two halves of
`C + 4` rows of `C` bins (`functional/classification/_fused.py`'s `pair_index`):

- half 0, by label row and argmax: row 1 counts labels below 0, rows 2 to `C + 1` are the
  confusion matrix (a contiguous `(C, C)` view), row `C + 2` counts labels from `C` on;
- half 1, by row-maximum code and argmax: rows 0 and `C + 3` count rows whose maximum is
  `-inf`, or `+inf` or NaN; the rows between (finite maxima) are counted nowhere.

A class-score batch off the CPU fills all of it with one scatter (its value checks included);
every other batch adds into the confusion-matrix view and records its errors into the slots.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._checks import ErrorCounts
from torchtally.functional.classification._fused import (
    PAIR_ROWS,
    class_score_rows,
    fuses,
    pair_index,
    pair_index_unchecked,
    unit_constant,
)
from torchtally.functional.classification._valid_inputs import class_score_batch

__all__ = ["PairLayout"]

#: The error kinds of a multiclass statistic, in order (`error_kinds("multiclass")`).
_KINDS = 5
_INVALID_LABELS, _NONFINITE = 0, 2


class PairLayout:
    """Offsets of the pair-count state of `num_classes` classes (see the module docstring)."""

    __slots__ = ("classes", "half", "size")

    def __init__(self, num_classes: int) -> None:
        self.classes = num_classes
        self.half = num_classes * (num_classes + PAIR_ROWS)
        self.size = _KINDS + 2 * self.half

    def zeros(self) -> Tensor:
        return torch.zeros(self.size, dtype=torch.float64)

    def _row(self, half: int, row: int) -> tuple[int, int]:
        start = _KINDS + half * self.half + row * self.classes
        return start, start + self.classes

    def matrix(self, state: Tensor) -> Tensor:
        """The `(C, C)` confusion matrix, a view of `state` (rows: labels)."""
        start, _ = self._row(0, 2)
        classes = self.classes
        return state[start : start + classes * classes].view(classes, classes)

    def error_ranges(self) -> list[tuple[int, int]]:
        """The ranges of `state` holding counts: the slots, then the error rows."""
        classes = self.classes
        return [
            (0, _KINDS),
            self._row(0, 1),
            self._row(0, classes + 2),
            self._row(1, 0),
            self._row(1, classes + 3),
        ]

    def error_views(self, state: Tensor) -> list[Tensor]:
        return [state[start:stop] for start, stop in self.error_ranges()]

    def totals(self, values: list[float]) -> list[float]:
        """Counts by kind from the host copy of `state`, or of `error_views` concatenated."""
        if len(values) == self.size:
            parts = [values[start:stop] for start, stop in self.error_ranges()]
        else:
            parts, start = [], 0
            for low, high in self.error_ranges():
                parts.append(values[start : start + high - low])
                start += high - low
        totals = list(parts[0])
        totals[_INVALID_LABELS] += sum(parts[1]) + sum(parts[2])
        totals[_NONFINITE] += sum(parts[3]) + sum(parts[4])
        return totals

    def device_totals(self, state: Tensor) -> Tensor:
        """Counts by kind as a `(K,)` float64 tensor on the state's device."""
        slots, below, above, neg_inf, pos_inf = self.error_views(state)
        extra = torch.stack([below.sum() + above.sum(), neg_inf.sum() + pos_inf.sum()])
        index = torch.tensor([_INVALID_LABELS, _NONFINITE], device=state.device)
        return slots.index_add(0, index, extra)

    def class_rows(self, state: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """True positives, predicted and actual count per class (each `(C,)`)."""
        matrix = self.matrix(state)
        return matrix.diagonal(), matrix.sum(0), matrix.sum(1)

    def add_class_scores(
        self,
        state: Tensor,
        matrix: Tensor,
        labels: object,
        predictions: object,
        check_values: bool,
    ) -> tuple[bool, ErrorCounts | None]:
        """Add the commonest batch, int64 labels and class scores (any leading shape off the
        CPU, `(N,)` and `(N, C)` on it) without weights: `(True, errors to record)`;
        `(False, None)` for anything else.

        Off the CPU the scatter of `pair_index` fills the matrix and the error rows at once
        (five ops; four without value checks); on the CPU `class_score_batch`'s lean path
        adds into `matrix` (`self.matrix(state)`) and returns its error counts.
        """
        classes = self.classes
        rows_of = class_score_rows(labels, predictions)
        if rows_of is not None and rows_of[1].shape[1] == classes and fuses(rows_of[1]):
            labels, predictions = rows_of
            one = unit_constant(state)
            rows = labels.shape[0]
            if check_values:
                target = state.as_strided((self.half, 2), (1, self.half), _KINDS)
                target.scatter_add_(0, pair_index(labels, predictions), one.expand(rows, 2))
            else:
                half = state[_KINDS : _KINDS + self.half]
                half.index_add_(0, pair_index_unchecked(labels, predictions), one.expand(rows))
            return True, None
        fast = class_score_batch(labels, predictions, classes, None, check_values)
        if fast is None:
            return False, None
        labels_c, predicted, weight, errors = fast
        # into the owned clamped labels: `predicted` may be a bool index (row_maxima)
        index = torch.add(predicted, labels_c, alpha=classes, out=labels_c)
        matrix.view(-1).index_add_(0, index, weight)
        return True, errors
