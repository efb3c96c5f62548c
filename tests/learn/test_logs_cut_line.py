"""A log file whose last line was cut mid-write (the run was killed while appending: the normal
way to get one) resumes and reads back with that line dropped and a warning naming the file
and the line; a damaged line anywhere else is an error naming the file and the line
(issue 25, class 9: it was a bare `JSONDecodeError` / `TypeError` naming neither).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch

from torchtally._records import MetricRecord, RunInfo
from torchtally.learn import FileLogger, read_records
from torchtally.learn._learner.learner import Learner
from torchtally.metrics import MeanMetric

FORMATS = ["csv", "jsonl"]
# What a killed write leaves behind: the start of one row, no newline.
CUT = {"csv": "train,2,14,lo", "jsonl": '{"split": "train", "epoch": 2, "step": 14, "na'}
# A line that is whole (newline-terminated) but no record.
DAMAGED = {"csv": "train,2,not-a-step,loss,0.5,1.0,\r\n", "jsonl": '{"split": "train", "ep\n'}


def _records() -> list[MetricRecord]:
    return [
        MetricRecord("train", epoch, step, "loss", 1.0 / step, 100.0 + step, "")
        for epoch, steps in ((1, (1, 2, 3)), (2, (11, 12, 13)))
        for step in steps
    ]


def _write(tmp_path: Path, format: str) -> tuple[Path, Path]:
    """Log `_records()`; return the log dir and the last epoch's file."""
    logger = FileLogger(tmp_path, format=format)
    logger.on_records(_records())
    return tmp_path, logger.path("train", 2)


def _lines(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n")


@pytest.mark.parametrize("format", FORMATS)
def test_reading_drops_a_cut_last_line_with_a_warning_naming_file_and_line(
    tmp_path: Path, format: str
) -> None:
    logdir, last = _write(tmp_path, format)
    complete_lines = _lines(last)
    with open(last, "a", encoding="utf-8", newline="") as handle:
        handle.write(CUT[format])
    with pytest.warns(UserWarning) as caught:
        records = read_records(logdir, "train")
    assert records == _records()
    message = " ".join(str(w.message) for w in caught)
    assert str(last) in message
    assert re.search(rf"\bline {complete_lines + 1}\b", message), message


@pytest.mark.parametrize("format", FORMATS)
def test_a_damaged_line_that_is_not_the_cut_tail_is_an_error_naming_file_and_line(
    tmp_path: Path, format: str
) -> None:
    logdir, last = _write(tmp_path, format)
    lines = last.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(2, DAMAGED[format])  # line 3 of the file
    last.write_text("".join(lines), encoding="utf-8", newline="")
    with pytest.raises(ValueError) as error:
        read_records(logdir, "train")
    message = str(error.value)
    assert str(last) in message
    assert re.search(r"\bline 3\b", message), message


@pytest.mark.parametrize("format", FORMATS)
def test_a_resume_drops_the_cut_line_and_later_rows_and_appends_cleanly(
    tmp_path: Path, format: str
) -> None:
    logdir, last = _write(tmp_path, format)
    with open(last, "a", encoding="utf-8", newline="") as handle:
        handle.write(CUT[format])
    logger = FileLogger(logdir, format=format)
    info = RunInfo(("train",), 3, {"train": ("loss",)}, str(logdir), 2, {"train": 12})
    with pytest.warns(UserWarning, match=re.escape(str(last))):
        logger.on_run_start(info)
    again = MetricRecord("train", 2, 13, "loss", 0.25, 200.0, "")
    logger.on_records([again])
    kept = [r for r in _records() if r.step <= 12]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing cut is left in the file
        assert read_records(logdir, "train") == [*kept, again]
    assert last.read_text(encoding="utf-8").endswith("\n")


@pytest.mark.parametrize("format", FORMATS)
def test_appending_to_a_file_with_a_cut_last_line_drops_it_first(
    tmp_path: Path, format: str
) -> None:
    """A new logger appending to a used logdir (no resume) must not glue its first row onto
    the cut line, which would make a damaged line in the middle of the file."""
    logdir, last = _write(tmp_path, format)
    with open(last, "a", encoding="utf-8", newline="") as handle:
        handle.write(CUT[format])
    later = MetricRecord("train", 2, 20, "loss", 0.125, 300.0, "")
    with pytest.warns(UserWarning, match=re.escape(str(last))):
        FileLogger(logdir, format=format).on_records([later])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_records(logdir, "train") == [*_records(), later]


@pytest.mark.parametrize("format", FORMATS)
def test_a_resume_with_a_damaged_middle_line_names_file_and_line(
    tmp_path: Path, format: str
) -> None:
    logdir, last = _write(tmp_path, format)
    lines = last.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(1, DAMAGED[format])  # line 2 of the file
    last.write_text("".join(lines), encoding="utf-8", newline="")
    logger = FileLogger(logdir, format=format)
    info = RunInfo(("train",), 3, {"train": ("loss",)}, str(logdir), 2, {"train": 12})
    with pytest.raises(ValueError) as error:
        logger.on_run_start(info)
    assert str(last) in str(error.value)
    assert re.search(r"\bline 2\b", str(error.value)), str(error.value)


def test_a_learner_resumes_a_run_whose_log_was_cut_mid_write(tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(3)
    data = torch.utils.data.TensorDataset(
        torch.randn(32, 4, generator=gen), torch.randint(0, 3, (32,), generator=gen)
    )
    loader = torch.utils.data.DataLoader(data, batch_size=8)

    def learner(epochs: int) -> Learner:
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 3)
        return Learner(
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            metrics={"train": [MeanMetric("loss")]},
            num_epochs=epochs,
            logdir=tmp_path,
            observers=[FileLogger(tmp_path, format="jsonl")],
        )

    learner(1).fit(loader)
    log = tmp_path / "train" / "epoch-1.jsonl"
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(CUT["jsonl"])
    with pytest.warns(UserWarning, match=re.escape(str(log))):
        learner(2).fit(loader, resume=True)
    epochs = {r.epoch for r in read_records(tmp_path, "train")}
    assert epochs == {1, 2}
