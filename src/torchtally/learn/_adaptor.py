"""Adaptors: from a step's output to the arguments of each metric's `update` (Burn's `Adaptor`).

A registry maps (output type, metric type) to a function that takes the output and returns the
metric's `update` arguments, as a `MetricInput` or a tuple of positional arguments. Lookup walks
both types' MROs (the output's first), so an adaptor registered for a base class serves its
subclasses. Without a registered adaptor, the defaults serve the four outputs of `_outputs`,
chosen by what the metric declares it takes (`Metric.input_kind`, see `metrics._metadata`)
and by the attributes its constructor documents (`num_classes`, `from_logits`, `k`):

* "values" metrics (`MeanMetric`, `QuantileMetric`) get the loss and, positionally, the batch
  size as its weight (tokens, for sequences);
* "classification" metrics get `(targets, output)`: logits or scores, never a host read;
  `(targets, sigmoid(output))` from a multilabel output; the flattened tokens with pad
  positions weighted 0 from a sequence output;
* "ranking" metrics that rank the samples (AUROC, AUC) get probabilities: the softmax of
  `(N, C)` logits, its class-1 column for a binary metric (no `num_classes`; 1-D outputs are
  taken as probabilities), the sigmoid of multilabel logits; those that rank each sample's
  classes (they declare `k`: precision/recall at k) get the scores as they are, or the
  flattened weighted tokens, and no multilabel output (its targets are 0/1 indicators, not
  class ids);
* "scores" metrics (curves, calibration) and "multilabel" metrics take `(preds, target)` and
  get probabilities first: the softmax of classification logits (the class-1 column for a
  binary metric; the logits themselves for `from_logits=True`), the sigmoid of multilabel
  logits;
* "regression" metrics get `(targets, output)`, the output reshaped to the targets' shape;
* "tokens" metrics (`PerplexityMetric`) get a sequence's flattened labels and logits (its
  cross-entropy needs no loss reduction).

"learning_rate" metrics take no adaptor: the learner feeds them the optimizer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, final

import torch
from torch import Tensor

from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    SequenceOutput,
)
from torchtally.metrics import Metric

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
        >>> from torchtally.metrics import AccuracyMetric
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
        >>> from torchtally.metrics import AccuracyMetric
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
    """The adaptor for this pair: for each output class, most specific first, the one registered
    for the metric class (or a base of it), else the default for the metric's `input_kind`.

    Args:
        output_type: The step output's class.
        metric_type: The metric's class.

    Returns:
        The registered function, or None.

    Example:
        >>> from torchtally.metrics import AccuracyMetric
        >>> find_adaptor(ClassificationOutput, AccuracyMetric) is not None
        True
    """
    kind = metric_type.input_kind if issubclass(metric_type, Metric) else None
    with _lock:
        for out_cls in output_type.__mro__:
            for metric_cls in metric_type.__mro__:
                fn = _registry.get((out_cls, metric_cls))
                if fn is not None:
                    return fn
            default = _DEFAULTS.get((out_cls, kind)) if kind else None
            if default is not None:
                return default
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
        >>> from torchtally.metrics import AccuracyMetric
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
            f"of {type(metric).__name__} (metric {_name(metric)!r}). Register "
            f"one with `register_adaptor({type(output).__name__}, {type(metric).__name__}, fn)` "
            "or pass `(metric, fn)` in the learner's metrics, fn returning the update arguments."
        )
    if isinstance(chosen, _MetricAware):  # a default that also reads the metric's attributes
        result: object = chosen(output, metric)
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


def _name(metric: Any) -> str:
    return metric.name if isinstance(metric, Metric) else "?"


# ------------------------------------------------------------------------------ defaults


@final
class _MetricAware:
    """A default adaptor that also reads attributes the metric's constructor documents."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any, Any], MetricInput]) -> None:
        self.fn = fn

    def __call__(self, output: Any, metric: Any = None) -> MetricInput:
        return self.fn(output, metric)

    def __repr__(self) -> str:
        return f"<default adaptor {self.fn.__name__}>"


def _declared(metric: Any, name: str, default: Any) -> Any:
    # Not every metric of a kind has every such attribute (`AUCMetric` is binary-only and has
    # no `num_classes`); its absence means the documented default.
    return getattr(metric, name, default)


def _batch_size(targets: Tensor) -> float:
    return float(targets.shape[0]) if targets.dim() > 0 else 1.0


