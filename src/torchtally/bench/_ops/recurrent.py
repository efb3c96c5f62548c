"""Synaptic operations of recurrent layers and cells, counted from their gate equations.

NeuroBench 2.3.0 cannot count `nn.RNN`/`nn.LSTM`/`nn.GRU` layers (#147), breaks on cells called
without a state (#234, or counts only the first sample), and its GRU count uses the hidden
term where the `n` gate's equation has the input term. Here each time step of each layer and
direction replays PyTorch's gate equations on the actual values, and counts:

* every product of a weight and an input or state element that are both non-zero (as for
  Linear layers), the projection of a projected LSTM included;
* every elementwise gate product whose operands are both non-zero: LSTM `f*c`, `i*g`,
  `o*tanh(c')`; GRU `r*(W_hn h + b_hn)`, `(1-z)*n`, `z*h`; none for the Elman RNN.

Dense operations count them all: per sample and step `4H(I+P) + 3H (+ PH)` for an LSTM with
projection size P (P = H without projection), `3H(I+H) + 3H` for a GRU, `H(I+H)` for an RNN.
Biases, additions and activation functions are not operations, as in NeuroBench. For an
`LSTMCell` given a non-zero state these are NeuroBench's numbers; a missing state is zeros.
Operations of a step whose input is spike-valued are accumulates, per step, as NeuroBench
decides per call; layers above the first take the layer below's output as their input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, final

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from torchtally.bench._ops.counting import count_true
from torchtally.bench._ops.op_count import OpCount, spike_valued_calls, split_by_spiking

__all__ = ["recurrent_cell_ops", "recurrent_layer_ops"]


@final
@dataclass(frozen=True)
class _Weights:
    """One direction of one layer (or one cell), with each weight's non-zeros per input
    column (its fan-out), counted once per call rather than once per time step."""

    w_ih: Tensor
    w_hh: Tensor
    b_ih: Tensor | None
    b_hh: Tensor | None
    w_hr: Tensor | None
    fan_ih: Tensor = field(init=False)
    fan_hh: Tensor = field(init=False)
    fan_hr: Tensor | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fan_ih", count_true(self.w_ih != 0, dim=0))
        object.__setattr__(self, "fan_hh", count_true(self.w_hh != 0, dim=0))
        fan_hr = None if self.w_hr is None else count_true(self.w_hr != 0, dim=0)
        object.__setattr__(self, "fan_hr", fan_hr)


State = tuple[Tensor, ...]
_Step = Callable[[Tensor, State, _Weights], tuple[State, Tensor, Tensor]]


def _both_nonzero(a: Tensor, b: Tensor) -> Tensor:
    return count_true((a != 0) & (b != 0))


def _matmul_effective(values: Tensor, fan_out: Tensor) -> Tensor:
    return (count_true(values != 0, dim=0) * fan_out).sum()


def _lstm_step(x: Tensor, state: State, w: _Weights) -> tuple[State, Tensor, Tensor]:
    h, c = state
    gates = F.linear(x, w.w_ih, w.b_ih) + F.linear(h, w.w_hh, w.b_hh)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c_new = f * c + i * g
    tanh_c = c_new.tanh()
    out = o * tanh_c
    ops = _matmul_effective(h, w.fan_hh) + _both_nonzero(f, c) + _both_nonzero(i, g)
    ops = ops + _both_nonzero(o, tanh_c)
    if w.w_hr is not None and w.fan_hr is not None:
        ops = ops + _matmul_effective(out, w.fan_hr)
        out = F.linear(out, w.w_hr)
    return (out, c_new), out, ops


def _gru_step(x: Tensor, state: State, w: _Weights) -> tuple[State, Tensor, Tensor]:
    (h,) = state
    in_r, in_z, in_n = F.linear(x, w.w_ih, w.b_ih).chunk(3, 1)
    hid_r, hid_z, hid_n = F.linear(h, w.w_hh, w.b_hh).chunk(3, 1)
    r = (in_r + hid_r).sigmoid()
    z = (in_z + hid_z).sigmoid()
    n = (in_n + r * hid_n).tanh()
    keep = 1 - z
    out = keep * n + z * h
    ops = _matmul_effective(h, w.fan_hh) + _both_nonzero(r, hid_n)
    ops = ops + _both_nonzero(keep, n) + _both_nonzero(z, h)
    return (out,), out, ops


def _rnn_step(activation: Callable[[Tensor], Tensor]) -> _Step:
    def step(x: Tensor, state: State, w: _Weights) -> tuple[State, Tensor, Tensor]:
        (h,) = state
        out = activation(F.linear(x, w.w_ih, w.b_ih) + F.linear(h, w.w_hh, w.b_hh))
        return (out,), out, _matmul_effective(h, w.fan_hh)

    return step


_STEPS: dict[str, _Step] = {
    "LSTM": _lstm_step,
    "GRU": _gru_step,
    "RNN_TANH": _rnn_step(torch.tanh),
    "RNN_RELU": _rnn_step(torch.relu),
}


def _dense_per_step(mode: str, w: _Weights) -> int:
    """Operations per sample and time step, zeros included."""
    gates, inputs = w.w_ih.shape
    hidden_in = w.w_hh.shape[1]
    if mode == "LSTM":
        size = gates // 4
        projection = w.w_hr.numel() if w.w_hr is not None else 0
        return gates * (inputs + hidden_in) + 3 * size + projection
    if mode == "GRU":
        return gates * (inputs + hidden_in) + gates
    return gates * (inputs + hidden_in)


def _run_sequence(
    mode: str, x: Tensor, state: State, w: _Weights, reverse: bool
) -> tuple[Tensor, Tensor]:
    """Replay one direction over `x` `(T, B, I)`; return outputs and operations per step."""
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outputs: list[Tensor] = [x] * x.shape[0]
    ops: list[Tensor] = [x] * x.shape[0]
    for t in steps:
        state, outputs[t], ops[t] = _STEPS[mode](x[t], state, w)
    input_ops = (count_true(x != 0, dim=1) * w.fan_ih).sum(-1)  # all steps at once
    return torch.stack(outputs), input_ops + torch.stack(ops)


def _spiking_steps(x: Tensor) -> Tensor:
    return spike_valued_calls(x, count_true((x != 0).reshape(x.shape[0], -1), dim=1))


def _layer_weights(layer: nn.RNNBase, index: int, suffix: str) -> _Weights:
    def get(name: str) -> Tensor | None:
        return getattr(layer, f"{name}_l{index}{suffix}", None)

    w_ih, w_hh = get("weight_ih"), get("weight_hh")
    assert w_ih is not None and w_hh is not None
    return _Weights(w_ih, w_hh, get("bias_ih"), get("bias_hh"), get("weight_hr"))


def recurrent_layer_ops(layer: nn.RNNBase, args: tuple[Any, ...]) -> OpCount:
    """Operations of one call of an `nn.RNN`, `nn.LSTM` or `nn.GRU`.

    Args:
        layer: The layer (any `num_layers`, `bidirectional`, `batch_first`, `proj_size`).
        args: The call's arguments: `(input,)` or `(input, hx)`.

    Returns:
        The call's `OpCount`.

    Raises:
        TypeError: For a PackedSequence input or an unknown recurrent mode.

    Example:
        >>> lstm = nn.LSTM(3, 2)
        >>> int(recurrent_layer_ops(lstm, (torch.ones(4, 1, 3),)).dense)  # 4 steps x 46
        184
    """
    mode = _check_mode(layer.mode, type(layer).__name__)
    x, states = _layer_inputs(layer, args)
    directions = ["", "_reverse"] if layer.bidirectional else [""]
    macs = acs = torch.zeros((), dtype=torch.int64, device=x.device)
    dense = 0
    for index in range(layer.num_layers):
        spiking = _spiking_steps(x)
        outputs = []
        for d, suffix in enumerate(directions):
            w = _layer_weights(layer, index, suffix)
            state = tuple(s[index * len(directions) + d] for s in states)
            out, ops = _run_sequence(mode, x, state, w, reverse=d == 1)
            step_macs, step_acs = split_by_spiking(ops, spiking)
            macs, acs = macs + step_macs, acs + step_acs
            dense += x.shape[0] * x.shape[1] * _dense_per_step(mode, w)
            outputs.append(out)
        x = torch.cat(outputs, -1)
    return OpCount(macs, acs, dense)


def recurrent_cell_ops(cell: nn.RNNCellBase, args: tuple[Any, ...]) -> OpCount:
    """Operations of one call of an `nn.RNNCell`, `nn.LSTMCell` or `nn.GRUCell`.

    Args:
        cell: The cell.
        args: The call's arguments: `(input,)` or `(input, hx)` (a missing or None state is
            zeros, PyTorch's convention).

    Returns:
        The call's `OpCount`.

    Raises:
        TypeError: For a cell type other than these three.

    Example:
        >>> cell = nn.GRUCell(3, 2)
        >>> int(recurrent_cell_ops(cell, (torch.ones(5, 3),)).dense)  # 5 samples x 36
        180
    """
    mode = _check_mode(_cell_mode(cell), type(cell).__name__)
    x = args[0]
    hx = args[1] if len(args) > 1 else None
    batched = x.dim() == 2
    x = x if batched else x.unsqueeze(0)
    states = _initial_states(mode, hx, x, cell.hidden_size, cell.hidden_size, batched)
    w = _Weights(cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, None)
    _, ops = _run_sequence(mode, x.unsqueeze(0), states, w, reverse=False)
    macs, acs = split_by_spiking(ops, _spiking_steps(x.unsqueeze(0)))
    return OpCount(macs, acs, x.shape[0] * _dense_per_step(mode, w))


def _cell_mode(cell: nn.RNNCellBase) -> str:
    if isinstance(cell, nn.LSTMCell):
        return "LSTM"
    if isinstance(cell, nn.GRUCell):
        return "GRU"
    if isinstance(cell, nn.RNNCell):
        return "RNN_RELU" if cell.nonlinearity == "relu" else "RNN_TANH"
    return type(cell).__name__


def _check_mode(mode: str, kind: str) -> str:
    if mode not in _STEPS:
        raise TypeError(
            f"recurrent module `{kind}` (mode {mode!r}) has no operation count; supported: "
            "RNN, LSTM, GRU and their cells"
        )
    return mode


def _layer_inputs(layer: nn.RNNBase, args: tuple[Any, ...]) -> tuple[Tensor, State]:
    """The input as `(T, B, I)` and the initial states as `(layers * directions, B, size)`."""
    x = args[0]
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{type(layer).__name__}: only tensor inputs are counted. "
            f"Received: {type(x).__name__} (unpack PackedSequence inputs first)"
        )
    hx = args[1] if len(args) > 1 else None
    batched = x.dim() == 3
    if not batched:
        x = x.unsqueeze(1)
    elif layer.batch_first:
        x = x.transpose(0, 1)
    proj_size: int = getattr(layer, "proj_size", 0)
    output_size = proj_size or layer.hidden_size
    stacked = layer.num_layers * (2 if layer.bidirectional else 1)
    zeros = x.new_zeros(stacked, x.shape[1], 1)
    states = _initial_states(layer.mode, hx, zeros, output_size, layer.hidden_size, batched)
    return x, states


def _initial_states(
    mode: str, hx: Any, like: Tensor, output_size: int, cell_size: int, batched: bool
) -> State:
    """States from `hx`, unsqueezed to batched form; zeros where `hx` is None."""
    shape = like.shape[:-1]
    if hx is None:
        h = like.new_zeros(*shape, output_size)
        return (h, like.new_zeros(*shape, cell_size)) if mode == "LSTM" else (h,)
    states = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
    return tuple(s if batched else s.unsqueeze(-2) for s in states)
