"""PlainRenderer lines, the run model behind both renderers, and make_renderer's choice."""

from __future__ import annotations

import io
import os
import pty
import sys

import pytest

from torchtally._records import SYSTEM_SPLIT, MetricRecord, Progress, RunInfo
from torchtally.learn._dashboard.dashboard import Dashboard
from torchtally.learn._dashboard.plain import PlainRenderer
from torchtally.learn._dashboard.renderer import make_renderer
from torchtally.learn._dashboard.state import RunState

INFO = RunInfo(("train", "valid"), 5, {"train": ("loss", "accuracy"), "valid": ("loss",)})


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _train(step: int, epoch: int = 2) -> Progress:
    return Progress("train", epoch, 5, step, 47, 47 + step, 1234.0)


def test_plain_renderer_writes_progress_every_interval_and_epoch_summaries():
    clock, out = Clock(), io.StringIO()
    renderer = PlainRenderer(out, interval_s=5.0, clock=clock)
    renderer.on_run_start(INFO)
    renderer.on_records(
        [
            MetricRecord("train", 2, 48, "loss", 0.4123, 0.0),
            MetricRecord("train", 2, 48, "accuracy", 0.875, 0.0, "%"),
        ]
    )
    renderer.on_progress(_train(1))  # the first progress is always written
    clock.now = 3.0
    renderer.on_progress(_train(4))  # 3 s < 5 s: nothing
    clock.now = 12.0
    renderer.on_progress(_train(13))  # 12 steps in 12 s: 1 step/s, 34 steps left
    renderer.on_records([MetricRecord(SYSTEM_SPLIT, 0, 0, "cpu_usage", 0.231, 0.0, "%")])
    clock.now = 20.0
    renderer.on_epoch_end("train", 2)
    renderer.on_progress(Progress("valid", 2, 5, 10, 10, 94, None))
    renderer.on_records([MetricRecord("valid", 2, 10, "loss", 0.398, 0.0)])
    clock.now = 22.0
    renderer.on_epoch_end("valid", 2)
    clock.now = 30.0
    renderer.on_run_end(stopped_early=True)
    assert out.getvalue().splitlines() == [
        "run: 5 epochs (train, valid)",
        "[train] epoch 2/5 step 1/47 loss=0.412 accuracy=87.50% 1234 samples/s",
        "[train] epoch 2/5 step 13/47 loss=0.412 accuracy=87.50% 1234 samples/s ETA 0:00:34"
        " (run ETA >0:02:55)",
        "[train] epoch 2/5 done in 0:00:20: loss=0.412 accuracy=87.50%",
        "[valid] epoch 2/5 step 10/10 (run ETA >0:02:55)",  # 8 s after the last line
        "[valid] epoch 2/5 done in 0:00:02: loss=0.398",
        "[system] cpu_usage=23.10%",
        "run stopped early after 0:00:30",
    ]


def test_plain_renderer_resume_logdir_and_unknown_lengths():
    out = io.StringIO()
    renderer = PlainRenderer(out, interval_s=1.0, clock=Clock())
    renderer.on_run_start(RunInfo(("train",), 1, {}, logdir="runs/a", start_epoch=3))
    renderer.on_progress(Progress("train", 3, 1, 7, None, 7))
    renderer.on_run_end(stopped_early=False)
    assert out.getvalue().splitlines() == [
        "run: 1 epoch (train), resuming at epoch 3, logs in runs/a",
        "[train] epoch 3/1 step 7",
        "run finished in 0:00:00",
    ]


def test_plain_renderer_survives_a_broken_stream(caplog):
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError("closed pipe")

    renderer = PlainRenderer(Broken(), interval_s=1.0)
    renderer.on_run_start(INFO)  # must not raise
    renderer.on_progress(_train(1))
    renderer.on_run_end(stopped_early=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "closed pipe" in warnings[0]


@pytest.mark.parametrize("interval", [0, -1.0, float("nan"), "5", True])
def test_plain_renderer_rejects_bad_intervals(interval):
    with pytest.raises(ValueError, match=r"Argument `interval_s` must be .* Received: interval_s="):
        PlainRenderer(io.StringIO(), interval_s=interval)


def test_run_state_rates_etas_and_positions_in_epochs():
    clock = Clock()
    state = RunState(clock)
    state.start(INFO)
    state.progress(Progress("train", 1, 5, 1, 10, 1))
    clock.now = 2.0
    state.progress(Progress("train", 1, 5, 5, 10, 5))  # 4 steps in 2 s
    state.records([MetricRecord("train", 1, 5, "loss", 1.0, 0.0)])
    state.records([MetricRecord("valid", 1, 3, "loss", 2.0, 0.0)])  # no valid progress yet
    snap = state.snapshot(with_history=True)
    (train,) = snap.splits
    assert train.steps_per_second == 2.0 and train.epoch_eta == 2.5
    assert snap.run_eta == 2.5 + 4 * 10 / 2.0 and snap.run_eta_partial  # valid still unknown
    loss = {s.split: s for s in snap.history["loss"]}
    assert loss["train"].xs == (0.5,) and loss["valid"].xs == (1.0,)  # an epoch's end
    assert list(snap.latest) == ["loss", "accuracy"]  # the run's metric order
    assert state.epoch_end("train", 1) == 2.0


def test_run_state_keeps_histories_bounded():
    state = RunState(max_points=8)
    for step in range(100):
        state.records([MetricRecord("train", 1, step, "loss", float(step), 0.0)])
    (series,) = state.snapshot(with_history=True).history["loss"]
    assert 4 <= len(series.ys) <= 8
    assert series.ys[0] == 0.0 and series.ys == tuple(sorted(series.ys))  # whole run, in order
    with pytest.raises(ValueError, match="Argument `max_points` must be an integer >= 2"):
        RunState(max_points=1)


@pytest.fixture
def tty_stream(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    yield stream
    stream.close()
    os.close(master)


def test_make_renderer_picks_the_dashboard_only_for_capable_terminals(tty_stream, monkeypatch):
    assert isinstance(make_renderer(stream=io.StringIO()), PlainRenderer)
    chosen = make_renderer(lambda: None, stream=tty_stream)
    assert isinstance(chosen, Dashboard) and chosen.fallback is None
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(make_renderer(stream=tty_stream), PlainRenderer)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setitem(sys.modules, "rich", None)  # as if rich were not installed
    assert isinstance(make_renderer(stream=tty_stream), PlainRenderer)
    with pytest.raises(TypeError, match="Argument `stop_callback` must be callable or None"):
        make_renderer(stop_callback="stop")  # type: ignore[arg-type]
