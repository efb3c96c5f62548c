"""`plot_logdir` and its log reader, on log directories written by hand in the documented
format: `<split>/epoch-<n>.csv|jsonl` (split, epoch, step, name, value, wall_time, unit) and
`<split>/curves.json` (`dataclasses.asdict(CurveData)`)."""

from __future__ import annotations

import csv
import dataclasses
import json
import logging
import math
import sys
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
import pytest

from torchtally._records import CurveData, MetricRecord
from torchtally.learn._logs.logdir import read_logdir
from torchtally.learn._plots.plots import plot_logdir

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
T0 = 1_700_000_000.0
COLUMNS = ["split", "epoch", "step", "name", "value", "wall_time", "unit"]


def write_log(path: Path, records: list[MetricRecord]) -> None:
    """Write records as the learner's file loggers do (.csv or .jsonl by suffix)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [dataclasses.asdict(r) for r in records]
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def train_records(epoch: int) -> list[MetricRecord]:
    out = []
    for i in range(5):
        step = (epoch - 1) * 5 + i + 1
        t = T0 + step
        out.append(MetricRecord("train", epoch, step, "loss", 2.0 / step, t, ""))
        out.append(MetricRecord("train", epoch, step, "accuracy", 0.1 * step, t, "%"))
    return out


def system_records() -> list[MetricRecord]:
    out = []
    for step in range(8):
        epoch, t = (0 if step < 2 else 1), T0 + 0.5 * step
        out.append(MetricRecord("system", epoch, step, "cpu_usage", 0.2 + 0.05 * step, t, "%"))
        out.append(MetricRecord("system", epoch, step, "cpu_memory_used", 3.0 + step / 8, t, "GiB"))
        for gpu in (0, 1):
            power = 100.0 + 20 * step + 50 * gpu
            out.append(MetricRecord("system", epoch, step, f"gpu{gpu}_power", power, t, "W"))
    return out


CURVES = CurveData(
    confusion_matrix=[[50, 3, 2], [4, 40, 6], [1, 5, 39]],
    class_names=["cat", "dog", "bird"],
    roc={
        "cat": {"fpr": [0.0, 0.05, 0.2, 1.0], "tpr": [0.0, 0.8, 0.95, 1.0], "auc": 0.9412},
        "dog": {"fpr": [0.0, 0.1, 0.3, 1.0], "tpr": [0.0, 0.6, 0.85, 1.0], "auc": 0.8675},
        "bird": {"fpr": [0.0, 0.08, 0.25, 1.0], "tpr": [0.0, 0.7, 0.9, 1.0], "auc": 0.9031},
    },
    pr={
        "cat": {"recall": [1.0, 0.95, 0.8, 0.0], "precision": [0.33, 0.8, 0.92, 1.0], "ap": 0.9012},
        "dog": {"recall": [1.0, 0.85, 0.6, 0.0], "precision": [0.33, 0.7, 0.85, 1.0], "ap": 0.7733},
        "bird": {"recall": [1.0, 0.9, 0.7, 0.0], "precision": [0.3, 0.75, 0.88, 1.0], "ap": 0.8421},
    },
)


def make_logdir(root: Path) -> tuple[Path, list[MetricRecord]]:
    logdir = root / "run"
    written = []
    for epoch in (1, 2):
        records = train_records(epoch)
        write_log(logdir / "train" / f"epoch-{epoch}.csv", records)
        written += records
        valid = [
            MetricRecord("valid", epoch, epoch, "loss", [0.9, 0.6][epoch - 1], T0 + 10 * epoch),
            MetricRecord(
                "valid", epoch, epoch, "accuracy", [0.7, 0.875][epoch - 1], T0 + 10 * epoch, "%"
            ),
        ]
        write_log(logdir / "valid" / f"epoch-{epoch}.jsonl", valid)
        written += valid
    system = system_records()
    write_log(logdir / "system" / "epoch-0.csv", [r for r in system if r.epoch == 0])
    write_log(logdir / "system" / "epoch-1.jsonl", [r for r in system if r.epoch == 1])
    written += system
    (logdir / "test").mkdir()
    (logdir / "test" / "curves.json").write_text(json.dumps(dataclasses.asdict(CURVES)))
    return logdir, written


def key(r: MetricRecord) -> tuple[object, ...]:
    return (r.split, r.epoch, r.step, r.name, r.wall_time)


def test_reader_returns_what_was_written(tmp_path: Path) -> None:
    logdir, written = make_logdir(tmp_path)
    data = read_logdir(logdir)
    assert sorted(data.records, key=key) == sorted(written, key=key)
    assert data.curves == {"test": CURVES}
    assert len(data.files) == 7  # 2 train, 2 valid, 2 system logs and curves.json


def test_reader_orders_epochs_numerically_and_tolerates_bad_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="torchtally.learn.plots")
    for epoch in (10, 2, 1):
        write_log(
            tmp_path / "train" / f"epoch-{epoch}.csv",
            [MetricRecord("train", epoch, epoch, "loss", 1.0 / epoch, T0)],
        )
    log = tmp_path / "valid" / "epoch-1.jsonl"
    write_log(log, [MetricRecord("valid", 1, 1, "loss", 0.5, T0)])
    row = {
        "split": "valid",
        "epoch": 1,
        "step": 2,
        "name": "loss",
        "value": None,
        "wall_time": T0 + 1,
        "unit": "",
    }
    with log.open("a") as file:
        file.write(json.dumps(row) + "\n")  # null value = NaN
        file.write('{"split": "valid", "epoch": 1, "st')  # a killed run's half-written line
    data = read_logdir(tmp_path)
    assert [r.epoch for r in data.records if r.split == "train"] == [1, 2, 10]
    valid = [r for r in data.records if r.split == "valid"]
    assert len(valid) == 2 and valid[0].value == 0.5 and math.isnan(valid[1].value)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "skipped 1 unreadable line" in warning and "epoch-1.jsonl" in warning


def test_reader_errors_name_the_argument(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"`logdir` must be an existing directory.*nope"):
        read_logdir(tmp_path / "nope")
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "notes.txt").write_text("not a log")
    with pytest.raises(ValueError, match=r"`logdir` must hold learner logs.*which has none"):
        plot_logdir(tmp_path)


def assert_png(path: Path) -> np.ndarray:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] >= 300 and image.shape[1] >= 300
    assert image[..., :3].std() > 0.05  # drawn on, not a blank canvas
    return image


def test_plot_logdir_writes_every_plot_and_the_report(tmp_path: Path) -> None:
    pyplot_loaded = "matplotlib.pyplot" in sys.modules
    backend = dict.__getitem__(matplotlib.rcParams, "backend")  # raw: reading resolves it
    logdir, _ = make_logdir(tmp_path)
    paths = plot_logdir(logdir)
    out = logdir / "plots"
    assert [p.name for p in paths] == [
        "metric-accuracy.png",
        "metric-loss.png",
        "system.png",
        "confusion-test.png",
        "roc-test.png",
        "pr-test.png",
        "report.html",
    ]
    assert all(p.parent == out and p.is_file() for p in paths)
    for path in paths[:-1]:
        assert_png(path)
    assert ("matplotlib.pyplot" in sys.modules) == pyplot_loaded
    assert dict.__getitem__(matplotlib.rcParams, "backend") == backend


def test_plot_logdir_without_curves_or_system(tmp_path: Path) -> None:
    write_log(tmp_path / "run" / "train" / "epoch-1.jsonl", train_records(1))
    out = tmp_path / "elsewhere" / "out"
    paths = plot_logdir(tmp_path / "run", out_dir=out)
    assert [p.name for p in paths] == ["metric-accuracy.png", "metric-loss.png", "report.html"]
    assert all(p.parent == out for p in paths)
    assert not (tmp_path / "run" / "plots").exists()
    for path in paths[:-1]:
        assert_png(path)


def test_file_names_are_safe_and_distinct(tmp_path: Path) -> None:
    records = [
        MetricRecord("train", 1, 1, "f1 <macro>", 0.5, T0, "%"),
        MetricRecord("train", 1, 1, "f1 /macro/", 0.6, T0, "%"),
    ]
    write_log(tmp_path / "train" / "epoch-1.csv", records)
    names = [p.name for p in plot_logdir(tmp_path)]
    assert names == ["metric-f1_macro.png", "metric-f1_macro-2.png", "report.html"]


def test_missing_matplotlib_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_log(tmp_path / "train" / "epoch-1.csv", train_records(1))
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)  # import fails
    with pytest.raises(ImportError, match=r"needs matplotlib.*pip install torchtally\[plots\]"):
        plot_logdir(tmp_path)


def test_partial_curves_give_only_their_plots(tmp_path: Path) -> None:
    roc_only = CurveData(roc={"1": {"fpr": [0.0, 1.0], "tpr": [0.0, 1.0], "auc": 0.5}})
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "curves.json").write_text(json.dumps(dataclasses.asdict(roc_only)))
    paths = plot_logdir(tmp_path)
    assert [p.name for p in paths] == ["roc-test.png", "report.html"]
    assert_png(paths[0])
