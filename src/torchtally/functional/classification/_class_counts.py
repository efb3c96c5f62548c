"""The per-class counts that precision, recall, F-beta, mean per-class accuracy, mean IoU and
Dice all derive from, so that a metric collection can keep one state for all of them.

`class_counts` is a `(3, C)` float64 tensor with rows

    0: true positives per class   (label == class and prediction == class)
    1: predicted count per class  (prediction == class)
    2: actual count per class     (label == class, the support)

from which false positives (row 1 - row 0), false negatives (row 2 - row 0) and the union
(row 1 + row 2 - row 0) follow. For multiclass inputs one `index_add_` over the concatenated
indices `[label, C + prediction, 2C + label]` fills it; for binary (C = 1, the positive class)
and multilabel (C labels) inputs it is a sum over samples. Counts are float64: exact integers up
to 2**53, and sample weights make them weighted counts.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.functional._checks import ErrorCounts
from torchtally.functional.classification._confusion_matrix import class_rows_of
from torchtally.functional.classification._valid_inputs import (
    classification_task,
    indicator_errors,
    indicator_inputs,
    multiclass_errors,
    multiclass_inputs,
)

__all__ = [
    "add_class_counts",
    "class_counts",
    "class_counts_error_counts",
    "class_counts_errors",
    "class_counts_update",
    "class_counts_width",
]


#: Up to this many confusion-matrix cells, the matrix path is used even for small batches.
_SMALL_MATRIX = 1024


def class_counts_width(num_classes: int | None, multilabel: bool = False) -> int:
    """Number of columns of the counts: 1 for binary, else `num_classes`."""
    return 1 if classification_task(num_classes, multilabel) == "binary" else int(num_classes or 1)


def class_counts_update(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    *,
    multilabel: bool = False,
    threshold: float = 0.5,
    weights: Tensor | None = None,
    out: Tensor | None = None,
    score_kind: str = "auto",
) -> Tensor:
    """Per-class [true positive, predicted, actual] counts of one batch.

    Invalid labels or index predictions (outside `[0, num_classes)`, or not 0/1 for binary and
    multilabel) are left out of every count; `class_counts_errors` counts them.

    Args:
        labels: Multiclass: integer class indices of any shape (e.g. `(N,)` or `(N, H, W)`).
            Binary: 0/1 labels of any shape. Multilabel: 0/1 indicators `(..., num_classes)`.
        predictions: Class indices, or scores (see `multiclass_inputs` / `indicator_inputs`).
        num_classes: None for binary, else the number of classes (or labels, if multilabel).
        multilabel: Whether the inputs are multilabel indicators.
        threshold: Decision threshold for scores shaped like `labels`.
        weights: Optional sample weights (shaped like `labels`; per sample for multilabel).
        out: A `(3, C)` float64 tensor to add the counts into, in place (a metric's state).
        score_kind: What scores shaped like `labels` are: "auto" (logits when a batch has a
            score outside [0, 1], else probabilities), "probabilities" or "logits".

    Returns:
        The `(3, C)` float64 counts (`out` itself when given).

    Example:
        >>> class_counts_update(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]), 2)
        tensor([[1., 1.],
                [2., 1.],
                [1., 2.]], dtype=torch.float64)
    """
    task = classification_task(num_classes, multilabel)
    width = class_counts_width(num_classes, multilabel)
    if out is None:
        out = torch.zeros((3, width), dtype=torch.float64, device=labels.device)
    if task == "multiclass":
        labels_c, predicted, weight = multiclass_inputs(
            labels, predictions, width, threshold, weights, score_kind
        )
        return add_class_counts(labels_c, predicted, weight, out)
    positive, predicted_one, weight = indicator_inputs(
        labels,
        predictions,
        None if task == "binary" else width,
        threshold,
        weights,
        score_kind,
    )
    rows = torch.stack([positive & predicted_one, predicted_one, positive])
    out.add_((rows.reshape(3, -1, width) * weight.reshape(1, -1, width)).sum(1))
    return out


def add_class_counts(labels_c: Tensor, predicted: Tensor, weight: Tensor, out: Tensor) -> Tensor:
    """Add multiclass counts into the `(3, C)` float64 `out`, from in-range label and predicted
    indices and float64 element weights shaped alike (as `multiclass_inputs` gives them)."""
    width = out.shape[1]
    if width * width <= max(labels_c.numel(), _SMALL_MATRIX):
        # Few classes: scatter the batch once into a (C, C) confusion matrix and read the
        # three rows off it (diagonal, column and row sums), instead of scattering three
        # concatenated copies of the batch: a third of the batch-sized work.
        matrix = out.new_zeros(width * width)
        if labels_c.dim() != 1:  # flat already: skip three reshape dispatches
            labels_c, predicted, weight = (t.reshape(-1) for t in (labels_c, predicted, weight))
        # written through out=: a bool `predicted` (see row_maxima) then converts inside the
        # kernel, where an allocating add converts it in a pass of its own (about 2x)
        index = torch.add(predicted, labels_c, alpha=width, out=torch.empty_like(labels_c))
        matrix.index_add_(0, index, weight)
        matrix = matrix.view(width, width)
        out.add_(torch.stack(class_rows_of(matrix)))
        return out
    true_positive = torch.where(labels_c == predicted, weight, 0.0).reshape(-1)
    weight = weight.reshape(-1)
    labels_c = labels_c.reshape(-1)
    # One scatter for all three rows of the flattened (3, C) counts.
    index = torch.cat([labels_c, predicted.reshape(-1) + width, labels_c + 2 * width])
    out.view(-1).index_add_(0, index, torch.cat([true_positive, weight, weight]))
    return out


def class_counts_errors(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    *,
    multilabel: bool = False,
    weights: Tensor | None = None,
) -> tuple[Tensor | None, ...]:
    """0-d counts of the data errors `error_kinds(task)` names, in order (None: impossible).

    Example:
        >>> class_counts_errors(torch.tensor([0, 3]), torch.tensor([0, 1]), 3)[0]
        tensor(1)
    """
    return tuple(
        class_counts_error_counts(
            labels, predictions, num_classes, multilabel=multilabel, weights=weights
        ).values()
    )


def class_counts_error_counts(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    *,
    multilabel: bool = False,
    weights: Tensor | None = None,
) -> ErrorCounts:
    """`class_counts_errors` by kind name (the keys of `error_kinds(task)`), for a metric's
    `record_errors(**counts)`."""
    task = classification_task(num_classes, multilabel)
    if task == "multiclass":
        return multiclass_errors(labels, predictions, int(num_classes or 0), weights)
    return indicator_errors(labels, predictions, weights)


def class_counts(
    labels: Tensor,
    predictions: Tensor,
    num_classes: int | None = None,
    *,
    multilabel: bool = False,
    threshold: float = 0.5,
    weights: Tensor | None = None,
    score_kind: str = "auto",
) -> Tensor:
    """Per-class [true positive, predicted, actual] counts (see the module docstring).

    Args:
        labels: Class indices (multiclass), 0/1 labels (binary) or indicators (multilabel).
        predictions: Class indices or scores.
        num_classes: None for binary, else the number of classes or labels.
        multilabel: Whether the inputs are multilabel indicators.
        threshold: Decision threshold for scores shaped like `labels`.
        weights: Optional sample weights.
        score_kind: "auto", "probabilities" or "logits" (see `class_counts_update`).

    Returns:
        A `(3, C)` float64 tensor (C = 1 for binary).

    Example:
        >>> class_counts(torch.tensor([1, 0, 1]), torch.tensor([0.8, 0.6, 0.2]))
        tensor([[1.],
                [2.],
                [2.]], dtype=torch.float64)
    """
    return class_counts_update(
        labels,
        predictions,
        num_classes,
        multilabel=multilabel,
        threshold=threshold,
        weights=weights,
        score_kind=score_kind,
    )
