"""`torchmetrics.functional.regression.tweedie_deviance` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    tweedie_deviance_score,
)

__all__ = ["tweedie_deviance_score"]
