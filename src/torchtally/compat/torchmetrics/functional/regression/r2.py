"""`torchmetrics.functional.regression.r2` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    r2_score,
)

__all__ = ["r2_score"]
