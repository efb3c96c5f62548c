"""Regression functionals."""

from torchtally.functional.regression._errors import (
    mean_absolute_error,
    mean_squared_error,
    smape,
    squared_error_sum,
)
from torchtally.functional.regression._r2 import r2_from_totals, r2_score

__all__ = [
    "mean_absolute_error",
    "mean_squared_error",
    "r2_from_totals",
    "r2_score",
    "smape",
    "squared_error_sum",
]
