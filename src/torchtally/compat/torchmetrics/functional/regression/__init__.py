"""`torchmetrics.functional.regression` on torchtally: each function the value of the
compatible class on one batch, with TorchMetrics' argument order and checks."""

from torchtally.compat.torchmetrics.functional.regression.concordance import concordance_corrcoef
from torchtally.compat.torchmetrics.functional.regression.cosine_similarity import cosine_similarity
from torchtally.compat.torchmetrics.functional.regression.crps import (
    continuous_ranked_probability_score,
)
from torchtally.compat.torchmetrics.functional.regression.csi import critical_success_index
from torchtally.compat.torchmetrics.functional.regression.explained_variance import (
    explained_variance,
)
from torchtally.compat.torchmetrics.functional.regression.js_divergence import (
    jensen_shannon_divergence,
)
from torchtally.compat.torchmetrics.functional.regression.kendall import kendall_rank_corrcoef
from torchtally.compat.torchmetrics.functional.regression.kl_divergence import kl_divergence
from torchtally.compat.torchmetrics.functional.regression.log_cosh import log_cosh_error
from torchtally.compat.torchmetrics.functional.regression.log_mse import mean_squared_log_error
from torchtally.compat.torchmetrics.functional.regression.mae import mean_absolute_error
from torchtally.compat.torchmetrics.functional.regression.mape import mean_absolute_percentage_error
from torchtally.compat.torchmetrics.functional.regression.minkowski import minkowski_distance
from torchtally.compat.torchmetrics.functional.regression.mse import mean_squared_error
from torchtally.compat.torchmetrics.functional.regression.nrmse import (
    normalized_root_mean_squared_error,
)
from torchtally.compat.torchmetrics.functional.regression.pearson import pearson_corrcoef
from torchtally.compat.torchmetrics.functional.regression.r2 import r2_score
from torchtally.compat.torchmetrics.functional.regression.rse import relative_squared_error
from torchtally.compat.torchmetrics.functional.regression.spearman import spearman_corrcoef
from torchtally.compat.torchmetrics.functional.regression.symmetric_mape import (
    symmetric_mean_absolute_percentage_error,
)
from torchtally.compat.torchmetrics.functional.regression.tweedie_deviance import (
    tweedie_deviance_score,
)
from torchtally.compat.torchmetrics.functional.regression.wmape import (
    weighted_mean_absolute_percentage_error,
)

__all__ = [
    "concordance_corrcoef",
    "continuous_ranked_probability_score",
    "cosine_similarity",
    "critical_success_index",
    "explained_variance",
    "jensen_shannon_divergence",
    "kendall_rank_corrcoef",
    "kl_divergence",
    "log_cosh_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_log_error",
    "minkowski_distance",
    "normalized_root_mean_squared_error",
    "pearson_corrcoef",
    "r2_score",
    "relative_squared_error",
    "spearman_corrcoef",
    "symmetric_mean_absolute_percentage_error",
    "tweedie_deviance_score",
    "weighted_mean_absolute_percentage_error",
]