def _loss(output: Any) -> MetricInput:
    if output.loss is None:
        raise AdaptorError(
            f"A loss metric needs the step output's `loss`. Received: {type(output).__name__} "
            "with loss=None"
        )
    # The weight goes positionally: `MeanMetric(value, weight)`, `QuantileMetric(values, weights)`
    return MetricInput(output.loss.detach(), _batch_size(output.targets))


def _labels_scores(output: Any) -> MetricInput:
    return MetricInput(output.targets, output.output.detach())


def _ranks_classes(metric: Any) -> bool:
    """Whether a ranking metric ranks each sample's classes (top k) rather than the samples."""
    return _declared(metric, "k", None) is not None


def _ranking(output: Any, metric: Any) -> MetricInput:
    """Probabilities for metrics that rank samples (the positive class's for binary ones); the
    scores as they are for those that rank each sample's classes (a softmax can only add ties)."""
    scores = output.output.detach()
    if _ranks_classes(metric):
        return MetricInput(output.targets, scores)
    if scores.dim() >= 2 and scores.shape[-1] >= 2:
        scores = torch.softmax(scores, dim=-1)
        if _declared(metric, "num_classes", None) is None and scores.shape[-1] == 2:
            scores = scores[..., 1]
    return MetricInput(output.targets, scores)


def _probabilities_first(output: Any, metric: Any) -> MetricInput:
    """`(probabilities, targets)` for metrics whose `update` takes the predictions first."""
    scores = output.output.detach()
    binary = _declared(metric, "num_classes", None) is None
    if _declared(metric, "from_logits", False):
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


def _multilabel(output: MultiLabelClassificationOutput) -> MetricInput:
    return MetricInput(output.targets, torch.sigmoid(output.output.detach()))


def _multilabel_ranking(output: MultiLabelClassificationOutput, metric: Any) -> MetricInput:
    if _ranks_classes(metric):
        raise AdaptorError(
            f"{type(metric).__name__} takes the ids of each sample's relevant classes, but a "
            "MultiLabelClassificationOutput's targets are 0/1 indicators per class. Pass "
            "`(metric, fn)` in the learner's metrics, fn returning `(class_ids, scores)`."
        )
    return _multilabel(output)


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


def _sequence_ranking(output: SequenceOutput, metric: Any) -> MetricInput:
    if _ranks_classes(metric):  # top k of each token's scores: weights drop the padding
        return _sequence_tokens(output)
    if output.pad_id is not None:
        raise AdaptorError(
            "A SequenceOutput with a pad id cannot feed a metric without `weights` (the pad "
            f"positions would count). Received: pad_id={output.pad_id!r}; pass a per-metric "
            "adaptor that drops them."
        )
    targets, logits, _ = output.flat()
    return MetricInput(targets, torch.softmax(logits.detach(), dim=-1))


def _sequence_loss(output: SequenceOutput) -> MetricInput:
    return MetricInput(output.loss.detach(), output.num_tokens())


def _perplexity(output: SequenceOutput) -> MetricInput:
    # logits, not the loss: a reduced loss is ambiguous (sum or mean) to the metric
    targets, logits, weights = output.flat()
    return MetricInput(targets, logits.detach(), weights=weights)


_RANKING = _MetricAware(_ranking)
_PROBABILITIES_FIRST = _MetricAware(_probabilities_first)

#: (output class, metric input kind) -> the default adaptor. Kinds missing for an output have
#: none: "learning_rate" (the learner feeds the optimizer), "image", "text", "retrieval",
#: "count" and "wrapped" take inputs no step output of `_outputs` holds.
_DEFAULTS: dict[tuple[type, str], Adaptor] = {
    (ClassificationOutput, "values"): _loss,
    (ClassificationOutput, "classification"): _labels_scores,
    (ClassificationOutput, "ranking"): _RANKING,
    (ClassificationOutput, "scores"): _PROBABILITIES_FIRST,
    (MultiLabelClassificationOutput, "values"): _loss,
    (MultiLabelClassificationOutput, "classification"): _multilabel,
    (MultiLabelClassificationOutput, "ranking"): _MetricAware(_multilabel_ranking),
    (MultiLabelClassificationOutput, "scores"): _PROBABILITIES_FIRST,
    (MultiLabelClassificationOutput, "multilabel"): _PROBABILITIES_FIRST,
    (RegressionOutput, "values"): _loss,
    (RegressionOutput, "regression"): _regression,
    (SequenceOutput, "values"): _sequence_loss,
    (SequenceOutput, "classification"): _sequence_tokens,
    (SequenceOutput, "ranking"): _MetricAware(_sequence_ranking),
    (SequenceOutput, "tokens"): _perplexity,
}
