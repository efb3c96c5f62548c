"""Pure functions behind every metric: `*_update` gives a batch's statistics, the plain name
the value for one batch of data. Metric classes delegate here, so the maths exists once."""

from torchtally.functional.aggregation import mean, perplexity
from torchtally.functional.classification import accuracy, as_class_indices
from torchtally.functional.regression import (
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    smape,
)

__all__ = [
    "accuracy",
    "as_class_indices",
    "mean",
    "mean_absolute_error",
    "mean_squared_error",
    "perplexity",
    "r2_score",
    "smape",
]
