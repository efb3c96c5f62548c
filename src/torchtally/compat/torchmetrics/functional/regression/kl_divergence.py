"""`torchmetrics.functional.regression.kl_divergence` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    kl_divergence,
)

__all__ = ["kl_divergence"]
