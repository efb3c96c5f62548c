"""`torchtally.compat.torchmetrics.utilities` and TorchMetrics' module paths, against
TorchMetrics 1.9."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import pytest
import torch
import torchmetrics as tm
import torchmetrics.utilities.compute as tm_compute
import torchmetrics.utilities.data as tm_data
import torchmetrics.utilities.distributed as tm_distributed
from _tm_ddp_workers import gathered_tensors

import torchtally.compat.torchmetrics as ttm
from torchtally.compat.torchmetrics.utilities import compute, data, distributed, enums
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError
from torchtally.distributed import run_local_ranks

_PACKAGES = (
    "classification",
    "regression",
    "retrieval",
    "wrappers",
    "image",
    "text",
    "segmentation",
)


def _module_paths() -> list[tuple[str, str]]:
    """(TorchMetrics module, class) for every class the drop-in has in that package."""
    pairs = []
    for package in _PACKAGES:
        theirs = importlib.import_module(f"torchmetrics.{package}")
        for info in pkgutil.iter_modules(theirs.__path__):
            module = importlib.import_module(f"torchmetrics.{package}.{info.name}")
            for name, value in vars(module).items():
                if (
                    inspect.isclass(value)
                    and value.__module__ == module.__name__
                    and not name.startswith("_")
                    and hasattr(getattr(ttm, package), name)
                ):
                    pairs.append((f"{package}.{info.name}", name))
    return pairs


@pytest.mark.parametrize(("module", "name"), _module_paths())
def test_every_class_is_importable_from_torchmetrics_module_path(module: str, name: str) -> None:
    ours = importlib.import_module(f"torchtally.compat.torchmetrics.{module}")
    package = module.split(".")[0]
    assert getattr(ours, name) is getattr(getattr(ttm, package), name)


def test_base_module_paths() -> None:
    from torchtally.compat.torchmetrics.collections import MetricCollection
    from torchtally.compat.torchmetrics.metric import Metric

    assert Metric is ttm.Metric
    assert MetricCollection is ttm.MetricCollection
    assert issubclass(TorchMetricsUserError, Exception)


@pytest.mark.parametrize(
    ("x", "y", "reorder"),
    [
        (torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0]), False),
        (torch.tensor([3.0, 2.0, 1.0, 0.0]), torch.tensor([0.0, 1.0, 2.0, 2.0]), False),
        (torch.tensor([2.0, 0.0, 3.0, 1.0]), torch.tensor([0.5, 1.0, 2.0, 2.0]), True),
        (torch.tensor([[0.0, 1.0, 1.0, 2.0]]), torch.tensor([[1.0, 2.0, 3.0, 4.0]]), False),
        (torch.tensor([1, 2, 3, 4]), torch.tensor([1, 2, 3, 4]), False),
    ],
)
def test_auc_matches_torchmetrics(x: torch.Tensor, y: torch.Tensor, reorder: bool) -> None:
    torch.testing.assert_close(
        compute.auc(x, y, reorder=reorder), tm_compute.auc(x, y, reorder=reorder)
    )


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        (torch.tensor([0.0, 2.0, 1.0]), torch.ones(3), "neither increasing or decreasing"),
        (torch.ones(2, 3), torch.ones(2, 3), "to be 1d"),
        (torch.ones(3), torch.ones(4), "same number of elements"),
    ],
)
def test_auc_refuses_as_torchmetrics(x: torch.Tensor, y: torch.Tensor, message: str) -> None:
    for auc in (compute.auc, tm_compute.auc):
        with pytest.raises(ValueError, match=message):
            auc(x, y)


def test_data_helpers_match_torchmetrics() -> None:
    stacked = torch.randn(4, 3)
    for name in ("dim_zero_sum", "dim_zero_mean", "dim_zero_max", "dim_zero_min"):
        torch.testing.assert_close(getattr(data, name)(stacked), getattr(tm_data, name)(stacked))
    pieces = [torch.tensor(1.0), torch.tensor([2.0, 3.0])]
    torch.testing.assert_close(data.dim_zero_cat(pieces), tm_data.dim_zero_cat(pieces))
    with pytest.raises(ValueError, match="No samples to concatenate"):
        data.dim_zero_cat([])
    labels = torch.tensor([[0, 2], [1, 1]])
    torch.testing.assert_close(data.to_onehot(labels), tm_data.to_onehot(labels))
    torch.testing.assert_close(data.to_onehot(labels, 4), tm_data.to_onehot(labels, 4))
    probs = torch.tensor([[1.1, 2.0, 3.0], [2.0, 1.0, 0.5]])
    for k in (1, 2):
        torch.testing.assert_close(data.select_topk(probs, k), tm_data.select_topk(probs, k))
    torch.testing.assert_close(data.to_categorical(probs), tm_data.to_categorical(probs))
    assert data._flatten([[1, 2], [3]]) == tm_data._flatten([[1, 2], [3]])


@pytest.mark.parametrize("reduction", ["micro", "macro", "weighted", "none", None])
def test_class_reduce_matches_torchmetrics(reduction: Any) -> None:
    num, denom = torch.tensor([1.0, 0.0, 3.0]), torch.tensor([2.0, 0.0, 4.0])
    weights = torch.tensor([2, 0, 4])
    torch.testing.assert_close(
        distributed.class_reduce(num, denom, weights, reduction),
        tm_distributed.class_reduce(num, denom, weights, reduction),
    )
    for mode in ("elementwise_mean", "sum", "none", None):
        torch.testing.assert_close(distributed.reduce(num, mode), tm_distributed.reduce(num, mode))


def test_enums_compare_as_their_strings() -> None:
    assert enums.ClassificationTask.from_str("Binary") == "binary"
    assert enums.ClassificationTask.MULTILABEL == tm.utilities.enums.ClassificationTask.MULTILABEL
    with pytest.raises(ValueError, match="Invalid ClassificationTask"):
        enums.ClassificationTask.from_str("regression")


@pytest.mark.slow
def test_gather_all_tensors_matches_torchmetrics_over_two_ranks() -> None:
    for rank in run_local_ranks(gathered_tensors, 2, timeout=300):
        for name, (ours, theirs) in rank.items():
            assert ours == theirs, name
