"""The PNG plots read as a user expects: a metric's step axis starts where its first epoch
starts (0 for epoch 1, not the first logged step), epochs are marked where they start (the end
of the one before), a percentage's axis stays within 0-100% (a single value or a flat 100% line
included), the machine-wide memory metrics are labelled as the machine's, and the report is
titled after the run, saying where its logs are and what it covers.

Oracles: limits and positions computed by hand from the records written here."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from torchtally._records import MetricRecord
from torchtally.learn import FileLogger

pytest.importorskip("matplotlib")

from torchtally.learn._plots.metrics import epoch_starts, metric_figure, system_figure
from torchtally.learn._plots.plots import plot_logdir, run_name


def _train(steps_by_epoch: dict[int, list[int]], unit: str = "") -> list[MetricRecord]:
    return [
        MetricRecord("train", epoch, step, "m", 0.5 + step / 100, float(step), unit)
        for epoch, steps in steps_by_epoch.items()
        for step in steps
    ]


def _dotted_lines(ax: object) -> list[float]:
    return [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":"]  # type: ignore[attr-defined]


def test_the_step_axis_starts_at_the_first_epochs_start_and_epochs_are_marked_at_their_start() -> (
    None
):
    # 16 steps an epoch, logged every 5 steps and at each epoch's end
    records = _train({1: [5, 10, 15, 16], 2: [21, 26, 31, 32], 3: [37, 42, 47, 48]})
    assert epoch_starts(records) == [(1, 0.0), (2, 16.0), (3, 32.0)]
    (ax,) = [a for a in metric_figure("m", {"train": records}).axes if a.get_title(loc="left")]
    assert ax.get_xlim()[0] == 0.0  # not step 5
    assert _dotted_lines(ax) == [16.0, 32.0]  # not 21 and 37, the first logged steps
    # a run whose logs start at epoch 3 (earlier files removed): its axis starts with epoch 3
    late = _train({3: [37, 42, 48], 4: [53, 64]})
    assert epoch_starts(late) == [(3, 36.0), (4, 48.0)]
    (ax,) = [a for a in metric_figure("m", {"train": late}).axes if a.get_title(loc="left")]
    assert ax.get_xlim()[0] == 36.0


@pytest.mark.parametrize(
    ("values", "limits"),
    [
        ([0.9691], (91.91, 100.0)),  # one point: 5 points of room below, capped at 100
        ([1.0, 1.0, 1.0], (95.0, 100.0)),  # a flat 100% line
        ([0.0, 0.03], (0.0, 3.15)),  # 5% of the span above, never below 0
        ([0.5, 0.9], (48.0, 92.0)),
    ],
)
def test_a_percentage_axis_stays_within_0_and_100(
    values: list[float], limits: tuple[float, float]
) -> None:
    records = [
        MetricRecord("valid", i + 1, 6 * (i + 1), "auroc", v, 0.0, "%")
        for i, v in enumerate(values)
    ]
    (ax,) = [a for a in metric_figure("auroc", {"valid": records}).axes if a.get_title(loc="left")]
    assert ax.get_ylim() == pytest.approx(limits)


def test_system_panels_keep_percentages_within_100_and_name_the_machines_memory() -> None:
    samples = [
        MetricRecord("system", 1, 0, name, value, float(t), unit)
        for t in range(3)
        for name, value, unit in (
            ("cpu_usage", 1.0, "%"),
            ("cpu_memory", 0.12, "%"),
            ("cpu_memory_used", 2.9, "GiB"),
        )
    ]
    axes = {ax.get_ylabel(): ax for ax in system_figure(samples).axes if ax.get_visible()}
    assert set(axes) == {
        "cpu_usage (%)",
        "cpu_memory (machine, %)",
        "cpu_memory_used (machine, GiB)",
    }
    assert axes["cpu_usage (%)"].get_ylim() == pytest.approx((95.0, 100.0))


def test_the_report_is_titled_after_the_run(tmp_path: Path) -> None:
    logdir = tmp_path / "mnist-lr3e-3" / "logs"
    logger = FileLogger(logdir)
    logger.on_records(
        _train({1: [5, 10], 2: [15, 20], 3: [25, 30]})
        + [MetricRecord("valid", e, 2 * e, "loss", 1 / e, 0.0) for e in (1, 2, 3)]
        + [MetricRecord("test", 3, 4, "loss", 0.3, 0.0)]
        + [MetricRecord("system", 1, 0, "cpu_memory_used", 2.5, float(t), "GiB") for t in range(7)]
        + [MetricRecord("system", 1, 0, "cpu_usage", 0.5, float(t), "%") for t in range(7)]
    )
    assert run_name(logdir) == "mnist-lr3e-3"  # "logs" says nothing about the run
    assert run_name(tmp_path / "mnist-lr3e-3") == "mnist-lr3e-3"
    report = plot_logdir(logdir)[-1].read_text()
    title = html.unescape(re.search(r"<h1>(.*?)</h1>", report)[1])  # type: ignore[index]
    assert title == "Run mnist-lr3e-3: training report"
    subtitle = html.unescape(re.search(r'<p class="subtitle">(.*?)</p>', report)[1])  # type: ignore[index]
    assert subtitle == (
        f"logs in {logdir.resolve()} · epochs 1–3 of train, valid · the test evaluation · "
        "2 metrics · 7 system samples"
    )
    assert '<td class="text">cpu_memory_used (machine)</td>' in report
    assert '<td class="text">cpu_usage</td>' in report
