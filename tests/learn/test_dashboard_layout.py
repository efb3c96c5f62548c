"""The dashboard's screen layout at different terminal sizes, rendered to text."""

from __future__ import annotations

import io
import math
import re

from rich.console import Console

from torchtally._records import SYSTEM_SPLIT, MetricRecord, Progress, RunInfo
from torchtally.learn._dashboard.layout import build_screen
from torchtally.learn._dashboard.state import RunSnapshot, RunState


def _snapshot(names=("loss", "accuracy"), steps=60) -> RunSnapshot:
    clock = iter(range(10_000)).__next__
    state = RunState(lambda: float(clock()))
    state.start(RunInfo(("train", "valid"), 3, {"train": names, "valid": names}))
    for step in range(1, steps + 1):
        state.progress(Progress("train", 1, 3, step, steps, step, 500.0))
        state.records(
            [
                MetricRecord("train", 1, step, name, 0.5 + 0.4 * math.sin(step / 9 + i), 0.0, "%")
                for i, name in enumerate(names)
            ]
        )
    state.records([MetricRecord(SYSTEM_SPLIT, 0, 0, "gpu_power", 251.0, 0.0, "W")])
    return state.snapshot(with_history=True)


def _screen(snapshot: RunSnapshot, width: int, height: int, output=()) -> list[str]:
    console = Console(
        file=io.StringIO(), width=width, height=height, record=True, color_system=None
    )
    console.print(build_screen(snapshot, list(output), "", True, width, height))
    return console.export_text().splitlines()


def test_wide_terminals_put_the_metrics_beside_the_plots():
    lines = _screen(_snapshot(), 132, 40)
    assert len(lines) == 40 and max(len(line) for line in lines) == 132
    assert lines[0].startswith(" torchtally  train │ epoch 1/3 │ step 60/60")
    assert lines[0].endswith("q: stop  ^C: interrupt")
    header = next(line for line in lines if "╭─ metrics" in line)
    assert header.startswith("╭─ loss (%)") and header.endswith("╮")
    assert "gpu power" in "\n".join(lines) and "251.0 W" in "\n".join(lines)
    assert lines[-1].startswith("╰") and lines[-1].endswith("╯")  # the full height is used


def test_narrow_terminals_put_the_metrics_under_two_plot_columns():
    lines = _screen(_snapshot(), 80, 24)
    assert len(lines) == 24 and max(len(line) for line in lines) == 80
    row = next(line for line in lines if "╭─ loss (%)" in line)
    assert "╭─ accuracy (%)" in row  # side by side
    assert any(line.startswith("╭─ metrics") for line in lines)


def test_plots_that_do_not_fit_are_counted():
    names = ("loss", "accuracy", "precision", "recall", "f1", "auroc")
    text = "\n".join(_screen(_snapshot(names), 100, 24))
    # 100×24: one column of plots beside the metrics, room for two rows of them.
    assert "╭─ loss (%)" in text and "╭─ accuracy (%)" in text and "╭─ precision" not in text
    assert "+4 more: enlarge the terminal" in text


def test_an_odd_number_of_plots_leaves_a_blank_cell():
    names = ("loss", "accuracy", "learning_rate", "f1", "auroc")
    lines = _screen(_snapshot(names), 130, 40)
    text = "\n".join(lines)
    for name in names:
        assert f"╭─ {name} (%)" in text
    last_row = next(line for line in lines if "╭─ auroc (%)" in line)
    # auroc alone on the last row, a blank cell beside it, then the metrics panel's side.
    assert re.match(r"╭─ auroc \(%\) ─+╮ {20,}│ +│$", last_row)
    assert "Layout(" not in text  # rich's placeholder for an empty cell


def test_tiny_terminals_keep_the_status_and_ask_for_room():
    lines = _screen(_snapshot(), 36, 10)
    assert lines[0].startswith(" torchtally ")
    assert any("plots need ≥40×12 (now 36×10)" in line for line in lines)
    assert not any("╭─ loss" in line for line in lines)


def test_the_last_output_lines_get_a_panel():
    output = [f"user line {i}" for i in range(6)]
    lines = _screen(_snapshot(), 120, 36, output)
    text = "\n".join(lines)
    assert lines[-6].startswith("╭─ output") and lines[-1].startswith("╰")
    assert "user line 2" in text and "user line 5" in text and "user line 1" not in text


def test_before_any_value_there_is_already_a_screen():
    state = RunState()
    state.start(RunInfo(("train", "valid"), 3, {"train": ("loss",)}))
    text = "\n".join(_screen(state.snapshot(with_history=True), 100, 30))
    assert "starting train, valid …" in text
    assert "plots appear with the first values" in text
    assert " run " in text and "epoch 1/3" in text
