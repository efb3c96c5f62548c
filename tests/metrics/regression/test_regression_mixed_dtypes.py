"""MSE/MAE/R2 promote float operands inside one float64 subtraction (issue 16): the values
must stay those of float64 arithmetic on the exact inputs, for every label/prediction dtype
pair (scikit-learn in float64 is the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.metrics import MAEMetric, MSEMetric, R2ScoreMetric

_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64, torch.bool]


@pytest.mark.parametrize("label_dtype", _DTYPES)
@pytest.mark.parametrize("prediction_dtype", [torch.float16, torch.float32, torch.float64])
def test_mixed_dtypes_match_sklearn(
    label_dtype: torch.dtype, prediction_dtype: torch.dtype
) -> None:
    g = torch.Generator().manual_seed(0)
    labels = (torch.randn(257, generator=g) * 3).to(label_dtype)
    predictions = (torch.randn(257, generator=g) * 3).to(prediction_dtype)
    y = labels.double().numpy()
    p = predictions.double().numpy()
    for metric, oracle in (
        (MSEMetric(), mean_squared_error),
        (MAEMetric(), mean_absolute_error),
        (R2ScoreMetric(), r2_score),
    ):
        metric.update(labels[:100], predictions[:100])
        metric.update(labels[100:], predictions[100:])
        assert float(metric.compute()) == pytest.approx(float(oracle(y, p)), rel=1e-12)
    assert np.array_equal(labels.double().numpy(), y)  # the inputs are not modified
