"""The partial area under a ROC curve up to a false positive rate, McClish-standardized
(TorchMetrics' and scikit-learn's `max_fpr`), one home for the binary curves and retrieval."""

from __future__ import annotations

from torch import Tensor

__all__ = ["mcclish_standardized", "partial_roc_areas"]


def partial_roc_areas(
    fpr_start: Tensor, fpr_end: Tensor, tpr_start: Tensor, tpr_end: Tensor, max_fpr: float
) -> Tensor:
    """The area of each ROC segment left of `max_fpr`, elementwise: a segment past the cut
    adds 0, the one it crosses is cut with its true positive rate interpolated there. Summed
    over a curve's segments, the partial AUC; no data-dependent shape, so it traces.

    Example:
        >>> import torch
        >>> fpr, tpr = torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.0, 1.0, 1.0])
        >>> partial_roc_areas(fpr[:-1], fpr[1:], tpr[:-1], tpr[1:], 0.25).sum()
        tensor(0.0625)
    """
    width = (fpr_end.clamp(max=max_fpr) - fpr_start).clamp(min=0.0)
    span = fpr_end - fpr_start
    fraction = (width / span.clamp(min=1e-300)).where(span > 0, 0.0)
    tpr_cut = tpr_start + (tpr_end - tpr_start) * fraction
    return width * (tpr_start + tpr_cut) / 2.0


def mcclish_standardized(partial_area: Tensor, max_fpr: float) -> Tensor:
    """McClish's standardization of a partial AUC up to `max_fpr`: 0.5 for a non-discriminant
    classifier (area max_fpr² / 2), 1 for a perfect one (area max_fpr).

    Example:
        >>> import torch
        >>> mcclish_standardized(torch.tensor(0.25), 0.25)
        tensor(1.)
    """
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1.0 + (partial_area - min_area) / (max_fpr - min_area))
