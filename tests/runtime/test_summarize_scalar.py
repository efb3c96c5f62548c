"""`summarize_scalar` writes TensorBoard events at the executor's step, read back from disk."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter

from torchtally.runtime import summarize_scalar, trace
from torchtally.runtime._backend import set_current_backend
from torchtally.utils.data import DataExecutor


def _scalars(log_dir: Path, tag: str) -> list[tuple[int, float]]:
    events = EventAccumulator(str(log_dir))
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def test_scalars_from_inside_and_outside_the_step_are_written(tmp_path: Path) -> None:
    set_current_backend(None)
    writer = SummaryWriter(log_dir=str(tmp_path))
    batches = [torch.full((2,), float(i)) for i in range(4)]
    state = torch.zeros(())

    @trace
    def step(batch: torch.Tensor) -> torch.Tensor:
        loss = batch.mean() * 0.5
        summarize_scalar("train/loss", loss)
        summarize_scalar("train/state", state)
        state.add_(1)  # the summary holds the value at the end of the step
        return loss

    for i, batch in enumerate(DataExecutor(batches, num_steps=6, writer=writer)):
        step(batch)
        summarize_scalar("train/python", i * 1.5)
    writer.close()
    assert _scalars(tmp_path, "train/loss") == [
        (0, 0.0),
        (1, 0.5),
        (2, 1.0),
        (3, 1.5),
        (4, 0.0),
        (5, 0.5),
    ]
    assert _scalars(tmp_path, "train/state") == [(s, float(s + 1)) for s in range(6)]
    assert _scalars(tmp_path, "train/python") == [(s, s * 1.5) for s in range(6)]


def test_without_a_writer_the_value_is_dropped_with_a_warning() -> None:
    with pytest.warns(UserWarning, match=r"summarize_scalar\('nowhere'\) has no SummaryWriter"):
        summarize_scalar("nowhere", torch.tensor(1.0))
    for _ in DataExecutor([torch.zeros(1)]):
        summarize_scalar("nowhere", 2.0)  # warned once per name


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"Argument `value` must hold exactly one element"):
        summarize_scalar("loss", torch.ones(3))
    with pytest.raises(TypeError, match="Argument `value` must be a tensor or a number"):
        summarize_scalar("loss", "high")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Argument `name` must be a non-empty string"):
        summarize_scalar("", 1.0)
