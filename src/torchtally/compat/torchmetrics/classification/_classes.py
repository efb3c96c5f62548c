"""TorchMetrics 1.9's classification classes (binary, multiclass, multilabel) on torchtally.

Same names, constructor arguments and defaults as `torchmetrics.classification`; each class is a
thin adapter over `ClassificationMetric` (one preallocated confusion matrix) or `ExactMatchBase`.
Generated from TorchMetrics' signatures; the maths lives in `functional/_stat_scores.py`.
"""

from __future__ import annotations

import inspect
from typing import Any

from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.classification._calibration import (  # noqa: F401  (_build)
    BinaryCalibrationError,
    MulticlassCalibrationError,
)
from torchtally.compat.torchmetrics.classification._curves import (  # noqa: F401  (for _build)
    BinaryAUROC,
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassAUROC,
    MulticlassAveragePrecision,
    MulticlassPrecisionRecallCurve,
    MulticlassROC,
    MultilabelAUROC,
    MultilabelAveragePrecision,
    MultilabelPrecisionRecallCurve,
    MultilabelROC,
)
from torchtally.compat.torchmetrics.classification._fixed import (  # noqa: F401  (for _build)
    BinaryEER,
    BinaryLogAUC,
    BinaryPrecisionAtFixedRecall,
    BinaryRecallAtFixedPrecision,
    BinarySensitivityAtSpecificity,
    BinarySpecificityAtSensitivity,
    MulticlassEER,
    MulticlassLogAUC,
    MulticlassPrecisionAtFixedRecall,
    MulticlassRecallAtFixedPrecision,
    MulticlassSensitivityAtSpecificity,
    MulticlassSpecificityAtSensitivity,
    MultilabelEER,
    MultilabelLogAUC,
    MultilabelPrecisionAtFixedRecall,
    MultilabelRecallAtFixedPrecision,
    MultilabelSensitivityAtSpecificity,
    MultilabelSpecificityAtSensitivity,
)
from torchtally.compat.torchmetrics.classification._hinge import (  # noqa: F401  (for _build)
    BinaryHingeLoss,
    MulticlassHingeLoss,
)
from torchtally.compat.torchmetrics.classification._stat_family import (
    CohenKappaBase,
    ConfusionMatrixBase,
    ExactMatchBase,
    JaccardBase,
    MatthewsBase,
    StatReduction,
    StatScoresBase,
)

__all__ = [
    "AUROC",
    "EER",
    "ROC",
    "Accuracy",
    "AveragePrecision",
    "BinaryAccuracy",
    "BinaryCohenKappa",
    "BinaryConfusionMatrix",
    "BinaryF1Score",
    "BinaryFBetaScore",
    "BinaryHammingDistance",
    "BinaryJaccardIndex",
    "BinaryMatthewsCorrCoef",
    "BinaryNegativePredictiveValue",
    "BinaryPrecision",
    "BinaryRecall",
    "BinarySpecificity",
    "BinaryStatScores",
    "CalibrationError",
    "CohenKappa",
    "ConfusionMatrix",
    "ExactMatch",
    "F1Score",
    "FBetaScore",
    "HammingDistance",
    "HingeLoss",
    "JaccardIndex",
    "LogAUC",
    "MatthewsCorrCoef",
    "MulticlassAccuracy",
    "MulticlassCohenKappa",
    "MulticlassConfusionMatrix",
    "MulticlassExactMatch",
    "MulticlassF1Score",
    "MulticlassFBetaScore",
    "MulticlassHammingDistance",
    "MulticlassJaccardIndex",
    "MulticlassMatthewsCorrCoef",
    "MulticlassNegativePredictiveValue",
    "MulticlassPrecision",
    "MulticlassRecall",
    "MulticlassSpecificity",
    "MulticlassStatScores",
    "MultilabelAccuracy",
    "MultilabelConfusionMatrix",
    "MultilabelExactMatch",
    "MultilabelF1Score",
    "MultilabelFBetaScore",
    "MultilabelHammingDistance",
    "MultilabelJaccardIndex",
    "MultilabelMatthewsCorrCoef",
    "MultilabelNegativePredictiveValue",
    "MultilabelPrecision",
    "MultilabelRecall",
    "MultilabelSpecificity",
    "MultilabelStatScores",
    "NegativePredictiveValue",
    "Precision",
    "PrecisionAtFixedRecall",
    "PrecisionRecallCurve",
    "Recall",
    "RecallAtFixedPrecision",
    "SensitivityAtSpecificity",
    "Specificity",
    "SpecificityAtSensitivity",
    "StatScores",
]

