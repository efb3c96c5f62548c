"""Plot data of the test split's calibration, curve and retrieval metrics.

After `Learner.test(..., curves=True)` each of these metrics already holds the whole test set,
so its plot data comes from the metric itself, not from scores collected on the side:

* `CalibrationErrorMetric`: its `reliability_diagram()` (per-bin confidence, accuracy and
  weight) and its value;
* `PrecisionRecallCurveMetric` and `ROCMetric`: their `compute()` (exact or binned), per
  class;
* retrieval metrics with a cut-off (NDCG, MRR, MAP, HitRate, Precision, Recall): the metric
  at a range of k. A grouped retrieval metric keeps only the running mean of its per-query
  values at its own k, so the other k need metrics of their own: `AtKCollector` builds one
  per k with the metric's settings and feeds it the same adaptor's inputs after every step
  (host work outside the traced step; the test metric itself is untouched). The one at the
  metric's own `top_k` gives the metric's value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, final

import torch
from torch import Tensor

from torchtally._records import CurveData
from torchtally.learn._adaptor import adapt
from torchtally.learn._learner.curves import CurveCollector, curve_data, curve_output
from torchtally.learn._learner.metrics import SplitMetrics
from torchtally.metrics import Metric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import PrecisionRecallCurveMetric, ROCMetric
from torchtally.metrics.retrieval import (
    RetrievalHitRateMetric,
    RetrievalMAPMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
)
from torchtally.runtime import step_closure

__all__ = [
    "AT_K_POINTS",
    "AtKCollector",
    "TestCurves",
    "add_metric_curves",
    "at_k_values",
    "has_metric_curves",
]

#: The retrieval metrics that take a cut-off k (R-precision's is the relevant count).
_AT_K_TYPES: tuple[type[Metric], ...] = (
    RetrievalNDCGMetric,
    RetrievalMRRMetric,
    RetrievalMAPMetric,
    RetrievalHitRateMetric,
    RetrievalPrecisionMetric,
    RetrievalRecallMetric,
)

#: At most this many k per @k curve (evenly spaced over 1..k_max beyond it).
AT_K_POINTS = 20
#: k_max of a metric without `top_k` whose candidate count is not known (the flat form).
_DEFAULT_K_MAX = 10


def at_k_values(k_max: int, points: int = AT_K_POINTS) -> list[int]:
    """The k of an @k curve: 1..k_max, thinned to `points` evenly spaced values (1 and k_max
    kept).

    Args:
        k_max: The largest k (>= 1).
        points: The most values.

    Returns:
        Increasing distinct k.

    Example:
        >>> at_k_values(5)
        [1, 2, 3, 4, 5]
    """
    if k_max <= points:
        return list(range(1, k_max + 1))
    grid = torch.linspace(1, k_max, points, dtype=torch.float64).round().to(torch.int64)
    return sorted({int(k) for k in grid})


@final
class AtKCollector:
    """Retrieval metrics at every k of their @k curve, fed after each step.

    Args:
        metrics: The split's metrics; those of `_AT_K_TYPES` get an @k curve.

    Example:
        >>> from torchtally.learn import ClassificationOutput
        >>> from torchtally.learn._learner.metrics import SplitMetrics
        >>> ndcg = RetrievalNDCGMetric(top_k=3, name="ndcg")
        >>> metrics = SplitMetrics("test", [(ndcg, lambda out: (out.output, out.targets))], "cpu")
        >>> collector = AtKCollector(metrics)
        >>> scores = torch.tensor([[0.9, 0.2, 0.5], [0.1, 0.8, 0.3]])
        >>> relevant = torch.tensor([[1, 0, 0], [0, 0, 1]])
        >>> collector(ClassificationOutput(torch.tensor(0.0), scores, relevant))
        >>> result = collector.result()["ndcg"]
        >>> result["k"], [round(value, 3) for value in result["value"]]
        ([1, 2, 3], [0.5, 0.815, 0.815])
    """

    def __init__(self, metrics: SplitMetrics) -> None:
        self._split = metrics
        self._names = [
            name for name, metric in metrics.metrics.items() if isinstance(metric, _AT_K_TYPES)
        ]
        self._siblings: dict[str, dict[int, Metric]] = {}
        self._logged_k: dict[str, int | None] = {}
        self._add = step_closure(self._update)

    def __bool__(self) -> bool:
        return bool(self._names)

    def __call__(self, output: Any) -> None:
        """Queue one step output's inputs of every retrieval metric (read after the step)."""
        for name in self._names:
            inputs = adapt(output, self._split.metrics[name], self._split.adaptor(name))
            self._add(name, inputs.args, inputs.kwargs)

    def _update(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        siblings = self._siblings.get(name)
        if siblings is None:
            siblings = self._siblings[name] = self._build(name, args)
        # The arguments arrive as host copies; the copies live where the test metric does, so
        # that their compute syncs over the same process group (NCCL wants device tensors).
        device = _device(self._split.metrics[name])
        args, kwargs = _to(args, device), _to(kwargs, device)
        for metric in siblings.values():
            metric.update(*args, **kwargs)

    def _build(self, name: str, args: tuple[Any, ...]) -> dict[int, Metric]:
        metric: Any = self._split.metrics[name]
        k_max = metric.top_k
        self._logged_k[name] = k_max
        if k_max is None:
            preds = args[0] if args else None
            if metric.capacity is None and isinstance(preds, Tensor) and preds.dim() == 2:
                k_max = self._logged_k[name] = int(preds.shape[-1])  # every candidate
            else:  # the flat form: queries of any length
                k_max = _DEFAULT_K_MAX
        return {
            k: type(metric)(
                top_k=k,
                empty_target_action=metric.empty_target_action,
                ignore_index=metric.ignore_index,
                aggregation=metric.aggregation,
                capacity=metric.capacity,
                name=f"{metric.name}@{k}",
                adaptive_k=metric.adaptive_k,
                check_values=False,  # the test metric itself counts bad values
            ).to(_device(metric))
            for k in at_k_values(max(int(k_max), 1))
        }

    def result(self) -> dict[str, dict[str, object]]:
        """Metric name -> `{"k": [...], "value": [...], "top_k": its own k or None,
        "logged_k": the k whose value it logs (its top_k, else the candidate count of the
        grouped form; None for the flat form without top_k)}`, for the metrics that saw at
        least one step."""
        out: dict[str, dict[str, object]] = {}
        for name, siblings in self._siblings.items():
            values = [_float(metric.compute()) for metric in siblings.values()]
            metric: Any = self._split.metrics[name]  # of `_AT_K_TYPES`: all declare top_k
            top_k = metric.top_k
            out[name] = {
                "k": list(siblings),
                "value": values,
                "top_k": top_k,
                "logged_k": self._logged_k.get(name),
            }
        return out


def _device(metric: Metric) -> torch.device:
    return next(tensor for _, tensor, _ in metric.states()).device


def _to(value: Any, device: torch.device) -> Any:
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple):
        return tuple(_to(item, device) for item in value)
    if isinstance(value, dict):
        return {key: _to(item, device) for key, item in value.items()}
    return value


