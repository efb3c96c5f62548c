"""`torchmetrics.wrappers.running`: `Running`, a metric over its last `window` updates."""

from __future__ import annotations

from typing import Any

import torch

from torchtally.compat.torchmetrics import _user
from torchtally.compat.torchmetrics._base import Metric, _Batch
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric
from torchtally.metrics.wrappers import Running as _NativeRunning

__all__ = ["Running"]


class Running(WrapperMetric):
    """TorchMetrics' `Running`: the base metric over its last `window` updates. `forward`
    returns the batch value (as TorchMetrics), `compute` the value over the window.

    For a built-in base metric the window is torchtally's ring of states
    (`torchtally.metrics.Running`, held as `.running`): fixed shapes, traceable, synced like
    the base metric's states. A metric written TorchMetrics' way (`add_state`) keeps a copy of
    its states per slot, folded together at `compute` by their `dist_reduce_fx`.

    Raises:
        ValueError: `base_metric` is not a metric, `window` not a positive integer, or the
            base metric's `forward` needs its whole state (`full_state_update` not False).
    """

    def __init__(self, base_metric: Metric, window: int = 5) -> None:
        if not isinstance(base_metric, Metric):
            raise ValueError(
                "Expected argument `metric` to be an instance of `torchmetrics.Metric` but got "
                f"{base_metric} (argument `base_metric` must be a compatible metric)"
            )
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(
                f"Expected argument `window` to be a positive integer but got {window}"
            )
        if base_metric.full_state_update is not False:
            raise ValueError(
                "Expected attribute `full_state_update` set to `False` but got "
                f"{base_metric.full_state_update}"
            )
        super().__init__()
        self.base_metric, self.window = base_metric, window
        if base_metric._tm_user:
            self._tm.window_slots = [None] * window
        else:
            self.running = _NativeRunning(base_metric, window)

    def update(self, *args: Any, **kwargs: Any) -> None:
        if self.base_metric._tm_user:
            self.base_metric.update(*args, **kwargs)
            self._keep_slot()
            return
        self.running.update(*args, **kwargs)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.base_metric._tm_user:
            value = self.base_metric(*args, **kwargs)
            self._keep_slot()
            return value
        # The batch statistics once: folded into the ring and turned into the batch value.
        batch = _Batch(self.base_metric._batch(*args, **kwargs))
        self.running.update(batch)
        # `_batch_value`: with the base metric's `dist_sync_on_step`, the step's value over every rank
        return self.base_metric._batch_value(
            {k: v for k, v in batch.items() if not k.startswith("_")}
        )

    @property
    def _num_vals_seen(self) -> int:
        """TorchMetrics' `_num_vals_seen`: the updates seen since the last reset (of a metric
        written TorchMetrics' way; a built-in one's window counts in `.running`)."""
        return self._tm.num_vals_seen

    @_num_vals_seen.setter
    def _num_vals_seen(self, value: int) -> None:
        self._tm.num_vals_seen = value

    def _keep_slot(self) -> None:
        tm = self._tm
        tm.window_slots[tm.num_vals_seen % self.window] = _user.copy_states(self.base_metric)
        self.base_metric.reset()
        tm.num_vals_seen += 1

    def compute(self) -> Any:
        if not self.base_metric._tm_user:
            return self.running.compute()
        base = self.base_metric
        for slot in self._tm.window_slots:
            if slot is not None:
                base._reduce_states(slot)
        base._update_count = self._tm.num_vals_seen
        try:
            return base.compute()
        finally:
            base.reset()

    def reset(self) -> None:
        if self.base_metric._tm_user:
            self._tm.window_slots = [None] * self.window
            self._tm.num_vals_seen = 0
            self.base_metric.reset()
            return
        self.running.reset()

    def persistent(self, mode: bool = False) -> Running:
        """Save the window's states in `state_dict()` (mode=True) or leave them out."""
        if not self.base_metric._tm_user:
            self.running.persistent(mode)
        return self
