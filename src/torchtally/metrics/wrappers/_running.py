"""`Running`: a metric over the last `window` updates, in a fixed-size ring of states."""

from __future__ import annotations

from typing import Any, final

import torch
from torch import Tensor

from torchtally._errors import check_int, raise_for_counts, tracing
from torchtally.metrics._base import Metric
from torchtally.metrics.wrappers._bootstrap import _Method, wrapped_error_counts

__all__ = ["Running"]


@final
class Running(Metric):
    """The wrapped metric over its last `window` updates (TorchMetrics' `Running`).

    Each update runs the wrapped metric's own `update` on a zeroed scratch state and writes
    the result into slot `step % window` of a `(window, ...)` ring per state; `compute`
    reduces the ring (sum, max or min, as each state's reduction) and runs the wrapped
    metric's `compute` on it. Fixed shapes, no host sync, traceable. The wrapped metric must
    keep no `cat` state.

    The window is per process: under torch.distributed, the synced value covers the last
    `window` updates of every rank.

    Args:
        metric: The metric to window (a template: it is not updated itself).
        window: Number of most recent updates (>= 1).
        name: Metric name; defaults to "running_<metric name>".

    Example:
        >>> from torchtally.metrics import MeanMetric
        >>> running = Running(MeanMetric(), window=2)
        >>> for value in (1.0, 2.0, 6.0):
        ...     running.update(torch.tensor([value]))
        >>> running.compute()  # mean of the last two updates
        tensor(4., dtype=torch.float64)
    """

    unit = ""
    higher_is_better = None
    input_kind = "wrapped"

    def __init__(self, metric: Metric, window: int = 5, name: str | None = None) -> None:
        if not isinstance(metric, Metric):
            raise TypeError(
                "Argument `metric` must be a torchtally Metric. "
                f"Received: metric={type(metric).__name__}"
            )
        check_int("window", window, 1)
        cat_states = [n for n, _, r in metric.states() if r == "cat"]
        if cat_states:
            raise ValueError(
                "Argument `metric` must keep no 'cat' (buffer) state. Received: "
                f"{metric.name} with cat states {cat_states}"
            )
        super().__init__(name if name is not None else f"running_{metric.name}")
        object.__setattr__(self, "_template", metric)
        self.window = window
        self.error_kinds = metric.error_kinds
        self._names: list[tuple[str, str, str]] = []
        for state, tensor, reduction in metric.states():
            ring_name = "_ring_errors" if state == "_errors" else f"ring_{state.lstrip('_')}"
            initial = metric.initial_state(state).reshape(tensor.shape)
            ring = initial.unsqueeze(0).repeat(window, *([1] * tensor.dim()))
            # The ring's slots combine over ranks slot by slot as the state they hold.
            if ring_name.startswith("_"):
                self.register_internal_state(ring_name, ring, reduction)
            else:
                self.register_state(ring_name, ring, reduction=reduction)
            # The state a fresh update starts from: a constant, so "max" keeps it on merges.
            self.register_internal_state(f"_initial_{state.lstrip('_')}", initial.clone(), "max")
            self._names.append((state, ring_name, reduction))
        object.__setattr__(self, "_update_call", _Method(metric, "update"))
        object.__setattr__(self, "_compute_call", _Method(metric, "compute"))

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Fold the batch into a fresh slot, replacing the oldest update's."""
        scratch = {
            f"metric.{state}": self._buffers[f"_initial_{state.lstrip('_')}"].clone()  # type: ignore[union-attr]
            for state, _, _ in self._names
        }
        torch.func.functional_call(self._update_call, scratch, args, kwargs)
        slot = torch.remainder(self.update_counter, self.window).reshape(1)
        for state, ring, _ in self._names:
            buffer: Tensor = self._buffers[ring]  # type: ignore[assignment]
            buffer.index_copy_(0, slot, scratch[f"metric.{state}"].unsqueeze(0).to(buffer.dtype))

    def compute(self) -> Any:
        return torch.func.functional_call(self._compute_call, self._window(), ())

    def _window(self) -> dict[str, Tensor]:
        """The wrapped metric's states over the window (the ring reduced)."""
        reduced = {}
        for state, ring, reduction in self._names:
            buffer: Tensor = self._buffers[ring]  # type: ignore[assignment]
            if reduction == "max":
                reduced[f"metric.{state}"] = buffer.amax(0)
            elif reduction == "min":
                reduced[f"metric.{state}"] = buffer.amin(0)
            else:
                reduced[f"metric.{state}"] = buffer.sum(0)
        return reduced

    def check_errors(self) -> None:
        """Raise the wrapped metric's data errors seen in the window."""
        errors: Tensor = self._buffers["_ring_errors"]  # type: ignore[assignment]
        if not self.error_kinds or tracing(errors):
            return
        counts = wrapped_error_counts(self._template, self._window())
        raise_for_counts(self.name, tuple(self.error_kinds.values()), counts)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, metric={type(self._template).__name__}, window={self.window}"
