"""Turning classification predictions into class indices, decided by dtype and shape alone."""

from __future__ import annotations

from torch import Tensor

from torchtally.functional._checks import check_tensor

__all__ = ["as_class_indices"]


def as_class_indices(labels: Tensor, predictions: Tensor, threshold: float = 0.5) -> Tensor:
    """Return predicted class indices shaped like `labels`.

    - Integer or bool `predictions` shaped like `labels` are class indices already.
    - Floating `predictions` shaped like `labels` are binary scores: class 1 where
      `predictions > threshold`.
    - Floating `predictions` with one more trailing dimension are per-class scores or logits:
      the class is their argmax.

    The choice depends only on dtype and shape, so it is fixed when a step is traced.

    Args:
        labels: Target class indices.
        predictions: Indices or scores, as above.
        threshold: Decision threshold for binary scores.

    Returns:
        Integer class indices with the shape of `labels`.
    """
    check_tensor("labels", labels)
    check_tensor("predictions", predictions)
    if predictions.shape == labels.shape:
        if predictions.is_floating_point():
            return (predictions > threshold).long()
        return predictions
    if predictions.dim() == labels.dim() + 1 and predictions.shape[:-1] == labels.shape:
        if not predictions.is_floating_point():
            raise ValueError(
                "Argument `predictions` with one more dimension than `labels` must hold "
                f"floating-point class scores. Received: predictions.dtype={predictions.dtype}"
            )
        # max().indices: the first maximum, like argmax, and faster for a short class dim
        return predictions.max(dim=-1).indices
    raise ValueError(
        "Argument `predictions` must have the shape of `labels` (class indices or binary scores) "
        "or that shape plus a trailing class dimension (class scores). Received: "
        f"labels.shape={tuple(labels.shape)}, predictions.shape={tuple(predictions.shape)}"
    )
