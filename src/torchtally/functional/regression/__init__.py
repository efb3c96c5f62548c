"""Regression functionals."""

from torchtally.functional.regression._errors import mean_absolute_error, mean_squared_error, smape
from torchtally.functional.regression._r2 import r2_score

__all__ = ["mean_absolute_error", "mean_squared_error", "r2_score", "smape"]
