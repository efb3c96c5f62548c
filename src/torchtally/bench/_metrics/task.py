"""Prediction-quality metrics: accuracy and regression errors, as NeuroBench 2.3.0 defines them.

The per-batch ones return 0-d tensors, so the benchmark reads them once at the end of the run.
Each formula and its float dtype follow NeuroBench's, so the values match it bit for bit.
"""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import DeviceAccumulatedMetric, DeviceWorkloadMetric

__all__ = ["MSE", "R2", "SMAPE", "ClassificationAccuracy"]


def _labels_like(metric: str, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
    labels = data[1]
    if preds.shape != labels.shape:
        raise ValueError(
            f"{metric}: predictions and labels must have the same shape (add a postprocessor "
            f"such as ChooseMaxCount). Received: preds.shape={tuple(preds.shape)}, "
            f"labels.shape={tuple(labels.shape)}"
        )
    return labels


@final
class ClassificationAccuracy(DeviceWorkloadMetric):
    """Fraction of predictions equal to their label.

    Example:
        >>> ClassificationAccuracy()(None, torch.tensor([1, 2]), (None, torch.tensor([1, 0])))
        0.5
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=False)

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        labels = _labels_like("ClassificationAccuracy", preds, data)
        return torch.eq(preds, labels).float().mean()


@final
class MSE(DeviceWorkloadMetric):
    """Mean squared error.

    Example:
        >>> MSE()(None, torch.tensor([1.0, 3.0]), (None, torch.tensor([1.0, 1.0])))
        2.0
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=False)

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        labels = _labels_like("MSE", preds, data)
        return torch.mean((preds - labels) ** 2)


@final
class SMAPE(DeviceWorkloadMetric):
    """Symmetric mean absolute percentage error, 0 to 200; a batch whose terms are all 0/0
    scores 200 (NeuroBench's choice).

    Example:
        >>> SMAPE()(None, torch.tensor([1.0, 3.0]), (None, torch.tensor([1.0, 1.0])))
        50.0
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=False)

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        labels = _labels_like("SMAPE", preds, data)
        ratio = torch.abs(preds - labels) / (torch.abs(preds) + torch.abs(labels))
        return torch.nan_to_num(200 * torch.mean(ratio), nan=200.0)


@final
class R2(DeviceAccumulatedMetric):
    """Coefficient of determination over the whole run, averaged over output columns.

    Per column, `1 - SS_res / SS_tot` with `SS_tot = n * var(labels)`. NeuroBench defines it
    for two columns (x and y) and ignores any further ones; here every column counts, which
    gives NeuroBench's value for two columns. Labels of shape `(n,)` are one column.

    Example:
        >>> r2 = R2()
        >>> r2.reset()
        >>> labels = torch.tensor([[1.0, 0.0], [2.0, 2.0]])
        >>> r2(None, torch.tensor([[1.0, 0.0], [3.0, 2.0]]), (None, labels))
        0.0
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=False)
        self._squared_errors: Tensor | None = None
        self._labels: list[Tensor] = []

    def reset(self) -> None:
        self._squared_errors = None
        self._labels = []

    def accumulate(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> None:
        labels = _labels_like("R2", preds, data)
        labels, preds = _as_columns(labels), _as_columns(preds)
        # Column by column, in the data's dtype, as NeuroBench sums them (a sum over dim 0
        # may add in another order); accumulated in float64 like its `.item()` and Python
        # float addition, but without the per-batch host read.
        batch_errors = torch.stack(
            [torch.sum((labels[:, c] - preds[:, c]) ** 2) for c in range(labels.shape[1])]
        ).double()
        if self._squared_errors is None:
            self._squared_errors = batch_errors
        else:
            self._squared_errors = self._squared_errors + batch_errors
        self._labels.append(labels)

    def compute(self) -> float:
        if self._squared_errors is None:
            raise ValueError("R2: no batch was seen since the last reset")
        labels = torch.cat(self._labels)
        errors = self._squared_errors.tolist()  # the one host read
        scores = [self._column_score(errors[c], labels[:, c]) for c in range(len(errors))]
        total = scores[0]
        for score in scores[1:]:
            total = total + score
        return float(total / len(scores))

    @staticmethod
    def _column_score(squared_error: float, labels: Tensor) -> Tensor:
        # A Python float over a 0-d tensor, as NeuroBench computes it (the dtypes matter).
        total = labels.contiguous().var(correction=0) * labels.shape[0]
        return 1 - (squared_error / total)


def _as_columns(values: Tensor) -> Tensor:
    if values.dim() == 1:
        return values.unsqueeze(1)
    if values.dim() != 2:
        raise ValueError(
            "R2: predictions and labels must be 1-D or 2-D (samples, outputs). "
            f"Received: shape {tuple(values.shape)}"
        )
    return values
