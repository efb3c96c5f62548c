"""`R2ScoreMetric`: R² accumulated exactly across batches (never averaged per batch)."""

from __future__ import annotations

from typing import Any, cast, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, check_int
from torchtally.functional._checks import check_tensor
from torchtally.functional.regression._fused import eager_cpu
from torchtally.functional.regression._r2 import (
    MULTIOUTPUT,
    add_r2_sums_fused,
    r2_compute,
    r2_sums,
    r2_sums_checked,
)
from torchtally.metrics._base import Metric
from torchtally.metrics.regression._errors import FLOAT64_SUMS_HELD, packed_from_old_states

__all__ = ["R2ScoreMetric"]

_OLD_STATES = ("sum_y", "sum_y2", "sum_squared_error", "count")


def _packed(old: list[Tensor]) -> Tensor:
    """The `sums` state from the old per-output sums."""
    sum_y, sum_y2, sse, count = (t.to(torch.float64).reshape(-1) for t in old)
    return torch.stack([sum_y2, count.expand_as(sum_y), sse, sum_y])


@final
class R2ScoreMetric(Metric):
    """Coefficient of determination over every sample seen.

    Args:
        num_outputs: Number of regression outputs; labels are `(N,)` when 1, else
            `(N, num_outputs)`.
        multioutput: "uniform_average", "raw_values" or "variance_weighted" (scikit-learn's).
        name: Metric name; defaults to "r2_score".
        check_values: Count non-finite labels/predictions and raise them at compute.

    Example:
        >>> r2 = R2ScoreMetric()
        >>> r2.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
        >>> float(r2(torch.tensor([3.0]), torch.tensor([4.0])))
        0.5
    """

    input_kind = "regression"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = True
    max_held_elements = FLOAT64_SUMS_HELD

    error_kinds = ErrorKinds(
        nonfinite_labels="non-finite labels",
        nonfinite_predictions="non-finite predictions",
    )
    array_inputs = ("labels", "predictions")

    def __init__(
        self,
        num_outputs: int = 1,
        multioutput: str = "uniform_average",
        name: str | None = None,
        *,
        check_values: bool = True,
    ) -> None:
        check_int("num_outputs", num_outputs, 1)
        check_choice("multioutput", multioutput, MULTIOUTPUT)
        super().__init__(name, check_values=check_values)
        self.num_outputs = num_outputs
        self.multioutput = multioutput
        # Per output [Σy², n, Σ(p - y)², Σy]: one tensor, so that a GPU update adds the first
        # three in one op (and Σy in a second).
        self.register_state("sums", torch.zeros(4, num_outputs, dtype=torch.float64))
        self._views: tuple[Tensor, ...] | None = None

    def update(self, labels: Tensor, predictions: Tensor) -> None:
        """Add one batch of targets and predictions (same shape).

        The order is `(labels, predictions)`, cstorch's (TorchMetrics' is `(preds, target)`).
        Both are floating, so a swap cannot be detected: pass them by keyword when in doubt.
        """
        labels, predictions = (
            check_tensor("labels", labels),
            check_tensor("predictions", predictions),
        )
        rows = labels.shape[0] if labels.dim() else 0
        expected = (rows,) if self.num_outputs == 1 else (rows, self.num_outputs)
        if tuple(labels.shape) != expected:
            raise ValueError(
                f"Argument `labels` must have shape (N,) for num_outputs=1 or (N, num_outputs). "
                f"Received: labels.shape={tuple(labels.shape)}, num_outputs={self.num_outputs}"
            )
        # The buffer itself: a state read as `self.sums` costs a failed attribute lookup and
        # __getattr__.
        sums: Tensor = self._buffers["sums"]  # type: ignore[assignment]
        if not eager_cpu(labels):
            counts = add_r2_sums_fused(sums, labels, predictions, self.check_values)
            if counts is not None:
                self.record_errors(nonfinite_labels=counts[0], nonfinite_predictions=counts[1])
            return
        if self.check_values:
            sum_y, sum_y2, sse, bad_labels, bad_predictions = r2_sums_checked(labels, predictions)
            self.record_errors(nonfinite_labels=bad_labels, nonfinite_predictions=bad_predictions)
        else:
            sum_y, sum_y2, sse = r2_sums(labels, predictions)
        # Cached views of the rows (a select per call costs a dispatch), and the count as a
        # Python float: no tensor made for it.
        views = self._views
        if views is None or views[0] is not sums:
            views = self._views = (sums, *sums.unbind())
        views[1].add_(sum_y2)
        views[2].add_(float(rows))
        views[3].add_(sse)
        views[4].add_(sum_y)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        # A pickled view is unpickled as a tensor of its own, no longer an alias of the state.
        state["_views"] = None
        return state

    # Checkpoints written before the sums were packed into `sums`.
    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any, **kw: Any) -> None:
        packed_from_old_states(state_dict, prefix, "sums", _OLD_STATES, _packed)
        super()._load_from_state_dict(state_dict, prefix, *args, **kw)

    def load_state_dict_all(self, state: dict[str, Tensor]) -> None:
        super().load_state_dict_all(
            packed_from_old_states(dict(state), "", "sums", _OLD_STATES, _packed)
        )

    @property
    def sum_y(self) -> Tensor:
        """Σy per output (a view of the state `sums`)."""
        return cast(Tensor, self.sums[3])

    @property
    def sum_y2(self) -> Tensor:
        """Σy² per output (a view of the state `sums`)."""
        return cast(Tensor, self.sums[0])

    @property
    def sum_squared_error(self) -> Tensor:
        """Σ(p - y)² per output (a view of the state `sums`)."""
        return cast(Tensor, self.sums[2])

    @property
    def count(self) -> Tensor:
        """Samples seen (a 0-d view of the state `sums`)."""
        return cast(Tensor, self.sums[1, 0])

    def compute(self) -> Tensor:
        return r2_compute(
            self.sum_y, self.sum_y2, self.sum_squared_error, self.count, self.multioutput
        )

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        return len(args) == 2  # sums over rows
