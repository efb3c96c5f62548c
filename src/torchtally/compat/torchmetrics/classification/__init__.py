"""`torchmetrics.classification` on torchtally (see `_classes` for the list)."""

from torchtally.compat.torchmetrics.classification._calibration import (
    BinaryCalibrationError,
    MulticlassCalibrationError,
)
from torchtally.compat.torchmetrics.classification._classes import *  # noqa: F403
from torchtally.compat.torchmetrics.classification._classes import __all__ as _classes_all
from torchtally.compat.torchmetrics.classification._curves import (
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
from torchtally.compat.torchmetrics.classification._fixed import (
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
from torchtally.compat.torchmetrics.classification._hinge import (
    BinaryHingeLoss,
    MulticlassHingeLoss,
)
from torchtally.compat.torchmetrics.classification._ranking import (
    MultilabelCoverageError,
    MultilabelRankingAveragePrecision,
    MultilabelRankingLoss,
)
from torchtally.compat.torchmetrics.classification.group_fairness import (
    BinaryFairness,
    BinaryGroupStatRates,
)

__all__ = [
    *_classes_all,
    "BinaryFairness",
    "BinaryGroupStatRates",
    "BinaryAUROC",
    "BinaryAveragePrecision",
    "BinaryCalibrationError",
    "MulticlassCalibrationError",
    "BinaryPrecisionRecallCurve",
    "BinaryROC",
    "MulticlassAUROC",
    "MulticlassAveragePrecision",
    "MultilabelAUROC",
    "MultilabelAveragePrecision",
    "MultilabelPrecisionRecallCurve",
    "MultilabelROC",
    "MulticlassPrecisionRecallCurve",
    "MulticlassROC",
    "MultilabelCoverageError",
    "MultilabelRankingAveragePrecision",
    "MultilabelRankingLoss",
    "BinaryHingeLoss",
    "MulticlassHingeLoss",
    "BinaryEER",
    "MulticlassEER",
    "MultilabelEER",
    "BinaryLogAUC",
    "MulticlassLogAUC",
    "MultilabelLogAUC",
    "BinaryPrecisionAtFixedRecall",
    "BinaryRecallAtFixedPrecision",
    "BinarySensitivityAtSpecificity",
    "BinarySpecificityAtSensitivity",
    "MulticlassPrecisionAtFixedRecall",
    "MulticlassRecallAtFixedPrecision",
    "MulticlassSensitivityAtSpecificity",
    "MulticlassSpecificityAtSensitivity",
    "MultilabelPrecisionAtFixedRecall",
    "MultilabelRecallAtFixedPrecision",
    "MultilabelSensitivityAtSpecificity",
    "MultilabelSpecificityAtSensitivity",
]
