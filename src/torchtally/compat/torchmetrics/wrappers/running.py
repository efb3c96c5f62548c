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
            self.__dict__["_slots"] = [None] * window
            self.__dict__["_num_vals_seen"] = 0
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
        return self.base_metric._value({k: v for k, v in batch.items() if not k.startswith("_")})

    def _keep_slot(self) -> None:
        seen = self.__dict__["_num_vals_seen"]
        self.__dict__["_slots"][seen % self.window] = _user.copy_states(self.base_metric)
        self.base_metric.reset()
        self.__dict__["_num_vals_seen"] = seen + 1

    def compute(self) -> Any:
        if not self.base_metric._tm_user:
            return self.running.compute()
        base = self.base_metric
        for slot in self.__dict__["_slots"]:
            if slot is not None:
                base._reduce_states(slot)
        base.__dict__["_update_count"] = self.__dict__["_num_vals_seen"]
        try:
            return base.compute()
        finally:
            base.reset()

    def reset(self) -> None:
        if self.base_metric._tm_user:
            self.__dict__["_slots"] = [None] * self.window
            self.__dict__["_num_vals_seen"] = 0
            self.base_metric.reset()
            return
        self.running.reset()

    def persistent(self, mode: bool = False) -> Running:
        """Save the window's states in `state_dict()` (mode=True) or leave them out."""
        if not self.base_metric._tm_user:
            self.running.persistent(mode)
        return self
