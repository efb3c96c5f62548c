"""What the renderers know about a run: progress, rates, ETAs, latest values and histories.

`RunState` folds the observer events into one thread-safe model (system samples may arrive from
the sampler's thread while the training thread reports progress and a refresh thread draws);
`RunState.snapshot` hands a renderer an immutable copy to draw from.

Each plotted point gets an x position in epochs: a value logged at step 30 of 47 in epoch 2 sits
at 1 + 30/47, so the training and validation curves of one metric share an axis even though
their step counters differ. A value for an epoch whose progress was never reported (an
end-of-epoch summary) sits at the epoch's end.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import final

from torchtally._records import SYSTEM_SPLIT, MetricRecord, Progress, RunInfo, StatisticKey

__all__ = ["RunSnapshot", "RunState", "Series", "SplitView", "earlier_positions"]


@final
@dataclass(frozen=True)
class SplitView:
    """One split's progress.

    Attributes:
        split: The split name.
        progress: Its latest progress report.
        steps_per_second: Step rate in its current (or else previous) epoch, None if unknown.
        epoch_eta: Seconds left in its current epoch, None if unknown.
    """

    split: str
    progress: Progress
    steps_per_second: float | None
    epoch_eta: float | None


@final
@dataclass(frozen=True)
class Series:
    """The history of one metric on one split (x in epochs, values as logged).

    Attributes:
        split: The split.
        unit: Display unit of the values.
        xs: Positions in epochs.
        ys: Values.
    """

    split: str
    unit: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]


@final
@dataclass(frozen=True)
class RunSnapshot:
    """An immutable view of the run for one refresh.

    Attributes:
        info: The run's `RunInfo`, None before `on_run_start`.
        current: The latest progress report of any split.
        splits: Progress per split, in the run's split order.
        latest: Metric name -> split -> latest record (system metrics excluded).
        system: Latest system record per name, in arrival order.
        history: Metric name -> one `Series` per split (empty unless asked for).
        elapsed: Seconds since the run started.
        run_eta: Seconds left in the run, None when no split has a rate yet.
        run_eta_partial: True when some split's remaining time is unknown (so `run_eta` is a
            lower bound).
        finished: True after `on_run_end`.
    """

    info: RunInfo | None
    current: Progress | None
    splits: tuple[SplitView, ...]
    latest: dict[str, dict[str, MetricRecord]]
    system: tuple[MetricRecord, ...]
    history: dict[str, tuple[Series, ...]]
    elapsed: float
    run_eta: float | None
    run_eta_partial: bool
    finished: bool


@final
@dataclass
class _Track:
    """A split's latest progress and the timing of its current epoch."""

    progress: Progress
    anchor_time: float  # first report of the epoch: rates exclude the first (compiling) step
    anchor_step: int
    epoch_start: float
    rate: float | None = None
    previous_rate: float | None = None
    # Steps and seconds of the split's earlier epochs in this run (first steps excluded): the
    # rate is the whole run's, so the ETA does not jump with each epoch's start.
    done_steps: int = 0
    done_seconds: float = 0.0
    last_time: float = 0.0
    # Wall seconds of the split's completed epochs (first steps included): later epochs cost
    # about as much, start-up and all.
    durations: list[float] = field(default_factory=list)


@final
@dataclass
class _History:
    """The plotted points of one (metric, split)."""

    unit: str
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)


def earlier_positions(records: Sequence[MetricRecord]) -> list[float]:
    """The x position in epochs of each logged record, as the live dashboard places them: a
    value logged at step s of epoch e sits at e - 1 + the fraction of e's steps done by s.

    A split's step counter runs on across epochs, so epoch e spans the steps after the last
    one logged in epoch e - 1 (0 before epoch 1) up to the last one logged in e (its end).

    Args:
        records: Logged records (any splits; system samples get NaN, as they are not plotted).

    Returns:
        One position per record.

    Example:
        >>> records = [MetricRecord("train", 1, s, "loss", 1.0, 0.0) for s in (5, 10)]
        >>> records += [MetricRecord("train", 2, s, "loss", 1.0, 0.0) for s in (15, 20)]
        >>> earlier_positions(records)
        [0.5, 1.0, 1.5, 2.0]
    """
    ends: dict[tuple[str, int], int] = {}
    firsts: dict[tuple[str, int], int] = {}
    for r in records:
        key = (r.split, r.epoch)
        ends[key] = max(r.step, ends.get(key, r.step))
        firsts[key] = min(r.step, firsts.get(key, r.step))
    positions = []
    for r in records:
        if r.split == SYSTEM_SPLIT:
            positions.append(math.nan)
            continue
        end = ends[(r.split, r.epoch)]
        start = ends.get((r.split, r.epoch - 1), 0 if r.epoch == 1 else None)
        if start is None:  # the epoch before was not logged: its steps start at the first
            start = firsts[(r.split, r.epoch)] - 1
        span = end - start
        fraction = (r.step - start) / span if span > 0 else 1.0
        positions.append(r.epoch - 1 + min(max(fraction, 0.0), 1.0))
    return positions


