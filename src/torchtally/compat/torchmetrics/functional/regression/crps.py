"""`torchmetrics.functional.regression.crps` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    continuous_ranked_probability_score,
)

__all__ = ["continuous_ranked_probability_score"]
