"""`torchmetrics.functional.text.wer` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import word_error_rate

__all__ = ["word_error_rate"]
