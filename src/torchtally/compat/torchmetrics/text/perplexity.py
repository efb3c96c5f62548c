"""`torchmetrics.text.perplexity`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.text import (
    Perplexity,
)

__all__ = ["Perplexity"]
