"""`torchmetrics.regression.pearson`: TorchMetrics' module path for these classes, and its
private `_final_aggregation` (TorchMetrics' tests merge per-process moments with it)."""

from __future__ import annotations

from torch import Tensor

from torchtally.compat.torchmetrics.regression import (
    PearsonCorrCoef,
)
from torchtally.functional.regression import (
    merge_comoments,
)

__all__ = ["PearsonCorrCoef"]


def _final_aggregation(
    means_x: Tensor,
    means_y: Tensor,
    maxs_abs_x: Tensor,
    maxs_abs_y: Tensor,
    vars_x: Tensor,
    vars_y: Tensor,
    corrs_xy: Tensor,
    nbs: Tensor,
    eps: float = 1e-10,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """TorchMetrics' merge of the Pearson statistics of several processes, stacked along dim
    0: the pooled means, the summed squared and cross deviations (`vars_*`, `corrs_xy`: sums,
    not averages) and counts, and the largest absolute deviations. `eps` is TorchMetrics'
    guard against an empty merge, unused here (the merge divides by a count only where it is
    not zero)."""
    del eps
    if len(means_x) == 1:
        return (
            means_x[0],
            means_y[0],
            maxs_abs_x[0],
            maxs_abs_y[0],
            vars_x[0],
            vars_y[0],
            corrs_xy[0],
            nbs[0],
        )
    mean_x, mean_y, var_x, var_y, corr_xy, count = merge_comoments(
        means_x, means_y, vars_x, vars_y, corrs_xy, nbs
    )
    return (
        mean_x,
        mean_y,
        maxs_abs_x.amax(0),
        maxs_abs_y.amax(0),
        var_x,
        var_y,
        corr_xy,
        count,
    )
