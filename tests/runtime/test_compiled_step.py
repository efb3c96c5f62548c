"""A backend that asks for `torch.compile`: traced steps compile, closures and summaries still
run after the step (a graph break at each call), the step is not recompiled as the executor's
step number changes, and reads are still refused. Tiny shapes: compiling is the expensive part,
so only the first test runs Inductor; the others count Dynamo's graphs on its eager backend."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch._dynamo.testing import CompileCounter
from torch._dynamo.utils import counters

from torchtally.runtime import TensorReadError, backend, step_closure, summarize_scalar, trace
from torchtally.runtime._backend import set_current_backend
from torchtally.utils.data import DataExecutor


@pytest.fixture(autouse=True)
def _no_backend() -> Any:
    yield
    set_current_backend(None)


def test_a_compiled_step_matches_eager_and_runs_its_closures_after_it() -> None:
    backend("CPU", compile={"dynamic": False})
    seen: list[list[float]] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        seen.append(t.tolist())

    def body(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(x @ w)
        record(h.sum(0))
        return (h * 2).sum()

    compiled_step = trace(body)
    x, w = torch.arange(6.0).reshape(3, 2) / 6, torch.tensor([[1.0, -1.0], [0.5, 2.0]])
    out = [compiled_step(x, w), compiled_step(x + 1, w)]
    set_current_backend(None)
    expected = [body(x, w), body(x + 1, w)]  # eager, outside any step: closures run at once
    assert len(seen) == 4
    assert seen[:2] == seen[2:]
    torch.testing.assert_close(out, expected)


class Writer:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int]] = []

    def add_scalar(self, name: str, value: float, global_step: int) -> None:
        self.scalars.append((name, value, global_step))


def test_executor_steps_do_not_recompile_a_step_with_closures_and_summaries() -> None:
    counter = CompileCounter()
    backend("CPU", compile={"backend": counter})
    losses: list[float] = []

    @step_closure
    def record(loss: torch.Tensor) -> None:
        losses.append(loss.item())

    @trace
    def step(batch: torch.Tensor) -> torch.Tensor:
        loss = (batch * 3).sum()
        record(loss)
        summarize_scalar("loss", loss)
        return loss + 1

    writer = Writer()
    batches = [torch.full((2,), float(i)) for i in range(5)]
    graphs, frames = [], []
    for batch in DataExecutor(batches, writer=writer):
        step(batch)
        graphs.append(counter.frame_count)
        frames.append(counters["frames"]["total"])  # every frame Dynamo (re)compiled
    assert losses == [0.0, 6.0, 12.0, 18.0, 24.0]
    assert writer.scalars == [("loss", 6.0 * i, i) for i in range(5)]
    assert graphs[0] >= 1 and len(set(graphs)) == 1  # graphs traced once, then reused
    assert len(set(frames)) == 1  # nothing recompiled as the step number changed


def test_a_compiled_step_still_refuses_reads() -> None:
    backend("CPU", compile={"backend": "eager"})

    @trace
    def step(x: torch.Tensor) -> float:
        return float(x.sum())

    with pytest.raises(TensorReadError, match=r"float\(tensor\)"):
        step(torch.ones(2))
