"""`torchmetrics.classification` on torchtally (see `_classes` for the list)."""

from torchtally.compat.torchmetrics.classification._classes import *  # noqa: F403
from torchtally.compat.torchmetrics.classification._classes import __all__ as _classes_all

__all__ = list(_classes_all)
