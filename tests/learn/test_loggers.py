"""Loggers: files parsed back with csv/json, TensorBoard events read back, the summary table."""

from __future__ import annotations

import csv
import io
import json
import math
import threading
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from torchtally._records import MetricRecord, RunInfo
from torchtally.learn._logs.files import COLUMNS, FileLogger, read_records
from torchtally.learn._logs.summary_table import SummaryTable
from torchtally.learn._logs.tensorboard import TensorBoardLogger

INFO = RunInfo(("train", "valid"), 2, {"train": ("loss",), "valid": ("accuracy",)})

RECORDS = [
    MetricRecord("train", 1, 5, "loss", 0.75, 100.0),
    MetricRecord("train", 1, 10, "loss", 0.5, 101.0),
    MetricRecord("valid", 1, 4, "accuracy", 0.625, 102.0, "%"),
    MetricRecord("train", 2, 15, "loss", math.nan, 103.0),
    MetricRecord("system", 1, 0, "cpu_usage", 0.25, 104.5, "%"),
]


def same(a: MetricRecord, b: MetricRecord) -> bool:
    both_nan = math.isnan(a.value) and math.isnan(b.value)
    return (a.split, a.epoch, a.step, a.name, a.wall_time, a.unit) == (
        b.split,
        b.epoch,
        b.step,
        b.name,
        b.wall_time,
        b.unit,
    ) and (both_nan or a.value == b.value)


def test_csv_files_per_split_and_epoch(tmp_path: Path) -> None:
    logger = FileLogger(tmp_path, format="csv")
    logger.on_run_start(INFO)
    logger.on_records(RECORDS)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.csv"))
    assert files == [
        "system/epoch-1.csv",
        "train/epoch-1.csv",
        "train/epoch-2.csv",
        "valid/epoch-1.csv",
    ]
    with open(tmp_path / "train" / "epoch-1.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        list(COLUMNS),
        ["train", "1", "5", "loss", "0.75", "100.0", ""],
        ["train", "1", "10", "loss", "0.5", "101.0", ""],
    ]
    with open(tmp_path / "train" / "epoch-2.csv", newline="") as handle:
        assert next(iter(csv.DictReader(handle)))["value"] == "nan"
    back = read_records(tmp_path)
    assert len(back) == len(RECORDS)
    for record in RECORDS:
        assert sum(same(record, other) for other in back) == 1


def test_jsonl_writes_strict_json_with_null_for_nan(tmp_path: Path) -> None:
    logger = FileLogger(tmp_path, format="jsonl")
    logger.on_records(RECORDS)
    lines = (tmp_path / "train" / "epoch-2.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {
        "split": "train",
        "epoch": 2,
        "step": 15,
        "name": "loss",
        "value": None,
        "wall_time": 103.0,
        "unit": "",
    }
    valid = json.loads((tmp_path / "valid" / "epoch-1.jsonl").read_text())
    assert valid["value"] == 0.625 and valid["unit"] == "%"
    back = read_records(tmp_path, split="train")
    assert [r.step for r in back] == [5, 10, 15] and math.isnan(back[-1].value)


def test_a_resumed_run_appends_and_keeps_earlier_epochs(tmp_path: Path) -> None:
    FileLogger(tmp_path).on_records(RECORDS[:2])
    first_epoch = (tmp_path / "train" / "epoch-1.csv").read_text()
    resumed = FileLogger(tmp_path)  # a new process, same logdir
    resumed.on_records([MetricRecord("train", 2, 20, "loss", 0.25, 200.0)])
    resumed.on_records([MetricRecord("train", 2, 25, "loss", 0.125, 201.0)])
    assert (tmp_path / "train" / "epoch-1.csv").read_text() == first_epoch
    lines = (tmp_path / "train" / "epoch-2.csv").read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 3  # one header, two rows


def test_file_logger_is_thread_safe(tmp_path: Path) -> None:
    logger = FileLogger(tmp_path)

    def write(split: str) -> None:
        for step in range(200):
            logger.on_records([MetricRecord(split, 1, step, "x", float(step), 0.0)])

    threads = [threading.Thread(target=write, args=(s,)) for s in ("train", "system", "train")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    train = read_records(tmp_path, "train")
    assert len(train) == 400 and len(read_records(tmp_path, "system")) == 200
    assert sorted(r.step for r in train) == sorted(list(range(200)) * 2)


def test_file_logger_refuses_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="format"):
        FileLogger(tmp_path, format="parquet")


