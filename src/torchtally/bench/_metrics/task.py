"""Prediction-quality metrics: accuracy and regression errors, as NeuroBench 2.3.0 defines them.

Adapters over the native maths (`torchtally.functional`): each formula lives there, and these
keep NeuroBench's conventions, which the native functions take as arguments: a value per
batch (the benchmark averages them), NeuroBench's float dtype (the inputs', rounded as
PyTorch rounds it), its SMAPE (a batch with a 0/0 term scores 200) and its R² (SS_tot as n
times the labels' population variance, over the whole run). The per-batch ones return 0-d
tensors, so the benchmark reads them once at the end of the run; the values match NeuroBench
bit for bit.
"""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import DeviceAccumulatedMetric, DeviceWorkloadMetric
from torchtally.functional.classification import accuracy
from torchtally.functional.regression import (
    mean_squared_error,
    r2_from_totals,
    smape,
    squared_error_sum,
)

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
        # Equal values, any dtypes; NeuroBench's float32 mean of the 0/1 matches, which on
        # CUDA is not always k / n rounded (the kernel scales by a float32 1/n).
        return accuracy(labels, preds, as_values=True, float32_mean=True)


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
        return mean_squared_error(labels, preds, input_dtype=True)


@final
class SMAPE(DeviceWorkloadMetric):
    """Symmetric mean absolute percentage error, 0 to 200; a batch with any 0/0 term (a
    prediction and a label both 0) or any NaN scores 200 (NeuroBench's choice).

    Example:
        >>> SMAPE()(None, torch.tensor([1.0, 3.0]), (None, torch.tensor([1.0, 1.0])))
        50.0
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=False)

    def batch_value(self, model: BenchModel, preds: Tensor, data: tuple[Tensor, ...]) -> Tensor:
        labels = _labels_like("SMAPE", preds, data)
        value = smape(labels, preds, input_dtype=True, zero_pairs="nan")
        return torch.nan_to_num(value, nan=200.0)


@final
class R2(DeviceAccumulatedMetric):
    """Coefficient of determination over the whole run, averaged over output columns.

    Per column, `1 - SS_res / SS_tot` with `SS_tot = n * var(labels)` (the native
    `r2_from_totals`, in NeuroBench's arithmetic), then the mean over columns. NeuroBench
    defines it for two columns (x and y) and ignores any further ones; here every column
    counts, which gives NeuroBench's value for two columns. Labels of shape `(n,)` are one
    column.

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
        # float addition, but without the per-batch host read, and detached as a float is
        # (no autograd graph kept alive across the run).
        columns = [
            squared_error_sum(labels[:, c], preds[:, c], input_dtype=True)
            for c in range(labels.shape[1])
        ]
        batch_errors = torch.stack(columns).detach().double()
        if self._squared_errors is None:
            self._squared_errors = batch_errors
        else:
            self._squared_errors = self._squared_errors + batch_errors
        self._labels.append(labels)

    def compute(self) -> float:
        if self._squared_errors is None:
            raise ValueError("R2: no batch was seen since the last reset")
        labels = torch.cat(self._labels)
        # NeuroBench's SS_tot: n times the population variance, column by column (contiguous,
        # as it concatenates them), in the labels' dtype; its float SS_res divided by it is
        # taken in that dtype, as a reciprocal times SS_res (PyTorch's `float / tensor`).
        totals = torch.stack(
            [
                labels[:, c].contiguous().var(correction=0) * labels.shape[0]
                for c in range(labels.shape[1])
            ]
        )
        errors = self._squared_errors.to(totals.dtype)
        return float(r2_from_totals(errors, totals, "uniform_average", division="reciprocal"))


def _as_columns(values: Tensor) -> Tensor:
    if values.dim() == 1:
        return values.unsqueeze(1)
    if values.dim() != 2:
        raise ValueError(
            "R2: predictions and labels must be 1-D or 2-D (samples, outputs). "
            f"Received: shape {tuple(values.shape)}"
        )
    return values
