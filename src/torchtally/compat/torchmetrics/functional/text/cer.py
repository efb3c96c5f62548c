"""`torchmetrics.functional.text.cer` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import char_error_rate

__all__ = ["char_error_rate"]
