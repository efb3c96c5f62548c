"""Adaptors: from a step's output to the arguments of each metric's `update` (Burn's `Adaptor`).

A registry maps (output type, metric type) to a function that takes the output and returns the
metric's `update` arguments, as a `MetricInput` or a tuple of positional arguments. Lookup walks
both types' MROs (the output's first), so an adaptor registered for a base class serves its
subclasses. Defaults cover the four outputs of `_outputs`:

* classification metrics get `(targets, output)`: logits or scores, never a host read;
  ranking metrics (`AUROCMetric`, `AUCMetric`) get probabilities: the softmax of `(N, C)`
  logits, its class-1 column for a binary metric (1-D outputs are taken as probabilities);
* multilabel metrics get `(targets, sigmoid(output))`;
* metrics that take `(preds, target)`, `CalibrationErrorMetric` and the curve metrics
  (`AveragePrecisionMetric`, `PrecisionRecallCurveMetric`, `ROCMetric`), get probabilities
  first: the softmax of classification logits (the class-1 column for a binary metric; the
  logits themselves for `from_logits=True`), the sigmoid of multilabel logits;
* regression metrics get `(targets, output)`, the output reshaped to the targets' shape;
* sequence metrics get the flattened tokens with pad positions weighted 0, and
  `PerplexityMetric` gets the logits (its cross-entropy needs no loss reduction);
* `MeanMetric` gets the loss weighted by the batch size (tokens, for sequences).

`LearningRateMetric` takes no adaptor: the learner feeds it the optimizer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast, final

import torch
from torch import Tensor

from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    SequenceOutput,
)
from torchtally.metrics import (
    AccuracyMetric,
    AUCMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    DiceCoefficientMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MAEMetric,
    MeanIOUMetric,
    MeanMetric,
    MeanPerClassAccuracyMetric,
    MSEMetric,
    PerplexityMetric,
    PrecisionAtKMetric,
    PrecisionMetric,
    R2ScoreMetric,
    RecallAtKMetric,
    RecallMetric,
    SMAPEMetric,
    TopKAccuracyMetric,
)
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import (
    AveragePrecisionMetric,
    PrecisionRecallCurveMetric,
    ROCMetric,
)

__all__ = ["AdaptorError", "MetricInput", "adapt", "find_adaptor", "register_adaptor"]


@final
class MetricInput:
    """The arguments of one `metric.update(...)` call.

    Args:
        *args: Positional arguments.
        **kwargs: Keyword arguments.

    Example:
        >>> inputs = MetricInput(torch.tensor(0.7), weight=4.0)
        >>> inputs.args, inputs.kwargs
        ((tensor(0.7000),), {'weight': 4.0})
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"MetricInput(args={self.args!r}, kwargs={self.kwargs!r})"


#: An adaptor: the step output in, the metric's update arguments out.
Adaptor = Callable[[Any], "MetricInput | tuple[Any, ...]"]


@final
class AdaptorError(TypeError):
    """Raised when no adaptor turns a step's output into a metric's input.

    Example:
        >>> output = RegressionOutput(torch.tensor(0.1), torch.zeros(4), torch.zeros(4))
        >>> adapt(output, AccuracyMetric("accuracy"))
        Traceback (most recent call last):
            ...
        torchtally.learn._adaptor.AdaptorError: No adaptor turns a step output of type RegressionOutput into the input of AccuracyMetric (metric 'accuracy')...
    """


_lock = threading.Lock()
_registry: dict[tuple[type, type], Adaptor] = {}


def register_adaptor(output_type: type, metric_type: type, fn: Adaptor) -> None:
    """Register (or replace) how outputs of `output_type` feed metrics of `metric_type`.

    Args:
        output_type: The step output's class (subclasses are served too).
        metric_type: The metric's class (subclasses are served too).
        fn: Takes the output and returns a `MetricInput` or a tuple of positional arguments.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class MyOutput:
        ...     labels: torch.Tensor
        ...     logits: torch.Tensor
        >>> register_adaptor(MyOutput, AccuracyMetric, lambda out: (out.labels, out.logits))
        >>> accuracy = AccuracyMetric("accuracy")
        >>> output = MyOutput(torch.tensor([0, 1]), torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
        >>> accuracy.update(*adapt(output, accuracy).args)
        >>> accuracy.compute()
        tensor(1.)
    """
    for name, value in (("output_type", output_type), ("metric_type", metric_type)):
        if not isinstance(value, type):
            raise TypeError(f"Argument `{name}` must be a class. Received: {name}={value!r}")
    if not callable(fn):
        raise TypeError(f"Argument `fn` must be callable. Received: fn={fn!r}")
    with _lock:
        _registry[(output_type, metric_type)] = fn


