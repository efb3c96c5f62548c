"""`torchmetrics.functional.regression.csi` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.regression._functions import (
    critical_success_index,
)

__all__ = ["critical_success_index"]
