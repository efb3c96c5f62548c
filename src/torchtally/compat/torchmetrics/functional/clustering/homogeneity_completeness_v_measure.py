"""`torchmetrics.functional.clustering.homogeneity_completeness_v_measure` (see `_functions`)."""

from torchtally.compat.torchmetrics.functional.clustering._functions import (
    completeness_score,
    homogeneity_score,
    v_measure_score,
)

__all__ = ["completeness_score", "homogeneity_score", "v_measure_score"]
