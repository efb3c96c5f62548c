"""Turning per-class counts into averaged scores, with scikit-learn's conventions.

- A ratio whose denominator is zero is 0 (scikit-learn's default `zero_division="warn"`,
  without the warning).
- "micro" sums the counts over the kept classes, then takes the ratio.
- "macro" is the plain mean of the per-class ratios over every kept class; a class absent from
  both labels and predictions counts as 0, as in cstorch (scikit-learn with `labels=` set to
  the kept classes). `macro_classes="seen"` takes the other rule, scikit-learn's default
  (`labels=None`) and TorchMetrics': the mean over the kept classes that occur in the labels
  or the predictions. One correct sample of class 0 out of 4 classes: 0.25 ("all") or 1.0
  ("seen").
- "weighted" weights each class by its support (label count); when no kept class has support
  it falls back to "macro", as scikit-learn does.
- "none" returns the per-class ratios of all classes (ignored ones included).

Classes named in `ignore` (cstorch's `ignore_labels`) take no part in any average: exactly
scikit-learn's `labels=` set to the other classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice

__all__ = [
    "AVERAGE_TYPES",
    "MACRO_CLASSES",
    "ClassRows",
    "average_class_scores",
    "check_class_list",
    "class_rows",
    "kept_classes",
    "masked_mean",
    "mean_or_zero",
    "safe_divide",
    "seen_classes",
    "weighted_class_mean",
]

AVERAGE_TYPES = ("micro", "macro", "weighted", "none")
#: Which classes "macro" averages over: every kept class (cstorch) or those seen (scikit-learn).
MACRO_CLASSES = ("all", "seen")

#: `score(true_positives, predicted, actual) -> ratio`, elementwise.
ScoreFn = Callable[[Tensor, Tensor, Tensor], Tensor]
#: The rows of the `(3, C)` class counts apart: true positives, predicted, actual per class.
ClassRows = tuple[Tensor, Tensor, Tensor]


def class_rows(class_counts: Tensor | ClassRows) -> ClassRows:
    """True positives, predicted and actual counts per class, from `(3, C)` class counts or
    from those three rows already apart (a metric reads them off a confusion matrix)."""
    if isinstance(class_counts, Tensor):
        true_positives, predicted, actual = class_counts.unbind(0)
        return true_positives, predicted, actual
    return class_counts


def check_class_list(name: str, classes: Iterable[int] | None, num_classes: int) -> tuple[int, ...]:
    """Return `classes` as a sorted tuple after checking each is an int in `[0, num_classes)`.

    Example:
        >>> check_class_list("ignore_labels", [2, 0], 3)
        (0, 2)
    """
    if classes is None:
        return ()
    if isinstance(classes, int | str) or not isinstance(classes, Iterable):
        raise TypeError(
            f"Argument `{name}` must be a sequence of class indices or None. "
            f"Received: {name}={classes!r}"
        )
    values = tuple(classes)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < num_classes:
            raise ValueError(
                f"Argument `{name}` must hold integers in [0, num_classes) = [0, {num_classes}). "
                f"Received: {name}={values!r}"
            )
    return tuple(sorted(set(values)))


def safe_divide(numerator: Tensor, denominator: Tensor, zero_division: float = 0.0) -> Tensor:
    """`numerator / denominator` in floating point (integer counts divide in the default
    float dtype), and `zero_division` where the denominator is 0: 0 by default
    (scikit-learn's default), 1 or NaN as TorchMetrics' `zero_division` asks.

    Example:
        >>> safe_divide(torch.tensor([1, 2]), torch.tensor([2, 0]), zero_division=1.0)
        tensor([0.5000, 1.0000])
    """
    if zero_division == 0:
        # The zero taken from the denominator itself: a Python 0.0 would be one more op (a
        # scalar tensor made on the device) in a compute of a few ops.
        return torch.where(denominator == 0, denominator, numerator / denominator)
    return torch.where(denominator == 0, zero_division, numerator / denominator)


def seen_classes(predicted: Tensor, actual: Tensor, labels_only: bool = False) -> Tensor:
    """Boolean mask of the classes that occur: in the labels or the predictions (scikit-learn's
    and TorchMetrics' "macro" classes), or in the labels only (`labels_only`, TorchMetrics'
    rule for top-k predictions)."""
    if labels_only:
        return actual > 0
    return (actual > 0) | (predicted > 0)


def weighted_class_mean(scores: Tensor, weights: Tensor, empty: float = 0.0) -> Tensor:
    """`sum(weights * scores) / sum(weights)` over the last (class) dimension, leading
    dimensions kept (one value per sample); `empty` where every weight is 0.

    TorchMetrics' macro (0/1 weights: the classes averaged over) and weighted (supports)
    averages, with its value of no class: 0, or NaN for its Jaccard index.

    Example:
        >>> weighted_class_mean(torch.tensor([0.5, 1.0, 0.0]), torch.tensor([1.0, 1.0, 0.0]))
        tensor(0.7500)
    """
    return safe_divide(weights * scores, weights.sum(-1, keepdim=True), empty).sum(-1)


def kept_classes(num_classes: int, ignore: Sequence[int], like: Tensor) -> Tensor | None:
    """Boolean `(num_classes,)` mask, False at the ignored classes (fixed by the arguments);
    None when no class is ignored (every class is kept: nothing to mask)."""
    if not ignore:
        return None
    mask = torch.ones(num_classes, dtype=torch.bool, device=like.device)
    for index in ignore:  # static: the classes come from the constructor
        mask[index] = False
    return mask


def masked_mean(values: Tensor, mask: Tensor | None) -> Tensor:
    """Mean of `values` where `mask` (everywhere for None); NaN when the mask is empty (a
    mean of nothing)."""
    if mask is None:
        return values.sum() / values.shape[0]
    return torch.where(mask, values, 0.0).sum() / mask.sum()


def mean_or_zero(values: Tensor, mask: Tensor, zero_outside: bool = False) -> Tensor:
    """Mean of `values` where `mask`; 0 when the mask is empty (cstorch's mean IoU and Dice).
    With `zero_outside`, `values` is already 0 wherever `mask` is False (no masking op)."""
    count = mask.sum()
    total = (values if zero_outside else torch.where(mask, values, 0.0)).sum()
    # an empty mask has a total of 0: 0 / 1 is the 0 it must give
    return total / count.clamp(min=1)


def average_class_scores(
    class_counts: Tensor | ClassRows,
    score: ScoreFn,
    average_type: str = "micro",
    task: str = "multiclass",
    ignore: Sequence[int] = (),
    macro_classes: str = "all",
) -> Tensor:
    """Average a per-class score over the `(3, C)` class counts (see the module docstring).

    Args:
        class_counts: Rows [true positives, predicted, actual] per class (or those rows).
        score: Elementwise `score(tp, predicted, actual)`.
        average_type: "micro", "macro", "weighted" or "none".
        task: "binary", "multiclass" or "multilabel" (decides which classes "macro" covers).
        ignore: Classes left out of every average.
        macro_classes: "all" (every kept class) or "seen" (kept classes in the labels or
            the predictions) for "macro" (and "weighted"'s fallback to it).

    Returns:
        float64: 0-d, or `(C,)` for "none".

    Example:
        >>> counts = torch.tensor([[1.0, 1.0], [2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
        >>> average_class_scores(counts, lambda tp, p, a: safe_divide(tp, p), "macro")
        tensor(0.7500, dtype=torch.float64)
    """
    check_choice("average_type", average_type, AVERAGE_TYPES)
    check_choice("macro_classes", macro_classes, MACRO_CLASSES)
    true_positives, predicted, actual = class_rows(class_counts)
    if average_type == "none":
        return score(true_positives, predicted, actual)
    kept = kept_classes(true_positives.shape[0], ignore, true_positives)
    if average_type == "micro":
        if kept is None:
            return score(true_positives.sum(), predicted.sum(), actual.sum())
        stacked = torch.stack([true_positives, predicted, actual])
        tp, pred, act = torch.where(kept, stacked, 0.0).sum(1).unbind(0)
        return score(tp, pred, act)
    per_class = score(true_positives, predicted, actual)
    included = kept
    if macro_classes == "seen":
        seen = seen_classes(predicted, actual)
        included = seen if kept is None else kept & seen
    macro = masked_mean(per_class, included)
    if average_type == "macro":
        return macro
    support = actual if included is None else torch.where(included, actual, 0.0)
    total = support.sum()
    weighted = (per_class * support).sum() / torch.where(total == 0, 1.0, total)
    return torch.where(total == 0, macro, weighted)