_NORMALIZE = ("true", "pred", "all", "none", None)
_WEIGHTS = ("linear", "quadratic", "none", None)


def _check_beta(beta: float) -> float:
    if not isinstance(beta, float) or not beta > 0:
        raise ValueError(f"Argument `beta` must be a float > 0. Received: beta={beta!r}")
    return beta


def _check_choice(argument: str, value: Any, choices: tuple[Any, ...]) -> Any:
    if value not in choices:
        raise ValueError(
            f"Argument `{argument}` must be one of {choices}. Received: {argument}={value!r}"
        )
    return value


class BinaryAccuracy(StatReduction):
    """TorchMetrics' `BinaryAccuracy` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "accuracy"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassAccuracy(StatReduction):
    """TorchMetrics' `MulticlassAccuracy` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "accuracy"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelAccuracy(StatReduction):
    """TorchMetrics' `MultilabelAccuracy` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "accuracy"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryPrecision(StatReduction):
    """TorchMetrics' `BinaryPrecision` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "precision"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassPrecision(StatReduction):
    """TorchMetrics' `MulticlassPrecision` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "precision"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelPrecision(StatReduction):
    """TorchMetrics' `MultilabelPrecision` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "precision"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryRecall(StatReduction):
    """TorchMetrics' `BinaryRecall` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "recall"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassRecall(StatReduction):
    """TorchMetrics' `MulticlassRecall` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "recall"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelRecall(StatReduction):
    """TorchMetrics' `MultilabelRecall` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "recall"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryF1Score(StatReduction):
    """TorchMetrics' `BinaryF1Score` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "fbeta"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class MulticlassF1Score(StatReduction):
    """TorchMetrics' `MulticlassF1Score` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "fbeta"

    def __init__(
        self,
        num_classes: int | None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class MultilabelF1Score(StatReduction):
    """TorchMetrics' `MultilabelF1Score` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "fbeta"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class BinaryFBetaScore(StatReduction):
    """TorchMetrics' `BinaryFBetaScore` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "fbeta"

    def __init__(
        self,
        beta: float,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )
        self.beta = _check_beta(beta)


class MulticlassFBetaScore(StatReduction):
    """TorchMetrics' `MulticlassFBetaScore` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "fbeta"

    def __init__(
        self,
        beta: float,
        num_classes: int | None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )
        self.beta = _check_beta(beta)


