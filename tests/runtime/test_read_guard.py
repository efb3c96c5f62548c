"""Reading a tensor's value inside a traced step raises `TensorReadError`; metadata stays free."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from torchtally.runtime import TensorReadError, in_step, reads_forbidden, step_closure, trace
from torchtally.runtime._backend import set_current_backend


@pytest.fixture(autouse=True)
def _no_backend() -> None:
    set_current_backend(None)


def _branch(t: torch.Tensor) -> int:
    if t > 0:  # a tensor in a Python condition
        return 1
    return 0


READS: list[tuple[str, Callable[[torch.Tensor], Any], str]] = [
    ("item", lambda t: t.item(), "Tensor.item()"),
    ("float", float, "float(tensor)"),
    ("int", int, "int(tensor)"),
    ("bool", bool, "bool(tensor)"),
    ("branch", _branch, "bool(tensor)"),
    ("tolist", lambda t: t.tolist(), "Tensor.tolist()"),
    ("print", print, "printing a tensor"),
    ("repr", repr, "printing a tensor"),
    ("fstring", lambda t: f"{t:.3f}", "formatting a tensor"),
    ("numpy", lambda t: t.numpy(), "Tensor.numpy()"),
    ("index", lambda t: [1, 2, 3][t.long()], "as an index"),
    ("equal", lambda t: torch.equal(t, t), "torch.equal()"),
    ("allclose", lambda t: torch.allclose(t, t), "torch.allclose()"),
    ("contains", lambda t: 3.0 in t, "`value in tensor`"),
]


@pytest.mark.parametrize(("label", "read", "what"), READS, ids=[r[0] for r in READS])
def test_reading_a_step_tensor_raises_and_names_the_read(
    label: str, read: Callable[[torch.Tensor], Any], what: str
) -> None:
    @trace
    def step(x: torch.Tensor) -> None:
        read(x.sum())

    with pytest.raises(TensorReadError) as info:
        step(torch.ones(3))
    message = str(info.value)
    assert what in message
    assert "`@torchtally.step_closure`" in message
    assert "test_reading_a_step_tensor_raises_and_names_the_read.<locals>.step" in message


def test_tensors_from_before_the_step_are_guarded_too() -> None:
    weight = torch.tensor([2.0])

    @trace
    def step() -> None:
        float(weight)

    with pytest.raises(TensorReadError, match=r"float\(tensor\)"):
        step()


def test_metadata_and_pure_tensor_work_are_allowed() -> None:
    @trace
    def step(x: torch.Tensor) -> tuple[Any, ...]:
        assert in_step() and reads_forbidden()
        y = (x * 2).to(torch.float64).cpu()  # a dtype change and a CPU no-op move stay on device
        return (tuple(y.shape), y.dtype, y.device.type, len(y), y.numel(), y.dim(), y)

    shape, dtype, device, length, numel, dim, y = step(torch.arange(4.0))
    assert (shape, dtype, device, length, numel, dim) == ((4,), torch.float64, "cpu", 4, 4, 1)
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0]  # free to read once the step returned
    assert not in_step() and not reads_forbidden()


@pytest.mark.parametrize(
    "move",
    [
        lambda t: t.cpu(),
        lambda t: t.to("cpu"),
        lambda t: t.to(device="cpu"),
        lambda t: t.to(torch.device("cpu"), torch.float32),
        lambda t: t.to(torch.zeros(1)),
    ],
    ids=["cpu", "to-str", "to-kw", "to-device-dtype", "to-like-tensor"],
)
def test_moving_a_device_tensor_to_the_host_is_a_read(move: Callable[[torch.Tensor], Any]) -> None:
    # The meta device stands in for an accelerator: its tensors are not on the host.
    @trace
    def step(x: torch.Tensor) -> None:
        move(x)

    with pytest.raises(TensorReadError, match="Tensor"):
        step(torch.empty(2, device="meta"))


def test_a_dtype_change_of_a_device_tensor_is_not_a_read() -> None:
    @trace
    def step(x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float16) + x.to(dtype=torch.float64).to(torch.float16)

    assert step(torch.empty(2, device="meta")).dtype == torch.float16


def test_a_failed_step_drops_its_closures_and_releases_the_guard() -> None:
    seen: list[float] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        seen.append(t.item())

    @trace
    def step(x: torch.Tensor) -> None:
        record(x)
        x.item()

    with pytest.raises(TensorReadError):
        step(torch.tensor(1.0))
    assert seen == []
    assert not reads_forbidden()
    assert torch.tensor(3.0).item() == 3.0


def test_nested_traced_functions_are_part_of_the_outer_step() -> None:
    order: list[str] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        order.append(f"closure {t.item():g}")

    @trace
    def inner(x: torch.Tensor) -> torch.Tensor:
        record(x)
        return x + 1

    @trace
    def outer(x: torch.Tensor) -> torch.Tensor:
        y = inner(x)
        order.append("outer body done")
        return y

    assert outer(torch.tensor(1.0)).item() == 2.0
    assert order == ["outer body done", "closure 1"]


def test_trace_rejects_a_non_callable() -> None:
    with pytest.raises(TypeError, match="Argument `step_fn` must be a callable"):
        trace(3)  # type: ignore[type-var]