def find_adaptor(output_type: type, metric_type: type) -> Adaptor | None:
    """The adaptor for this pair: the most specific output class first, then metric class.

    Args:
        output_type: The step output's class.
        metric_type: The metric's class.

    Returns:
        The registered function, or None.

    Example:
        >>> find_adaptor(ClassificationOutput, AccuracyMetric) is not None
        True
    """
    with _lock:
        for out_cls in output_type.__mro__:
            for metric_cls in metric_type.__mro__:
                fn = _registry.get((out_cls, metric_cls))
                if fn is not None:
                    return fn
    return None


def adapt(output: Any, metric: Any, fn: Adaptor | None = None) -> MetricInput:
    """The `update` arguments of `metric` for this step output.

    Args:
        output: The step's output.
        metric: The metric to update.
        fn: A per-metric adaptor that overrides the registry.

    Returns:
        The arguments, as a `MetricInput`.

    Raises:
        AdaptorError: No adaptor is registered for the pair and none was given.

    Example:
        >>> metric = AccuracyMetric("accuracy")
        >>> logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [3.0, 1.0]])
        >>> output = ClassificationOutput(torch.tensor(0.5), logits, torch.tensor([0, 1, 1]))
        >>> metric.update(*adapt(output, metric).args)
        >>> metric.compute()
        tensor(0.6667)
    """
    chosen = fn if fn is not None else find_adaptor(type(output), type(metric))
    if chosen is None:
        raise AdaptorError(
            f"No adaptor turns a step output of type {type(output).__name__} into the input "
            f"of {type(metric).__name__} (metric {getattr(metric, 'name', '?')!r}). Register "
            f"one with `register_adaptor({type(output).__name__}, {type(metric).__name__}, fn)` "
            "or pass `(metric, fn)` in the learner's metrics, fn returning the update arguments."
        )
    if getattr(chosen, "_wants_metric", False):  # a default that also looks at the metric
        result = cast(Callable[[Any, Any], Any], chosen)(output, metric)
    else:
        result = chosen(output)
    if isinstance(result, MetricInput):
        return result
    if isinstance(result, tuple):
        return MetricInput(*result)
    raise AdaptorError(
        f"The adaptor for {type(output).__name__} -> {type(metric).__name__} must return a "
        f"MetricInput or a tuple of update arguments. Received: {type(result).__name__}"
    )


# ------------------------------------------------------------------------------ defaults


def _batch_size(targets: Tensor) -> float:
    return float(targets.shape[0]) if targets.dim() > 0 else 1.0


def _loss(output: Any) -> MetricInput:
    if output.loss is None:
        raise AdaptorError(
            f"MeanMetric needs the step output's `loss`. Received: {type(output).__name__} "
            "with loss=None"
        )
    return MetricInput(output.loss.detach(), weight=_batch_size(output.targets))


def _labels_scores(output: Any) -> MetricInput:
    return MetricInput(output.targets, output.output.detach())


def _ranking(output: Any, metric: Any) -> MetricInput:
    """Probabilities for ranking metrics; the positive class's for binary ones."""
    scores = output.output.detach()
    if scores.dim() >= 2 and scores.shape[-1] >= 2:
        scores = torch.softmax(scores, dim=-1)
        if getattr(metric, "num_classes", None) is None and scores.shape[-1] == 2:
            scores = scores[..., 1]
    return MetricInput(output.targets, scores)


_ranking._wants_metric = True  # type: ignore[attr-defined]


def _probabilities_first(output: Any, metric: Any) -> MetricInput:
    """`(probabilities, targets)` for metrics whose `update` takes the predictions first."""
    scores = output.output.detach()
    binary = getattr(metric, "num_classes", None) is None
    if getattr(metric, "from_logits", False):
        if binary and scores.dim() >= 2 and scores.shape[-1] == 2:
            scores = scores[..., 1] - scores[..., 0]  # the log-odds of class 1
        return MetricInput(scores, output.targets)
    if isinstance(output, MultiLabelClassificationOutput):
        return MetricInput(torch.sigmoid(scores), output.targets)
    if scores.dim() >= 2 and scores.shape[-1] >= 2:
        scores = torch.softmax(scores, dim=-1)
        if binary and scores.shape[-1] == 2:
            scores = scores[..., 1]
    return MetricInput(scores, output.targets)


