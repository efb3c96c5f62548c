"""Step and checkpoint closures: when they run and which values they see."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from torchtally.runtime import checkpoint_closure, step_closure, trace
from torchtally.runtime._backend import set_current_backend
from torchtally.runtime._run_context import current_run
from torchtally.utils.data import DataExecutor


@pytest.fixture(autouse=True)
def _no_backend() -> None:
    set_current_backend(None)


def _batches(n: int) -> list[torch.Tensor]:
    return [torch.tensor([float(i)]) for i in range(n)]


def test_outside_any_step_or_run_a_closure_runs_at_once_on_a_copy() -> None:
    seen: list[Any] = []

    @step_closure
    def record(t: torch.Tensor, tag: str) -> None:
        seen.append((tag, t))

    t = torch.tensor([1.0, 2.0])
    assert record(t, tag="now") is None
    assert seen[0][0] == "now" and seen[0][1].tolist() == [1.0, 2.0]
    t.add_(10)  # the closure holds its own copy
    assert seen[0][1].tolist() == [1.0, 2.0]


def test_in_a_step_a_closure_runs_after_the_step_with_its_final_values() -> None:
    order: list[Any] = []

    @step_closure
    def record(t: torch.Tensor, nested: dict[str, list[torch.Tensor]]) -> None:
        order.append(("closure", t.tolist(), nested["a"][0].tolist(), t.requires_grad))

    @trace
    def step(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        acc = torch.zeros(2)
        record(acc, {"a": [y]})
        acc.add_(y)  # updated after the call: the closure sees this value
        order.append("step body done")
        return acc

    w = torch.ones(2, requires_grad=True)
    step(w)
    assert order == ["step body done", ("closure", [2.0, 2.0], [2.0, 2.0], False)]


def test_in_an_executor_closures_run_at_the_end_of_each_step_in_call_order() -> None:
    log: list[Any] = []

    @step_closure
    def record(tag: str, t: torch.Tensor) -> None:
        log.append((tag, t.item()))

    @trace
    def step(batch: torch.Tensor) -> torch.Tensor:
        value = batch.sum() * 10
        record("in step", value)
        return value

    for i, batch in enumerate(DataExecutor(_batches(3))):
        out = step(batch)
        record("loop body", out)
        out.add_(1)  # a loop-body call sees the last value set before the step ends
        log.append(("body end", i))
        assert ("in step", i * 10.0) not in log  # not yet: the executor step is still open
    assert log == [
        ("body end", 0),
        ("in step", 0.0),
        ("loop body", 1.0),
        ("body end", 1),
        ("in step", 10.0),
        ("loop body", 11.0),
        ("body end", 2),
        ("in step", 20.0),
        ("loop body", 21.0),
    ]


def test_a_step_closure_sees_the_end_of_its_step_not_later_changes() -> None:
    seen: list[float] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        seen.append(t.item())

    state = torch.zeros(())

    @trace
    def step(batch: torch.Tensor) -> None:
        state.add_(batch.sum())
        record(state)

    for _ in DataExecutor(_batches(2)):
        step(torch.ones(1))
        state.add_(100)  # after the step: not what the in-step call materialised
    assert seen == [1.0, 102.0]


@pytest.mark.parametrize(
    ("num_steps", "every", "expected"),
    [
        (10, 3, [2, 5, 8, 9]),
        (9, 3, [2, 5, 8]),
        (4, 1, [0, 1, 2, 3]),
        (5, 20, [4]),
        (6, None, []),
    ],
)
def test_checkpoint_closures_fire_on_k_minus_1_2k_minus_1_and_the_last_step(
    num_steps: int, every: int | None, expected: list[int]
) -> None:
    saved: list[int] = []
    in_step_saves: list[int] = []

    @checkpoint_closure
    def save(step: int) -> None:
        saved.append(step)

    @checkpoint_closure
    def save_from_step(step: torch.Tensor) -> None:
        in_step_saves.append(int(step.item()))

    @trace
    def step_fn(batch: torch.Tensor, i: int) -> None:
        save_from_step(torch.tensor(i))

    executor = DataExecutor(_batches(3), num_steps=num_steps, checkpoint_steps=every)
    flags = []
    for i, batch in enumerate(executor):
        step_fn(batch, i)
        save(i)
        flags.append(executor.is_checkpoint_step())
    assert saved == expected
    assert in_step_saves == expected
    assert [i for i, flag in enumerate(flags) if flag] == expected


def test_a_checkpoint_closure_runs_before_the_next_step_changes_the_weights() -> None:
    weight = torch.zeros(())
    snapshots: list[float] = []

    @checkpoint_closure
    def save() -> None:
        snapshots.append(weight.item())  # reads live state, not an argument

    @trace
    def step(batch: torch.Tensor) -> None:
        weight.add_(1)

    for batch in DataExecutor(_batches(4), checkpoint_steps=2):
        step(batch)
        save()
    assert snapshots == [2.0, 4.0]


def test_outside_an_executor_a_checkpoint_closure_always_runs() -> None:
    calls: list[int] = []

    @checkpoint_closure
    def save(i: int) -> None:
        calls.append(i)

    save(7)
    assert calls == [7]


def test_the_executor_restarts_the_loader_and_stops_at_num_steps() -> None:
    class Loader:
        def __init__(self) -> None:
            self.passes = 0

        def __iter__(self) -> Any:
            self.passes += 1
            return iter(_batches(3))

        def __len__(self) -> int:
            return 3

    loader = Loader()
    executor = DataExecutor(loader, num_steps=7)
    seen = [batch.item() for batch in executor]
    assert seen == [0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0]
    assert loader.passes == 3
    assert executor.current_step == 6 and len(executor) == 7


def test_by_default_the_executor_runs_one_pass() -> None:
    executor = DataExecutor(_batches(4))
    steps = [executor.current_step for _ in executor]
    assert steps == [0, 1, 2, 3]
    assert executor.on_final_iteration


def test_leaving_the_loop_early_still_runs_the_closures_of_the_steps_that_ran() -> None:
    seen: list[float] = []

    @step_closure
    def record(t: torch.Tensor) -> None:
        seen.append(t.item())

    for i, batch in enumerate(DataExecutor(_batches(5))):
        record(batch)
        if i == 2:
            break
    assert seen == [0.0, 1.0, 2.0]
    assert current_run() is None


def test_an_inner_executor_takes_the_closures_called_inside_its_loop() -> None:
    log: list[str] = []

    @step_closure
    def record(tag: str) -> None:
        log.append(tag)

    @checkpoint_closure
    def save(tag: str) -> None:
        log.append(tag)

    for i, _ in enumerate(DataExecutor(_batches(2), checkpoint_steps=10)):
        record(f"train {i}")
        for j, _ in enumerate(DataExecutor(_batches(2), checkpoint_steps=1)):
            record(f"eval {i}.{j}")
            save(f"eval save {i}.{j}")
        save(f"train save {i}")
    assert log == [
        "eval 0.0",
        "eval save 0.0",
        "eval 0.1",
        "eval save 0.1",
        "train 0",  # queued on the outer run before the inner loop: runs when its step ends
        "eval 1.0",
        "eval save 1.0",
        "eval 1.1",
        "eval save 1.1",
        "train 1",
        "train save 1",
    ]


def test_a_failing_closure_stops_the_loop_and_drops_the_rest() -> None:
    ran: list[int] = []

    @step_closure
    def explode(i: int) -> None:
        if i == 1:
            raise KeyError("boom")
        ran.append(i)

    with pytest.raises(KeyError, match="boom"):
        for i, _ in enumerate(DataExecutor(_batches(4))):
            explode(i)
    assert ran == [0]
    assert current_run() is None


def test_closure_and_executor_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="Argument `fn` must be a callable"):
        step_closure("not callable")  # type: ignore[type-var]
    with pytest.raises(ValueError, match=r"Argument `num_steps` must be an integer >= 1"):
        DataExecutor(_batches(2), num_steps=0)
    with pytest.raises(ValueError, match=r"Argument `checkpoint_steps` must be an integer >= 1"):
        DataExecutor(_batches(2), checkpoint_steps=0)
    with pytest.raises(TypeError, match="Argument `dataloader` must be an iterable"):
        DataExecutor(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Argument `num_steps` is required"):
        DataExecutor(iter(_batches(2)))
    with pytest.raises(ValueError, match="yielded no batches"):
        list(DataExecutor([], num_steps=2))
