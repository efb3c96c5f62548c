"""`torchmetrics.functional.text.bleu` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.text._functions import bleu_score

__all__ = ["bleu_score"]
