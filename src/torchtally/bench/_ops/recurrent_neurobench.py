"""NeuroBench 2.3.0's synaptic-operation count of one recurrent-cell call, by its definition.

NeuroBench counts a cell call on binarised copies: each input, state, weight and bias becomes
1 where it is non-zero (or, for the dense count, 1 everywhere, except an LSTM's `(h, c)` state,
which stays binarised). Its counts differ from the gate equations (`recurrent`) in four
places, which make leaderboard numbers, so they are reproduced here as NeuroBench defines them:

* a gate is "non-zero" when any of its products or biases is, not by its value;
* an LSTM's dense count has only the products with the non-zero entries of `h` and `c`;
* the GRU's `n` gate is tested on its hidden term plus element 2 of the input bias (for every
  unit), and `1 - z` is taken before `z` is binarised (so it is zero exactly where one
  product or bias feeds `z`).

Where NeuroBench has no right number, `neurobench_cells_ops` leaves those calls to the caller, which counts them
by the gate equations: a cell called without a state (NeuroBench fails on an LSTMCell, and on
an RNNCell or GRUCell reads the first sample of the batch as the whole input, or the second as
the state) and a GRUCell without bias (NeuroBench fails).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from torchtally.bench._ops.counting import count_true
from torchtally.bench._ops.op_count import OpCount, spike_valued_calls, split_by_spiking

__all__ = ["neurobench_cells_ops"]


def _nonzero(t: Tensor) -> Tensor:
    return (t != 0).to(torch.float32)


def _products(values: Tensor, weight: Tensor, dense: bool, dense_values: bool = True) -> Tensor:
    """Per call, sample and output row: how many weight-value products are counted,
    `(K, B, rows)`. Each entry is at most the fan-in, exact in float32."""
    w = torch.ones_like(weight, dtype=torch.float32) if dense else _nonzero(weight)
    fill = dense and dense_values
    v = torch.ones_like(values, dtype=torch.float32) if fill else _nonzero(values)
    return torch.matmul(v, w.t())


def _per_call(t: Tensor) -> Tensor:
    """Sum over everything but the leading call dimension, exactly (float64 holds any count)."""
    return t.reshape(t.shape[0], -1).sum(1, dtype=torch.float64)


def _bias_flags(cell: nn.RNNCellBase, dense: bool) -> tuple[Tensor, Tensor] | None:
    if not cell.bias:
        return None
    b_ih, b_hh = cell.bias_ih, cell.bias_hh
    if dense:
        return torch.ones_like(b_ih, dtype=torch.float32), torch.ones_like(
            b_hh, dtype=torch.float32
        )
    return _nonzero(b_ih), _nonzero(b_hh)


def _lstm(cell: nn.LSTMCell, x: Tensor, h: Tensor, c: Tensor, dense: bool) -> Tensor:
    # The state stays binarised in the dense count too (NeuroBench's `cylce_tuple_ones`
    # binarises nested tuples rather than filling them).
    gates = _products(x, cell.weight_ih, dense) + _products(
        h, cell.weight_hh, dense, dense_values=False
    )
    ops = _per_call(gates)
    biases = _bias_flags(cell, dense)
    if biases is not None:
        gates = gates + biases[0] + biases[1]
    i, f, g, o = (gates != 0).chunk(4, -1)
    forget, update = f & (c != 0), i & g
    ops = ops + _per_call(forget) + _per_call(update)
    return ops + _per_call(o & (forget | update))


def _rnn(cell: nn.RNNCell, x: Tensor, h: Tensor, dense: bool) -> Tensor:
    products = _products(x, cell.weight_ih, dense) + _products(h, cell.weight_hh, dense)
    return _per_call(products)


def _gru(cell: nn.GRUCell, x: Tensor, h: Tensor, dense: bool) -> Tensor | None:
    biases = _bias_flags(cell, dense)
    if biases is None:
        return None  # NeuroBench fails on a GRUCell without bias
    b_ih, b_hh = biases
    size = cell.hidden_size
    from_input = _products(x, cell.weight_ih, dense)
    from_hidden = _products(h, cell.weight_hh, dense)
    ops = _per_call(from_input + from_hidden)
    gates = from_input + from_hidden + b_ih + b_hh
    r, z = gates[..., :size], gates[..., size : 2 * size]
    hidden_n = from_hidden[..., 2 * size :]
    reset_term = (r != 0) & ((hidden_n + b_hh[2 * size :]) != 0)
    # NeuroBench adds input-bias element 2 (it indexes the unreshaped bias column) to every
    # unit of the n gate, not the n gate's own input biases.
    n = (hidden_n + b_ih[2] + reset_term.to(torch.float32)) != 0
    keep = z != 1  # 1 - z on the unbinarised count
    state_nonzero = torch.ones_like(h, dtype=torch.bool) if dense else h != 0
    ops = ops + _per_call(reset_term) + _per_call(keep & n)
    return ops + _per_call((z != 0) & state_nonzero)


def _count(
    cell: nn.RNNCellBase, x: Tensor, state: tuple[Tensor, ...], dense: bool
) -> Tensor | None:
    if isinstance(cell, nn.LSTMCell):
        return _lstm(cell, x, state[0], state[1], dense)
    if isinstance(cell, nn.GRUCell):
        return _gru(cell, x, state[0], dense)
    if isinstance(cell, nn.RNNCell):
        return _rnn(cell, x, state[0], dense)
    return None


def _batched(t: Tensor) -> Tensor:
    return t if t.dim() == 2 else t.unsqueeze(0)


def _call_tensors(args: tuple[Any, ...]) -> tuple[Tensor, ...] | None:
    """`(x, *state)` of a call, each `(B, features)`, or None without a state (NeuroBench's
    count is wrong or fails then; see the module notes)."""
    hx = args[1] if len(args) > 1 else None
    if hx is None:
        return None
    state = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
    if not all(isinstance(t, Tensor) for t in (args[0], *state)):
        return None
    return tuple(_batched(t) for t in (args[0], *state))


def neurobench_cells_ops(
    cell: nn.RNNCellBase, calls: list[tuple[Any, ...]]
) -> tuple[list[OpCount], list[tuple[Any, ...]]]:
    """NeuroBench 2.3.0's count of calls of an `RNNCell`, `LSTMCell` or `GRUCell`.

    Calls whose tensors have the same shapes (a cell unrolled over time) are counted together.

    Args:
        cell: The cell.
        calls: The calls' arguments, `(input,)` or `(input, hx)`.

    Returns:
        `(counts, rest)`: an `OpCount` per group of counted calls, and the calls NeuroBench has
        no right count for (no state; a GRUCell without bias), left to the gate equations.

    Example:
        >>> cell = nn.RNNCell(3, 2)
        >>> counts, rest = neurobench_cells_ops(cell, [(torch.ones(4, 3), torch.ones(4, 2))])
        >>> int(counts[0].dense), rest
        (40, [])
    """
    groups: dict[tuple[Any, ...], list[tuple[Tensor, ...]]] = {}
    rest: list[tuple[Any, ...]] = []
    for args in calls:
        tensors = _call_tensors(args)
        if tensors is None:
            rest.append(args)
            continue
        key = tuple((t.shape, t.dtype, t.device) for t in tensors)
        groups.setdefault(key, []).append(tensors)
    counts = []
    for group in groups.values():
        stacked = [torch.stack(parts) for parts in zip(*group)]
        x, state = stacked[0], tuple(stacked[1:])
        with torch.no_grad():
            effective = _count(cell, x, state, dense=False)
            dense = _count(cell, x, state, dense=True)
        if effective is None or dense is None:
            rest.extend(group)
            continue
        spiking = spike_valued_calls(x, count_true((x != 0).reshape(x.shape[0], -1), dim=1))
        macs, acs = split_by_spiking(effective.to(torch.int64), spiking)
        counts.append(OpCount(macs, acs, dense.sum().to(torch.int64)))
    return counts, rest