class MultilabelFBetaScore(StatReduction):
    """TorchMetrics' `MultilabelFBetaScore` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "fbeta"

    def __init__(
        self,
        beta: float,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )
        self.beta = _check_beta(beta)


class BinarySpecificity(StatReduction):
    """TorchMetrics' `BinarySpecificity` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "specificity"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassSpecificity(StatReduction):
    """TorchMetrics' `MulticlassSpecificity` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "specificity"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelSpecificity(StatReduction):
    """TorchMetrics' `MultilabelSpecificity` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "specificity"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryNegativePredictiveValue(StatReduction):
    """TorchMetrics' `BinaryNegativePredictiveValue` (tn / (tn + fn)) over one preallocated
    confusion-matrix state."""

    task = "binary"
    kind = "npv"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassNegativePredictiveValue(StatReduction):
    """TorchMetrics' `MulticlassNegativePredictiveValue` (tn / (tn + fn)) over one preallocated
    confusion-matrix state."""

    task = "multiclass"
    kind = "npv"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelNegativePredictiveValue(StatReduction):
    """TorchMetrics' `MultilabelNegativePredictiveValue` (tn / (tn + fn)) over one preallocated
    confusion-matrix state."""

    task = "multilabel"
    kind = "npv"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryHammingDistance(StatReduction):
    """TorchMetrics' `BinaryHammingDistance` over one preallocated confusion-matrix state."""

    task = "binary"
    kind = "hamming"
    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassHammingDistance(StatReduction):
    """TorchMetrics' `MulticlassHammingDistance` over one preallocated confusion-matrix state."""

    task = "multiclass"
    kind = "hamming"
    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelHammingDistance(StatReduction):
    """TorchMetrics' `MultilabelHammingDistance` over one preallocated confusion-matrix state."""

    task = "multilabel"
    kind = "hamming"
    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryStatScores(StatScoresBase):
    """TorchMetrics' `BinaryStatScores` over one preallocated confusion-matrix state."""

    task = "binary"

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MulticlassStatScores(StatScoresBase):
    """TorchMetrics' `MulticlassStatScores` over one preallocated confusion-matrix state."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int | None = None,
        top_k: int = 1,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            top_k=top_k,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelStatScores(StatScoresBase):
    """TorchMetrics' `MultilabelStatScores` over one preallocated confusion-matrix state."""

    task = "multilabel"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryConfusionMatrix(ConfusionMatrixBase):
    """TorchMetrics' `BinaryConfusionMatrix` over one preallocated confusion-matrix state."""

    task = "binary"

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        normalize: str | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold, ignore_index=ignore_index, validate_args=validate_args, **kwargs
        )
        self.normalize = _check_choice("normalize", normalize, _NORMALIZE)


class MulticlassConfusionMatrix(ConfusionMatrixBase):
    """TorchMetrics' `MulticlassConfusionMatrix` over one preallocated confusion-matrix state."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int,
        ignore_index: int | None = None,
        normalize: str | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )
        self.normalize = _check_choice("normalize", normalize, _NORMALIZE)


class MultilabelConfusionMatrix(ConfusionMatrixBase):
    """TorchMetrics' `MultilabelConfusionMatrix` over one preallocated confusion-matrix state."""

    task = "multilabel"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        normalize: str | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )
        self.normalize = _check_choice("normalize", normalize, _NORMALIZE)


class BinaryJaccardIndex(JaccardBase):
    """TorchMetrics' `BinaryJaccardIndex` over one preallocated confusion-matrix state."""

    task = "binary"

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class MulticlassJaccardIndex(JaccardBase):
    """TorchMetrics' `MulticlassJaccardIndex` over one preallocated confusion-matrix state."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int,
        average: str | None = "macro",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            average=average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class MultilabelJaccardIndex(JaccardBase):
    """TorchMetrics' `MultilabelJaccardIndex` over one preallocated confusion-matrix state."""

    task = "multilabel"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: str | None = "macro",
        ignore_index: int | None = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            average=average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
            **kwargs,
        )


class BinaryMatthewsCorrCoef(MatthewsBase):
    """TorchMetrics' `BinaryMatthewsCorrCoef` over one preallocated confusion-matrix state."""

    task = "binary"

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold, ignore_index=ignore_index, validate_args=validate_args, **kwargs
        )


class MulticlassMatthewsCorrCoef(MatthewsBase):
    """TorchMetrics' `MulticlassMatthewsCorrCoef` over one preallocated confusion-matrix state."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelMatthewsCorrCoef(MatthewsBase):
    """TorchMetrics' `MultilabelMatthewsCorrCoef` over one preallocated confusion-matrix state."""

    task = "multilabel"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class BinaryCohenKappa(CohenKappaBase):
    """TorchMetrics' `BinaryCohenKappa` over one preallocated confusion-matrix state."""

    task = "binary"

    def __init__(
        self,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        weights: str | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            threshold=threshold, ignore_index=ignore_index, validate_args=validate_args, **kwargs
        )
        self.weights = _check_choice("weights", weights, _WEIGHTS)


