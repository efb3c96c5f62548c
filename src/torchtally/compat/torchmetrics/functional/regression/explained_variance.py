"""`torchmetrics.functional.regression.explained_variance` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    explained_variance,
)

__all__ = ["explained_variance"]
