"""`torchmetrics.wrappers.abstract`: `WrapperMetric`, the base of the wrappers."""

from __future__ import annotations

from typing import Any

import torch

from torchtally.compat.torchmetrics._base import Metric

__all__ = ["WrapperMetric"]


class WrapperMetric(Metric):
    """A metric around other metrics: its `update` and `compute` are left as written (the
    wrapped metrics count, cache and sync themselves), and `forward` is each wrapper's own.

    A `Metric`, so that collections, trackers and metric arithmetic take wrappers as they
    take metrics.
    """

    _tm_plain_update = True
    _tm_plain_compute = True

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no `forward`.")

    def _wrapped(self) -> list[Any]:
        """The metrics (and collections) this wrapper holds, in containers or not."""
        found: list[Any] = []
        pending = list(self.children())
        while pending:
            child = pending.pop(0)
            if isinstance(child, Metric) or hasattr(child, "persistent"):
                found.append(child)
            else:
                pending.extend(child.children())
        return found

    def persistent(self, mode: bool = False) -> WrapperMetric:
        """Save the wrapped metrics' states in `state_dict()` (mode=True) or leave them out."""
        for metric in self._wrapped():
            metric.persistent(mode)
        return self
