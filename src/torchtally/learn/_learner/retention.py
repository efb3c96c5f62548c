"""Checkpoint housekeeping across restarts: orphaned temp files and `keep_checkpoints`.

`cstorch.save` writes `.<name>.<pid>.<random>.tmp` and renames it into place, so a process
killed during a save leaves the temp file behind, full size. The learner removes the temp files
of its own checkpoint names whose writer is gone (or is this process, which saves synchronously
and so has no save in flight when it cleans). `keep_checkpoints` is applied to every learner
checkpoint in the folder, ranked by position, not only to those this process wrote: a run
resumed after a restart prunes the files of the runs before it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection
from pathlib import Path

from torchtally.learn._learner.state import Position, checkpoint_position

__all__ = ["prune_checkpoints", "remove_orphans"]

_log = logging.getLogger("torchtally.learn")
_TEMP = re.compile(r"^\.(epoch-\d+(?:-[a-z]+-step-\d+)?\.h5)\.(\d+)\.[0-9a-f]+\.tmp$")


def remove_orphans(folder: Path) -> list[Path]:
    """Delete the temp files of learner checkpoints whose writing process is gone.

    Args:
        folder: The checkpoint directory.

    Returns:
        The files deleted.
    """
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for path in folder.iterdir():
        match = _TEMP.match(path.name)
        if match is None or not path.is_file():
            continue
        pid = int(match.group(2))
        if pid != os.getpid() and _alive(pid):
            continue  # another process may be saving right now
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    if removed:
        _log.info("Removed %d unfinished checkpoint file(s) from %s", len(removed), folder)
    return removed


def prune_checkpoints(
    folder: Path, splits: tuple[str, ...], keep: int, protect: Collection[Path] = ()
) -> list[Path]:
    """Delete the oldest learner checkpoints of `folder` beyond the newest `keep`.

    Args:
        folder: The checkpoint directory.
        splits: The epoch's splits, in order (ranks mid-epoch checkpoints).
        keep: How many of the newest to keep.
        protect: Files never deleted (e.g. the best checkpoints); they still count among the
            newest.

    Returns:
        The files deleted, oldest first.
    """
    if not folder.is_dir():
        return []
    kept = {p.resolve() for p in protect}
    ranked: list[tuple[Position, Path]] = []
    for path in folder.iterdir():
        position = checkpoint_position(path.name, splits)
        if position is not None:
            ranked.append((position, path))
    ranked.sort()
    removed = []
    for _, path in ranked[: max(len(ranked) - keep, 0)]:
        if path.resolve() in kept:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
