"""Regression functionals: per-batch sums that add across batches and ranks, the values
computed from them, and whole-sample statistics (ranks, Kendall's pair counts). The regression
metrics, native and TorchMetrics-compatible, all compute through these."""

from torchtally.functional.regression._correlation import (
    average_ranks,
    comoment_sums,
    concordance_from_sums,
    cosine_similarity_rows,
    pearson_from_sums,
    spearman_from_ranks,
)
from torchtally.functional.regression._crps import continuous_ranked_probability_score, crps_rows
from torchtally.functional.regression._divergence import js_divergence_rows, kl_divergence_rows
from torchtally.functional.regression._errors import (
    absolute_error_sum,
    mean_absolute_error,
    mean_squared_error,
    smape,
    smape_sum,
    squared_error_sum,
)
from torchtally.functional.regression._kendall import (
    KENDALL_ALTERNATIVES,
    KENDALL_VARIANTS,
    KendallStatistics,
    kendall_p_value,
    kendall_statistics,
    kendall_tau,
    kendall_tau_from_statistics,
)
from torchtally.functional.regression._moments import merge_comoments
from torchtally.functional.regression._pointwise import (
    absolute_percentage_error_sum,
    critical_success_counts,
    critical_success_index_compute,
    log_cosh_error_sum,
    minkowski_sum,
    squared_log_error_sum,
    tweedie_deviance_sum,
    weighted_absolute_percentage_error,
)
from torchtally.functional.regression._r2 import (
    explained_variance_compute,
    explained_variance_sums,
    nrmse_compute,
    r2_compute,
    r2_from_totals,
    r2_score,
    r2_sums,
    relative_squared_error_compute,
)

__all__ = [
    "KENDALL_ALTERNATIVES",
    "KENDALL_VARIANTS",
    "KendallStatistics",
    "absolute_error_sum",
    "absolute_percentage_error_sum",
    "average_ranks",
    "comoment_sums",
    "concordance_from_sums",
    "continuous_ranked_probability_score",
    "cosine_similarity_rows",
    "critical_success_counts",
    "critical_success_index_compute",
    "crps_rows",
    "explained_variance_compute",
    "explained_variance_sums",
    "js_divergence_rows",
    "kendall_p_value",
    "kendall_statistics",
    "kendall_tau",
    "kendall_tau_from_statistics",
    "kl_divergence_rows",
    "log_cosh_error_sum",
    "mean_absolute_error",
    "mean_squared_error",
    "merge_comoments",
    "minkowski_sum",
    "nrmse_compute",
    "pearson_from_sums",
    "r2_compute",
    "r2_from_totals",
    "r2_score",
    "r2_sums",
    "relative_squared_error_compute",
    "smape",
    "smape_sum",
    "spearman_from_ranks",
    "squared_error_sum",
    "squared_log_error_sum",
    "tweedie_deviance_sum",
    "weighted_absolute_percentage_error",
]
