"""`MSEMetric`, `MAEMetric`, `SMAPEMetric`: means of a per-element error over every batch."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, cast, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.functional._checks import check_same_shape, check_tensor, count_nonfinite
from torchtally.functional.regression._errors import (
    absolute_error_sum,
    absolute_error_sum_checked,
    smape_sum,
    squared_error_sum,
    squared_error_sum_checked,
)
from torchtally.functional.regression._fused import (
    count_table,
    difference_table,
    eager_cpu,
    error_rows,
)
from torchtally.metrics._base import Metric

__all__ = ["MAEMetric", "MSEMetric", "SMAPEMetric", "packed_from_old_states"]

#: The smallest positive float64 (a subnormal).
_TINIEST = math.ulp(0.0)


def packed_from_old_states(
    state: dict[str, Any],
    prefix: str,
    new: str,
    old: tuple[str, ...],
    pack: Callable[[list[Tensor]], Tensor],
) -> dict[str, Any]:
    """Replace, in `state`, the states `old` of a checkpoint written before they were packed
    into one tensor by `pack(old tensors)`, saved as `new` (a checkpoint with `new`, or
    without every one of `old`, is left as it is)."""
    if prefix + new not in state and all(prefix + name in state for name in old):
        state[prefix + new] = pack([state.pop(prefix + name) for name in old])
    return state


def _stacked(tensors: list[Tensor]) -> Tensor:
    return torch.stack([t.reshape(()).to(torch.float64) for t in tensors])


#: The largest batch that an eager float64-sum metric (the mean errors, R², the mean) holds
#: back, in elements. Their update of a held batch of 2^18 elements goes in cache-sized blocks,
#: no cheaper per element than a direct update from about 2^15 elements, so past this a held
#: batch pays its copy for nothing (interleaved, an update then its share of the flush,
#: 2026-11-30: held / direct µs at 32768 elements MSE 108 / 84, MAE 117 / 93, R² 112 / 101,
#: mean 49 / 45; at 65536 MSE 210 / 163, R² 218 / 185, mean 100 / 69; at 16384 held is as
#: fast or faster: MSE 59 / 59, R² 63 / 68, mean 28 / 34, SMAPE 102 / 120).
FLOAT64_SUMS_HELD = 1 << 14


class _MeanErrorMetric(Metric):
    """Accumulates a per-element error's sum and the element count (exact across batches)."""

    error_kinds = ErrorKinds(
        nonfinite_labels="non-finite labels",
        nonfinite_predictions="non-finite predictions",
    )
    array_inputs = ("labels", "predictions")
    scale = 1.0
    max_held_elements = FLOAT64_SUMS_HELD

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__(name, check_values=check_values)
        #: [element count, error sum]: one tensor, so that a GPU update adds both in one op.
        self.register_state("totals", torch.zeros(2, dtype=torch.float64))
        self._views: tuple[Tensor, Tensor, Tensor] | None = None

    @staticmethod
    @abstractmethod
    def _batch_sum(labels: Tensor, predictions: Tensor) -> Tensor: ...

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """The batch sum and the non-finite label and prediction counts (overridden where a
        functional takes them in fewer passes)."""
        return (
            cls._batch_sum(labels, predictions),
            count_nonfinite(labels),
            count_nonfinite(predictions),
        )

    @staticmethod
    @abstractmethod
    def _fold(table: Tensor, totals: Tensor) -> None:
        """Add the count and error sum of a `difference_table` to `totals` (few kernels)."""

    def update(self, labels: Tensor, predictions: Tensor) -> None:
        """Add one batch of targets and predictions (same shape).

        The order is `(labels, predictions)`, cstorch's (TorchMetrics' is `(preds, target)`).
        Both are floating, so a swap cannot be detected: pass them by keyword when in doubt.
        """
        labels, predictions = (
            check_tensor("labels", labels),
            check_tensor("predictions", predictions),
        )
        # The (2,) buffer itself: a state read as `self.totals` costs a failed attribute
        # lookup and __getattr__.
        totals: Tensor = self._buffers["totals"]  # type: ignore[assignment]
        if not eager_cpu(labels):
            check_same_shape("labels", labels, "predictions", predictions)
            table = difference_table(labels, predictions)
            if self.check_values:
                counts = count_table(table)
                self.record_errors(nonfinite_labels=counts[0], nonfinite_predictions=counts[1])
            self._fold(table, totals)
            return
        if self.check_values:
            error_sum, bad_labels, bad_predictions = self._checked_sum(labels, predictions)
            self.record_errors(nonfinite_labels=bad_labels, nonfinite_predictions=bad_predictions)
        else:
            error_sum = self._batch_sum(labels, predictions)
        # Cached views of the two entries (a select per call costs a dispatch), and the count
        # as a Python float: no tensor made for it.
        views = self._views
        if views is None or views[0] is not totals:
            views = self._views = (totals, totals[0], totals[1])
        views[2].add_(error_sum)
        views[1].add_(float(labels.numel()))

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        # A pickled view is unpickled as a tensor of its own, no longer an alias of the state.
        state["_views"] = None
        return state

    # Checkpoints written before the count and error sum were packed into `totals`.
    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any, **kw: Any) -> None:
        packed_from_old_states(state_dict, prefix, "totals", ("count", "error_sum"), _stacked)
        super()._load_from_state_dict(state_dict, prefix, *args, **kw)

    def load_state_dict_all(self, state: dict[str, Tensor]) -> None:
        state = packed_from_old_states(dict(state), "", "totals", ("count", "error_sum"), _stacked)
        super().load_state_dict_all(state)

    @property
    def count(self) -> Tensor:
        """Elements seen (a 0-d view of the state `totals`)."""
        return cast(Tensor, self.totals[0])

    @property
    def error_sum(self) -> Tensor:
        """Sum of the per-element error so far (a 0-d view of the state `totals`)."""
        return cast(Tensor, self.totals[1])

    def compute(self) -> Tensor:
        return self.scale * self.error_sum / self.count

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) == 2  # an error sum and a count over elements


