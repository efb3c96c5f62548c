"""TorchMetrics 1.9's confusion-matrix family as functions: accuracy, precision, recall, F-beta,
specificity, negative predictive value, Hamming distance, stat scores, confusion matrix,
Jaccard index, Matthews and Cohen's kappa, exact match.

Each function is the compatible class's update and compute on one batch, stateless: the same
confusion-matrix update (`functional/_stat_scores.py`) and the same reduction the class's
`compute` applies, so a function and its class cannot disagree. What is here is TorchMetrics'
calling convention: argument order and defaults, `validate_args`, its messages, and
`multidim_average="samplewise"` (one confusion matrix per sample; the classes keep each
sample's `[tp, fp, tn, fn]` rows in a preallocated buffer).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.functional._stat_scores import (
    CLASS_COUNT_FREE,
    _multiclass_predictions,
    binary_confmat_update,
    cohen_kappa_from_confmat,
    confmat_normalize,
    exact_match_update,
    jaccard_from_confmat,
    matthews_from_confmat,
    micro_stat_rows,
    multiclass_confmat_update,
    multilabel_confmat_update,
    reduce_stat_counts,
    reduce_stat_scores,
    safe_divide,
    stat_counts,
    stat_scores_table,
)
from torchtally.compat.torchmetrics.functional.classification._checks import (
    check_binary_args,
    check_binary_tensors,
    check_choice,
    check_int_arg,
    check_multiclass_args,
    check_multiclass_tensors,
    check_multilabel_args,
    check_multilabel_tensors,
    check_task,
    raise_invalid_values,
)

__all__ = [
    "accuracy",
    "binary_accuracy",
    "binary_cohen_kappa",
    "binary_confusion_matrix",
    "binary_f1_score",
    "binary_fbeta_score",
    "binary_hamming_distance",
    "binary_jaccard_index",
    "binary_matthews_corrcoef",
    "binary_negative_predictive_value",
    "binary_precision",
    "binary_recall",
    "binary_specificity",
    "binary_stat_scores",
    "cohen_kappa",
    "confusion_matrix",
    "exact_match",
    "f1_score",
    "fbeta_score",
    "hamming_distance",
    "jaccard_index",
    "matthews_corrcoef",
    "multiclass_accuracy",
    "multiclass_cohen_kappa",
    "multiclass_confusion_matrix",
    "multiclass_exact_match",
    "multiclass_f1_score",
    "multiclass_fbeta_score",
    "multiclass_hamming_distance",
    "multiclass_jaccard_index",
    "multiclass_matthews_corrcoef",
    "multiclass_negative_predictive_value",
    "multiclass_precision",
    "multiclass_recall",
    "multiclass_specificity",
    "multiclass_stat_scores",
    "multilabel_accuracy",
    "multilabel_confusion_matrix",
    "multilabel_exact_match",
    "multilabel_f1_score",
    "multilabel_fbeta_score",
    "multilabel_hamming_distance",
    "multilabel_jaccard_index",
    "multilabel_matthews_corrcoef",
    "multilabel_negative_predictive_value",
    "multilabel_precision",
    "multilabel_recall",
    "multilabel_specificity",
    "multilabel_stat_scores",
    "negative_predictive_value",
    "precision",
    "recall",
    "specificity",
    "stat_scores",
]

_TASKS = ("binary", "multiclass", "multilabel")
_NORMALIZE = ("true", "pred", "all", "none", None)
_WEIGHTS = ("linear", "quadratic", "none", None)


# ------------------------------------------------------------------ the confusion matrices


def _binary_confmat(
    preds: Tensor,
    target: Tensor,
    threshold: float,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
) -> Tensor:
    if validate_args:
        check_binary_args(threshold, multidim_average, ignore_index, zero_division)
        check_binary_tensors(preds, target, multidim_average, ignore_index)
    confmat, _ = binary_confmat_update(
        preds, target, threshold, ignore_index, samplewise=multidim_average == "samplewise"
    )
    return confmat


def _multiclass_confmat(
    kind: str,
    preds: Tensor,
    target: Tensor,
    num_classes: int | None,
    average: str | None,
    top_k: int,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
) -> Tensor:
    if validate_args:
        check_multiclass_args(
            num_classes, top_k, average, multidim_average, ignore_index, zero_division
        )
        check_multiclass_tensors(preds, target, num_classes, multidim_average, ignore_index)
    if num_classes is None:
        raise ValueError(
            f"Argument `num_classes` must be an integer >= 2 for this statistic ({kind}): "
            "its true negatives depend on the class count. Received: num_classes=None"
        )
    confmat, invalid = multiclass_confmat_update(
        preds, target, num_classes, top_k, ignore_index, samplewise=multidim_average == "samplewise"
    )
    if validate_args:
        raise_invalid_values(invalid, num_classes, ignore_index)
    return confmat


def _micro_counts(
    preds: Tensor,
    target: Tensor,
    average: str | None,
    top_k: int,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """`num_classes=None` (micro averages of the statistics that do not depend on the class
    count): the micro counts, correct and wrong positions, as the classes keep them."""
    if validate_args:
        check_multiclass_args(None, top_k, average, multidim_average, ignore_index, zero_division)
        check_multiclass_tensors(preds, target, None, multidim_average, ignore_index)
    rows, invalid = micro_stat_rows(
        preds, target, ignore_index, samplewise=multidim_average == "samplewise"
    )
    if validate_args and int(invalid) > 0:
        allowed = "non-negative class indices" + (
            "" if ignore_index is None else f" or ignore_index={ignore_index}"
        )
        raise RuntimeError(
            f"Arguments `preds` and `target` must hold {allowed}. Received {int(invalid)} "
            "value(s) outside that range."
        )
    return stat_counts(rows, "multiclass")


def _multilabel_confmat(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float,
    average: str | None,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
) -> Tensor:
    if validate_args:
        check_multilabel_args(
            num_labels, threshold, average, multidim_average, ignore_index, zero_division
        )
        check_multilabel_tensors(preds, target, num_labels, multidim_average, ignore_index)
    confmat, _ = multilabel_confmat_update(
        preds,
        target,
        num_labels,
        threshold,
        ignore_index,
        samplewise=multidim_average == "samplewise",
    )
    return confmat


def _check_beta(beta: float) -> None:
    if not (isinstance(beta, (int, float)) and not isinstance(beta, bool) and beta > 0):
        raise ValueError(f"Expected argument `beta` to be a float larger than 0, but got {beta}.")


# ------------------------------------------------------------------ the stat-score family


def _binary(
    kind: str,
    preds: Tensor,
    target: Tensor,
    threshold: float,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
    beta: float = 1.0,
) -> Tensor:
    confmat = _binary_confmat(
        preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division
    )
    return reduce_stat_scores(
        kind, confmat, "binary", None, beta=beta, zero_division=float(zero_division)
    )


def _multiclass(
    kind: str,
    preds: Tensor,
    target: Tensor,
    num_classes: int | None,
    average: str | None,
    top_k: int,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
    beta: float = 1.0,
) -> Tensor:
    if num_classes is None and kind in CLASS_COUNT_FREE:
        counts = _micro_counts(
            preds,
            target,
            average,
            top_k,
            multidim_average,
            ignore_index,
            validate_args,
            zero_division,
        )
        return reduce_stat_counts(
            kind, counts, "multiclass", average, beta=beta, zero_division=float(zero_division)
        )
    confmat = _multiclass_confmat(
        kind,
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )
    return reduce_stat_scores(
        kind,
        confmat,
        "multiclass",
        average,
        top_k=top_k,
        beta=beta,
        zero_division=float(zero_division),
    )


def _multilabel(
    kind: str,
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float,
    average: str | None,
    multidim_average: str,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
    beta: float = 1.0,
) -> Tensor:
    confmat = _multilabel_confmat(
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )
    return reduce_stat_scores(
        kind, confmat, "multilabel", average, beta=beta, zero_division=float(zero_division)
    )


def binary_stat_scores(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`[tp, fp, tn, fn, support]` of a binary task: `(5,)`, or `(N, 5)` samplewise.

    Example:
        >>> import torch
        >>> binary_stat_scores(torch.tensor([0, 0, 1, 1, 0, 1]), torch.tensor([0, 1, 0, 1, 0, 1]))
        tensor([2, 1, 2, 1, 3])
    """
    confmat = _binary_confmat(
        preds, target, threshold, multidim_average, ignore_index, validate_args
    )
    return stat_scores_table(confmat, "binary", None)


