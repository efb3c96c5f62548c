"""Classification functionals."""

from torchtally.functional.classification._accuracy import accuracy, accuracy_errors
from torchtally.functional.classification._averaging import (
    safe_divide,
    seen_classes,
    weighted_class_mean,
)
from torchtally.functional.classification._class_counts import (
    class_counts,
    class_counts_errors,
    class_counts_update,
)
from torchtally.functional.classification._confusion_matrix import (
    add_confusion,
    class_rows_of,
    confusion_matrix,
    confusion_matrix_compute,
    confusion_matrix_update,
)
from torchtally.functional.classification._dice import dice_coefficient, dice_coefficient_compute
from torchtally.functional.classification._inputs import (
    SCORE_KINDS,
    as_class_indices,
    positive_scores,
    score_probabilities,
)
from torchtally.functional.classification._mean_iou import mean_iou, mean_iou_compute
from torchtally.functional.classification._mean_per_class_accuracy import (
    mean_per_class_accuracy,
    mean_per_class_accuracy_compute,
)
from torchtally.functional.classification._precision_recall import (
    f1_score,
    fbeta_compute,
    fbeta_ratio,
    fbeta_score,
    precision,
    precision_compute,
    precision_ratio,
    recall,
    recall_compute,
    recall_ratio,
)
from torchtally.functional.classification._top_k_accuracy import (
    top_k_accuracy,
    top_k_accuracy_compute,
    top_k_accuracy_update,
)

__all__ = [
    "SCORE_KINDS",
    "accuracy",
    "accuracy_errors",
    "add_confusion",
    "as_class_indices",
    "class_counts",
    "class_counts_errors",
    "class_counts_update",
    "class_rows_of",
    "confusion_matrix",
    "confusion_matrix_compute",
    "confusion_matrix_update",
    "dice_coefficient",
    "dice_coefficient_compute",
    "f1_score",
    "fbeta_compute",
    "fbeta_ratio",
    "fbeta_score",
    "mean_iou",
    "mean_iou_compute",
    "mean_per_class_accuracy",
    "mean_per_class_accuracy_compute",
    "positive_scores",
    "precision",
    "precision_compute",
    "precision_ratio",
    "recall",
    "recall_compute",
    "recall_ratio",
    "safe_divide",
    "score_probabilities",
    "seen_classes",
    "top_k_accuracy",
    "top_k_accuracy_compute",
    "top_k_accuracy_update",
    "weighted_class_mean",
]