@final
class MSEMetric(_MeanErrorMetric):
    """Mean squared error over every element seen.

    Example:
        >>> float(MSEMetric()(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    _batch_sum = staticmethod(squared_error_sum)

    @staticmethod
    def _fold(table: Tensor, totals: Tensor) -> None:
        rows = error_rows(table)  # [-1, -(p - y)]
        # Two batched dot products, each row with itself: [n, Σ(p - y)²] added in one op.
        totals.view(2, 1, 1).baddbmm_(rows.unsqueeze(1), rows.unsqueeze(2))

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        return squared_error_sum_checked(labels, predictions)


@final
class MAEMetric(_MeanErrorMetric):
    """Mean absolute error over every element seen.

    Example:
        >>> float(MAEMetric()(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 2.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    _batch_sum = staticmethod(absolute_error_sum)

    @staticmethod
    def _fold(table: Tensor, totals: Tensor) -> None:
        rows = error_rows(table).abs_()  # [1, |p - y|], in place
        totals.addmv_(rows, rows[0])  # [Σ1·1, Σ|p - y|·1]

    @classmethod
    def _checked_sum(
        cls, labels: Tensor, predictions: Tensor
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        return absolute_error_sum_checked(labels, predictions)


@final
class SMAPEMetric(_MeanErrorMetric):
    """Symmetric mean absolute percentage error in percent (0 to 200) over every element.

    An element with prediction = label = 0 counts as a perfect 0 (NeuroBench reports such a
    batch as 200).

    Example:
        >>> float(SMAPEMetric()(torch.tensor([1.0, 0.0]), torch.tensor([3.0, 0.0])))
        50.0
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False

    scale = 200.0
    _batch_sum = staticmethod(smape_sum)

    @staticmethod
    def _fold(table: Tensor, totals: Tensor) -> None:
        rows = table[0:5, 0].abs_()  # |y|, |p|, 1, (y - y), |p - y|
        denominator = rows[0].add_(rows[1])
        # |p| + |y| is 0 only where p = y = 0, whose |p - y| = 0 then adds 0 / tiny = 0 (the
        # functional's where(denominator == 0, 1, ...) in one op: every other denominator of
        # float values is at least the tiniest float64); NaN stays NaN.
        denominator.clamp_(min=_TINIEST)
        rows[4].div_(denominator)
        ratios = rows[2:5:2]  # [1, |p - y| / (|p| + |y|)]
        totals.addmv_(ratios, ratios[0])
