"""`torchmetrics.classification.cohen_kappa`: TorchMetrics' module path for these classes."""

from torchtally.compat.torchmetrics.classification import (
    BinaryCohenKappa,
    CohenKappa,
    MulticlassCohenKappa,
)

__all__ = ["BinaryCohenKappa", "CohenKappa", "MulticlassCohenKappa"]
