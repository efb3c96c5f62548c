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
    "average_class_scores",
    "check_class_list",
    "kept_classes",
    "masked_mean",
    "mean_or_zero",
    "safe_divide",
]

AVERAGE_TYPES = ("micro", "macro", "weighted", "none")
#: Which classes "macro" averages over: every kept class (cstorch) or those seen (scikit-learn).
MACRO_CLASSES = ("all", "seen")

#: `score(true_positives, predicted, actual) -> ratio`, elementwise.
ScoreFn = Callable[[Tensor, Tensor, Tensor], Tensor]


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


def safe_divide(numerator: Tensor, denominator: Tensor) -> Tensor:
    """`numerator / denominator`, and 0 where the denominator is 0 (scikit-learn's default)."""
    zero = denominator == 0
    return torch.where(zero, 0.0, numerator / torch.where(zero, 1.0, denominator))


def kept_classes(num_classes: int, ignore: Sequence[int], like: Tensor) -> Tensor:
    """Boolean `(num_classes,)` mask, False at the ignored classes (fixed by the arguments)."""
    mask = torch.ones(num_classes, dtype=torch.bool, device=like.device)
    for index in ignore:  # static: the classes come from the constructor
        mask[index] = False
    return mask


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of `values` where `mask`; NaN when the mask is empty (a mean of nothing)."""
    return torch.where(mask, values, 0.0).sum() / mask.sum()


def mean_or_zero(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of `values` where `mask`; 0 when the mask is empty (cstorch's mean IoU and Dice)."""
    count = mask.sum()
    total = torch.where(mask, values, 0.0).sum()
    return torch.where(count > 0, total / count.clamp(min=1), 0.0)


def average_class_scores(
    class_counts: Tensor,
    score: ScoreFn,
    average_type: str = "micro",
    task: str = "multiclass",
    ignore: Sequence[int] = (),
    macro_classes: str = "all",
) -> Tensor:
    """Average a per-class score over the `(3, C)` class counts (see the module docstring).

    Args:
        class_counts: Rows [true positives, predicted, actual] per class.
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
    true_positives, predicted, actual = class_counts.unbind(0)
    if average_type == "none":
        return score(true_positives, predicted, actual)
    kept = kept_classes(class_counts.shape[1], ignore, class_counts)
    if average_type == "micro":
        tp, pred, act = torch.where(kept, class_counts, 0.0).sum(1).unbind(0)
        return score(tp, pred, act)
    per_class = score(true_positives, predicted, actual)
    included = kept
    if macro_classes == "seen":
        included = kept & ((actual > 0) | (predicted > 0))
    macro = masked_mean(per_class, included)
    if average_type == "macro":
        return macro
    support = torch.where(included, actual, 0.0)
    total = support.sum()
    weighted = (per_class * support).sum() / torch.where(total == 0, 1.0, total)
    return torch.where(total == 0, macro, weighted)
