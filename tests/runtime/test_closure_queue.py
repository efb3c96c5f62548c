"""The closure queue's non-blocking order (CUDA-style copies, simulated with fake events), and
the real pinned-memory path on a GPU when one is present."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import torchtally.runtime._queue as queue_module
from torchtally.runtime import checkpoint_closure, step_closure, trace
from torchtally.runtime._backend import set_current_backend
from torchtally.runtime._materialize import Materialized, materialize
from torchtally.utils.data import DataExecutor


class FakeEvent:
    """A CUDA event stand-in: `query()` is False until the test completes it."""

    def __init__(self) -> None:
        self.done = False
        self.blocked = False  # whether anyone waited on it before it completed

    def query(self) -> bool:
        return self.done

    def synchronize(self) -> None:
        self.blocked = self.blocked or not self.done
        self.done = True


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[FakeEvent]:
    created: list[FakeEvent] = []

    def fake_materialize(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Materialized:
        copies = materialize(args, kwargs)
        created.append(FakeEvent())
        return Materialized(copies.args, copies.kwargs, [created[-1]])

    monkeypatch.setattr(queue_module, "materialize", fake_materialize)
    set_current_backend(None)
    return created


def test_closures_wait_for_their_copies_without_blocking_the_loop(events: list[FakeEvent]) -> None:
    seen: list[float] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        seen.append(t.item())

    @trace
    def step(batch: torch.Tensor) -> None:
        record(batch * 10)

    progress = []
    for i, batch in enumerate(DataExecutor([torch.tensor(float(i)) for i in range(4)])):
        progress.append(list(seen))
        step(batch)
        if i == 1:
            events[0].done = True  # step 0's copy lands during step 1
        if i == 2:
            events[2].done = True  # step 2's copy lands before step 1's: order is kept
    # nothing ran while copies were in flight; step 0 ran once its copy landed; the end of the
    # run waits for everything, in call order
    assert progress == [[], [], [0.0], [0.0]]
    assert seen == [0.0, 10.0, 20.0, 30.0]
    assert [e.blocked for e in events] == [False, True, False, True]


def test_a_checkpoint_closure_forces_the_calls_before_it(events: list[FakeEvent]) -> None:
    log: list[str] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        log.append(f"loss {t.item():g}")

    @checkpoint_closure
    def save(i: int) -> None:
        log.append(f"save {i}")

    progress = []
    for i, batch in enumerate(DataExecutor([torch.tensor(1.0)] * 4, checkpoint_steps=2)):
        progress.append(list(log))
        record(batch + i)
        save(i)
    assert progress[1] == []  # step 0: a copy in flight and no checkpoint: nothing forced
    assert progress[2] == ["loss 1", "loss 2", "save 1"]  # step 1 checkpoints: all forced
    assert log == ["loss 1", "loss 2", "save 1", "loss 3", "loss 4", "save 3"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_arguments_are_copied_into_pinned_memory_behind_an_event() -> None:
    device = torch.device("cuda")
    x = torch.arange(1_000_000, dtype=torch.float32, device=device)
    copies = materialize((x, {"y": [x * 2]}), {"scale": x.sum()})
    host = copies.args[0]
    assert host.device.type == "cpu" and host.is_pinned()
    x.add_(1)  # queued after the copy on the same stream: the copy keeps the old values
    copies.wait()
    assert copies.ready()
    assert torch.equal(host, torch.arange(1_000_000, dtype=torch.float32))
    assert copies.args[1]["y"][0][-1].item() == 2 * 999_999
    assert copies.kwargs["scale"].item() == pytest.approx(float(sum(range(1_000_000))), rel=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_training_loop_logs_every_step_in_order() -> None:
    from torchtally.runtime import backend, compile

    gpu = backend("GPU")
    with gpu.device:
        model = torch.nn.Linear(4, 1)
    compiled = compile(model, gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses: list[float] = []

    @step_closure
    def record(loss: torch.Tensor) -> None:
        assert loss.device.type == "cpu"
        losses.append(loss.item())

    @trace
    def step(batch: torch.Tensor) -> torch.Tensor:
        loss = compiled(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        record(loss)
        return loss

    batches = [torch.ones(8, 4, device=gpu.device)] * 20
    expected = []
    try:
        for batch in DataExecutor(batches):
            expected.append(step(batch))
    finally:
        set_current_backend(None)
    assert losses == [t.item() for t in expected]
    assert losses[-1] < losses[0]
