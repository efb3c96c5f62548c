"""No host-to-device copy in any registry metric's update, checked without a GPU.

On a GPU, a tensor made from host data (`torch.tensor(x, device=...)`, `t.new_tensor(x)`) or a
CPU tensor moved over is a synchronizing copy, and it cannot be captured in a CUDA graph; the
H200 checks (`test_common_cuda.py`) found such copies in retrieval and PSNR updates. Here the
metric and its batches live on the meta device, where the same code runs without data: every
tensor construction from host data that lands off the CPU, and every copy from a CPU tensor into
a meta one, is recorded. A fill (`torch.full`, `new_full`) carries its number as an argument and
is no copy.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from cases import Args, Case
from test_common import ALL_CASES, _ids
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from torchtally.metrics import MeanMetric

META = torch.device("meta")
_COPIES = (torch.ops.aten._to_copy.default, torch.ops.aten.copy_.default)


class _CopiesToMeta(TorchDispatchMode):
    """Records each copy of a CPU tensor into a meta tensor."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func in _COPIES:
            sources = [a for a in tree_leaves(args) if isinstance(a, Tensor)]
            targets = [o for o in tree_leaves(out) if isinstance(o, Tensor)]
            if any(s.device.type == "cpu" for s in sources) and any(t.is_meta for t in targets):
                self.seen.append(f"{func} of a CPU tensor")
        return out


def _recording(make: Callable[..., Tensor], name: str, seen: list[str]) -> Callable[..., Tensor]:
    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> Tensor:
        made = make(*args, **kwargs)
        data = args[1] if name == "Tensor.new_tensor" else args[0] if args else None
        if made.is_meta and not (isinstance(data, Tensor) and data.is_meta):
            seen.append(f"{name} from host data")
        return made

    return wrapper


@contextlib.contextmanager
def recording_host_copies() -> Iterator[list[str]]:
    """The host-to-device copies made inside the block, as a list of descriptions."""
    seen: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch, "tensor", _recording(torch.tensor, "torch.tensor", seen))
        patch.setattr(torch, "as_tensor", _recording(torch.as_tensor, "torch.as_tensor", seen))
        patch.setattr(
            Tensor, "new_tensor", _recording(Tensor.new_tensor, "Tensor.new_tensor", seen)
        )
        with _CopiesToMeta(seen):
            yield seen


def _to_meta(args: Args) -> Args:
    def move(x: Any) -> Any:
        return x.to(META) if isinstance(x, Tensor) else x

    positional, keyword = args
    return tuple(move(a) for a in positional), {k: move(v) for k, v in keyword.items()}


def test_the_check_sees_each_kind_of_host_copy() -> None:
    like = torch.zeros(3, device=META)
    with recording_host_copies() as seen:
        torch.tensor(1.0, device=META)
        like.new_tensor(2.0)
        torch.as_tensor([1.0, 2.0], device=META)
        torch.ones(2).to(META)
        torch.full((), 3.0, device=META)  # a fill: no copy
        like.new_full((), 4.0)
        torch.as_tensor(like)  # already there: no copy
    assert len(seen) == 4, seen


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_updates_make_no_host_to_device_copy(case: Case) -> None:
    g = torch.Generator().manual_seed(0)
    batches = [_to_meta(case.batch(g, 10)) for _ in range(3)]
    metric = case.make().to(META)
    positional, keyword = batches[0]
    metric.update(*positional, **keyword)  # lazy set-up (scratch space) may move constants once
    with recording_host_copies() as seen:
        for positional, keyword in batches[1:]:
            metric.update(*positional, **keyword)
        metric.flush()
    assert not seen, f"{case.id}: {seen}"


def test_python_numbers_at_the_boundary_are_filled_on_the_device() -> None:
    """`update(loss, weight=batch_size)`: the number becomes a tensor on the metric's device
    without a copy."""
    metric = MeanMetric().to(META)
    values = torch.ones(4, device=META)
    metric.update(values, weight=2)
    with recording_host_copies() as seen:
        metric.update(values, weight=32)
        metric.update(values, weight=0.5)
    assert not seen, seen
