"""`torchmetrics.functional.regression.spearman` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    _rank_data,  # noqa: F401  (TorchMetrics has it here; its tests import it)
    spearman_corrcoef,
)

__all__ = ["spearman_corrcoef"]
