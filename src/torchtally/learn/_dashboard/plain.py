"""`PlainRenderer`: a line every few seconds, for output that is not a terminal (CI logs, pipes).

Example output::

    run: 5 epochs (train, valid)
    [train] epoch 2/5 step 30/47 loss=0.412 accuracy=87.50% 1234 samples/s ETA 0:00:12
    [train] epoch 2/5 done in 0:00:31: loss=0.398 accuracy=88.10%
    [system] cpu_usage=23.10% cpu_memory=12.300 GiB
    run finished in 0:02:40
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO, final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo
from torchtally.learn._dashboard.state import RunSnapshot, RunState
from torchtally.learn._format import format_duration, format_rate, format_value

__all__ = ["PlainRenderer"]

_log = logging.getLogger(__name__)
_RECENT = 256  # progress reports remembered per split, waiting for their values


@final
class PlainRenderer(Observer):
    """An observer writing plain progress lines: one every `interval_s` seconds while a split
    runs, a summary at the end of each epoch, and one when the run ends. No colours, no cursor
    movement: safe for files, pipes and CI logs.

    Args:
        stream: Where to write (default: `sys.stdout` at construction).
        interval_s: Minimum seconds between two progress lines (> 0); the first progress of the
            run is always written.
        clock: Monotonic time source (seconds), replaceable for tests.
        state: An existing `RunState` to continue from (the dashboard passes its own when it
            falls back to plain output); a fresh one when None.

    Example:
        >>> renderer = PlainRenderer(interval_s=5.0)
        >>> learner = Learner(..., observers=[renderer])  # doctest: +SKIP
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interval_s: float = 10.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        state: RunState | None = None,
    ) -> None:
        if (
            isinstance(interval_s, bool)
            or not isinstance(interval_s, (int, float))
            or not (math.isfinite(interval_s) and interval_s > 0)
        ):
            raise ValueError(
                "Argument `interval_s` must be a finite number of seconds > 0. "
                f"Received: interval_s={interval_s!r}"
            )
        self._stream = stream if stream is not None else sys.stdout
        self._interval = float(interval_s)
        self._clock = clock
        self._state = state if state is not None else RunState(clock)
        self._lock = threading.Lock()
        self._last_line: float | None = None
        self._broken = False
        # A due line waits for the values of the step it names, which arrive after the
        # progress (in step closures); progress is remembered by the step its records carry.
        self._due: set[str] = set()
        self._recent: dict[str, dict[int, Progress]] = {}
        self._logs: dict[str, bool] = {}

    def on_run_start(self, info: RunInfo) -> None:
        """Write the run's shape."""
        self._state.start(info)
        self._due.clear()
        self._recent.clear()
        self._logs = {split: bool(info.metric_names.get(split)) for split in info.splits}
        splits = ", ".join(info.splits)
        line = f"run: {info.num_epochs} epoch{'s' if info.num_epochs != 1 else ''} ({splits})"
        if info.start_epoch > 1:
            line += f", resuming at epoch {info.start_epoch}"
        if info.logdir:
            line += f", logs in {info.logdir}"
        self._write(line)

    def on_progress(self, progress: Progress) -> None:
        """Write a progress line when `interval_s` has passed since the last one."""
        self._state.progress(progress)
        split = progress.split
        if progress.records_step is not None:
            recent = self._recent.setdefault(split, {})
            recent[progress.records_step] = progress
            if len(recent) > _RECENT:
                del recent[min(recent)]
        now = self._clock()
        if self._last_line is not None and now - self._last_line < self._interval:
            return
        self._last_line = now
        if self._logs.get(split) and progress.records_step is not None:
            self._due.add(split)  # written with the values of the next logged step
        else:
            self._write(progress_line(self._state.snapshot(), split))

    def on_records(self, records: list[MetricRecord]) -> None:
        """Remember the values; write a due line with them, naming the step they are from."""
        self._state.records(records)
        for record in records:
            if record.split in self._due:
                self._due.discard(record.split)
                step = self._recent.get(record.split, {}).get(record.step)
                own = [r for r in records if r.split == record.split]
                self._write(progress_line(self._state.snapshot(), record.split, step, own))

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Write the epoch's summary (and the machine metrics after the run's last split)."""
        self._due.discard(split)  # the epoch's summary line says it all
        seconds = self._state.epoch_end(split, epoch)
        snapshot = self._state.snapshot()
        total = snapshot.info.num_epochs if snapshot.info else None
        took = f" in {format_duration(seconds)}" if seconds is not None else ""
        values = _values(snapshot, split)
        line = f"[{split}] epoch {epoch}{f'/{total}' if total else ''} done{took}"
        self._write(line + (f": {values}" if values else ""))
        last_split = snapshot.info.splits[-1] if snapshot.info and snapshot.info.splits else split
        if split == last_split and snapshot.system:
            system = " ".join(f"{r.name}={format_value(r.value, r.unit)}" for r in snapshot.system)
            self._write(f"[system] {system}")

    def on_run_end(self, stopped_early: bool) -> None:
        """Write how the run ended and how long it took."""
        self._state.finish()
        elapsed = format_duration(self._state.snapshot().elapsed)
        self._write(
            f"run stopped early after {elapsed}" if stopped_early else f"run finished in {elapsed}"
        )

    def _write(self, line: str) -> None:
        if self._broken:
            return
        with self._lock:
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except Exception as error:  # a closed pipe must not stop training
                self._broken = True
                _log.warning("torchtally: progress output disabled, writing failed: %r", error)


def progress_line(
    snapshot: RunSnapshot,
    split: str,
    progress: Progress | None = None,
    records: list[MetricRecord] | None = None,
) -> str:
    """The one-line progress report of `split`.

    Args:
        snapshot: The run's state.
        split: The split to report.
        progress: The step the line names (default: the split's latest progress).
        records: The values to show, those of that step (default: the latest values).

    Returns:
        E.g. "[train] epoch 2/5 step 30/47 loss=0.412 accuracy=87.50% 1234 samples/s
        ETA 0:00:12".

    Example:
        >>> progress_line(state.snapshot(), "train")  # doctest: +SKIP
        '[train] epoch 1/2 step 5/10 loss=0.412 ETA 0:00:04'
    """
    view = next((v for v in snapshot.splits if v.split == split), None)
    if view is None:
        return f"[{split}]"
    p = progress if progress is not None else view.progress
    steps = f"{p.step}/{p.steps_in_epoch}" if p.steps_in_epoch else str(p.step)
    parts = [f"[{split}] epoch {p.epoch}/{p.num_epochs} step {steps}"]
    if records is not None:
        values = " ".join(f"{r.name}={format_value(r.value, r.unit)}" for r in records)
    else:
        values = _values(snapshot, split)
    if values:
        parts.append(values)
    rate = format_rate(p.samples_per_second, view.steps_per_second)
    if rate:
        parts.append(rate)
    if view.epoch_eta is not None:
        parts.append(f"ETA {format_duration(view.epoch_eta)}")
    if snapshot.run_eta is not None:
        bound = ">" if snapshot.run_eta_partial else ""
        parts.append(f"(run ETA {bound}{format_duration(snapshot.run_eta)})")
    return " ".join(parts)


def _values(snapshot: RunSnapshot, split: str) -> str:
    pairs = []
    for name, by_split in snapshot.latest.items():
        record = by_split.get(split)
        if record is not None:
            pairs.append(f"{name}={format_value(record.value, record.unit)}")
    return " ".join(pairs)
