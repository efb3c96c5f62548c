"""`torchmetrics.functional.regression.js_divergence` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    jensen_shannon_divergence,
)

__all__ = ["jensen_shannon_divergence"]
