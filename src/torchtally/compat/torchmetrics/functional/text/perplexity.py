"""`torchmetrics.functional.text.perplexity` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import perplexity

__all__ = ["perplexity"]
