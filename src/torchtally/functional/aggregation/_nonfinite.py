"""A faster exact non-finite count for large eager CPU batches (MSE, MAE, R2, mean).

`count_nonfinite` (functional._checks) takes `x - x` (0 for a finite entry, NaN otherwise)
and then counts the NaNs: a second elementwise pass (`nan_to_num_`) before the sum. Here one
elementwise op makes 1 for a finite entry and NaN otherwise (`1 + 0 * x`: 0 * ±inf and
0 * NaN are NaN), and `nansum` counts the finite entries in one vectorized reduction that
skips the NaNs: about half the time at 2^18 float32 elements (57 vs 113 µs on the dev CPU).
The count is exact: partial sums of ones stay integers below 2^24 (float32) or 2^53
(float64), and larger float32 batches take the general path.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import tracing
from torchtally.functional._checks import count_nonfinite

__all__ = ["count_nonfinite_values"]

#: From this many elements the nansum count pays (below it, two more small ops cost more).
_FROM = 1 << 17
#: Below this many elements count_nonfinite counts `x - x` with count_nonzero, done inline.
_SMALL_BELOW = 4096
_SUMMED_EXACTLY_UP_TO = {torch.float32: 1 << 24, torch.float64: 1 << 53}
#: 0-d CPU ones, one per dtype: the `1 +` of `1 + 0 * x` (a 0-d operand keeps x's dtype).
_ONES = {dtype: torch.ones((), dtype=dtype) for dtype in _SUMMED_EXACTLY_UP_TO}


def count_nonfinite_values(values: Tensor) -> Tensor | None:
    """Number of NaN or infinite entries (a 0-d int64 tensor), as `count_nonfinite`; None
    for integer tensors."""
    if torch.compiler.is_compiling():
        return count_nonfinite(values)  # no size switch in a graph (a guard, a recompile)
    size = values.numel()
    if size < _SMALL_BELOW and values.is_floating_point():
        # count_nonfinite's own small-batch ops, without its ~1.7 µs of Python dispatch
        # (half again the two ops at batch 64): x - x is NaN exactly where x is not finite
        return torch.count_nonzero(values - values)
    if (
        size < _FROM
        or size > _SUMMED_EXACTLY_UP_TO.get(values.dtype, -1)
        or values.device.type != "cpu"
        or torch.jit.is_tracing()
        or tracing(values)
    ):
        return count_nonfinite(values)
    finite = torch.nansum(_ONES[values.dtype].add(values, alpha=0))
    return (size - finite).to(torch.int64)
