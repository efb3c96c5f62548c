"""A small deterministic model and loss shared by the optimizer tests (imported by name: the
test folders have no `__init__.py`, so pytest puts this folder on `sys.path`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch import nn


class TinyModel(nn.Module):
    """Parameters of every rank an optimizer treats differently: a 0-dim scalar, a vector,
    matrices, and a 3-d tensor (Adafactor factors its last two dimensions)."""

    def __init__(self, dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(1234)

        def draw(*shape: int) -> nn.Parameter:
            return nn.Parameter(
                (torch.randn(shape, generator=g, dtype=torch.float64) * 0.5).to(dtype)
            )

        self.w1 = draw(4, 3)
        self.b1 = draw(3)
        self.w2 = draw(2, 3, 2)
        self.scale = draw()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(x @ self.w1 + self.b1)
        return torch.einsum("bi,kij->bkj", hidden, self.w2).flatten(1) * self.scale


def batches(
    steps: int, dtype: torch.dtype = torch.float64
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Inputs and targets for each step, from a fixed seed."""
    g = torch.Generator().manual_seed(99)
    return [
        (
            torch.randn(5, 4, generator=g, dtype=torch.float64).to(dtype),
            torch.randn(5, 4, generator=g, dtype=torch.float64).to(dtype),
        )
        for _ in range(steps)
    ]


def train(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    steps: int,
    after_step: Callable[[], None] | None = None,
) -> None:
    """Run `steps` steps of mean squared error on the fixed batches."""
    for x, y in batches(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        if after_step is not None:
            after_step()


def paired_params(a: nn.Module, b: nn.Module) -> Iterator[tuple[str, torch.Tensor, torch.Tensor]]:
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        yield name, p, q