class MulticlassCohenKappa(CohenKappaBase):
    """TorchMetrics' `MulticlassCohenKappa` over one preallocated confusion-matrix state."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int,
        ignore_index: int | None = None,
        weights: str | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )
        self.weights = _check_choice("weights", weights, _WEIGHTS)


class MulticlassExactMatch(ExactMatchBase):
    """TorchMetrics' `MulticlassExactMatch` over preallocated correct/total counts."""

    task = "multiclass"

    def __init__(
        self,
        num_classes: int,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_classes,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class MultilabelExactMatch(ExactMatchBase):
    """TorchMetrics' `MultilabelExactMatch` over preallocated correct/total counts."""

    task = "multilabel"

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_classes=num_labels,
            threshold=threshold,
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            **kwargs,
        )


class _TaskFacade(Metric):
    """Base of the `task=` wrappers: `__new__` returns an instance of the task's class (so
    the wrapper is a `Metric` subclass, as in TorchMetrics, but never instantiated itself)."""

    def _batch(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def _value(self, state: Any) -> Any:  # pragma: no cover
        raise NotImplementedError


def _build(metric: str, task: str, arguments: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    tasks = ("binary", "multiclass", "multilabel")
    if task not in tasks:
        raise ValueError(
            f"Invalid task: argument `task` must be one of {tasks}. Received: task={task!r}"
        )
    target = globals().get(task.capitalize() + metric)
    if target is None:
        raise ValueError(f"Invalid task: {metric} has no {task!r} variant. Received: task={task!r}")
    accepted = inspect.signature(target.__init__).parameters
    chosen = {}
    for name, value in arguments.items():
        key = "num_labels" if name == "num_labels" else name
        if key in accepted and not (name == "top_k" and value is None):
            chosen[key] = value
    if task == "multiclass" and arguments.get("num_classes") is None:
        raise ValueError(
            f"Argument `num_classes` must be an integer >= 2 for task='multiclass'. "
            f"Received: num_classes={arguments.get('num_classes')!r}"
        )
    if task == "multilabel" and arguments.get("num_labels") is None:
        raise ValueError(
            f"Argument `num_labels` must be an integer >= 1 for task='multilabel'. "
            f"Received: num_labels={arguments.get('num_labels')!r}"
        )
    return target(**chosen, **kwargs)


class Accuracy(_TaskFacade):
    """TorchMetrics' `Accuracy(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "Accuracy",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class Precision(_TaskFacade):
    """TorchMetrics' `Precision(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "Precision",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class Recall(_TaskFacade):
    """TorchMetrics' `Recall(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "Recall",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class F1Score(_TaskFacade):
    """TorchMetrics' `F1Score(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
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
        **kwargs: Any,
    ) -> Any:
        return _build(
            "F1Score",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
                zero_division=zero_division,
            ),
            kwargs,
        )


