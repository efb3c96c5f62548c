"""Static metrics: model size and connection sparsity, with NeuroBench 2.3.0's definitions."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor, nn

from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import StaticMetric
from torchtally.bench._ops.layers import (
    CONNECTION_LAYERS,
    RECURRENT_CELLS,
    RECURRENT_LAYERS,
    find_layers,
)

__all__ = ["ConnectionSparsity", "Footprint", "ParameterCount", "connection_weights"]


@final
class Footprint(StaticMetric):
    """Memory footprint of the network in bytes: its parameters and its buffers.

    Example:
        >>> from torchtally.bench import TorchModel
        >>> Footprint()(TorchModel(nn.Linear(3, 2)))  # 8 float32 values
        32
    """

    def __call__(self, model: BenchModel) -> int:
        net = model.__net__()
        tensors = [*net.parameters(), *net.buffers()]
        return sum(t.numel() * t.element_size() for t in tensors)


@final
class ParameterCount(StaticMetric):
    """Number of parameters of the network.

    Example:
        >>> from torchtally.bench import TorchModel
        >>> ParameterCount()(TorchModel(nn.Linear(3, 2)))
        8
    """

    def __call__(self, model: BenchModel) -> int:
        return sum(p.numel() for p in model.__net__().parameters())


@final
class ConnectionSparsity(StaticMetric):
    """Fraction of zero weights in the connection layers, rounded to 4 decimals.

    Counted tensors (NeuroBench's choice): the weight of Linear and Conv layers (not their
    bias); every weight and bias of recurrent layers and cells. Other modules are ignored.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> with torch.no_grad():
        ...     net.weight[0] = 0.0
        >>> from torchtally.bench import TorchModel
        >>> ConnectionSparsity()(TorchModel(net))
        0.5
    """

    def __call__(self, model: BenchModel) -> float:
        tensors = [
            weight
            for _, layer in find_layers(model.__net__(), CONNECTION_LAYERS)
            for weight in connection_weights(layer)
        ]
        if not tensors:
            raise ValueError(
                "ConnectionSparsity: the network has no connection layers "
                "(Linear, Conv1d/2d/3d, RNN/LSTM/GRU or their cells)"
            )
        zeros = torch.stack([(t == 0).sum() for t in tensors]).sum()
        total = sum(t.numel() for t in tensors)
        # Integer tensor / int divides in the default float dtype (float32), as NeuroBench
        # does; rounding that value keeps the 4th decimal identical to NeuroBench's.
        return round((zeros / total).item(), 4)


def connection_weights(layer: nn.Module) -> list[Tensor]:
    """The tensors of a connection layer that `ConnectionSparsity` counts.

    Args:
        layer: A Linear, Conv, recurrent layer or recurrent cell.

    Returns:
        Its counted weight (and, for recurrent ones, bias) tensors.

    Example:
        >>> len(connection_weights(nn.LSTMCell(3, 2)))
        4
    """
    if isinstance(layer, RECURRENT_LAYERS):
        return [getattr(layer, name) for name in _recurrent_layer_weight_names(layer)]
    if isinstance(layer, RECURRENT_CELLS):
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if layer.bias else [])
        return [getattr(layer, name) for name in names]
    return [layer.weight]  # type: ignore[list-item]


def _recurrent_layer_weight_names(layer: nn.Module) -> list[str]:
    templates = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
    if layer.bias:
        templates += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
    if getattr(layer, "proj_size", 0) > 0:
        templates += ["weight_hr_l{}{}"]
    suffixes = ["", "_reverse"] if layer.bidirectional else [""]
    num_layers: int = layer.num_layers  # type: ignore[assignment]
    return [t.format(i, s) for i in range(num_layers) for s in suffixes for t in templates]
