"""One value formatter and one summary model everywhere; plain lines carry their own step's
values.

A record is rendered by the dashboard's metrics panel, a plain progress line, the summary
table and the HTML report, and every one shows the same text. A real learner piped to the
plain renderer writes lines whose values are those of the step each line names (the values
arrive after the progress, in step closures)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import torch

import torchtally as cstorch
from torchtally._records import MetricRecord, Progress, RunInfo
from torchtally.learn import PlainRenderer, SummaryTable
from torchtally.learn._dashboard.state import RunState
from torchtally.learn._format import format_value
from torchtally.learn._learner.learner import Learner
from torchtally.learn._plots.report import write_report
from torchtally.learn._summarize import summarize
from torchtally.metrics import AccuracyMetric, MeanMetric

RECORDS = [
    MetricRecord("valid", 1, 8, "accuracy", 0.875, 100.0, "%"),
    MetricRecord("valid", 1, 8, "loss", 0.41234, 100.0),
    MetricRecord("system", 1, 0, "cpu_temperature", 61.04, 100.0, "°C"),
]
EXPECTED = {"accuracy": "87.50%", "loss": "0.412", "cpu_temperature": "61.0°C"}


def test_one_record_renders_the_same_everywhere(tmp_path: Path) -> None:
    assert {r.name: format_value(r.value, r.unit) for r in RECORDS} == EXPECTED
    info = RunInfo(("valid",), 1, {"valid": ("accuracy", "loss")})
    # Plain output: the epoch's line and the machine line.
    out = io.StringIO()
    plain = PlainRenderer(out, interval_s=1e-9)
    plain.on_run_start(info)
    plain.on_progress(Progress("valid", 1, 1, 8, 8, 0, None, 8))
    plain.on_records(RECORDS)
    plain.on_epoch_end("valid", 1)
    text = out.getvalue()
    assert "accuracy=87.50%" in text and "loss=0.412" in text and "cpu_temperature=61.0°C" in text
    # The summary table (min = last = max here).
    table = SummaryTable(print_table=False, use_rich=False)
    table.on_run_start(info)
    table.on_records(RECORDS)
    table.on_run_end(False)
    lines = {line.split()[1]: line.split()[2:] for line in table.text.splitlines()[2:]}
    assert {name: cells[0] for name, cells in lines.items()} == EXPECTED
    # The report.
    html = write_report(tmp_path / "report.html", "run", summarize(RECORDS), [], {}).read_text()
    for shown in EXPECTED.values():
        assert f"<td>{shown}</td>" in html
    # The dashboard's metrics panel.
    pytest.importorskip("rich")
    from rich.console import Console

    from torchtally.learn._dashboard.widgets import metrics_panel

    state = RunState()
    state.start(info)
    state.records(RECORDS)
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(metrics_panel(state.snapshot()))
    panel = console.file.getvalue()  # type: ignore[attr-defined]
    for shown in EXPECTED.values():
        assert shown in panel


def test_plain_lines_show_the_values_of_the_step_they_name() -> None:
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(96, 2), torch.arange(96) % 3)
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    model = torch.nn.Linear(2, 3)
    out = io.StringIO()
    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.5),
        metrics={"train": [MeanMetric("loss"), AccuracyMetric()]},
        num_epochs=3,
        log_every=1,
        observers=[PlainRenderer(out, interval_s=1e-9)],
    )
    learner.fit(loader)
    by_step = {(r.epoch, r.step, r.name): r for r in learner.history}
    lines = re.findall(r"^\[train\] epoch (\d+)/3 step (\d+)/6 (.*)$", out.getvalue(), re.M)
    assert len(lines) >= 15
    for epoch, step, rest in lines:
        global_step = (int(epoch) - 1) * 6 + int(step)
        for name in ("loss", "accuracy"):
            record = by_step[(int(epoch), global_step, name)]
            assert f"{name}={format_value(record.value, record.unit)}" in rest, (epoch, step)


def test_a_test_run_shows_its_final_value_not_a_trend() -> None:
    state = RunState()
    state.start(RunInfo(("test",), 1, {"test": ("accuracy",)}))
    for step, value in enumerate([0.5, 0.75, 0.625], start=1):
        state.progress(Progress("test", 1, 1, step, 3, 0, None, step))
        state.records([MetricRecord("test", 1, step, "accuracy", value, 100.0 + step, "%")])
    snapshot = state.snapshot(with_history=True)
    assert snapshot.latest["accuracy"]["test"].value == 0.625  # the final value, shown
    assert all(series.split != "test" for series in snapshot.history.get("accuracy", ()))