def _totals(track: _Track, step: int | None = None, now: float | None = None) -> tuple[int, float]:
    """Steps and seconds of the split so far in the run, the epochs' first steps excluded."""
    step = track.progress.step if step is None else step
    now = track.last_time if now is None else now
    steps = max(step - track.anchor_step, 0)
    seconds = max(now - track.anchor_time, 0.0) if steps else 0.0
    return track.done_steps + steps, track.done_seconds + seconds


@final
class RunState:
    """Thread-safe model of a run, fed by observer events.

    Args:
        clock: Monotonic time source (seconds).
        max_points: Points kept per (metric, split) history; beyond it every other point is
            dropped, so the whole run stays visible at half the resolution.

    Example:
        >>> state = RunState()
        >>> state.start(RunInfo(("train",), 2, {"train": ("loss",)}))
        >>> state.progress(Progress("train", 1, 2, 5, 10, 5))
        >>> state.snapshot().current.step
        5
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_points: int = 2048):
        if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
            raise ValueError(
                f"Argument `max_points` must be an integer >= 2. Received: max_points={max_points!r}"
            )
        self._clock = clock
        self._max_points = max_points
        self._lock = threading.Lock()
        self._info: RunInfo | None = None
        self._start = clock()
        self._last_event = self._start
        self._current: Progress | None = None
        self._tracks: dict[str, _Track] = {}
        self._latest: dict[str, dict[str, MetricRecord]] = {}
        self._system: dict[str, MetricRecord] = {}
        self._history: dict[StatisticKey, _History] = {}
        self._epoch_seconds: dict[tuple[str, int], float] = {}
        self._finished = False

    def start(self, info: RunInfo, earlier: Sequence[MetricRecord] = ()) -> None:
        """Record the run's facts and start its clock.

        Args:
            info: The run's facts.
            earlier: What a resumed run logged before its checkpoint (`logged_before`): the
                plots and latest values start from them, so they show the whole run.
        """
        with self._lock:
            self._info = info
            self._start = self._last_event = self._clock()
            for split in info.splits:
                for name in info.metric_names.get(split, ()):
                    if split != SYSTEM_SPLIT:
                        self._latest.setdefault(name, {})
            positions = earlier_positions(earlier)
            for record, x in zip(earlier, positions):
                self._add(record, x)

    def progress(self, progress: Progress) -> None:
        """Record a progress report (updates the split's rate)."""
        with self._lock:
            now = self._clock()
            track = self._tracks.get(progress.split)
            if track is None or track.progress.epoch != progress.epoch:
                previous = track.rate if track is not None else None
                previous_track = track
                steps, seconds = (0, 0.0) if track is None else _totals(track)
                track = _Track(progress, now, progress.step, self._last_event, None, previous)
                track.done_steps, track.done_seconds = steps, seconds
                if previous_track is not None:
                    duration = previous_track.last_time - previous_track.epoch_start
                    track.durations = [*previous_track.durations, duration]
                self._tracks[progress.split] = track
            else:
                steps, seconds = _totals(track, progress.step, now)
                if steps > 0 and seconds > 0:
                    track.rate = steps / seconds
            track.last_time = now
            track.progress = progress
            self._current = progress
            self._last_event = now

    def records(self, records: list[MetricRecord]) -> None:
        """Record values: latest per (split, name), and the plotted history of the train and
        valid splits (a test run's running values are not a trend: it shows its final value)."""
        with self._lock:
            for record in records:
                self._add(record, None)

    def _add(self, record: MetricRecord, x: float | None) -> None:
        if record.split == SYSTEM_SPLIT:
            self._system[record.name] = record
            return
        self._latest.setdefault(record.name, {})[record.split] = record
        if record.split == "test":
            return  # a final value (metrics panel), not a trend to plot
        history = self._history.get(record.key)
        if history is None:
            history = self._history[record.key] = _History(record.unit)
        history.xs.append(self._position(record) if x is None else x)
        history.ys.append(record.value)
        if len(history.xs) > self._max_points:
            history.xs, history.ys = history.xs[::2], history.ys[::2]

    def epoch_end(self, split: str, epoch: int) -> float | None:
        """Mark the end of a split's epoch.

        Returns:
            The epoch's duration in seconds, None if its progress was never reported.
        """
        with self._lock:
            now = self._clock()
            self._last_event = now
            track = self._tracks.get(split)
            if track is None or track.progress.epoch != epoch:
                return None
            seconds = now - track.epoch_start
            self._epoch_seconds[(split, epoch)] = seconds
            return seconds

    def finish(self) -> None:
        """Mark the run as over."""
        with self._lock:
            self._finished = True

    def snapshot(self, with_history: bool = False) -> RunSnapshot:
        """An immutable copy of the state.

        Args:
            with_history: Also copy the plot histories (the plain renderer needs none).

        Returns:
            The `RunSnapshot`.
        """
        with self._lock:
            now = self._clock()
            views = tuple(self._view(split, track) for split, track in self._ordered_tracks())
            eta, partial = self._run_eta(views)
            history: dict[str, tuple[Series, ...]] = {}
            if with_history:
                for name in self._latest:
                    history[name] = tuple(
                        Series(split, h.unit, tuple(h.xs), tuple(h.ys))
                        for split in self._split_order()
                        if (h := self._history.get(StatisticKey(split, name))) is not None
                    )
            return RunSnapshot(
                info=self._info,
                current=self._current,
                splits=views,
                latest={name: dict(by_split) for name, by_split in self._latest.items()},
                system=tuple(self._system.values()),
                history=history,
                elapsed=now - self._start,
                run_eta=eta,
                run_eta_partial=partial,
                finished=self._finished,
            )

    def _position(self, record: MetricRecord) -> float:
        track = self._tracks.get(record.split)
        if track is None or track.progress.epoch != record.epoch:
            return float(record.epoch)
        progress = track.progress
        if progress.steps_in_epoch:
            return record.epoch - 1 + min(progress.step / progress.steps_in_epoch, 1.0)
        return record.epoch - 0.5

    def _split_order(self) -> list[str]:
        order = [s for s in (self._info.splits if self._info else ()) if s != SYSTEM_SPLIT]
        seen = {key.split for key in self._history} | set(self._tracks)
        return order + sorted(seen - set(order))

    def _ordered_tracks(self) -> list[tuple[str, _Track]]:
        return [(s, self._tracks[s]) for s in self._split_order() if s in self._tracks]

    def _view(self, split: str, track: _Track) -> SplitView:
        rate = track.rate if track.rate is not None else track.previous_rate
        progress = track.progress
        eta = None
        if rate and progress.steps_in_epoch:
            eta = max(progress.steps_in_epoch - progress.step, 0) / rate
        return SplitView(split, progress, rate, eta)

    def _epoch_seconds_estimate(self, split: str) -> float | None:
        """A typical full epoch of `split`, from its completed ones (the first, which may
        include compilation, only while it is the only one)."""
        track = self._tracks.get(split)
        if track is None or not track.durations:
            return None
        durations = track.durations[1:] or track.durations
        return sum(durations) / len(durations)

    def _run_eta(self, views: tuple[SplitView, ...]) -> tuple[float | None, bool]:
        known = {view.split: view for view in views}
        total, partial, any_known = 0.0, False, False
        for split in self._split_order():
            view = known.get(split)
            if view is None or view.epoch_eta is None or not view.steps_per_second:
                partial = True
                continue
            progress = view.progress
            later = 0 if split == "test" else max(progress.num_epochs - progress.epoch, 0)
            steps = progress.steps_in_epoch or 0
            typical = self._epoch_seconds_estimate(split)
            per_epoch = typical if typical is not None else steps / view.steps_per_second
            total += view.epoch_eta + later * per_epoch
            any_known = True
        return (total if any_known else None), partial
