"""Regression functionals."""

from torchtally.functional.regression._crps import continuous_ranked_probability_score, crps_rows
from torchtally.functional.regression._divergence import js_divergence_rows, kl_divergence_rows
from torchtally.functional.regression._errors import (
    mean_absolute_error,
    mean_squared_error,
    smape,
    squared_error_sum,
)
from torchtally.functional.regression._kendall import (
    KendallStatistics,
    kendall_p_value,
    kendall_statistics,
    kendall_tau,
    kendall_tau_from_statistics,
)
from torchtally.functional.regression._moments import merge_comoments
from torchtally.functional.regression._r2 import r2_from_totals, r2_score

__all__ = [
    "KendallStatistics",
    "continuous_ranked_probability_score",
    "crps_rows",
    "js_divergence_rows",
    "kendall_p_value",
    "kendall_statistics",
    "kendall_tau",
    "kendall_tau_from_statistics",
    "kl_divergence_rows",
    "mean_absolute_error",
    "mean_squared_error",
    "merge_comoments",
    "r2_from_totals",
    "r2_score",
    "smape",
    "squared_error_sum",
]
