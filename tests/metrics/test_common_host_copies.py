"""`torchtally.testing.assert_no_host_copies`: a copy of host data to the device inside `update`
is found without a GPU, and no registry metric makes one.

On a GPU such a copy synchronizes with the host and cannot be captured in a CUDA graph; the H200
checks (`test_common_cuda.py`) found them in retrieval and PSNR updates (9 registry cases), which
this check also finds when those fixes are undone. `assert_traceable` runs it too, so every case
of `test_common.py` goes through it; the registry test here names the check on its own.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from cases import Case
from test_common import ALL_CASES, _ids
from torch import Tensor

from torchtally.metrics import MeanMetric, Metric
from torchtally.testing import assert_no_host_copies, assert_traceable


class _Sum(Metric):
    """A sum whose update adds `extra(x)` besides the batch sum."""

    extra: Callable[[Tensor], Tensor] = staticmethod(lambda x: x.new_full((), 0.0))

    def reset(self) -> None:
        self.register_state("total", torch.zeros(()))

    def update(self, x: Tensor) -> None:
        self.total.add_(x.sum() + type(self).extra(x))

    def compute(self) -> Tensor:
        return self.total.clone()


def _summing(extra: Callable[[Tensor], Tensor]) -> Metric:
    return type("Extra", (_Sum,), {"extra": staticmethod(extra)})("sum")


HOST_COPIES = {
    "torch.tensor()": lambda x: torch.tensor(1.0, device=x.device),
    "Tensor.new_tensor()": lambda x: x.new_tensor(2.0),
    "torch.as_tensor()": lambda x: torch.as_tensor([3.0], device=x.device).sum(),
    "a CPU tensor copied over": lambda x: torch.ones(()).to(x.device),
}


@pytest.mark.parametrize("copy_kind", list(HOST_COPIES))
def test_each_kind_of_host_copy_is_named(copy_kind: str) -> None:
    metric = _summing(HOST_COPIES[copy_kind])
    with pytest.raises(AssertionError, match=r"copies host data to the device: " + copy_kind):
        assert_no_host_copies(metric, torch.ones(3))
    with pytest.raises(AssertionError, match=copy_kind):
        assert_traceable(metric, torch.ones(3))


def test_fills_and_tensors_already_on_the_device_are_no_copies() -> None:
    for extra in (
        lambda x: x.new_full((), 4.0),
        lambda x: torch.full((), 5.0, device=x.device),
        lambda x: torch.as_tensor(x).sum(),
    ):
        metric = _summing(extra)
        assert_no_host_copies(metric, torch.ones(3))
        assert float(metric.compute()) == 0.0  # checked on copies: the metric is untouched


def test_python_numbers_at_the_boundary_are_filled_on_the_device() -> None:
    """`update(loss, weight=batch_size)`: the number becomes a tensor without a copy."""
    assert_no_host_copies(MeanMetric(), torch.ones(4), weight=32)
    assert_no_host_copies(MeanMetric(), torch.ones(4), weight=0.5)


def test_the_argument_is_checked() -> None:
    with pytest.raises(TypeError, match=r"Argument `metric` must be a torchtally Metric"):
        assert_no_host_copies(torch.nn.Linear(2, 2), torch.ones(2))  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_no_registry_update_copies_host_data(case: Case) -> None:
    positional, keyword = case.batch(torch.Generator().manual_seed(0), 10)
    assert_no_host_copies(case.make(), *positional, **keyword)
