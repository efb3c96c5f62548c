"""The benchmarks' contenders compute the same statistic: a timing compares like with like only
when every library is given a case it can score, and scores it alike. (The binary-AUROC cases
once drew every label 0, so the three libraries timed an undefined AUROC, and returned NaN, 0
and 0.5 for it.)"""

from __future__ import annotations

import warnings

import pytest
import torch
from benchmarks import bench_eager_grid as grid

#: Binned AUROC: 200 bins against 200 thresholds, placed alike but not bin for bin.
_TOLERANCE = {"binned AUROC": 0.02}


def _value(contender: grid.Contender) -> torch.Tensor:
    assert contender.compute is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchMetrics' notes on its own inputs
        value = contender.compute()
    if isinstance(value, tuple):  # torcheval's binned AUROC: (AUROC, thresholds)
        value = value[0]
    return torch.as_tensor(value, dtype=torch.float64).cpu()


def _evaluate(group: dict[str, grid.Contender], updates: int) -> dict[str, torch.Tensor]:
    values = {}
    for name in ("torchtally", "TorchMetrics", "torcheval"):
        contender = group[name]
        contender.reset()
        for _ in range(updates):
            contender.update()
        values[name] = _value(contender)
    return values


@pytest.mark.parametrize("family", grid.FAMILIES)
def test_the_grid_contenders_agree_on_a_defined_value(family: str) -> None:
    classes = 10 if family in grid.CLASS_FAMILIES else 1
    values = _evaluate(grid.contenders(family, 256, classes, capacity=256 * 3), 3)
    ours = values["torchtally"]
    assert not ours.isnan().any(), f"{family}: the case has no defined value"
    for name in ("TorchMetrics", "torcheval"):
        theirs = values[name].reshape(ours.shape)
        torch.testing.assert_close(
            ours, theirs, rtol=1e-4, atol=_TOLERANCE.get(family, 1e-5), msg=f"{family}: {name}"
        )
