"""`torchmetrics.functional.text.wip` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import word_information_preserved

__all__ = ["word_information_preserved"]
