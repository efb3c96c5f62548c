"""`torchmetrics.functional.regression.concordance` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    concordance_corrcoef,
)

__all__ = ["concordance_corrcoef"]
