"""Few-kernel forms of the regression statistics, for updates off the eager CPU path.

On a GPU an eager update costs about one kernel launch per op, whatever the batch size, so
these forms build every per-element quantity the statistics and the value checks need in two
ops, and add the sums to the state in one or two more:

1. `torch.cat` of the constant 0, the labels `y`, the predictions `p` and the constant 1 into
   one tensor `X = [0, y, p, 1]` of the inputs' dtype (one CUDA kernel: a `cat` of mixed
   dtypes is a copy per input there);
2. one broadcast subtraction `T[3i + j] = U[i] - V[j]` of `U = [0, y, p]` and `V = [y, p, 1]`,
   computed in float64 (an `addcmul` with a float64 -1: exact for the inputs' values):

   ====  =========  ====  =========  ====  ==========
   T[0]  -y         T[3]  y - y      T[6]  p - y
   T[1]  -p         T[4]  y - p      T[7]  p - p
   T[2]  -1         T[5]  y - 1      T[8]  p - 1
   ====  =========  ====  =========  ====  ==========

   `T[3]` and `T[7]` are 0 for a finite value and NaN for NaN or ±inf: one `count_nonzero`
   counts both inputs' non-finite values (on CUDA a float `count_nonzero` is two kernels, a
   comparison and a sum). Rows at equal distances are a strided view, a matrix without a copy:
   `T[0:5:2] = [-y, -1, -(p - y)]`, `T[2:5:2] = [-1, -(p - y)]`;
3. one matrix product into the state: the dot products of such rows with themselves (one
   `baddbmm_`: n, Σy², Σ(p - y)², the signs cancel) or with the row of -1s (one `addmv_`: n,
   Σy, Σ|p - y| once the rows are made absolute), each a float64 sum of float64 products, as
   the eager CPU path computes them in another order.

The price is memory, four values of the inputs' dtype and nine float64 values per element,
which a launch-bound update does not notice. The eager CPU path (`_errors`, `_r2`) works in
reused cache-sized buffers instead.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch._C._functorch import is_batchedtensor

__all__ = [
    "common_dtype",
    "constants",
    "count_table",
    "difference_table",
    "eager_cpu",
    "error_rows",
    "under_vmap",
]

#: Constants per (device, dtype), allocated once and never written (a fresh one would cost a
#: fill kernel per update): a 0-d 0 and 1, a `(2, 1)` mask [True, False] and a float64 -1 of
#: four dimensions (a dimensioned float64 operand makes an op compute in float64).
_CONSTANTS: dict[tuple[torch.device, torch.dtype], tuple[Tensor, Tensor, Tensor, Tensor]] = {}


def constants(like: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """0-d `dtype` zero and one, a `(2, 1)` bool mask [True, False] and a `(1, 1, 1, 1)`
    float64 -1, on the device of `like` (read-only)."""
    if torch.compiler.is_compiling():
        # Made inside the graph (fused away), never a lookup that the graph would guard on.
        return _made(like.device, dtype)
    key = (like.device, dtype)
    made = _CONSTANTS.get(key)
    if made is None:
        # Normal tensors even when first made inside `torch.inference_mode()`.
        with torch.inference_mode(False), torch.no_grad():
            made = _CONSTANTS.setdefault(key, _made(like.device, dtype))
    return made


def _made(device: torch.device, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    zero = torch.zeros((), dtype=dtype, device=device)
    mask = torch.tensor([[True], [False]], device=device)
    minus = torch.full((1, 1, 1, 1), -1.0, dtype=torch.float64, device=device)
    return zero, torch.ones_like(zero), mask, minus


def common_dtype(a: Tensor, b: Tensor) -> torch.dtype:
    """The dtype `torch.cat([a, b])` gives (without `torch.promote_types`, a dispatched op)."""
    return a.dtype if a.dtype == b.dtype else torch.promote_types(a.dtype, b.dtype)


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
    (k = 1). `columns=True`: `(N,)` or `(N, k)` inputs, one statistic per output column.
    """
    if columns and labels.dim() == 2:
        y, p = labels.t(), predictions.t()
    else:
        y, p = labels.reshape(1, -1), predictions.reshape(1, -1)
    zero, one, _, minus = constants(labels, common_dtype(y, p))
    shape = (1, *y.shape)
    # In the inputs' dtype: a `cat` of one dtype is one CUDA kernel (of mixed dtypes, a copy
    # per input); then U + V·(-1) = U - V computed in float64, as the float64 -1 makes it
    # (exact: the inputs convert exactly, and adding the negation is the subtraction).
    table = torch.cat([zero.expand(shape), y.unsqueeze(0), p.unsqueeze(0), one.expand(shape)])
    return torch.addcmul(table[0:3, None], table[None, 1:4], minus).view(9, *y.shape)


def count_table(table: Tensor) -> Tensor:
    """Non-finite labels and predictions of a `difference_table`: `(2,)` int64."""
    return torch.count_nonzero(table[3::4], dim=(1, 2))


def error_rows(table: Tensor) -> Tensor:
    """`[-1, -(p - y)]` of a one-column `difference_table`, `(2, N)` (a view)."""
    return table[2:5:2, 0]
