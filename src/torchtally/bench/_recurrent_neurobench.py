"""NeuroBench 2.3.0's synaptic-operation count of one recurrent-cell call, by its definition.

NeuroBench counts a cell call on binarised copies: each input, state, weight and bias becomes
1 where it is non-zero (or, for the dense count, 1 everywhere, except an LSTM's `(h, c)` state,
which stays binarised). Its counts differ from the gate equations (`_recurrent_ops`) in four
places, which make leaderboard numbers, so they are reproduced here as NeuroBench defines them:

* a gate is "non-zero" when any of its products or biases is, not by its value;
* an LSTM's dense count has only the products with the non-zero entries of `h` and `c`;
* the GRU's `n` gate is tested on its hidden term plus the input bias, and `1 - z` is taken
  before `z` is binarised (so it is zero exactly where one product or bias feeds `z`).

Where NeuroBench has no right number, `neurobench_cell_ops` returns None and the caller counts
by the gate equations: a cell called without a state (NeuroBench fails on an LSTMCell, and on
an RNNCell or GRUCell reads the first sample of the batch as the whole input, or the second as
the state) and a GRUCell without bias (NeuroBench fails).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from torchtally.bench._counting import count_true
from torchtally.bench._op_count import OpCount, spike_valued_calls, split_by_spiking

__all__ = ["neurobench_cell_ops"]


def _nonzero(t: Tensor) -> Tensor:
    return (t != 0).to(torch.float64)


def _products(values: Tensor, weight: Tensor, dense: bool, dense_values: bool = True) -> Tensor:
    """Per sample and output row: how many weight-value products are counted, `(B, rows)`.
    Float64 keeps the 0/1 products and their sums exact."""
    w = torch.ones_like(weight, dtype=torch.float64) if dense else _nonzero(weight)
    fill = dense and dense_values
    v = torch.ones_like(values, dtype=torch.float64) if fill else _nonzero(values)
    return v @ w.t()


def _bias_flags(cell: nn.RNNCellBase, dense: bool) -> tuple[Tensor, Tensor] | None:
    if not cell.bias:
        return None
    b_ih, b_hh = cell.bias_ih, cell.bias_hh
    if dense:
        return torch.ones_like(b_ih, dtype=torch.float64), torch.ones_like(
            b_hh, dtype=torch.float64
        )
    return _nonzero(b_ih), _nonzero(b_hh)


def _lstm(cell: nn.LSTMCell, x: Tensor, h: Tensor, c: Tensor, dense: bool) -> Tensor:
    # The state stays binarised in the dense count too (NeuroBench's `cylce_tuple_ones`
    # binarises nested tuples rather than filling them).
    gates = _products(x, cell.weight_ih, dense) + _products(
        h, cell.weight_hh, dense, dense_values=False
    )
    ops = gates.sum()
    biases = _bias_flags(cell, dense)
    if biases is not None:
        gates = gates + biases[0] + biases[1]
    i, f, g, o = (gates != 0).chunk(4, 1)
    cell_terms = (f & (c != 0)).to(torch.int64) + (i & g).to(torch.int64)
    ops = ops + cell_terms.sum() + count_true(o & (cell_terms != 0))
    return ops


def _rnn(cell: nn.RNNCell, x: Tensor, h: Tensor, dense: bool) -> Tensor:
    return _products(x, cell.weight_ih, dense).sum() + _products(h, cell.weight_hh, dense).sum()


def _gru(cell: nn.GRUCell, x: Tensor, h: Tensor, dense: bool) -> Tensor | None:
    biases = _bias_flags(cell, dense)
    if biases is None:
        return None  # NeuroBench fails on a GRUCell without bias
    b_ih, b_hh = biases
    size = cell.hidden_size
    from_input = _products(x, cell.weight_ih, dense)
    from_hidden = _products(h, cell.weight_hh, dense)
    ops = (from_input + from_hidden).sum()
    gates = from_input + from_hidden + b_ih + b_hh
    r, z = gates[:, :size], gates[:, size : 2 * size]
    hidden_n = from_hidden[:, 2 * size :]
    reset_term = (r != 0) & ((hidden_n + b_hh[2 * size :]) != 0)
    n = (hidden_n + b_ih[2 * size :] + reset_term.to(torch.float64)) != 0
    keep = z != 1  # 1 - z on the unbinarised count
    state_nonzero = torch.ones_like(h, dtype=torch.bool) if dense else h != 0
    ops = ops + count_true(reset_term) + count_true(keep & n)
    return ops + count_true((z != 0) & state_nonzero)


def _count(cell: nn.RNNCellBase, x: Tensor, hx: Any, dense: bool) -> Tensor | None:
    if hx is None:
        return None  # no state: NeuroBench's count is wrong or fails (see the module notes)
    if isinstance(cell, nn.LSTMCell):
        h, c = hx
        return _lstm(cell, x, _batched(h), _batched(c), dense)
    if isinstance(cell, nn.GRUCell):
        return _gru(cell, x, _batched(hx), dense)
    if isinstance(cell, nn.RNNCell):
        return _rnn(cell, x, _batched(hx), dense)
    return None


def _batched(t: Tensor) -> Tensor:
    return t if t.dim() == 2 else t.unsqueeze(0)


def neurobench_cell_ops(cell: nn.RNNCellBase, args: tuple[Any, ...]) -> OpCount | None:
    """NeuroBench 2.3.0's count of one call of an `RNNCell`, `LSTMCell` or `GRUCell`.

    Args:
        cell: The cell.
        args: The call's arguments, `(input,)` or `(input, hx)`.

    Returns:
        The call's `OpCount` (its dense count a tensor), or None where NeuroBench has no count.

    Example:
        >>> cell = nn.RNNCell(3, 2)
        >>> int(neurobench_cell_ops(cell, (torch.ones(4, 3), torch.ones(4, 2))).dense)
        40
    """
    x = _batched(args[0])
    hx = args[1] if len(args) > 1 else None
    with torch.no_grad():
        effective = _count(cell, x, hx, dense=False)
        dense = _count(cell, x, hx, dense=True)
    if effective is None or dense is None:
        return None
    effective = effective.to(torch.int64)
    nonzero = count_true(x != 0).reshape(1)
    macs, acs = split_by_spiking(effective.reshape(1), spike_valued_calls(x.unsqueeze(0), nonzero))
    return OpCount(macs, acs, dense.to(torch.int64))
