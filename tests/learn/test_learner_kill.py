"""SIGKILL at random points of a learner run, then resume: the final parameters and the logged
files equal an uninterrupted run's bit for bit (no row logged twice), no temp file of a killed
save is left, and `keep_checkpoints` holds across the restarts. Also the file logger's resume
truncation and the checkpoint housekeeping on their own."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from _kill_child import build

from torchtally.learn import read_records
from torchtally.learn._learner.retention import prune_checkpoints, remove_orphans

CHILD = Path(__file__).with_name("_kill_child.py")
SRC = Path(__file__).resolve().parents[2] / "src"
TRIALS = 10


def _rows(logdir: Path) -> list[tuple[object, ...]]:
    return [
        (r.split, r.epoch, r.step, r.name, r.value)
        for split in ("train", "valid")
        for r in read_records(logdir, split)
    ]


def _run_to_end(logdir: Path) -> list[torch.Tensor]:
    learner, train, valid = build(str(logdir))
    learner.fit(train, valid, resume=True)
    assert learner.epochs_done == 3
    return [p.detach().clone() for p in learner.model.parameters()]


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_is_bit_identical(tmp_path):
    reference_dir = tmp_path / "reference"
    reference = _run_to_end(reference_dir)
    reference_rows = _rows(reference_dir)
    assert len(reference_rows) > 50
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    rng = random.Random(13)
    interrupted = 0
    for trial in range(TRIALS):
        logdir = tmp_path / f"trial-{trial}"
        child = subprocess.Popen(
            [sys.executable, str(CHILD), str(logdir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"READY"
        time.sleep(rng.uniform(0.05, 1.5))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        done = b"DONE" in child.stdout.read()
        child.stdout.close()
        interrupted += not done
        params = _run_to_end(logdir)
        assert all(torch.equal(a, b) for a, b in zip(params, reference)), f"trial {trial}"
        assert _rows(logdir) == reference_rows, f"trial {trial}: the logged rows differ"
        folder = logdir / "checkpoints"
        assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
        assert len([p for p in folder.iterdir() if p.suffix == ".h5"]) <= 2
    print(f"SIGKILL trials: {TRIALS}, interrupted before the end: {interrupted}")
    assert interrupted >= TRIALS // 2


def test_a_resumed_fit_drops_the_rows_its_checkpoint_does_not_cover(tmp_path):
    learner, train, valid = build(str(tmp_path))
    learner.num_epochs = 1
    learner.fit(train, valid)  # epoch 1, checkpointed

    class StopAt:
        def __init__(self, step: int) -> None:
            self.step = step

        def on_run_start(self, info: object) -> None: ...
        def on_records(self, records: object) -> None: ...
        def on_epoch_end(self, split: str, epoch: int) -> None: ...
        def on_run_end(self, stopped_early: bool) -> None: ...

        def on_progress(self, progress: object) -> None:
            if getattr(progress, "global_step", 0) >= self.step:
                raise KeyboardInterrupt  # like a kill: rows after the last checkpoint exist

    killed, train, valid = build(str(tmp_path))
    killed._broadcast.add(StopAt(27))
    killed.fit(train, valid, resume=True)  # a KeyboardInterrupt checkpoints: remove that
    for path in (tmp_path / "checkpoints").glob("epoch-2-*.h5"):
        path.unlink()
    steps_before = {r.step for r in read_records(tmp_path, "train") if r.epoch == 2}
    assert steps_before  # rows of epoch 2 that its coming resume will log again
    resumed, train, valid = build(str(tmp_path))
    resumed.num_epochs = 2
    resumed.fit(train, valid, resume=True)
    rows = [(r.epoch, r.step, r.name) for r in read_records(tmp_path, "train")]
    assert len(rows) == len(set(rows)), "a row was logged twice"
    reference_dir = tmp_path / "reference"
    ref, train, valid = build(str(reference_dir))
    ref.num_epochs = 2
    ref.fit(train, valid)
    assert _rows(tmp_path) == _rows(reference_dir)


def test_orphaned_temp_files_are_removed_and_retention_spans_restarts(tmp_path):
    folder = tmp_path
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = folder / f".epoch-3.h5.{dead.pid}.0123456789ab.tmp"
    ours = folder / f".epoch-4.h5.{os.getpid()}.0123456789ab.tmp"
    alive = folder / f".epoch-5.h5.{os.getppid()}.0123456789ab.tmp"  # a live writer
    other = folder / ".notes.tmp"
    for path in (orphan, ours, alive, other):
        path.write_bytes(b"x" * 10)
    assert sorted(remove_orphans(folder)) == sorted([orphan, ours])
    assert alive.exists() and other.exists()
    names = ["epoch-1.h5", "epoch-2-train-step-5.h5", "epoch-2.h5", "epoch-3.h5", "other.h5"]
    for name in names:
        (folder / name).write_bytes(b"")
    removed = prune_checkpoints(folder, ("train", "valid"), 2, protect=[folder / "epoch-1.h5"])
    assert [p.name for p in removed] == ["epoch-2-train-step-5.h5"]
    removed = prune_checkpoints(folder, ("train", "valid"), 1)
    assert [p.name for p in removed] == ["epoch-1.h5", "epoch-2.h5"]
    assert sorted(p.name for p in folder.glob("*.h5")) == ["epoch-3.h5", "other.h5"]


def test_resume_without_checkpoints_leaves_earlier_logs_alone(tmp_path):
    from torchtally.learn import FileLogger, Learner

    def run() -> None:
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 2)
        data = torch.utils.data.TensorDataset(torch.randn(32, 2), torch.arange(32) % 2)
        learner = Learner(
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            num_epochs=1,
            observers=[FileLogger(tmp_path)],  # the learner itself has no logdir
        )
        learner.fit(torch.utils.data.DataLoader(data, batch_size=8), resume=True)

    run()
    first = read_records(tmp_path, "train")
    run()  # nothing to resume from: a fresh run, appended
    assert read_records(tmp_path, "train")[: len(first)] == first
    assert len(read_records(tmp_path, "train")) == 2 * len(first)
