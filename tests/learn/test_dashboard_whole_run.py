"""The dashboard shows the whole run: after `fit(resume=True)` its plots and latest values start
from what the run logged before the checkpoint (read back from the FileLogger's files), placed
where the live dashboard placed them; its x axis reads in whole epochs from the first epoch with
a value; a percentage's y axis stays within 0-100% (a single point does not push it past 100%).

Oracles: an uninterrupted run's own records (what the resumed dashboard must show), positions
and ranges computed by hand."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from torchtally._records import MetricRecord, RunInfo
from torchtally.learn import Dashboard, FileLogger, Learner
from torchtally.learn._dashboard.state import RunState, Series, earlier_positions
from torchtally.learn._dashboard.terminal_plot import PlotSeries, data_ranges
from torchtally.learn._dashboard.widgets import PlotBox, epoch_range
from torchtally.learn._history import logged_before
from torchtally.metrics import AccuracyMetric, MeanMetric
from torchtally.optim import SGD

console_module = pytest.importorskip("rich.console")


def test_earlier_positions_follow_each_epochs_steps() -> None:
    records = [MetricRecord("train", 1, s, "loss", 0.0, 0.0) for s in (5, 10, 16)]
    records += [MetricRecord("train", 2, s, "loss", 0.0, 0.0) for s in (21, 32)]
    records += [MetricRecord("valid", 1, 6, "loss", 0.0, 0.0)]
    records += [MetricRecord("valid", 3, s, "loss", 0.0, 0.0) for s in (14, 15, 18)]
    records += [MetricRecord("system", 1, 0, "cpu_usage", 0.5, 0.0, "%")]
    got = earlier_positions(records)
    expected = [5 / 16, 10 / 16, 1.0, 1 + 5 / 16, 2.0, 1.0]
    # epoch 3 of valid without epoch 2 logged: its steps start at its first one (14 -> 1 of 5)
    expected += [2 + 1 / 5, 2 + 2 / 5, 3.0]
    assert got[:-1] == pytest.approx(expected)
    assert math.isnan(got[-1])


def test_a_single_percentage_point_keeps_the_axis_within_100() -> None:
    (_, y) = data_ranges([PlotSeries("valid", [1.0], [96.91])], y_bounds=(0.0, 100.0)) or ((), ())
    assert y == pytest.approx((91.91, 100.0))  # 5% of the 0-100 span below, capped at 100
    # without bounds: +-10% of the value, which ran to 106.6% before
    _, unbounded = data_ranges([PlotSeries("valid", [1.0], [96.91])]) or ((), ())
    assert unbounded[1] == pytest.approx(106.601)
    _, full = data_ranges([PlotSeries("train", [0, 1], [100.0, 100.0])], (0.0, 100.0)) or ((), ())
    assert full == pytest.approx((95.0, 100.0))
    _, low = data_ranges([PlotSeries("train", [0, 1], [0.0, 3.0])], (0.0, 100.0)) or ((), ())
    assert low == pytest.approx((0.0, 3.0))
    # a value past the bounds (a logging bug) is still drawn, not clipped away
    _, past = data_ranges([PlotSeries("train", [0, 1], [90.0, 120.0])], (0.0, 100.0)) or ((), ())
    assert past == pytest.approx((90.0, 120.0))


def test_the_x_axis_reads_in_whole_epochs() -> None:
    series = (Series("train", "", (10 / 19, 1.0, 1 + 10 / 19, 2.0), (2.0, 1.5, 1.2, 1.0)),)
    assert epoch_range(series) == (0, 2)
    assert epoch_range((Series("valid", "%", (1.0,), (0.97,)),)) == (0, 1)
    assert epoch_range((Series("train", "", (2 + 5 / 16, 4.0), (1.0, 0.5)),)) == (2, 4)
    assert epoch_range((Series("train", "", (), ()),)) is None
    console = console_module.Console(width=40, height=8, file=io.StringIO(), color_system=None)
    with console.capture() as captured:
        console.print(PlotBox("loss", series), height=8)
    axis = captured.get().splitlines()[-1].split()
    assert axis == ["0", "epoch", "2"]  # not 0.5263 ... 2


def test_a_percentage_plot_box_stays_within_100() -> None:
    series = (Series("valid", "%", (1.0,), (0.9691,)),)
    console = console_module.Console(width=40, height=10, file=io.StringIO(), color_system=None)
    with console.capture() as captured:
        console.print(PlotBox("auroc", series), height=10)
    labels = [line.split("┤")[0].strip() for line in captured.get().splitlines() if "┤" in line]
    assert labels[0] == "100"
    assert float(labels[-1]) == pytest.approx(91.91)


# ---------------------------------------------------------------- a real resumed run


def _data() -> tuple[Any, Any]:
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(48, 4, generator=gen)
    y = (x[:, 0] > 0).long()
    data = torch.utils.data.TensorDataset(x, y)
    return (
        torch.utils.data.DataLoader(data, batch_size=8),  # 6 train steps an epoch
        torch.utils.data.DataLoader(data, batch_size=16),
    )


def _learner(logdir: Path, epochs: int, observers: list[Any]) -> Learner:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    metrics = {"train": [MeanMetric("loss"), AccuracyMetric()], "valid": [MeanMetric("loss")]}
    return Learner(
        model,
        SGD(model.parameters(), lr=0.1),
        metrics=metrics,
        num_epochs=epochs,
        logdir=logdir,
        observers=observers,
        log_every=4,
    )


def _dashboard() -> Dashboard:
    console = console_module.Console(
        file=io.StringIO(), force_terminal=True, width=120, height=40, color_system=None
    )
    return Dashboard(console=console, keys=False, capture_output=False)


def test_after_a_resume_the_dashboard_plots_the_whole_run(tmp_path: Path) -> None:
    train, valid = _data()
    whole = _learner(tmp_path / "whole", 4, [])
    whole.fit(train, valid)
    expected = {
        (split, name): [r.value for r in whole.history if (r.split, r.name) == (split, name)]
        for split, name in (("train", "loss"), ("train", "accuracy"), ("valid", "loss"))
    }

    logdir = tmp_path / "run"
    _learner(logdir, 2, [FileLogger(logdir)]).fit(train, valid)
    dashboard = _dashboard()  # before the FileLogger, as make_renderer() usually is
    resumed = _learner(logdir, 4, [dashboard, FileLogger(logdir)])
    resumed.fit(train, valid, resume=True)
    history = dashboard._state.snapshot(with_history=True).history
    for (split, name), values in expected.items():
        (series,) = [s for s in history[name] if s.split == split]
        assert list(series.ys) == pytest.approx(values), (split, name)
        assert series.xs[0] <= 1.0 and series.xs[-1] == 4.0  # from epoch 1 to the end of 4
        assert list(series.xs) == sorted(series.xs)
    train_xs = next(s.xs for s in history["loss"] if s.split == "train")
    # logged at the 4th and 6th step of each 6-step epoch: epochs 1-2 read back from the logs,
    # 3-4 live, on the same scale
    assert list(train_xs) == pytest.approx([4 / 6, 1, 1 + 4 / 6, 2, 2 + 4 / 6, 3, 3 + 4 / 6, 4])


def test_logged_before_keeps_only_what_the_checkpoint_covers(tmp_path: Path) -> None:
    logger = FileLogger(tmp_path)
    logger.on_records(
        [MetricRecord("train", e, 10 * e, "loss", 1 / e, float(e)) for e in (1, 2, 3)]
        + [MetricRecord("valid", e, 2 * e, "loss", 1 / e, float(e)) for e in (1, 2, 3)]
        + [MetricRecord("test", 1, 1, "loss", 0.1, 9.0)]
        + [MetricRecord("system", 1, 0, "cpu_usage", 0.5, 1.0, "%")]
    )
    info = RunInfo(("train", "valid"), 5, {}, str(tmp_path), 3, {"train": 20, "valid": 4})
    kept = [(r.split, r.epoch) for r in logged_before(info)]
    # epoch 3 came after the checkpoint: logged again by the resumed run; test is no part of fit
    assert kept == [("train", 1), ("train", 2), ("valid", 1), ("valid", 2), ("system", 1)]
    assert logged_before(RunInfo(("train",), 5, {}, str(tmp_path), 1, None)) == []
    assert logged_before(RunInfo(("train",), 5, {}, None, 3, {"train": 20})) == []
    assert logged_before(RunInfo(("train",), 5, {}, str(tmp_path / "nope"), 3, {"train": 9})) == []


def test_a_run_state_started_from_earlier_records_shows_them_as_latest() -> None:
    state = RunState()
    earlier = [MetricRecord("valid", 2, 8, "accuracy", 0.9, 0.0, "%")]
    state.start(RunInfo(("train", "valid"), 4, {"valid": ("accuracy",)}), earlier)
    snapshot = state.snapshot(with_history=True)
    assert snapshot.latest["accuracy"]["valid"].value == 0.9
    assert snapshot.history["accuracy"][0].xs == (2.0,)
