"""Pure functions behind every metric: `*_update` gives a batch's statistics, `*_compute` the
value from accumulated statistics, and the plain name the value for one batch of data. Metric
classes delegate here, so the maths exists once."""

from torchtally.functional.aggregation import mean, perplexity
from torchtally.functional.calibration import calibration_error, reliability_diagram
from torchtally.functional.classification import (
    accuracy,
    as_class_indices,
    class_counts,
    confusion_matrix,
    dice_coefficient,
    f1_score,
    fbeta_score,
    mean_iou,
    mean_per_class_accuracy,
    precision,
    recall,
    top_k_accuracy,
)
from torchtally.functional.curves import average_precision, precision_recall_curve, roc_curve
from torchtally.functional.image import psnr, ssim
from torchtally.functional.multilabel import hamming_score
from torchtally.functional.ranking import auc, auroc, binned_auroc, precision_at_k, recall_at_k
from torchtally.functional.regression import (
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    smape,
)
from torchtally.functional.retrieval import (
    retrieval_hit_rate,
    retrieval_map,
    retrieval_mrr,
    retrieval_ndcg,
    retrieval_precision,
    retrieval_r_precision,
    retrieval_recall,
)
from torchtally.functional.text import char_error_rate, word_error_rate

__all__ = [
    "accuracy",
    "as_class_indices",
    "auc",
    "auroc",
    "average_precision",
    "binned_auroc",
    "calibration_error",
    "char_error_rate",
    "class_counts",
    "confusion_matrix",
    "dice_coefficient",
    "f1_score",
    "fbeta_score",
    "hamming_score",
    "mean",
    "mean_absolute_error",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_squared_error",
    "perplexity",
    "precision",
    "precision_at_k",
    "precision_recall_curve",
    "psnr",
    "r2_score",
    "recall",
    "recall_at_k",
    "reliability_diagram",
    "retrieval_hit_rate",
    "retrieval_map",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_r_precision",
    "retrieval_recall",
    "roc_curve",
    "smape",
    "ssim",
    "top_k_accuracy",
    "word_error_rate",
]
