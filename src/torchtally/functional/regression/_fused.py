"""Few-kernel forms of the regression statistics, for updates off the eager CPU path.

On a GPU an eager update costs about one kernel launch per op, whatever the batch size, so
these forms build every per-element quantity the statistics need in two ops and reduce it,
straight into the state, in one more:

1. `torch.cat` of the constant 0, the labels `y`, the predictions `p` and the constant 1 into
   one float64 tensor `X = [0, y, p, 1]` (the conversion to float64 of both inputs, exact);
2. one broadcast subtraction `T[3i + j] = U[i] - V[j]` of `U = [0, y, p]` and `V = [y, p, 1]`:

   ====  =========  ====  =========  ====  ==========
   T[0]  -y         T[3]  y - y      T[6]  p - y
   T[1]  -p         T[4]  y - p      T[7]  p - p
   T[2]  -1         T[5]  y - 1      T[8]  p - 1
   ====  =========  ====  =========  ====  ==========

   `T[3]` and `T[7]` are 0 for a finite value and NaN for NaN or ±inf (the value checks count
   them, one `count_nonzero` for both inputs), and rows 0, 2, 4, 6, 8 are a strided view, so
   `T[0:5:2] = [-y, -1, -(p - y)]` is a matrix without a copy: its Gram matrix holds n, Σy,
   Σy², Σ(p - y)² (the signs cancel in every product), each a float64 sum of float64
   products, as the CPU path computes them;
3. one `addmm_`-family op into the state.

The price is memory: 13 float64 values per input element, where a launch-bound update does
not notice it. The eager CPU path (`_errors`, `_r2`) works in reused cache-sized buffers
instead. Both give the same sums, in another order.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch._C._functorch import is_batchedtensor

__all__ = [
    "count_table",
    "difference_table",
    "eager_cpu",
    "error_rows",
    "float64_constants",
    "under_vmap",
]

#: 0-d float64 zeros and ones per device: expanded into the `cat` (allocated once, never
#: written; a fresh constant would cost a fill kernel per update).
_CONSTANTS: dict[torch.device, tuple[Tensor, Tensor]] = {}


def float64_constants(like: Tensor) -> tuple[Tensor, Tensor]:
    """0-d float64 zero and one on the device of `like` (read-only)."""
    if torch.compiler.is_compiling():
        # Made inside the graph (fused away), never a lookup that the graph would guard on.
        zero = torch.zeros((), dtype=torch.float64, device=like.device)
        return zero, zero + 1
    constants = _CONSTANTS.get(like.device)
    if constants is None:
        # Normal tensors even when first made inside `torch.inference_mode()`.
        with torch.inference_mode(False), torch.no_grad():
            zero = torch.zeros((), dtype=torch.float64, device=like.device)
            constants = _CONSTANTS.setdefault(like.device, (zero, torch.ones_like(zero)))
    return constants


def eager_cpu(tensor: Tensor) -> bool:
    """Whether an update of `tensor` takes the eager CPU path (and not these forms): on the
    CPU, outside a compiled graph. The meta device, used to count a GPU's kernels, takes
    these forms as a GPU does."""
    return tensor.device.type == "cpu" and not torch.compiler.is_compiling()


def under_vmap(state: Tensor) -> bool:
    """Whether `state` is batched by `torch.func.vmap` (a `BootStrapper`'s replicas): the
    in-place matrix products (`addmv_`, `addmm_`, `baddbmm_`) have no batching rule there and
    would run once per replica, so the product is taken out of place and added."""
    return bool(is_batchedtensor(state))


def difference_table(labels: Tensor, predictions: Tensor, columns: bool = False) -> Tensor:
    """The table `T` of the module docstring, float64, shaped `(9, k, N)`.

    `columns=False`: every element of the (same-shaped) inputs is one of N = numel entries
    (k = 1). `columns=True`: `(N,)` or `(N, k)` inputs, one Gram matrix per output column.
    """
    if columns and labels.dim() == 2:
        y, p = labels.t(), predictions.t()
    else:
        y, p = labels.reshape(1, -1), predictions.reshape(1, -1)
    zero, one = float64_constants(labels)
    shape = (1, *y.shape)
    # float64 from the constants' dtype: the inputs are converted by the copy itself
    table = torch.cat([zero.expand(shape), y.unsqueeze(0), p.unsqueeze(0), one.expand(shape)])
    return (table[0:3, None] - table[None, 1:4]).view(9, *y.shape)


def count_table(table: Tensor) -> Tensor:
    """Non-finite labels and predictions of a `difference_table`: `(2,)` int64."""
    return torch.count_nonzero(table[3::4], dim=(1, 2))


def error_rows(table: Tensor) -> Tensor:
    """`[-1, -(p - y)]` of a one-column `difference_table`, `(2, N)` (a view)."""
    return table[2:5:2, 0]
