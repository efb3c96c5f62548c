"""Activation sparsity: the fraction of zero outputs of the activation layers.

Every output element of every hooked activation layer counts, over all samples of the batch
and all time steps; for spiking neurons the outputs are the spikes.
"""

from __future__ import annotations

from typing import Any, cast, final

import torch
from torch import Tensor

from torchtally.bench._harness.hooks import ActivationHook
from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import DeviceAccumulatedMetric, DeviceWorkloadMetric
from torchtally.bench._ops.counting import count_true

__all__ = ["ActivationSparsity", "ActivationSparsityByLayer"]


@final
class ActivationSparsity(DeviceWorkloadMetric):
    """Fraction of zero activations in a batch, over all activation layers.

    Example:
        >>> from torch import nn
        >>> from torchtally.bench import Benchmark
        >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU())
        >>> with torch.no_grad():  # units 0 and 1 fire for x > 0, units 2 and 3 for x < 0
        ...     _ = net[0].weight.copy_(torch.tensor([[1.0, 0], [1.0, 0], [-1.0, 0], [-1.0, 0]]))
        ...     _ = net[0].bias.zero_()
        >>> loader = [(torch.tensor([[1.0, 0.0], [-2.0, 0.0]]), torch.tensor([0, 0]))]
        >>> Benchmark(net, loader, [], [], [[], [ActivationSparsity]]).run(quiet=True)
        {'ActivationSparsity': 0.5}
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=True)

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        outputs = [
            (hook.name, output)
            for hook in _hooks_of(model, "ActivationSparsity")
            for output in hook.activation_outputs
        ]
        if not outputs:
            raise ValueError("ActivationSparsity: no activation layer ran during this batch")
        nonzero = _count_nonzero(outputs)
        total = sum(out.numel() for _, out in outputs)
        # float64 over exact integer counts: NeuroBench's Python division, bit for bit.
        return cast(Tensor, (total - nonzero).double() / total)


@final
class ActivationSparsityByLayer(DeviceAccumulatedMetric):
    """Fraction of zero activations per activation layer, over the whole run.

    NeuroBench 2.3.0's version cannot be constructed (its `__init__` skips the base class's),
    and it names layers by their attribute name alone, merging layers that share one; here
    layers are named by their qualified name in the network.

    Returns (from `compute`):
        `{layer_name: sparsity}` for every layer that produced output.

    Example:
        >>> from torch import nn
        >>> from torchtally.bench import Benchmark
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2), nn.ReLU())
        >>> with torch.no_grad():
        ...     _ = net[0].weight.copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]))
        ...     _ = net[2].weight.copy_(torch.tensor([[1.0, 1.0], [1.0, 1.0]]))
        ...     _ = net[0].bias.zero_(), net[2].bias.zero_()
        >>> loader = [(torch.tensor([[1.0, 0.0], [2.0, 0.0]]), torch.tensor([0, 0]))]
        >>> Benchmark(net, loader, [], [], [[], [ActivationSparsityByLayer]]).run(quiet=True)
        {'ActivationSparsityByLayer': {'1': 0.5, '3': 0.0}}
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=True)
        self._nonzero: dict[str, Tensor] = {}
        self._total: dict[str, int] = {}

    def reset(self) -> None:
        self._nonzero = {}
        self._total = {}

    def accumulate(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> None:
        for hook in _hooks_of(model, "ActivationSparsityByLayer"):
            if not hook.activation_outputs:
                continue
            count = _count_nonzero([(hook.name, out) for out in hook.activation_outputs])
            previous = self._nonzero.get(hook.name)
            self._nonzero[hook.name] = count if previous is None else previous + count
            total = sum(out.numel() for out in hook.activation_outputs)
            self._total[hook.name] = self._total.get(hook.name, 0) + total

    def compute(self) -> dict[str, float]:
        names = [name for name, total in self._total.items() if total > 0]
        if not names:
            raise ValueError("ActivationSparsityByLayer: no activation layer produced output")
        device = self._nonzero[names[0]].device
        nonzero = torch.stack([self._nonzero[n].to(device) for n in names]).tolist()  # one read
        return {n: (self._total[n] - k) / self._total[n] for n, k in zip(names, nonzero)}


def _hooks_of(model: BenchModel, metric: str) -> list[ActivationHook]:
    if not model.activation_hooks:
        kinds = ", ".join(t.__name__ for t in model.activation_modules)
        raise ValueError(
            f"{metric}: the model has no activation layers to hook (looked for: {kinds}); "
            "register other kinds with model.add_activation_module(...)"
        )
    return model.activation_hooks


def _count_nonzero(outputs: list[tuple[str, Any]]) -> Tensor:
    """Non-zero values over many outputs, in a few ops: one concatenation per dtype and device
    rather than one count per output (a spiking network has one per layer and time step)."""
    groups: dict[tuple[torch.dtype, torch.device], list[Tensor]] = {}
    for layer, output in outputs:
        if not isinstance(output, Tensor):
            raise TypeError(
                f"activation layer `{layer}` must output a tensor. "
                f"Received: {type(output).__name__}"
            )
        values = output.dequantize() if output.is_quantized else output
        groups.setdefault((values.dtype, values.device), []).append(values.reshape(-1))
    counts = [count_true((g[0] if len(g) == 1 else torch.cat(g)) != 0) for g in groups.values()]
    device = counts[0].device
    return torch.stack([count.to(device) for count in counts]).sum()
