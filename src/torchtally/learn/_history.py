"""What a resumed run logged before its checkpoint, read back from its log directory, so that
the observers that show the whole run (the dashboard's plots, a run summary) do not start
over at the resumed epoch."""

from __future__ import annotations

import logging
from pathlib import Path

from torchtally._records import SYSTEM_SPLIT, MetricRecord, RunInfo

__all__ = ["logged_before"]

_log = logging.getLogger(__name__)


def logged_before(info: RunInfo) -> list[MetricRecord]:
    """The records a `FileLogger` wrote to the run's `logdir` before the checkpoint it resumes
    from: for each resumed split, those up to its checkpointed step (the later ones are logged
    again by this run), and every system sample.

    Args:
        info: The run's facts, as `on_run_start` receives them.

    Returns:
        The records, split by split, in file order; none when the run does not resume, has
        no `logdir`, or its logs cannot be read (a warning says why).

    Example:
        >>> from torchtally.learn import FileLogger
        >>> FileLogger("runs/h").on_records(
        ...     [MetricRecord("train", e, 10 * e, "loss", 1 / e, 0.0) for e in (1, 2, 3)])
        >>> info = RunInfo(("train",), 5, {"train": ("loss",)}, "runs/h", 3, {"train": 20})
        >>> [(r.epoch, r.value) for r in logged_before(info)]
        [(1, 1.0), (2, 0.5)]
    """
    if info.resumed_steps is None or not info.logdir:
        return []
    root = Path(info.logdir)
    if not root.is_dir():
        return []
    from torchtally.learn._logs.files import read_records

    records: list[MetricRecord] = []
    try:
        for split, last_step in info.resumed_steps.items():
            if (root / split).is_dir():
                records += [r for r in read_records(root, split) if r.step <= last_step]
        if (root / SYSTEM_SPLIT).is_dir():
            records += read_records(root, SYSTEM_SPLIT)
    except (OSError, ValueError, KeyError, TypeError) as error:
        _log.warning("torchtally: could not read the earlier logs of %s: %r", root, error)
        return []
    return records
