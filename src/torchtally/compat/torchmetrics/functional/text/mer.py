"""`torchmetrics.functional.text.mer` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import match_error_rate

__all__ = ["match_error_rate"]
