"""`torchmetrics.functional.regression.kendall` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import kendall_rank_corrcoef

__all__ = ["kendall_rank_corrcoef"]
