"""`torchmetrics.functional.text.wil` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import word_information_lost

__all__ = ["word_information_lost"]