def test_tensorboard_scalars_read_back(tmp_path: Path) -> None:
    logger = TensorBoardLogger(tmp_path)
    logger.on_run_start(INFO)
    logger.on_records(RECORDS)
    logger.on_epoch_end("train", 1)
    logger.on_run_end(False)
    logger.on_records([MetricRecord("test", 2, 3, "accuracy", 0.5, 300.0, "%")])  # reopens
    logger.on_run_end(False)
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert tags == {"train/loss", "valid/accuracy", "system/cpu_usage", "test/accuracy"}
    loss = events.Scalars("train/loss")
    assert [(e.step, e.wall_time) for e in loss] == [(5, 100.0), (10, 101.0), (15, 103.0)]
    assert loss[0].value == 0.75 and loss[1].value == 0.5 and math.isnan(loss[2].value)
    assert [(e.step, e.value) for e in events.Scalars("valid/accuracy")] == [(4, 0.625)]
    assert [(e.step, e.value) for e in events.Scalars("test/accuracy")] == [(3, 0.5)]


class FakeWriter:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int, float]] = []
        self.flushes = 0
        self.closed = False

    def add_scalar(self, tag: str, value: float, global_step: int, walltime: float) -> None:
        self.scalars.append((tag, value, global_step, walltime))

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closed = True


def test_tensorboard_logger_with_a_given_writer_does_not_close_it(tmp_path: Path) -> None:
    writer = FakeWriter()
    logger = TensorBoardLogger(tmp_path, writer=writer)
    logger.on_records(RECORDS[:1])
    logger.on_run_end(True)
    assert writer.scalars == [("train/loss", 0.75, 5, 100.0)]
    assert writer.flushes == 1 and not writer.closed


def test_summary_table_min_last_max() -> None:
    out = io.StringIO()
    table = SummaryTable(out, use_rich=False)
    table.on_run_start(INFO)
    table.on_records(RECORDS)
    table.on_records([MetricRecord("train", 2, 20, "loss", 0.625, 105.0)])
    table.on_run_end(False)
    rows = {(r.split, r.name): r for r in table.rows()}
    loss = rows[("train", "loss")]
    # Epoch values only (epoch 1 ends at 0.5; the running 0.75 of step 5 is not one).
    assert (loss.min, loss.last, loss.max, loss.count) == (0.5, 0.625, 0.625, 2)
    accuracy = rows[("valid", "accuracy")]
    assert (accuracy.min, accuracy.last, accuracy.max, accuracy.unit) == (0.625, 0.625, 0.625, "%")
    assert ("system", "cpu_usage") in rows
    text = out.getvalue()
    assert text == table.text + "\n"
    lines = text.splitlines()
    assert lines[0].split() == ["split", "metric", "min", "epoch", "last", "max", "epoch"]
    assert lines[1].startswith("------")
    cells = {line.split()[0] + "/" + line.split()[1]: line.split()[2:] for line in lines[2:]}
    assert cells["train/loss"] == ["0.500", "1", "0.625", "0.625", "2"]  # min at 1, max at 2
    # fractions with "%" show as percentages; machine metrics have no epoch of their extremes
    assert cells["valid/accuracy"] == ["62.50%", "1", "62.50%", "62.50%", "1"]
    assert cells["system/cpu_usage"] == ["25.00%", "–", "25.00%", "25.00%", "–"]


def test_summary_table_nan_only_metric_and_rich_rendering() -> None:
    table = SummaryTable(print_table=False, use_rich=True)
    table.on_records([MetricRecord("train", 1, 1, "loss", math.nan, 0.0)])
    table.on_records([MetricRecord("valid", 1, 1, "accuracy", 0.5, 0.0, "%")])
    table.on_run_end(True)
    (loss,) = [r for r in table.rows() if r.name == "loss"]
    assert math.isnan(loss.min) and math.isnan(loss.max)
    assert "Run summary" in table.text and "50.00%" in table.text and "accuracy" in table.text
    table.on_run_start(INFO)  # a new run forgets the previous one
    assert table.rows() == [] and table.render() == ""
