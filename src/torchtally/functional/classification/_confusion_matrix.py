"""Confusion matrix: rows are labels, columns predictions, as scikit-learn's."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int
from torchtally.functional.classification._valid_inputs import multiclass_inputs

__all__ = [
    "NORMALIZE",
    "add_confusion",
    "class_rows_of",
    "confusion_matrix",
    "confusion_matrix_compute",
    "confusion_matrix_update",
]

NORMALIZE = (None, "true", "pred", "all")


def confusion_matrix_update(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int,
    *,
    threshold: float = 0.5,
    weights: Tensor | None = None,
    out: Tensor | None = None,
    score_kind: str = "auto",
) -> Tensor:
    """The `(C, C)` (weighted) counts of one batch, from one `index_add_`.

    Invalid labels or index predictions (outside `[0, num_classes)`) are left out; count them
    with `multiclass_errors`.

    Args:
        labels: Integer class indices of any shape.
        predictions: Indices shaped like `labels`, or scores with a trailing class dimension.
        num_classes: Number of classes (>= 2).
        threshold: Decision threshold for binary scores shaped like `labels`.
        weights: Optional sample weights shaped like `labels`.
        out: A `(C, C)` float64 tensor to add the counts into, in place.
        score_kind: What binary scores are (two classes only): "auto", "probabilities" or
            "logits".

    Returns:
        The `(C, C)` float64 counts (`out` itself when given).

    Example:
        >>> confusion_matrix_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        tensor([[1., 0.],
                [1., 1.]], dtype=torch.float64)
    """
    check_int("num_classes", num_classes, 2)
    labels_c, predicted, weight = multiclass_inputs(
        labels, predictions, num_classes, threshold, weights, score_kind
    )
    if out is None:
        out = torch.zeros((num_classes, num_classes), dtype=torch.float64, device=labels.device)
    return add_confusion(labels_c, predicted, weight, num_classes, out)


def class_rows_of(matrix: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """True positives, predicted and actual counts per class of a confusion matrix (rows:
    labels), or of each matrix of a stack `(..., C, C)`: its diagonal, column and row sums
    (the class counts' rows, see `class_counts_update`).

    Example:
        >>> class_rows_of(torch.tensor([[1, 0], [1, 1]]))
        (tensor([1, 1]), tensor([2, 1]), tensor([1, 2]))
    """
    return matrix.diagonal(dim1=-2, dim2=-1), matrix.sum(-2), matrix.sum(-1)


def add_confusion(
    labels: Tensor,
    predicted: Tensor,
    weight: Tensor,
    num_classes: int,
    out: Tensor,
    offset: Tensor | None = None,
) -> Tensor:
    """Add `weight` at cell `(label, predicted)` of `(C, C)` matrices laid out in `out`, in one
    `index_add_`: the confusion-matrix update every classification metric shares.

    Args:
        labels: In-range int64 label indices (rows).
        predicted: In-range int64 predicted indices (columns), shaped like `labels`.
        weight: What each element adds (0 leaves it out), shaped like `labels`, of `out`'s dtype.
        num_classes: `C`.
        out: Contiguous matrices, `(C, C)` or any stack of them (`(..., C, C)`), added to in
            place.
        offset: Per element, the flat position of the first cell of its matrix in `out`
            (broadcast against `labels`: several matrices filled at once, e.g. one per label
            or per sample); None: the first.

    Returns:
        `out`.

    Example:
        >>> add_confusion(torch.tensor([0, 1, 1]), torch.tensor([1, 1, 0]),
        ...               torch.ones(3, dtype=torch.int64), 2, torch.zeros(2, 2, dtype=torch.int64))
        tensor([[0, 1],
                [1, 1]])
    """
    # label * C + prediction in one op; flat inputs skip the reshape dispatches
    index = predicted.add(labels, alpha=num_classes)
    if offset is not None:
        index = index + offset
    if index.dim() != 1:
        index, weight = index.reshape(-1), weight.reshape(-1)
    out.view(-1).index_add_(0, index, weight)
    return out


def confusion_matrix_compute(matrix: Tensor, normalize: str | None = None) -> Tensor:
    """Normalise accumulated counts as scikit-learn does; 0 where a row/column/total is 0.

    Args:
        matrix: `(C, C)` counts, rows = labels (or a stack of such matrices, `(..., C, C)`).
        normalize: None (counts), "true" (rows sum to 1), "pred" (columns sum to 1) or "all".

    Returns:
        A `(C, C)` float64 tensor.

    Example:
        >>> confusion_matrix_compute(torch.tensor([[1.0, 0.0], [1.0, 3.0]]), "true")
        tensor([[1.0000, 0.0000],
                [0.2500, 0.7500]])
    """
    check_choice("normalize", normalize, NORMALIZE)
    if normalize is None:
        return matrix.clone()
    # over the last two dimensions: a stack of matrices (one per label) normalizes each
    if normalize == "true":
        total = matrix.sum(-1, keepdim=True)
    elif normalize == "pred":
        total = matrix.sum(-2, keepdim=True)
    else:
        total = matrix.sum((-2, -1), keepdim=True)
    zero = total == 0
    return torch.where(zero, 0.0, matrix / torch.where(zero, 1.0, total))


def confusion_matrix(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int,
    normalize: str | None = None,
    threshold: float = 0.5,
    weights: Tensor | None = None,
) -> Tensor:
    """Confusion matrix of `predictions` against `labels` (scikit-learn's layout).

    Args:
        labels: Integer class indices of any shape.
        predictions: Indices shaped like `labels`, or scores with a trailing class dimension.
        num_classes: Number of classes (>= 2).
        normalize: None, "true", "pred" or "all".
        threshold: Decision threshold for binary scores shaped like `labels`.
        weights: Optional sample weights shaped like `labels`.

    Returns:
        A `(num_classes, num_classes)` float64 tensor; entry [i, j] counts label i predicted j.

    Example:
        >>> confusion_matrix(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        tensor([[1., 0.],
                [1., 1.]], dtype=torch.float64)
    """
    check_choice("normalize", normalize, NORMALIZE)
    counts = confusion_matrix_update(
        labels, predictions, num_classes, threshold=threshold, weights=weights
    )
    return confusion_matrix_compute(counts, normalize)