class FBetaScore(_TaskFacade):
    """TorchMetrics' `FBetaScore(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
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
        **kwargs: Any,
    ) -> Any:
        return _build(
            "FBetaScore",
            task,
            dict(
                beta=beta,
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
                zero_division=zero_division,
            ),
            kwargs,
        )


class Specificity(_TaskFacade):
    """TorchMetrics' `Specificity(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "Specificity",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class NegativePredictiveValue(_TaskFacade):
    """TorchMetrics' `NegativePredictiveValue(task=...)`: builds the Binary/Multiclass/Multilabel
    class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "NegativePredictiveValue",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class HammingDistance(_TaskFacade):
    """TorchMetrics' `HammingDistance(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "HammingDistance",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class StatScores(_TaskFacade):
    """TorchMetrics' `StatScores(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "micro",
        multidim_average: str | None = "global",
        top_k: int | None = 1,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "StatScores",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                multidim_average=multidim_average,
                top_k=top_k,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class ConfusionMatrix(_TaskFacade):
    """TorchMetrics' `ConfusionMatrix(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        normalize: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "ConfusionMatrix",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                normalize=normalize,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class JaccardIndex(_TaskFacade):
    """TorchMetrics' `JaccardIndex(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "macro",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "JaccardIndex",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class MatthewsCorrCoef(_TaskFacade):
    """TorchMetrics' `MatthewsCorrCoef(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "MatthewsCorrCoef",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class CohenKappa(_TaskFacade):
    """TorchMetrics' `CohenKappa(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        weights: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "CohenKappa",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                weights=weights,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class ExactMatch(_TaskFacade):
    """TorchMetrics' `ExactMatch(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: int | None = None,
        num_labels: int | None = None,
        multidim_average: str | None = "global",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "ExactMatch",
            task,
            dict(
                threshold=threshold,
                num_classes=num_classes,
                num_labels=num_labels,
                multidim_average=multidim_average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class AUROC(_TaskFacade):
    """TorchMetrics' `AUROC(task=...)`: exact (`thresholds=None`, preallocated `capacity`) or
    binned, see `BinaryAUROC`."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "macro",
        max_fpr: float | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "AUROC",
            task,
            dict(
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                max_fpr=max_fpr,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class AveragePrecision(_TaskFacade):
    """TorchMetrics' `AveragePrecision(task=...)`: exact (`thresholds=None`, preallocated
    `capacity`) or binned."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = "macro",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "AveragePrecision",
            task,
            dict(
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class ROC(_TaskFacade):
    """TorchMetrics' `ROC(task=...)`: exact (`thresholds=None`, preallocated `capacity`) or
    binned."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "ROC",
            task,
            dict(
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class PrecisionRecallCurve(_TaskFacade):
    """TorchMetrics' `PrecisionRecallCurve(task=...)`: exact (`thresholds=None`, preallocated
    `capacity`) or binned."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "PrecisionRecallCurve",
            task,
            dict(
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class CalibrationError(_TaskFacade):
    """TorchMetrics' `CalibrationError(task=...)` (binary or multiclass)."""

    def __new__(
        cls,
        task: str,
        n_bins: int = 15,
        norm: str = "l1",
        num_classes: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "CalibrationError",
            task,
            dict(
                n_bins=n_bins,
                norm=norm,
                num_classes=num_classes,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class HingeLoss(_TaskFacade):
    """TorchMetrics' `HingeLoss(task=...)` (binary or multiclass)."""

    def __new__(
        cls,
        task: str,
        num_classes: int | None = None,
        squared: bool = False,
        multiclass_mode: str | None = "crammer-singer",
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "HingeLoss",
            task,
            dict(
                num_classes=num_classes,
                squared=squared,
                multiclass_mode=multiclass_mode,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class RecallAtFixedPrecision(_TaskFacade):
    """TorchMetrics' `RecallAtFixedPrecision(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        min_precision: float,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "RecallAtFixedPrecision",
            task,
            dict(
                min_precision=min_precision,
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class PrecisionAtFixedRecall(_TaskFacade):
    """TorchMetrics' `PrecisionAtFixedRecall(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        min_recall: float,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "PrecisionAtFixedRecall",
            task,
            dict(
                min_recall=min_recall,
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class SensitivityAtSpecificity(_TaskFacade):
    """TorchMetrics' `SensitivityAtSpecificity(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        min_specificity: float,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "SensitivityAtSpecificity",
            task,
            dict(
                min_specificity=min_specificity,
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class SpecificityAtSensitivity(_TaskFacade):
    """TorchMetrics' `SpecificityAtSensitivity(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        min_sensitivity: float,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "SpecificityAtSensitivity",
            task,
            dict(
                min_sensitivity=min_sensitivity,
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class EER(_TaskFacade):
    """TorchMetrics' `EER(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        num_classes: int | None = None,
        num_labels: int | None = None,
        average: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "EER",
            task,
            dict(
                thresholds=thresholds,
                num_classes=num_classes,
                num_labels=num_labels,
                average=average,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )


class LogAUC(_TaskFacade):
    """TorchMetrics' `LogAUC(task=...)`: builds the Binary/Multiclass/Multilabel class."""

    def __new__(
        cls,
        task: str,
        thresholds: int | list[float] | Any | None = None,
        fpr_range: tuple[float, float] = (0.001, 0.1),
        num_classes: int | None = None,
        num_labels: int | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:
        return _build(
            "LogAUC",
            task,
            dict(
                thresholds=thresholds,
                fpr_range=fpr_range,
                num_classes=num_classes,
                num_labels=num_labels,
                ignore_index=ignore_index,
                validate_args=validate_args,
            ),
            kwargs,
        )