def multiclass_stat_scores(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`[tp, fp, tn, fn, support]` per class (`average=None`) or averaged over classes."""
    confmat = _multiclass_confmat(
        "stat_scores",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
    )
    return stat_scores_table(confmat, "multiclass", average)


def multilabel_stat_scores(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`[tp, fp, tn, fn, support]` per label (`average=None`) or averaged over labels."""
    confmat = _multilabel_confmat(
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args
    )
    # TorchMetrics weighs each sample's labels by their support over the whole batch here
    # (per sample for multiclass); its tests' reference does the same.
    batch_weights = multidim_average == "samplewise"
    return stat_scores_table(confmat, "multilabel", average, batch_weights=batch_weights)


def binary_accuracy(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Accuracy of a binary task.

    Example:
        >>> import torch
        >>> binary_accuracy(torch.tensor([0.11, 0.22, 0.84, 0.73, 0.33, 0.92]),
        ...                 torch.tensor([0, 1, 0, 1, 0, 1]))
        tensor(0.6667)
    """
    return _binary(
        "accuracy", preds, target, threshold, multidim_average, ignore_index, validate_args
    )


def multiclass_accuracy(
    preds: Tensor,
    target: Tensor,
    num_classes: int | None = None,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Accuracy of a multiclass task (macro: recall per class over the classes present)."""
    return _multiclass(
        "accuracy",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
    )


def multilabel_accuracy(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Accuracy of a multilabel task."""
    return _multilabel(
        "accuracy",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
    )


def binary_precision(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Precision of a binary task."""
    return _binary(
        "precision",
        preds,
        target,
        threshold,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multiclass_precision(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Precision of a multiclass task."""
    return _multiclass(
        "precision",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multilabel_precision(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Precision of a multilabel task."""
    return _multilabel(
        "precision",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def binary_recall(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Recall of a binary task."""
    return _binary(
        "recall",
        preds,
        target,
        threshold,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multiclass_recall(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Recall of a multiclass task."""
    return _multiclass(
        "recall",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multilabel_recall(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Recall of a multilabel task."""
    return _multilabel(
        "recall",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def binary_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F-beta score of a binary task."""
    if validate_args:
        _check_beta(beta)
    return _binary(
        "fbeta",
        preds,
        target,
        threshold,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
        beta,
    )


def multiclass_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F-beta score of a multiclass task."""
    if validate_args:
        _check_beta(beta)
    return _multiclass(
        "fbeta",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
        beta,
    )


def multilabel_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F-beta score of a multilabel task."""
    if validate_args:
        _check_beta(beta)
    return _multilabel(
        "fbeta",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
        beta,
    )


def binary_f1_score(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F1 score of a binary task."""
    return binary_fbeta_score(
        preds,
        target,
        1.0,
        threshold,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multiclass_f1_score(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F1 score of a multiclass task."""
    return multiclass_fbeta_score(
        preds,
        target,
        1.0,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multilabel_f1_score(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """F1 score of a multilabel task."""
    return multilabel_fbeta_score(
        preds,
        target,
        1.0,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def binary_specificity(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Specificity (true negative rate) of a binary task."""
    return _binary(
        "specificity", preds, target, threshold, multidim_average, ignore_index, validate_args
    )


def multiclass_specificity(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Specificity of a multiclass task (one-vs-rest per class)."""
    return _multiclass(
        "specificity",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
    )


def multilabel_specificity(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Specificity of a multilabel task."""
    return _multilabel(
        "specificity",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
    )


def binary_negative_predictive_value(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Negative predictive value of a binary task."""
    return _binary(
        "npv",
        preds,
        target,
        threshold,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multiclass_negative_predictive_value(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Negative predictive value of a multiclass task."""
    return _multiclass(
        "npv",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def multilabel_negative_predictive_value(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Negative predictive value of a multilabel task."""
    return _multilabel(
        "npv",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def binary_hamming_distance(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Hamming distance (1 - accuracy) of a binary task."""
    return _binary(
        "hamming", preds, target, threshold, multidim_average, ignore_index, validate_args
    )


def multiclass_hamming_distance(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Hamming distance of a multiclass task."""
    return _multiclass(
        "hamming",
        preds,
        target,
        num_classes,
        average,
        top_k,
        multidim_average,
        ignore_index,
        validate_args,
    )


def multilabel_hamming_distance(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Hamming distance of a multilabel task."""
    return _multilabel(
        "hamming",
        preds,
        target,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
    )


# ------------------------------------------------------ confusion matrix and its reductions


def _normalized(confmat: Tensor, normalize: str | None) -> Tensor:
    """The class's normalization, with TorchMetrics' warning when a 0/0 cell was set to 0."""
    if normalize is not None and normalize != "none":
        dims = {"true": (-1,), "pred": (-2,), "all": (-2, -1)}[normalize]
        empty = (confmat.sum(dim=dims, keepdim=True) == 0).expand_as(confmat)
        count = int(empty.sum())
        if count:
            warnings.warn(
                f"{count} NaN values found in confusion matrix have been replaced with zeros.",
                UserWarning,
                stacklevel=3,
            )
    return confmat_normalize(confmat, normalize)


def binary_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    normalize: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `(2, 2)` confusion matrix (rows: target, columns: prediction).

    Example:
        >>> import torch
        >>> binary_confusion_matrix(torch.tensor([0, 1, 0, 0]), torch.tensor([1, 1, 0, 0]))
        tensor([[2, 0],
                [1, 1]])
    """
    if validate_args:
        check_choice("normalize", normalize, _NORMALIZE)
    confmat = _binary_confmat(preds, target, threshold, "global", ignore_index, validate_args)
    return _normalized(confmat, normalize)


def multiclass_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    normalize: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `(C, C)` confusion matrix (rows: target, columns: prediction)."""
    if validate_args:
        check_choice("normalize", normalize, _NORMALIZE)
    confmat = _multiclass_confmat(
        "confusion_matrix",
        preds,
        target,
        num_classes,
        "macro",
        1,
        "global",
        ignore_index,
        validate_args,
    )
    return _normalized(confmat, normalize)


def multilabel_confusion_matrix(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    normalize: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `(L, 2, 2)` confusion matrices, one per label."""
    if validate_args:
        check_choice("normalize", normalize, _NORMALIZE)
    confmat = _multilabel_confmat(
        preds, target, num_labels, threshold, "macro", "global", ignore_index, validate_args
    )
    return _normalized(confmat, normalize)


def binary_jaccard_index(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    """Jaccard index (intersection over union) of a binary task."""
    confmat = _binary_confmat(preds, target, threshold, "global", ignore_index, validate_args)
    return jaccard_from_confmat(confmat, "binary", None, ignore_index, zero_division)


def multiclass_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: str | None = "macro",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    """Jaccard index of a multiclass task, per class or averaged."""
    if validate_args:
        check_choice("average", average, ("micro", "macro", "weighted", "none", None))
    confmat = _multiclass_confmat(
        "jaccard",
        preds,
        target,
        num_classes,
        "macro",
        1,
        "global",
        ignore_index,
        validate_args,
    )
    return jaccard_from_confmat(confmat, "multiclass", average, ignore_index, zero_division)


def multilabel_jaccard_index(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: str | None = "macro",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    """Jaccard index of a multilabel task, per label or averaged."""
    confmat = _multilabel_confmat(
        preds, target, num_labels, threshold, average, "global", ignore_index, validate_args
    )
    return jaccard_from_confmat(confmat, "multilabel", average, ignore_index, zero_division)


def binary_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Matthews correlation coefficient of a binary task."""
    confmat = _binary_confmat(preds, target, threshold, "global", ignore_index, validate_args)
    return matthews_from_confmat(confmat)


def multiclass_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Matthews correlation coefficient of a multiclass task."""
    confmat = _multiclass_confmat(
        "matthews",
        preds,
        target,
        num_classes,
        "macro",
        1,
        "global",
        ignore_index,
        validate_args,
    )
    return matthews_from_confmat(confmat)


def multilabel_matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Matthews correlation coefficient of a multilabel task (the labels' matrices summed)."""
    confmat = _multilabel_confmat(
        preds, target, num_labels, threshold, "macro", "global", ignore_index, validate_args
    )
    return matthews_from_confmat(confmat)


def binary_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    weights: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Cohen's kappa of a binary task."""
    if validate_args:
        check_choice("weight", weights, _WEIGHTS)
    confmat = _binary_confmat(preds, target, threshold, "global", ignore_index, validate_args)
    return cohen_kappa_from_confmat(confmat, weights)


def multiclass_cohen_kappa(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    weights: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Cohen's kappa of a multiclass task."""
    if validate_args:
        check_choice("weight", weights, _WEIGHTS)
    confmat = _multiclass_confmat(
        "cohen_kappa",
        preds,
        target,
        num_classes,
        "macro",
        1,
        "global",
        ignore_index,
        validate_args,
    )
    return cohen_kappa_from_confmat(confmat, weights)


# ------------------------------------------------------------------------------ exact match


def multiclass_exact_match(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Fraction of samples whose every position is right (`(N,)` 0/1 samplewise)."""
    if validate_args:
        check_multiclass_args(num_classes, 1, None, multidim_average, ignore_index)
        check_multiclass_tensors(preds, target, num_classes, multidim_average, ignore_index)
    correct, total, invalid = exact_match_update(
        preds,
        target,
        num_classes,
        multilabel=False,
        ignore_index=ignore_index,
        samplewise=multidim_average == "samplewise",
    )
    if validate_args:
        raise_invalid_values(invalid, num_classes, ignore_index)
    return safe_divide(correct, total)


def multilabel_exact_match(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """Fraction of samples (rows of labels) whose every label is right."""
    if validate_args:
        check_multilabel_args(num_labels, threshold, None, multidim_average, ignore_index)
        check_multilabel_tensors(preds, target, num_labels, multidim_average, ignore_index)
    correct, total, _ = exact_match_update(
        preds,
        target,
        num_labels,
        multilabel=True,
        threshold=threshold,
        ignore_index=ignore_index,
        samplewise=multidim_average == "samplewise",
    )
    return safe_divide(correct, total)


# ------------------------------------------------------------------------- task wrappers


def _classes_for(task: str, num_classes: int | None, top_k: int | None = 1) -> int:
    check_int_arg("num_classes", num_classes, task)
    if top_k is not None:
        check_int_arg("top_k", top_k, task)
    assert isinstance(num_classes, int)
    return num_classes


def _labels_for(task: str, num_labels: int | None) -> int:
    check_int_arg("num_labels", num_labels, task)
    assert isinstance(num_labels, int)
    return num_labels


def stat_scores(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_stat_scores`, `multiclass_stat_scores` or `multilabel_stat_scores` by `task`."""
    task = check_task(task, _TASKS)
    multidim = str(multidim_average)
    if task == "binary":
        return binary_stat_scores(preds, target, threshold, multidim, ignore_index, validate_args)
    if task == "multiclass":
        classes = _classes_for(task, num_classes, top_k)
        return multiclass_stat_scores(
            preds, target, classes, average, int(top_k or 1), multidim, ignore_index, validate_args
        )
    labels = _labels_for(task, num_labels)
    return multilabel_stat_scores(
        preds, target, labels, threshold, average, multidim, ignore_index, validate_args
    )


def accuracy(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_accuracy`, `multiclass_accuracy` or `multilabel_accuracy` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_accuracy(
            preds, target, threshold, multidim_average, ignore_index, validate_args
        )
    if task == "multiclass":
        classes = _classes_for(task, num_classes, top_k)
        return multiclass_accuracy(
            preds,
            target,
            classes,
            average,
            int(top_k or 1),
            multidim_average,
            ignore_index,
            validate_args,
        )
    labels = _labels_for(task, num_labels)
    return multilabel_accuracy(
        preds, target, labels, threshold, average, multidim_average, ignore_index, validate_args
    )


def _by_task(
    kind: str,
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float,
    num_classes: int | None,
    num_labels: int | None,
    average: str | None,
    multidim_average: str | None,
    top_k: int | None,
    ignore_index: int | None,
    validate_args: bool,
    zero_division: float = 0,
    beta: float = 1.0,
) -> Tensor:
    task = check_task(task, _TASKS)
    multidim = str(multidim_average)
    if task == "binary":
        return _binary(
            kind,
            preds,
            target,
            threshold,
            multidim,
            ignore_index,
            validate_args,
            zero_division,
            beta,
        )
    if task == "multiclass":
        classes = _classes_for(task, num_classes, top_k)
        return _multiclass(
            kind,
            preds,
            target,
            classes,
            average,
            int(top_k or 1),
            multidim,
            ignore_index,
            validate_args,
            zero_division,
            beta,
        )
    labels = _labels_for(task, num_labels)
    return _multilabel(
        kind,
        preds,
        target,
        labels,
        threshold,
        average,
        multidim,
        ignore_index,
        validate_args,
        zero_division,
        beta,
    )


def precision(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """`binary_precision`, `multiclass_precision` or `multilabel_precision` by `task`."""
    return _by_task(
        "precision",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
    )


def recall(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """`binary_recall`, `multiclass_recall` or `multilabel_recall` by `task`."""
    return _by_task(
        "recall",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
    )


def fbeta_score(
    preds: Tensor,
    target: Tensor,
    task: str,
    beta: float = 1.0,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """`binary_fbeta_score`, `multiclass_fbeta_score` or `multilabel_fbeta_score` by `task`."""
    if validate_args:
        _check_beta(beta)
    return _by_task(
        "fbeta",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
        beta,
    )


def f1_score(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """`binary_f1_score`, `multiclass_f1_score` or `multilabel_f1_score` by `task`."""
    return _by_task(
        "fbeta",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
    )


def specificity(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_specificity`, `multiclass_specificity` or `multilabel_specificity` by `task`."""
    return _by_task(
        "specificity",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def negative_predictive_value(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """The `binary_`, `multiclass_` or `multilabel_negative_predictive_value` by `task`."""
    return _by_task(
        "npv",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
    )


def hamming_distance(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "micro",
    multidim_average: str | None = "global",
    top_k: int | None = 1,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `binary_`, `multiclass_` or `multilabel_hamming_distance` by `task`."""
    return _by_task(
        "hamming",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def confusion_matrix(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    normalize: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `binary_`, `multiclass_` or `multilabel_confusion_matrix` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_confusion_matrix(
            preds, target, threshold, normalize, ignore_index, validate_args
        )
    if task == "multiclass":
        classes = _classes_for(task, num_classes, None)
        return multiclass_confusion_matrix(
            preds, target, classes, normalize, ignore_index, validate_args
        )
    labels = _labels_for(task, num_labels)
    return multilabel_confusion_matrix(
        preds, target, labels, threshold, normalize, ignore_index, validate_args
    )


def jaccard_index(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    average: str | None = "macro",
    ignore_index: int | None = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    """The `binary_`, `multiclass_` or `multilabel_jaccard_index` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_jaccard_index(
            preds, target, threshold, ignore_index, validate_args, zero_division
        )
    if task == "multiclass":
        classes = _classes_for(task, num_classes, None)
        return multiclass_jaccard_index(
            preds, target, classes, average, ignore_index, validate_args, zero_division
        )
    labels = _labels_for(task, num_labels)
    return multilabel_jaccard_index(
        preds, target, labels, threshold, average, ignore_index, validate_args, zero_division
    )


def matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    num_labels: int | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """The `binary_`, `multiclass_` or `multilabel_matthews_corrcoef` by `task`."""
    task = check_task(task, _TASKS)
    if task == "binary":
        return binary_matthews_corrcoef(preds, target, threshold, ignore_index, validate_args)
    if task == "multiclass":
        classes = _classes_for(task, num_classes, None)
        return multiclass_matthews_corrcoef(preds, target, classes, ignore_index, validate_args)
    labels = _labels_for(task, num_labels)
    return multilabel_matthews_corrcoef(
        preds, target, labels, threshold, ignore_index, validate_args
    )


def cohen_kappa(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: int | None = None,
    weights: str | None = None,
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`binary_cohen_kappa` or `multiclass_cohen_kappa` by `task`."""
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return binary_cohen_kappa(preds, target, threshold, weights, ignore_index, validate_args)
    classes = _classes_for(task, num_classes, None)
    return multiclass_cohen_kappa(preds, target, classes, weights, ignore_index, validate_args)


def exact_match(
    preds: Tensor,
    target: Tensor,
    task: str,
    num_classes: int | None = None,
    num_labels: int | None = None,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: int | None = None,
    validate_args: bool = True,
) -> Tensor:
    """`multiclass_exact_match` or `multilabel_exact_match` by `task`."""
    task = check_task(task, ("multilabel", "multiclass"))
    if task == "multiclass":
        classes = _classes_for(task, num_classes, None)
        return multiclass_exact_match(
            preds, target, classes, multidim_average, ignore_index, validate_args
        )
    labels = _labels_for(task, num_labels)
    return multilabel_exact_match(
        preds, target, labels, threshold, multidim_average, ignore_index, validate_args
    )


# ------------------------------------------- TorchMetrics' private helpers its tests import


def _refine_preds_oh(preds: Tensor, preds_oh: Tensor, target: Tensor, top_k: int) -> Tensor:
    """TorchMetrics' top-k refinement as a one-hot `(N, ..., C)` int32 tensor: the class each
    position counts as predicting (the target when it is among the `top_k` scores, else the
    top-1 class): the confusion-matrix update's own choice (`_multiclass_predictions`)."""
    if preds.dim() == 1:
        preds = preds.unsqueeze(0)
        target = target.unsqueeze(0) if target.dim() == 0 else target
    classes = preds.shape[1]
    predicted, _ = _multiclass_predictions(preds, target, classes, top_k)
    one_hot = torch.nn.functional.one_hot(predicted, classes).to(torch.int32)
    return one_hot.reshape(*preds_oh.shape[:-1], classes)


def _jaccard_index_reduce(
    confmat: Tensor,
    average: str | None,
    ignore_index: int | None = None,
    zero_division: float = 0.0,
) -> Tensor:
    """TorchMetrics' private Jaccard reduction of a confusion matrix (`average="binary"` for a
    `(2, 2)` one), over the classes' reduction."""
    allowed = ["binary", "micro", "macro", "weighted", "none", None]
    if average not in allowed:
        raise ValueError(f"The `average` has to be one of {allowed}, got {average}.")
    if average == "binary":
        return jaccard_from_confmat(confmat, "binary", None, None, zero_division)
    task = "multilabel" if confmat.ndim == 3 else "multiclass"
    return jaccard_from_confmat(confmat, task, average, ignore_index, zero_division)


def _matthews_corrcoef_reduce(confmat: Tensor) -> Tensor:
    """TorchMetrics' private Matthews reduction of a confusion matrix."""
    return matthews_from_confmat(confmat)