def _float(value: Tensor) -> float:
    return float(value.detach().to(torch.float64).reshape(-1)[0])


def add_metric_curves(
    data: CurveData,
    metrics: Mapping[str, Metric],
    at_k: Mapping[str, dict[str, object]] | None = None,
    class_names: Sequence[str] | None = None,
) -> CurveData:
    """Fill `data`'s `reliability`, `metric_pr`, `metric_roc` and `at_k` from the split's
    metrics.

    Args:
        data: The split's curves (its classic fields are left alone).
        metrics: The split's metrics, after the evaluation (host reads happen here).
        at_k: `AtKCollector.result()`.
        class_names: Names of the classes of multiclass / multilabel curves, when they match
            the number of curves (else "0", "1", ...).

    Returns:
        `data`.
    """
    for name, metric in metrics.items():
        if isinstance(metric, CalibrationErrorMetric):
            diagram = metric.reliability_diagram()
            entry: dict[str, object] = {key: _list(value) for key, value in diagram.items()}
            entry["norm"] = metric.norm
            entry["value"] = _float(metric.compute())
            data.reliability[name] = entry
        elif isinstance(metric, PrecisionRecallCurveMetric):
            data.metric_pr[name] = _curve_entry(metric, ("precision", "recall"), class_names)
        elif isinstance(metric, ROCMetric):
            data.metric_roc[name] = _curve_entry(metric, ("fpr", "tpr"), class_names)
    if at_k:
        data.at_k.update({name: dict(entry) for name, entry in at_k.items()})
    return data


