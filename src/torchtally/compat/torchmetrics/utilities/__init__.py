"""`torchmetrics.utilities`: the helpers TorchMetrics users import to write metrics
(`dim_zero_*` reductions for `add_state`) and the rank-zero printing functions."""

from torchtally.compat.torchmetrics.utilities.data import (
    dim_zero_cat,
    dim_zero_max,
    dim_zero_mean,
    dim_zero_min,
    dim_zero_sum,
)
from torchtally.compat.torchmetrics.utilities.distributed import class_reduce, reduce
from torchtally.compat.torchmetrics.utilities.prints import (
    rank_zero_debug,
    rank_zero_info,
    rank_zero_warn,
)

__all__ = [
    "class_reduce",
    "dim_zero_cat",
    "dim_zero_max",
    "dim_zero_mean",
    "dim_zero_min",
    "dim_zero_sum",
    "rank_zero_debug",
    "rank_zero_info",
    "rank_zero_warn",
    "reduce",
]
