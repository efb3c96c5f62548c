"""`TensorBoardLogger`: every logged value as a TensorBoard scalar, tag `<split>/<name>`."""

from __future__ import annotations

import os
import threading
from typing import Any, final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo

__all__ = ["TensorBoardLogger"]


@final
class TensorBoardLogger(Observer):
    """An observer that writes each record with `SummaryWriter.add_scalar`.

    The tag is `<split>/<name>` (e.g. "valid/accuracy", "system/cpu_usage"), the step the
    record's step and the wall time its own. Values are written as recorded (fractions stay
    fractions). The writer is flushed at every epoch end and closed at the end of a run; a
    later run (a resume, a test) writes a new event file into the same directory, which
    TensorBoard reads together with the earlier ones. Thread-safe.

    Args:
        logdir: The directory of the event files.
        writer: A `SummaryWriter` to use instead of creating one (it is not closed then).

    Raises:
        ImportError: tensorboard is not installed (`pip install torchtally[tensorboard]`).

    Example:
        >>> from pathlib import Path
        >>> import torch
        >>> from torchtally.learn import Learner
        >>> from torchtally.optim import SGD
        >>> model = torch.nn.Linear(2, 2)
        >>> learner = Learner(model, SGD(model.parameters(), lr=0.1),
        ...                   observers=[TensorBoardLogger("runs/a")])
        >>> _ = learner.fit([(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))])
        >>> any(Path("runs/a").rglob("events.out.tfevents.*"))
        True
    """

    def __init__(self, logdir: str | os.PathLike[str], *, writer: Any = None) -> None:
        self.logdir = os.fspath(logdir)
        self._owned = writer is None
        self.writer = writer if writer is not None else _summary_writer(self.logdir)
        self._lock = threading.Lock()

    def on_run_start(self, info: RunInfo) -> None:
        """Nothing to do: the writer opens its event file on the first write."""

    def on_progress(self, progress: Progress) -> None:
        """Progress is not logged."""

    def on_records(self, records: list[MetricRecord]) -> None:
        """Write every record as a scalar."""
        with self._lock:
            for record in records:
                self.writer.add_scalar(
                    f"{record.split}/{record.name}",
                    record.value,
                    global_step=record.step,
                    walltime=record.wall_time,
                )

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Flush the event file."""
        with self._lock:
            self.writer.flush()

    def on_run_end(self, stopped_early: bool) -> None:
        """Flush, and close the writer this logger created (a later write reopens it)."""
        with self._lock:
            self.writer.flush()
            if self._owned:
                self.writer.close()


def _summary_writer(logdir: str) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as error:
        raise ImportError(
            "TensorBoardLogger needs the tensorboard package: pip install "
            "torchtally[tensorboard] (or pass `writer=` a SummaryWriter-like object)."
        ) from error
    return SummaryWriter(log_dir=logdir)
