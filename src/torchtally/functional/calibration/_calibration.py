"""Calibration error (ECE, MCE, RMS) with uniform bins, binary and multiclass (top-label).

Each sample has a confidence (binary: the predicted probability of class 1; multiclass: the
largest class probability) and an accuracy (binary: the label; multiclass: whether the top
class is the label). The confidences are binned over `n_bins` equal-width bins of [0, 1]:
bin i is `[i/n, (i+1)/n)` and the last bin is closed, `[(n-1)/n, 1]`, so a confidence of
exactly 1.0 lands in the last bin. (TorchMetrics 1.9 gives 1.0 an extra bin of its own, which
changes the value whenever a model is certain.) Bin edges are `torch.linspace(0, 1, n + 1)`,
compared with `bucketize`, so a confidence on an edge goes to the bin above it.

The state is a `(3, n_bins)` float64 table of per-bin weight, summed confidence and summed
accuracy: exactly additive over batches and ranks. With `acc_b`, `conf_b` the bin means and
`p_b` the bin's share of the weight:

    ECE (norm="l1")  = sum_b p_b * |acc_b - conf_b|
    MCE (norm="max") = max over non-empty bins of |acc_b - conf_b|
    RMS (norm="l2")  = sqrt(sum_b p_b * (acc_b - conf_b)^2)

NaN before any sample.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional._checks import check_tensor

__all__ = [
    "NORMS",
    "calibration_confidences",
    "calibration_error",
    "calibration_error_compute",
    "calibration_update",
    "reliability_diagram",
]

NORMS = ("l1", "l2", "max")


def calibration_confidences(
    preds: Tensor,
    target: Tensor,
    num_classes: int | None = None,
    *,
    from_logits: bool = False,
) -> tuple[Tensor, Tensor]:
    """Flat confidences and accuracies (float64) of one batch.

    Args:
        preds: Binary: probabilities (or logits with `from_logits`) of class 1, any shape.
            Multiclass: `(N, num_classes)` probabilities (or logits).
        target: Binary: 0/1 labels shaped like `preds`. Multiclass: `(N,)` class indices.
        num_classes: None for binary, else the number of classes (>= 2).
        from_logits: Apply a sigmoid (binary) or softmax (multiclass) first.
    """
    check_tensor("preds", preds)
    check_tensor("target", target)
    if not preds.is_floating_point():
        raise TypeError(
            f"Argument `preds` must be a floating-point tensor of probabilities or logits. "
            f"Received: preds.dtype={preds.dtype}"
        )
    if num_classes is None:
        if preds.shape != target.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape (binary). Received: "
                f"preds.shape={tuple(preds.shape)}, target.shape={tuple(target.shape)}"
            )
        confidence = preds.reshape(-1).to(torch.float64)
        if from_logits:
            confidence = torch.sigmoid(confidence)
        return confidence, target.reshape(-1).to(torch.float64)
    check_int("num_classes", num_classes, 2)
    if preds.dim() != 2 or preds.shape[1] != num_classes or target.shape != preds.shape[:1]:
        raise ValueError(
            f"Arguments `preds` and `target` must have shapes (N, num_classes={num_classes}) "
            f"and (N,). Received: preds.shape={tuple(preds.shape)}, "
            f"target.shape={tuple(target.shape)}"
        )
    if target.is_floating_point():
        raise TypeError(
            f"Argument `target` must hold integer class indices. Received: target.dtype={target.dtype}"
        )
    probabilities = torch.softmax(preds.to(torch.float64), 1) if from_logits else preds
    confidence, predicted = probabilities.max(dim=1)
    return confidence.to(torch.float64), (predicted == target).to(torch.float64)


def calibration_update(
    confidence: Tensor,
    accuracy: Tensor,
    n_bins: int,
    weights: Tensor | None = None,
    *,
    bin_of_one: bool = False,
) -> Tensor:
    """The `(3, n_bins)` float64 table of bin weight, summed confidence and summed accuracy.

    Confidences outside [0, 1] are clamped into the first or last bin (metrics count them as
    data errors); NaN confidences are left out (also counted by metrics). The bin edges are
    computed in the confidences' dtype (float64 from `calibration_confidences`), so a float32
    confidence on an edge is binned as float32 arithmetic places it.

    Args:
        bin_of_one: TorchMetrics 1.9's binning: a confidence of 1.0 (or more) gets a bin of its
            own, an extra last column (`(3, n_bins + 1)`), instead of the last bin.
    """
    check_int("n_bins", n_bins, 1)
    dtype = confidence.dtype if confidence.is_floating_point() else torch.float64
    edges = torch.linspace(0, 1, n_bins + 1, dtype=dtype, device=confidence.device)
    columns_out = n_bins + 1 if bin_of_one else n_bins
    index = (torch.bucketize(confidence, edges, right=True) - 1).clamp(0, columns_out - 1)
    # binned in their own dtype, summed in float64 (no-ops for float64 inputs)
    confidence, accuracy = confidence.to(torch.float64), accuracy.to(torch.float64)
    if weights is None:
        w = torch.ones_like(confidence)
    elif check_tensor("weights", weights).dim() == 0:
        w = weights.to(torch.float64).expand(confidence.shape)
    elif weights.numel() == confidence.numel():
        w = weights.reshape(-1).to(torch.float64)
    else:
        raise ValueError(
            "Argument `weights` must be a scalar or hold one weight per sample "
            f"({confidence.numel()}). Received: weights.shape={tuple(weights.shape)}"
        )
    w = torch.where(confidence == confidence, w, 0.0)  # NaN confidence: no bin
    confidence = torch.nan_to_num(confidence, nan=0.0)
    # Out of place: an in-place scatter into a fresh tensor would not vectorize with vmap
    # (BootStrapper runs updates under vmap).
    columns = torch.stack([w, w * confidence, w * accuracy])
    table = torch.zeros(3, columns_out, dtype=torch.float64, device=confidence.device)
    return table.scatter_add(1, index.expand(3, -1), columns)


def calibration_error_compute(table: Tensor, norm: str = "l1") -> Tensor:
    """ECE / MCE / RMS from a bin table; NaN when it holds no weight."""
    check_choice("norm", norm, NORMS)
    weight, confidence, accuracy = table[0], table[1], table[2]
    filled = weight > 0
    safe = weight.clamp(min=1e-300)
    gap = torch.where(filled, (accuracy - confidence) / safe, 0.0)
    share = weight / weight.sum()
    if norm == "l1":
        return (share * gap.abs()).sum()
    if norm == "l2":
        return (share * gap.square()).sum().sqrt()
    value = gap.abs().amax()
    return torch.where(weight.sum() > 0, value, float("nan"))


def reliability_diagram(table: Tensor) -> dict[str, Tensor]:
    """The data of a reliability diagram from a bin table.

    Returns:
        `edges` `(n_bins + 1,)`, and per bin `confidence` (mean; NaN if empty), `accuracy`
        (mean; NaN if empty) and `weight` (the samples, or summed weights, in the bin).
    """
    weight = table[0]
    edges = torch.linspace(0, 1, weight.shape[0] + 1, dtype=torch.float64, device=table.device)
    return {
        "edges": edges,
        "confidence": table[1] / weight,
        "accuracy": table[2] / weight,
        "weight": weight.clone(),
    }


def calibration_error(
    preds: Tensor,
    target: Tensor,
    num_classes: int | None = None,
    n_bins: int = 15,
    norm: str = "l1",
    *,
    from_logits: bool = False,
    weights: Tensor | None = None,
) -> Tensor:
    """Calibration error of one batch: ECE (`norm="l1"`), MCE (`"max"`) or RMS (`"l2"`).

    Args:
        preds: Binary probabilities of class 1 (any shape), or `(N, num_classes)` class
            probabilities; logits with `from_logits=True`.
        target: Binary 0/1 labels shaped like `preds`, or `(N,)` class indices.
        num_classes: None for binary, else the number of classes.
        n_bins: Number of equal-width confidence bins over [0, 1].
        norm: "l1", "l2" or "max".
        from_logits: Apply a sigmoid / softmax to `preds` first.
        weights: Optional scalar or per-sample weights.

    Returns:
        A 0-d float64 tensor.

    Example:
        >>> preds = torch.tensor([0.25, 0.25, 0.55, 0.75, 0.75])
        >>> target = torch.tensor([0, 0, 1, 1, 1])
        >>> calibration_error(preds, target, n_bins=2)  # bins: 2 samples at 0.25, 3 at ~0.68
        tensor(0.2900, dtype=torch.float64)
    """
    check_choice("norm", norm, NORMS)
    confidence, accuracy = calibration_confidences(
        preds, target, num_classes, from_logits=from_logits
    )
    return calibration_error_compute(
        calibration_update(confidence, accuracy, n_bins, weights), norm
    )
