"""Per-class ROC and precision-recall curves of a final evaluation, written for plotting.

The curves are computed with torch (sort, cumulative sums) from every collected score, one
class against the rest, with scikit-learn's conventions: `roc_curve` starts at (0, 0) and its
area is the trapezoid rule; `precision_recall_curve` ends at (recall 0, precision 1) and the
average precision is the step sum `sum((R[i] - R[i+1]) * P[i])`. `drop_intermediate` drops
the points scikit-learn drops (collinear ROC points, PR points with unchanged true positives)
after the areas are computed from the full curves. A class with no positive (or, for ROC, no
negative) sample gets NaN rates and a null area.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, final

import torch
from torch import Tensor

from torchtally._records import CurveData
from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    SequenceOutput,
)
from torchtally.metrics import ConfusionMatrixMetric
from torchtally.runtime import step_closure

__all__ = [
    "CurveCollector",
    "curve_data",
    "curve_inputs",
    "curve_output",
    "pr_curve",
    "roc_curve",
    "write_curve_data",
    "write_curves",
]


def _counts(labels: Tensor, scores: Tensor) -> tuple[Tensor, Tensor]:
    """False and true positives above each distinct score, highest score first."""
    order = torch.argsort(scores, descending=True, stable=True)
    sorted_scores = scores[order]
    positives = labels[order].to(torch.float64)
    last = torch.tensor([scores.numel() - 1], device=scores.device)
    ends = torch.cat([torch.nonzero(sorted_scores[1:] != sorted_scores[:-1]).flatten(), last])
    tps = torch.cumsum(positives, 0)[ends]
    return (ends + 1).to(torch.float64) - tps, tps


def roc_curve(
    labels: Tensor, scores: Tensor, *, drop_intermediate: bool = False
) -> tuple[Tensor, Tensor, float]:
    """The ROC curve of binary `labels` against `scores`, and its area.

    Args:
        labels: `(N,)` 0/1 (or bool) labels.
        scores: `(N,)` scores, higher meaning more positive.
        drop_intermediate: Drop collinear points, as scikit-learn's default does.

    Returns:
        `(fpr, tpr, auc)`; auc is NaN when a class is missing.

    Example:
        >>> fpr, tpr, auc = roc_curve(torch.tensor([0, 1]), torch.tensor([0.2, 0.9]))
        >>> auc
        1.0
    """
    fps, tps = _counts(labels, scores)
    zero = fps.new_zeros(1)
    fpr = torch.cat([zero, fps]) / fps[-1]
    tpr = torch.cat([zero, tps]) / tps[-1]
    area = float(torch.trapezoid(tpr, fpr))
    if drop_intermediate and fps.numel() > 2:
        inner = (torch.diff(fps, 2) != 0) | (torch.diff(tps, 2) != 0)
        keep = torch.cat([inner.new_ones(1), inner, inner.new_ones(1)])
        keep = torch.cat([keep.new_ones(1), keep])  # the (0, 0) point
        fpr, tpr = fpr[keep], tpr[keep]
    return fpr, tpr, area


def pr_curve(
    labels: Tensor, scores: Tensor, *, drop_intermediate: bool = False
) -> tuple[Tensor, Tensor, float]:
    """The precision-recall curve of binary `labels` against `scores`, and the average precision.

    Args:
        labels: `(N,)` 0/1 (or bool) labels.
        scores: `(N,)` scores, higher meaning more positive.
        drop_intermediate: Drop points whose true positives equal both neighbours'.

    Returns:
        `(recall, precision, average_precision)`, recall decreasing to 0; AP is NaN without a
        positive sample.

    Example:
        >>> recall, precision, ap = pr_curve(torch.tensor([0, 1]), torch.tensor([0.2, 0.9]))
        >>> ap
        1.0
    """
    fps, tps = _counts(labels, scores)
    recall, precision = _pr_points(fps, tps)
    ap = float(-(torch.diff(recall) * precision[:-1]).sum()) if tps[-1] > 0 else math.nan
    if drop_intermediate and fps.numel() > 2:
        inner = (torch.diff(tps[:-1]) != 0) | (torch.diff(tps[1:]) != 0)
        keep = torch.cat([inner.new_ones(1), inner, inner.new_ones(1)])
        recall, precision = _pr_points(fps[keep], tps[keep])
    return recall, precision, ap


def _pr_points(fps: Tensor, tps: Tensor) -> tuple[Tensor, Tensor]:
    precision = tps / (tps + fps)
    recall = tps / tps[-1] if tps[-1] > 0 else torch.ones_like(tps)
    one = precision.new_ones(1)
    return torch.cat([recall.flip(0), one - 1]), torch.cat([precision.flip(0), one])


def curve_data(
    labels: Tensor,
    scores: Tensor,
    class_names: Sequence[str] | None = None,
    *,
    drop_intermediate: bool = True,
) -> CurveData:
    """Confusion matrix and one-vs-rest ROC and PR curves of every class.

    Args:
        labels: `(N,)` class indices (multiclass), or `(N, C)` 0/1 indicators (multilabel).
        scores: `(N, C)` class scores (probabilities, for the confusion matrix's argmax any
            scores do). For a binary task `(N,)` scores of class 1 are accepted.
        class_names: Display names of the C classes (default "0", "1", ...).
        drop_intermediate: Store only the points that change the curves' shape.

    Returns:
        The `CurveData` (no confusion matrix for multilabel input).

    Example:
        >>> data = curve_data(torch.tensor([0, 1, 1]), torch.tensor([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]))
        >>> data.confusion_matrix
        [[1.0, 0.0], [1.0, 1.0]]
    """
    scores = scores.detach().to(torch.float64).cpu()
    labels = labels.detach().cpu()
    if scores.dim() == 1:  # binary: the score of class 1
        scores = torch.stack([1.0 - scores, scores], dim=1)
    if scores.dim() != 2 or scores.shape[0] != labels.shape[0]:
        raise ValueError(
            "Arguments `labels` and `scores` must be (N,) or (N, C) and (N, C) with the same N. "
            f"Received: labels {tuple(labels.shape)}, scores {tuple(scores.shape)}"
        )
    num_classes = scores.shape[1]
    names = [str(i) for i in range(num_classes)] if class_names is None else list(class_names)
    if len(names) != num_classes:
        raise ValueError(
            f"Argument `class_names` must name all {num_classes} classes. "
            f"Received: {len(names)} names"
        )
    multilabel = labels.dim() == 2
    data = CurveData(class_names=names)
    if not multilabel:
        matrix = ConfusionMatrixMetric(num_classes)
        matrix.update(labels, scores)
        data.confusion_matrix = matrix.compute().to(torch.float64).tolist()
    for index, name in enumerate(names):
        positives = labels[:, index] if multilabel else labels == index
        fpr, tpr, auc = roc_curve(positives, scores[:, index], drop_intermediate=drop_intermediate)
        recall, precision, ap = pr_curve(
            positives, scores[:, index], drop_intermediate=drop_intermediate
        )
        data.roc[name] = {"fpr": fpr.tolist(), "tpr": tpr.tolist(), "auc": auc}
        data.pr[name] = {"recall": recall.tolist(), "precision": precision.tolist(), "ap": ap}
    return data


def write_curves(
    logdir: str | os.PathLike[str],
    split: str,
    labels: Tensor,
    scores: Tensor,
    class_names: Sequence[str] | None = None,
) -> CurveData:
    """Compute `curve_data` and write it to `logdir/<split>/curves.json`.

    Non-finite numbers are written as null (strict JSON).

    Args:
        logdir: The run's log directory.
        split: The split evaluated ("test", usually).
        labels: `(N,)` class indices or `(N, C)` multilabel indicators.
        scores: `(N, C)` class scores.
        class_names: Display names of the classes.

    Returns:
        The curves written.

    Example:
        >>> labels = torch.tensor([0, 1, 1])
        >>> scores = torch.tensor([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
        >>> data = write_curves("runs/mnist", "test", labels, scores, ["cat", "dog"])
        >>> data.roc["dog"]["auc"], sorted(p.name for p in Path("runs/mnist/test").iterdir())
        (1.0, ['curves.json'])
    """
    return write_curve_data(logdir, split, curve_data(labels, scores, class_names))


def write_curve_data(logdir: str | os.PathLike[str], split: str, data: CurveData) -> CurveData:
    """Write `data` to `logdir/<split>/curves.json` (atomically; non-finite numbers as null).

    Args:
        logdir: The run's log directory.
        split: The split evaluated.
        data: The curves.

    Returns:
        `data`.

    Example:
        >>> data = CurveData(confusion_matrix=[[2.0, 0.0], [1.0, 1.0]], class_names=["a", "b"])
        >>> _ = write_curve_data("runs/ranker", "test", data)
        >>> json.loads(Path("runs/ranker/test/curves.json").read_text())["confusion_matrix"]
        [[2.0, 0.0], [1.0, 1.0]]
    """
    folder = Path(logdir) / split
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "curves.json"
    temp = folder / f".curves.json.{os.getpid()}.tmp"
    temp.write_text(json.dumps(_finite(dataclasses.asdict(data))), encoding="utf-8")
    os.replace(temp, target)
    return data


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def curve_output(output: Any) -> bool:
    """Whether `curve_inputs` reads this output (a classification or sequence output)."""
    return isinstance(
        output, (ClassificationOutput, MultiLabelClassificationOutput, SequenceOutput)
    )


def curve_inputs(output: Any) -> tuple[Tensor, Tensor, Tensor | None]:
    """Labels, class scores and a keep mask (or None) of one step's output, without host reads.

    Args:
        output: A `ClassificationOutput` (softmax of 2-D logits; 1-D outputs are taken as the
            probability of class 1), `MultiLabelClassificationOutput` (sigmoid) or
            `SequenceOutput` (softmax over the flattened tokens; pad positions masked out).

    Returns:
        `(labels, scores, keep)`.

    Raises:
        TypeError: Another output type.
    """
    if isinstance(output, ClassificationOutput):
        logits = output.output.detach()
        scores = torch.softmax(logits, dim=-1) if logits.dim() == 2 else logits
        return output.targets, scores, None
    if isinstance(output, MultiLabelClassificationOutput):
        return output.targets, torch.sigmoid(output.output.detach()), None
    if isinstance(output, SequenceOutput):
        targets, logits, weights = output.flat()
        return targets, torch.softmax(logits.detach(), dim=-1), weights
    raise TypeError(
        "Curves need a ClassificationOutput, MultiLabelClassificationOutput or SequenceOutput "
        f"from the eval step. Received: {type(output).__name__}"
    )


@final
class CurveCollector:
    """Gathers every step's labels and scores on the host, through a step closure.

    Example:
        >>> collector = CurveCollector()
        >>> for labels in (torch.tensor([0, 1]), torch.tensor([1])):
        ...     logits = torch.nn.functional.one_hot(labels, 2).float()
        ...     collector(ClassificationOutput(torch.tensor(0.0), logits, labels))
        >>> labels, scores = collector.result()
        >>> labels, scores.shape
        (tensor([0, 1, 1]), torch.Size([3, 2]))
    """

    def __init__(self) -> None:
        self._labels: list[Tensor] = []
        self._scores: list[Tensor] = []
        self._add = step_closure(self._append)

    def __call__(self, output: Any) -> None:
        """Queue one output's labels and scores (copied to the host after the step)."""
        self._add(*curve_inputs(output))

    def _append(self, labels: Tensor, scores: Tensor, keep: Tensor | None) -> None:
        if keep is not None:
            labels, scores = labels[keep > 0], scores[keep > 0]
        self._labels.append(labels)
        self._scores.append(scores)

    @property
    def collected(self) -> bool:
        """Whether any output was collected."""
        return bool(self._labels)

    def result(self) -> tuple[Tensor, Tensor]:
        """Every collected label and score, concatenated along the samples.

        Returns:
            `(labels, scores)`.
        """
        if not self._labels:
            raise ValueError("No outputs were collected: the evaluation ran no step.")
        return torch.cat(self._labels), torch.cat(self._scores)
