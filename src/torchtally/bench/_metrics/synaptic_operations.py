"""`SynapticOperations`: effective MACs, effective ACs and dense operations per sample."""

from __future__ import annotations

from typing import Any, final

import torch
from torch import Tensor, nn

from torchtally._errors import check_choice
from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import DeviceAccumulatedMetric
from torchtally.bench._ops.feedforward import conv_ops, linear_ops
from torchtally.bench._ops.layers import CONV_LAYERS
from torchtally.bench._ops.op_count import OpCache, OpCount, stack_by_shape
from torchtally.bench._ops.recurrent import recurrent_cell_ops, recurrent_layer_ops
from torchtally.bench._ops.recurrent_neurobench import neurobench_cells_ops

__all__ = ["RECURRENT_COUNTINGS", "SynapticOperations", "calls_ops", "layer_ops"]

#: The ways `SynapticOperations` counts recurrent cells.
RECURRENT_COUNTINGS = ("neurobench", "gate_equations")


@final
class SynapticOperations(DeviceAccumulatedMetric):
    """Synaptic operations per sample, over every call of every connection layer.

    Effective operations are products of a non-zero weight and a non-zero input; they are
    accumulates (ACs) when the layer's input is spike-valued (only 0, 1, -1) and
    multiply-accumulates (MACs) otherwise. Dense counts every product, zeros included.
    Linear and Conv layers are counted exactly as NeuroBench 2.3.0 counts them; recurrent
    layers from their gate equations (see `recurrent_layer_ops`), which NeuroBench cannot count.

    Recurrent cells (`RNNCell`, `LSTMCell`, `GRUCell`) are counted as NeuroBench 2.3.0 counts
    them by default (`recurrent_counting="neurobench"`), so leaderboard numbers match; where
    NeuroBench has no right count (a cell called without a state, where it fails or counts
    one sample of the batch; a GRUCell without bias) the gate equations count them. `recurrent_counting="gate_equations"` counts every cell
    call from its gate equations, as layers are: products of a non-zero weight and a non-zero
    value, elementwise gate products of non-zero operands, and a dense count of every product
    whatever the state (see `recurrent_cell_ops`). Pass it as
    `functools.partial(SynapticOperations, recurrent_counting="gate_equations")`.

    Args:
        recurrent_counting: ``"neurobench"`` (default) or ``"gate_equations"``.

    Returns (from `compute`):
        `{"Effective_MACs": ..., "Effective_ACs": ..., "Dense": ...}`, each per sample.

    Example:
        >>> from torchtally.bench import Benchmark
        >>> _ = torch.manual_seed(0)
        >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 3))
        >>> loader = [(torch.tensor([[0.5, -1.0], [2.0, 0.3]]), torch.tensor([0, 1]))]
        >>> Benchmark(net, loader, [], [], [[], [SynapticOperations]]).run(quiet=True)
        {'SynapticOperations': {'Effective_MACs': 12.5, 'Effective_ACs': 0.0, 'Dense': 20.0}}
    """

    def __init__(self, recurrent_counting: str = "neurobench") -> None:
        super().__init__(requires_hooks=True)
        check_choice("recurrent_counting", recurrent_counting, RECURRENT_COUNTINGS)
        self.recurrent_counting = recurrent_counting
        self.reset()

    def reset(self) -> None:
        self._macs: Tensor | int = 0
        self._acs: Tensor | int = 0
        self._dense: Tensor | int = 0
        self._samples = 0
        self._cache = OpCache()

    def accumulate(self, model: BenchModel, preds: Any, data: tuple[Tensor, ...]) -> None:
        if not model.connection_hooks:
            raise ValueError(
                "SynapticOperations: the model has no connection layers "
                "(Linear, Conv1d/2d/3d, RNN/LSTM/GRU or their cells)"
            )
        for hook in model.connection_hooks:
            neurobench = self.recurrent_counting == "neurobench"
            for count in calls_ops(hook.layer, hook.inputs, self._cache, neurobench):
                self._macs = count.macs + self._macs
                self._acs = count.acs + self._acs
                self._dense = count.dense + self._dense
        self._samples += data[0].size(0)

    def compute(self) -> dict[str, float]:
        if self._samples == 0:
            raise ValueError("SynapticOperations: no batch was seen since the last reset")
        macs, acs, dense = (
            int(torch.as_tensor(v).item()) for v in (self._macs, self._acs, self._dense)
        )
        return {
            "Effective_MACs": macs / self._samples,
            "Effective_ACs": acs / self._samples,
            "Dense": dense / self._samples,
        }


def calls_ops(
    layer: nn.Module,
    calls: list[tuple[Any, ...]],
    cache: OpCache,
    neurobench_cells: bool = False,
) -> list[OpCount]:
    """Operations of a connection layer's calls (the argument tuples its hook recorded).

    Linear and Conv calls with same-shaped inputs are counted together; recurrent calls one
    by one (each replays its own time steps).

    Args:
        layer: A Linear, Conv1d/2d/3d, recurrent layer or recurrent cell.
        calls: The arguments of each call.
        cache: Per-run memo of weight-derived counts.
        neurobench_cells: Count recurrent cells as NeuroBench 2.3.0 does, where it can.

    Returns:
        One `OpCount` per group of calls.

    Raises:
        TypeError: For any other layer type, or a non-tensor input.

    Example:
        >>> [c.dense for c in calls_ops(nn.Linear(2, 3), [(torch.ones(4, 2),)] * 2, OpCache())]
        [48]
    """
    if isinstance(layer, nn.Linear):
        return [linear_ops(layer, stacked, cache) for stacked in _stacked_inputs(layer, calls)]
    if isinstance(layer, CONV_LAYERS):
        conv: Any = layer
        return [conv_ops(conv, stacked, cache) for stacked in _stacked_inputs(layer, calls)]
    if isinstance(layer, nn.RNNBase):
        return [recurrent_layer_ops(layer, args) for args in calls]
    if isinstance(layer, nn.RNNCellBase):
        counted: list[OpCount] = []
        if neurobench_cells:
            counted, calls = neurobench_cells_ops(layer, calls)
        return counted + [recurrent_cell_ops(layer, args) for args in calls]
    raise TypeError(f"no operation count for layer type {type(layer).__name__}")


def layer_ops(layer: nn.Module, args: tuple[Any, ...], cache: OpCache) -> OpCount:
    """Operations of one call of a connection layer.

    Args:
        layer: A Linear, Conv1d/2d/3d, recurrent layer or recurrent cell.
        args: The call's arguments, as a `ConnectionHook` recorded them.
        cache: Per-run memo of weight-derived counts.

    Returns:
        The call's `OpCount`.

    Example:
        >>> layer_ops(nn.Linear(2, 3), (torch.ones(4, 2),), OpCache()).dense
        24
    """
    (count,) = calls_ops(layer, [args], cache)
    return count


def _stacked_inputs(layer: nn.Module, calls: list[tuple[Any, ...]]) -> list[Tensor]:
    inputs = [args[0] for args in calls]
    for value in inputs:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{type(layer).__name__} inputs must be tensors to be counted. "
                f"Received: {type(value).__name__}"
            )
    return stack_by_shape(inputs)
