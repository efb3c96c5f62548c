"""What a metric is lives on the metric: every exported metric declares `unit`,
`higher_is_better` and `input_kind` as class attributes (on itself or a base below `Metric`),
and the directions agree with TorchMetrics' own `higher_is_better` (the oracle) where it has
the same metric.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from test_registry_complete import _exported_metric_classes

from torchtally import metrics as tm
from torchtally.metrics import Metric
from torchtally.metrics._metadata import INPUT_KINDS

EXPORTED = _exported_metric_classes()
ATTRIBUTES = ("unit", "higher_is_better", "input_kind")


def _declared_by(cls: type[Metric], attribute: str) -> type | None:
    """The class below `Metric` in `cls`'s MRO that sets `attribute`, or None (base default)."""
    for klass in cls.__mro__:
        if klass is Metric:
            return None
        if attribute in klass.__dict__:
            return klass
    return None


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_every_exported_metric_declares_its_metadata(name: str) -> None:
    cls = EXPORTED[name]
    undeclared = [attr for attr in ATTRIBUTES if _declared_by(cls, attr) is None]
    assert undeclared == [], f"{name} leaves {undeclared} to Metric's defaults"
    assert isinstance(cls.unit, str)
    assert cls.higher_is_better in (True, False, None)
    assert cls.input_kind in INPUT_KINDS, f"{name}.input_kind={cls.input_kind!r}"


def test_the_exported_metrics_are_found() -> None:
    assert len(EXPORTED) >= 40


def test_input_kind_matches_the_update_signature() -> None:
    # The kinds name the first arguments of `update`; a class whose signature disagrees with
    # its declared kind is mislabelled.
    first_arguments = {
        "classification": ("labels", "predictions"),
        "ranking": ("labels", "predictions"),
        "regression": ("labels", "predictions"),
        "scores": ("preds", "target"),
        "multilabel": ("preds", "target"),
        "retrieval": ("preds", "target"),
        "image": ("preds", "target"),
        "text": ("preds", "target"),
        "tokens": ("labels", "loss"),
        "values": ("value",),
        "learning_rate": ("learning_rate",),
        "count": ("items",),
        "wrapped": ("args",),
    }
    wrong = {}
    for name, cls in EXPORTED.items():
        params = [p for p in inspect.signature(cls.update).parameters if p != "self"]
        expected = first_arguments[cls.input_kind]
        if cls.input_kind == "values":
            ok = params[0] in ("value", "values")
        else:
            ok = tuple(params[: len(expected)]) == expected
        if not ok:
            wrong[name] = (cls.input_kind, params)
    assert wrong == {}


def _torchmetrics_twins() -> dict[type[Metric], Any]:
    torchmetrics = pytest.importorskip("torchmetrics")
    from torchmetrics import classification as c
    from torchmetrics import image, regression, retrieval, segmentation, text, wrappers

    return {
        tm.AccuracyMetric: c.MulticlassAccuracy,
        tm.PrecisionMetric: c.MulticlassPrecision,
        tm.RecallMetric: c.MulticlassRecall,
        tm.F1ScoreMetric: c.MulticlassF1Score,
        tm.FBetaScoreMetric: c.MulticlassFBetaScore,
        tm.ConfusionMatrixMetric: c.MulticlassConfusionMatrix,
        tm.AUROCMetric: c.BinaryAUROC,
        tm.AveragePrecisionMetric: c.BinaryAveragePrecision,
        tm.ROCMetric: c.BinaryROC,
        tm.PrecisionRecallCurveMetric: c.BinaryPrecisionRecallCurve,
        tm.CalibrationErrorMetric: c.BinaryCalibrationError,
        tm.MSEMetric: regression.MeanSquaredError,
        tm.MAEMetric: regression.MeanAbsoluteError,
        tm.SMAPEMetric: regression.SymmetricMeanAbsolutePercentageError,
        tm.R2ScoreMetric: regression.R2Score,
        tm.MeanMetric: torchmetrics.aggregation.MeanMetric,
        tm.PerplexityMetric: text.Perplexity,
        tm.WordErrorRateMetric: text.WordErrorRate,
        tm.CharErrorRateMetric: text.CharErrorRate,
        tm.PSNRMetric: image.PeakSignalNoiseRatio,
        tm.SSIMMetric: image.StructuralSimilarityIndexMeasure,
        tm.MeanIOUMetric: segmentation.MeanIoU,
        tm.DiceCoefficientMetric: segmentation.DiceScore,
        tm.RetrievalNDCGMetric: retrieval.RetrievalNormalizedDCG,
        tm.RetrievalMRRMetric: retrieval.RetrievalMRR,
        tm.RetrievalMAPMetric: retrieval.RetrievalMAP,
        tm.RetrievalHitRateMetric: retrieval.RetrievalHitRate,
        tm.RetrievalPrecisionMetric: retrieval.RetrievalPrecision,
        tm.RetrievalRecallMetric: retrieval.RetrievalRecall,
        tm.RetrievalRPrecisionMetric: retrieval.RetrievalRPrecision,
        tm.BootStrapper: wrappers.BootStrapper,
        tm.Running: wrappers.Running,
    }


def test_directions_agree_with_torchmetrics() -> None:
    disagree = {
        ours.__name__: (ours.higher_is_better, theirs.higher_is_better)
        for ours, theirs in _torchmetrics_twins().items()
        if ours.higher_is_better != theirs.higher_is_better
    }
    assert disagree == {}


def test_percent_units_are_fractions_of_one_with_a_direction() -> None:
    # "%" means a fraction shown x100: only bounded scores where larger is better carry it.
    for name, cls in EXPORTED.items():
        if cls.unit == "%":
            assert cls.higher_is_better is True, name