_probabilities_first._wants_metric = True  # type: ignore[attr-defined]

#: Metrics whose `update` takes `(preds, target)`.
_PREDICTIONS_FIRST: tuple[type, ...] = (
    CalibrationErrorMetric,
    AveragePrecisionMetric,
    PrecisionRecallCurveMetric,
    ROCMetric,
)


def _multilabel(output: MultiLabelClassificationOutput) -> MetricInput:
    return MetricInput(output.targets, torch.sigmoid(output.output.detach()))


def _regression(output: RegressionOutput) -> MetricInput:
    predictions = output.output.detach()
    if predictions.shape != output.targets.shape and predictions.numel() == output.targets.numel():
        predictions = predictions.reshape(output.targets.shape)
    return MetricInput(output.targets, predictions)


def _sequence_tokens(output: SequenceOutput) -> MetricInput:
    targets, logits, weights = output.flat()
    if weights is None:
        return MetricInput(targets, logits.detach())
    return MetricInput(targets, logits.detach(), weights=weights)


def _sequence_ranking(output: SequenceOutput) -> MetricInput:
    if output.pad_id is not None:
        raise AdaptorError(
            "A SequenceOutput with a pad id cannot feed a metric without `weights` (the pad "
            f"positions would count). Received: pad_id={output.pad_id!r}; pass a per-metric "
            "adaptor that drops them."
        )
    targets, logits, _ = output.flat()
    return MetricInput(targets, torch.softmax(logits.detach(), dim=-1))


def _sequence_loss(output: SequenceOutput) -> MetricInput:
    return MetricInput(output.loss.detach(), weight=output.num_tokens())


def _perplexity(output: SequenceOutput) -> MetricInput:
    # logits, not the loss: a reduced loss is ambiguous (sum or mean) to the metric
    targets, logits, weights = output.flat()
    return MetricInput(targets, logits.detach(), weights=weights)


_CLASSIFICATION: tuple[type, ...] = (
    AccuracyMetric,
    PrecisionMetric,
    RecallMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    TopKAccuracyMetric,
    ConfusionMatrixMetric,
    MeanPerClassAccuracyMetric,
    DiceCoefficientMetric,
    MeanIOUMetric,
    PrecisionAtKMetric,
    RecallAtKMetric,
)
_MULTILABEL: tuple[type, ...] = (
    AccuracyMetric,
    PrecisionMetric,
    RecallMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    AUROCMetric,
    AUCMetric,
)
_SEQUENCE_WEIGHTED: tuple[type, ...] = (
    AccuracyMetric,
    PrecisionMetric,
    RecallMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    TopKAccuracyMetric,
    ConfusionMatrixMetric,
)
_REGRESSION: tuple[type, ...] = (MSEMetric, MAEMetric, SMAPEMetric, R2ScoreMetric)


def _register_defaults() -> None:
    for output_type in (ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput):
        register_adaptor(output_type, MeanMetric, _loss)
    for metric_type in _CLASSIFICATION:
        register_adaptor(ClassificationOutput, metric_type, _labels_scores)
    for metric_type in (AUROCMetric, AUCMetric):
        register_adaptor(ClassificationOutput, metric_type, cast(Adaptor, _ranking))
    for metric_type in _MULTILABEL:
        register_adaptor(MultiLabelClassificationOutput, metric_type, _multilabel)
    for metric_type in _REGRESSION:
        register_adaptor(RegressionOutput, metric_type, _regression)
    for metric_type in _SEQUENCE_WEIGHTED:
        register_adaptor(SequenceOutput, metric_type, _sequence_tokens)
    register_adaptor(SequenceOutput, AUROCMetric, _sequence_ranking)
    register_adaptor(SequenceOutput, MeanMetric, _sequence_loss)
    register_adaptor(SequenceOutput, PerplexityMetric, _perplexity)
    for metric_type in _PREDICTIONS_FIRST:
        for output_type in (ClassificationOutput, MultiLabelClassificationOutput):
            register_adaptor(output_type, metric_type, cast(Adaptor, _probabilities_first))


_register_defaults()
