"""`torchmetrics.functional.image.ssim` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.image._functions import (
    structural_similarity_index_measure,
)

__all__ = ["structural_similarity_index_measure"]
