"""`max_checkpoints`: remember what this process saved, and delete the oldest beyond the limit.

Only files this process wrote are ever deleted: each saved path is remembered with the identity
of the file written there (device, inode, mtime, size), and an entry whose file has since gone
or been replaced by someone else is forgotten instead of deleted.
"""

from __future__ import annotations

import os
import threading

__all__ = ["record_and_prune"]

_FileId = tuple[int, int, int, int]
_lock = threading.Lock()
_saved: dict[str, list[tuple[str, _FileId]]] = {}  # directory -> [(path, file id)], oldest first


def _file_id(path: str) -> _FileId | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def record_and_prune(path: str, limit: int | None) -> list[str]:
    """Record `path` as this process's newest checkpoint in its directory and apply `limit`.

    Args:
        path: A checkpoint file just written by this process.
        limit: Keep at most this many of this process's checkpoints in the directory; None
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
    return removed