def _curve_entry(
    metric: PrecisionRecallCurveMetric | ROCMetric,
    keys: tuple[str, str],
    class_names: Sequence[str] | None,
) -> dict[str, dict[str, object]]:
    """Class -> {keys[0]: [...], keys[1]: [...], "thresholds": [...]} of a curve metric."""
    result = metric.compute()
    if isinstance(result, tuple):  # binary, or micro-averaged
        label = "all classes (micro)" if metric.average == "micro" else "positive"
        curves = {label: result}
    else:
        names = list(class_names or [])
        if len(names) != len(result):
            names = [str(i) for i in range(len(result))]
        curves = dict(zip(names, result))
    return {
        label: {keys[0]: _list(a), keys[1]: _list(b), "thresholds": _list(t)}
        for label, (a, b, t) in curves.items()
    }


def _list(value: Tensor) -> list[float]:
    return [float(v) for v in value.detach().cpu().tolist()]


def has_metric_curves(metrics: Mapping[str, Metric]) -> bool:
    """Whether any of `metrics` leaves plot data of its own (see the module's docstring)."""
    kinds: tuple[type[Metric], ...] = (
        CalibrationErrorMetric,
        PrecisionRecallCurveMetric,
        ROCMetric,
        *_AT_K_TYPES,
    )
    return any(isinstance(metric, kinds) for metric in metrics.values())


@final
class TestCurves:
    """Everything `Learner.test(..., curves=True)` plots: the classic curves of classification
    outputs (`CurveCollector`) and the data of the split's calibration, curve and retrieval
    metrics.

    An output the classic curves cannot read (a retrieval model's, say) is refused as before,
    unless the split has metrics with plot data of their own: then it is skipped.

    Args:
        metrics: The test split's metrics.

    Example:
        >>> from torchtally.learn import ClassificationOutput
        >>> from torchtally.learn._learner.metrics import SplitMetrics
        >>> from torchtally.metrics import AccuracyMetric
        >>> curves = TestCurves(SplitMetrics("test", [AccuracyMetric("accuracy")], "cpu"))
        >>> logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
        >>> curves(ClassificationOutput(torch.tensor(0.0), logits, torch.tensor([0, 1, 1])))
        >>> data = curves.result(["cat", "dog"])
        >>> data.confusion_matrix, data.roc["dog"]["auc"]
        ([[1.0, 0.0], [1.0, 1.0]], 1.0)
    """

    __test__ = False  # not a pytest class

    def __init__(self, metrics: SplitMetrics) -> None:
        self._metrics = metrics
        self._classic = CurveCollector()
        self._at_k = AtKCollector(metrics)
        self._optional = has_metric_curves(metrics.metrics)

    def __call__(self, output: Any) -> None:
        """Queue one step output (read after the step)."""
        if not self._optional or curve_output(output):
            self._classic(output)
        if self._at_k:
            self._at_k(output)

    def result(self, class_names: Sequence[str] | None = None) -> CurveData:
        """The curves of everything seen.

        Args:
            class_names: Display names of the classes.

        Returns:
            The `CurveData`: classic fields when classification outputs were seen, and the
            metrics' own plot data.
        """
        if self._classic.collected or not self._optional:
            labels, scores = self._classic.result()
            data = curve_data(labels, scores, class_names)
        else:
            data = CurveData(class_names=list(class_names or []))
        return add_metric_curves(data, self._metrics.metrics, self._at_k.result(), class_names)
