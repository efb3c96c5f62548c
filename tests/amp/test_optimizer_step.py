"""`optimizer_step` against the same recipe written with torch's own clipping utilities."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
from torch import nn

from torchtally.amp import GradScaler, optimizer_step
from torchtally.runtime import step_closure, trace
from torchtally.runtime._backend import set_current_backend


@pytest.fixture(autouse=True)
def _no_backend() -> None:
    set_current_backend(None)


def _setup(seed: int) -> tuple[nn.Module, nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    x, y = 3 * torch.randn(32, 6), torch.randint(0, 3, (32,))
    return model, copy.deepcopy(model), x, y


def _reference_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    clip: Callable[[list[nn.Parameter]], object],
) -> None:
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    clip(list(model.parameters()))
    optimizer.step()
    optimizer.zero_grad()


@pytest.mark.parametrize("scaled", [False, True], ids=["no-scaler", "dynamic-scaler"])
@pytest.mark.parametrize(
    ("kwargs", "clip"),
    [
        ({"max_gradient_norm": 0.05}, lambda ps: nn.utils.clip_grad_norm_(ps, 0.05)),
        ({"max_gradient_value": 0.01}, lambda ps: nn.utils.clip_grad_value_(ps, 0.01)),
    ],
    ids=["by-norm", "by-value"],
)
def test_matches_backward_clip_step_with_torch_clipping(
    kwargs: dict[str, float], clip: Callable[[list[nn.Parameter]], object], scaled: bool
) -> None:
    model, reference, x, y = _setup(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
    ref_optimizer = torch.optim.SGD(reference.parameters(), lr=0.5, momentum=0.5)
    scaler = GradScaler(loss_scale="dynamic", init_scale=2.0**10) if scaled else None

    @trace  # inside a traced step: any host read would raise
    def step() -> torch.Tensor:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer_step(loss, optimizer, scaler, **kwargs)
        return loss

    # the clipping must actually bite for the comparison to mean something
    nn.functional.cross_entropy(reference(x), y).backward()
    grads = [p.grad.clone() for p in reference.parameters()]  # type: ignore[union-attr]
    reference.zero_grad()
    assert torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])) > 0.05
    assert max(g.abs().max() for g in grads) > 0.01

    for _ in range(3):
        step()
        _reference_step(reference, ref_optimizer, x, y, clip)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
        assert p.grad is None or not p.grad.any()  # gradients are zeroed after the step


def test_an_infinite_loss_skips_the_step_and_halves_the_scale_inside_a_trace() -> None:
    model, reference, x, _ = _setup(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(loss_scale="dynamic", init_scale=64.0)
    scales: list[float] = []

    @step_closure
    def record(scale: torch.Tensor) -> None:
        scales.append(scale.item())

    @trace
    def step(factor: torch.Tensor) -> None:
        loss = model(x).sum() * factor
        optimizer_step(loss, optimizer, scaler, max_gradient_norm=1.0)
        record(scaler.get_scale())

    step(torch.tensor(float("inf")))
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)
    step(torch.tensor(1.0))
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), reference.parameters()))
    assert scales == [32.0, 32.0]


def test_several_optimizers_are_stepped_together() -> None:
    model, reference, x, y = _setup(2)
    first, second = model[0], model[2]
    optimizers = [
        torch.optim.SGD(first.parameters(), lr=0.1),
        torch.optim.SGD(second.parameters(), lr=0.2),
    ]
    ref_optimizers = [
        torch.optim.SGD(reference[0].parameters(), lr=0.1),
        torch.optim.SGD(reference[2].parameters(), lr=0.2),
    ]
    optimizer_step(nn.functional.cross_entropy(model(x), y), optimizers, GradScaler("dynamic"))
    nn.functional.cross_entropy(reference(x), y).backward()
    for opt in ref_optimizers:
        opt.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)


def test_arguments_are_checked() -> None:
    model, _, x, y = _setup(3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = nn.functional.cross_entropy(model(x), y)
    with pytest.raises(ValueError, match="cannot both be set"):
        optimizer_step(loss, optimizer, None, max_gradient_norm=1.0, max_gradient_value=1.0)
    with pytest.raises(ValueError, match="Argument `max_gradient_norm` must be a number >= 0"):
        optimizer_step(loss, optimizer, None, max_gradient_norm=-1.0)
    with pytest.raises(TypeError, match="Argument `optimizer` must be an optimizer"):
        optimizer_step(loss, "sgd", None)
    with pytest.raises(TypeError, match=r"Argument `grad_scaler` must be a torchtally\.amp"):
        optimizer_step(loss, optimizer, torch.amp.GradScaler("cpu"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Argument `loss` must be a tensor"):
        optimizer_step(1.0, optimizer, None)  # type: ignore[arg-type]
