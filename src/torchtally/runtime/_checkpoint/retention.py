"""`max_checkpoints`: remember what this process saved, and delete the oldest beyond the limit.

Only files that `save` wrote are ever deleted: each saved path is remembered with the identity
of the file written there (device, inode, mtime, size), and an entry whose file has since gone
or been replaced by someone else is forgotten instead of deleted.

Under a limit the record is also kept on disk, in the hidden file `RECORD_NAME` of the
checkpoint directory, so a restarted run (a new process) goes on pruning the checkpoints of the
run before it instead of leaving them on disk forever. A record that is missing, damaged or
names files that have changed since only makes fewer files deletable, never others.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid

__all__ = ["RECORD_NAME", "record_and_prune"]

#: The hidden file, in a checkpoint directory, that lists the checkpoints `save` wrote there.
RECORD_NAME = ".torchtally-checkpoints.json"

_FileId = tuple[int, int, int, int]
_lock = threading.Lock()
_saved: dict[str, list[tuple[str, _FileId]]] = {}  # directory -> [(path, file id)], oldest first


def _file_id(path: str) -> _FileId | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _read_record(directory: str) -> list[tuple[str, _FileId]]:
    """The entries a previous process recorded for `directory`, oldest first ([] when there is
    no readable record: forgetting files is safe, deleting the wrong ones is not)."""
    try:
        with open(os.path.join(directory, RECORD_NAME), encoding="utf-8") as handle:
            rows = json.load(handle)
    except (OSError, ValueError):
        return []
    entries: list[tuple[str, _FileId]] = []
    for row in rows if isinstance(rows, list) else []:
        valid = (
            isinstance(row, list)
            and len(row) == 2
            and isinstance(row[0], str)
            and row[0] == os.path.basename(row[0])  # a bare name: never a path elsewhere
            and row[0] not in ("", ".", "..", RECORD_NAME)
            and isinstance(row[1], list)
            and len(row[1]) == 4
            and all(isinstance(v, int) and not isinstance(v, bool) for v in row[1])
        )
        if valid:
            entries.append((os.path.join(directory, row[0]), tuple(row[1])))
    return entries


def _write_record(directory: str, entries: list[tuple[str, _FileId]]) -> None:
    rows = [[os.path.basename(p), list(fid)] for p, fid in entries]
    record = os.path.join(directory, RECORD_NAME)
    temp = f"{record}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(rows, handle)
        os.replace(temp, record)
    except OSError:
        # Retention across restarts is best effort: a read-only record must not fail a save.
        with contextlib.suppress(OSError):
            os.remove(temp)


def record_and_prune(path: str, limit: int | None) -> list[str]:
    """Record `path` as the newest checkpoint in its directory and apply `limit`.

    Args:
        path: A checkpoint file just written by this process.
        limit: Keep at most this many of the checkpoints `save` wrote in the directory (this
            process's, and those the directory's record lists from before a restart); None
            keeps all.

    Returns:
        The paths deleted, oldest first.

    Example:
        >>> from pathlib import Path
        >>> Path("ckpts").mkdir()
        >>> for step in (100, 200, 300):
        ...     _ = Path(f"ckpts/step_{step}.h5").write_bytes(b"")
        ...     removed = record_and_prune(f"ckpts/step_{step}.h5", 2)
        >>> [Path(path).name for path in removed]  # the third save removed the first
        ['step_100.h5']
        >>> sorted(path.name for path in Path("ckpts").glob("*.h5"))
        ['step_200.h5', 'step_300.h5']
    """
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    own_id = _file_id(real)
    removed: list[str] = []
    with _lock:
        if directory not in _saved and limit is not None:
            _saved[directory] = _read_record(directory)  # a restarted run's checkpoints
        entries = [(p, fid) for p, fid in _saved.get(directory, []) if p != real]
        # Saving a path again makes it the newest; entries no longer ours are forgotten.
        entries = [(p, fid) for p, fid in entries if _file_id(p) == fid]
        if own_id is not None:
            entries.append((real, own_id))
        while limit is not None and len(entries) > limit:
            oldest, _ = entries.pop(0)
            try:
                os.remove(oldest)
            except FileNotFoundError:
                continue
            removed.append(oldest)
        _saved[directory] = entries
        if limit is not None or os.path.exists(os.path.join(directory, RECORD_NAME)):
            _write_record(directory, entries)
    return removed
