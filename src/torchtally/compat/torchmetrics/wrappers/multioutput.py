"""`torchmetrics.wrappers.multioutput`: `MultioutputWrapper`, one copy of a metric per output."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import Tensor, nn

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.wrappers.abstract import WrapperMetric

__all__ = ["MultioutputWrapper"]


def _nan_rows(*tensors: Tensor) -> Tensor:
    """Which rows (dimension 0) hold a NaN in any of `tensors`."""
    if not tensors:
        raise ValueError("Must pass at least one tensor as argument")
    rows = torch.zeros(len(tensors[0]), dtype=torch.bool, device=tensors[0].device)
    for tensor in tensors:
        rows |= torch.isnan(tensor.flatten(start_dim=1)).any(dim=1)
    return rows


class MultioutputWrapper(WrapperMetric):
    """TorchMetrics' `MultioutputWrapper`: `num_outputs` copies of `base_metric`, copy `i` fed
    slice `i` of every tensor along `output_dim`; `compute` stacks their values.

    `remove_nans=True` (TorchMetrics' default) drops, per output, the rows holding a NaN in any
    input: a selection by value, so that update reads the data on the host (eager only). With
    `remove_nans=False` the update is the copies' own.

    Raises:
        ValueError: `base_metric` is not a metric or `num_outputs` not a positive integer.
    """

    is_differentiable = False

    def __init__(
        self,
        base_metric: Metric,
        num_outputs: int,
        output_dim: int = -1,
        remove_nans: bool = True,
        squeeze_outputs: bool = True,
    ) -> None:
        if not isinstance(base_metric, Metric):
            raise ValueError(
                "Expected argument `base_metric` to be an instance of `torchmetrics.Metric` but "
                f"got {base_metric}"
            )
        if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 1:
            raise ValueError(
                f"Argument `num_outputs` must be an integer >= 1. Received: num_outputs={num_outputs!r}"
            )
        super().__init__()
        self.metrics: Any = nn.ModuleList([copy.deepcopy(base_metric) for _ in range(num_outputs)])
        self.output_dim = output_dim
        self.remove_nans = remove_nans
        self.squeeze_outputs = squeeze_outputs

    def _by_output(self, *args: Any, **kwargs: Any) -> list[tuple[list[Any], dict[str, Any]]]:
        out = []
        for i in range(len(self.metrics)):

            def pick(value: Any, i: int = i) -> Any:
                if not isinstance(value, Tensor):
                    return value
                index = torch.full((1,), i, dtype=torch.long, device=value.device)
                return value.index_select(self.output_dim, index)

            selected_args = [pick(a) for a in args]
            selected_kwargs = {k: pick(v) for k, v in kwargs.items()}
            if self.remove_nans:
                tensors = [
                    t for t in (*selected_args, *selected_kwargs.values()) if isinstance(t, Tensor)
                ]
                if torch.compiler.is_compiling():
                    raise RuntimeError(
                        "MultioutputWrapper(remove_nans=True) selects rows by value, which a "
                        "compiled update cannot: pass remove_nans=False to compile it."
                    )
                keep = ~_nan_rows(*tensors)
                selected_args = [a[keep] if isinstance(a, Tensor) else a for a in selected_args]
                selected_kwargs = {
                    k: v[keep] if isinstance(v, Tensor) else v for k, v in selected_kwargs.items()
                }
            if self.squeeze_outputs:
                selected_args = [
                    a.squeeze(self.output_dim) if isinstance(a, Tensor) else a
                    for a in selected_args
                ]
                selected_kwargs = {
                    k: v.squeeze(self.output_dim) if isinstance(v, Tensor) else v
                    for k, v in selected_kwargs.items()
                }
            out.append((selected_args, selected_kwargs))
        return out

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update copy `i` with slice `i` of the inputs."""
        for metric, (a, k) in zip(self.metrics, self._by_output(*args, **kwargs), strict=True):
            metric.update(*a, **k)

    def compute(self) -> Tensor:
        """Every copy's value, stacked along a first dimension."""
        return torch.stack([torch.as_tensor(m.compute()) for m in self.metrics], 0)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Every copy's batch value, stacked (None if the copies return None)."""
        results = [
            metric(*a, **k)
            for metric, (a, k) in zip(self.metrics, self._by_output(*args, **kwargs), strict=True)
        ]
        if results[0] is None:
            return None
        return torch.stack([torch.as_tensor(r) for r in results], 0)

    def reset(self) -> None:
        for metric in self.metrics:
            metric.reset()
