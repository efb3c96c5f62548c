"""`save` and `load`: cstorch-style checkpoints in an atomic HDF5 format that never unpickles.

`save(state_dict, path)` is used like `torch.save`, `load(path, map_location=None)` like
`torch.load`. The file layout is described in `_checkpoint.format`; `save(..., format="cstorch")`
writes, and `load` also reads, the layout of Cerebras' `cstorch.save` 2.x
(`_checkpoint.cstorch`). Three guarantees:

- Atomic: the file is written under a temporary name in the target directory, fsynced, marked
  complete, and only then renamed onto `path`; a crash mid-save leaves the previous checkpoint
  and never a half-written file at a checkpoint path (a killed save can leave its hidden
  `.<name>.<pid>.<random>.tmp` file behind; it is never loaded as a checkpoint by name).
- Safe to load: the format holds typed data only (JSON manifest, numeric datasets), and `load`
  validates all of it; a damaged or hostile file raises `CheckpointError` and runs nothing.
  `torch.save` files are accepted too, but only through `torch.load(weights_only=True)`.
- Exact: every tensor dtype (bfloat16 and float8 as bits), tied tensors stay tied, and
  container and key types (int keys of optimizer state, tuples, OrderedDict) come back as saved.
  Like torch.save, a view is saved with its whole storage.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import uuid
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import torch

from torchtally._errors import check_int
from torchtally.runtime._checkpoint.common import (
    VIEW_LIMIT_BYTES,
    CheckpointError,
    device_mapper,
    import_h5py,
)
from torchtally.runtime._checkpoint.retention import record_and_prune

if TYPE_CHECKING:
    from torchtally.runtime._backend import Backend

__all__ = ["CheckpointError", "load", "save"]

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class _Unset(enum.Enum):
    TOKEN = 0


_UNSET = _Unset.TOKEN

# Test seam, called as hook(stage, temp_path) at stage "partial" (some storages written) and
# "written" (file complete and fsynced, not yet renamed). The kill-and-resume test sets it in a
# child process to stop a save at a known point; it is never set otherwise.
_pause_hook: Callable[[str, str], None] | None = None


def save(
    state_dict: Any,
    path: str | os.PathLike[str],
    *,
    max_checkpoints: int | Literal[_Unset.TOKEN] | None = _UNSET,
    format: Literal["torchtally", "cstorch"] = "torchtally",
) -> None:
    """Save `state_dict` to `path` atomically, as a torchtally or cstorch HDF5 checkpoint.

    Args:
        state_dict: What to save: nested dicts, lists and tuples of tensors (any dtype,
            including bfloat16; tied tensors stay tied), numpy arrays, None, bool, int, float,
            complex, str and bytes. Typically {"model": ..., "optimizer": ..., "step": ...}.
        path: The file to write. Its directory must exist; an existing file is replaced.
        max_checkpoints: After this save, keep at most this many of the checkpoints `save`
            wrote in the same directory, deleting the oldest; None keeps all. Defaults to the
            active backend's `max_checkpoints` (None without a backend). The files saved under
            a limit are listed in the directory's hidden `.torchtally-checkpoints.json`, so a
            restarted run also prunes the run before it; other files are never deleted.
        format: "torchtally" (default) writes torchtally's layout: every storage and the
            manifest carry SHA-256 digests that `load` verifies, views keep sharing their
            storage, and complex, bytes, int8 and float8 data round-trip. "cstorch" writes the
            layout of `cerebras.pytorch.save` 2.10 (format 0.5, uncompressed), which Cerebras'
            `cstorch.load` reads; it has no checksums and ties only identical tensor objects.

    Raises:
        TypeError: `state_dict` holds something the format cannot store exactly.
        ValueError: `format` is unknown, or two "cstorch" keys flatten to the same name.
        ImportError: h5py is not installed (`pip install torchtally[checkpoint]`).

    Example:
        >>> from torchtally.optim import SGD
        >>> model = torch.nn.Linear(4, 2)
        >>> opt = SGD(model.parameters(), lr=0.1)
        >>> os.makedirs("ckpt", exist_ok=True)
        >>> save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 100},
        ...      "ckpt/step_100.h5", max_checkpoints=3)
        >>> load("ckpt/step_100.h5")["step"]
        100
    """
    if format not in ("torchtally", "cstorch"):
        raise ValueError(
            f'Argument `format` must be "torchtally" or "cstorch". Received: format={format!r}'
        )
    h5py = import_h5py()
    # The format modules use numpy at import time; h5py has just brought it in.
    from torchtally.runtime._checkpoint.cstorch import write_cstorch
    from torchtally.runtime._checkpoint.encode import encode_tree
    from torchtally.runtime._checkpoint.hdf5 import write_container

    target = _save_target(path)
    limit = _resolve_limit(max_checkpoints)
    if format == "cstorch":
        _write_atomically(target, lambda temp, pause: write_cstorch(h5py, temp, state_dict))
    else:
        tree = encode_tree(state_dict)  # refuses bad input before any file is created
        _write_atomically(target, lambda temp, pause: write_container(h5py, temp, tree, pause))
    record_and_prune(target, limit)


def load(
    path: str | os.PathLike[str],
    map_location: Any = None,
    *,
    unsafe_unpickle: bool = False,
    max_bytes: int | None = None,
) -> Any:
    """Load a checkpoint written by `save`, by `cerebras.pytorch.save` 2.x, or by `torch.save`.

    Pickles are never loaded implicitly: `torch.save` files go through
    `torch.load(weights_only=True)`, and the dill-pickled entries a Cerebras checkpoint may hold
    are refused, both unless `unsafe_unpickle=True`.

    Args:
        path: The checkpoint file.
        map_location: Like torch.load's: None keeps each tensor on the device it was saved
            from; a str or torch.device puts every tensor there; a dict maps saved device
            strings (e.g. "cuda:0") to devices. cstorch's "cache" means None here.
        unsafe_unpickle: Also unpickle what the file holds as pickles (`torch.load` with
            weights_only=False; dill entries of a cstorch checkpoint). Unpickling runs code
            stored in the file: pass True only for files you trust.
        max_bytes: For cstorch checkpoints, the most bytes of data their entries may declare
            in all. Compression, never-written chunks and `DeferredFullTensor` entries let a
            file of a few KiB declare GiBs, so the sizes are summed before anything is
            allocated; the default (None) allows 1,024 times the file's size, at least
            256 MiB, and never more than this machine's memory. torchtally checkpoints and
            torch.save files store their data uncompressed and are bounded by their size.

    Returns:
        The saved object, with the container, key and tensor types it was saved with.

    Raises:
        CheckpointError: The file is truncated, corrupt, incomplete, from a newer format
            version, not a checkpoint, holds pickles and `unsafe_unpickle` is False, or
            declares more data than `max_bytes`.
        FileNotFoundError: `path` does not name a file.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> save({"model": model.state_dict(), "step": 100}, "step_100.h5")
        >>> state = load("step_100.h5", map_location="cpu")
        >>> model.load_state_dict(state["model"])
        <All keys matched successfully>
    """
    if not isinstance(unsafe_unpickle, bool):
        raise TypeError(
            f"Argument `unsafe_unpickle` must be a bool. Received: unsafe_unpickle={unsafe_unpickle!r}"
        )
    if max_bytes is not None and (type(max_bytes) is not int or max_bytes < 0):
        raise TypeError(
            "Argument `max_bytes` must be None or an int >= 0 (bytes). "
            f"Received: max_bytes={max_bytes!r}"
        )
    if isinstance(map_location, str) and map_location == "cache":
        map_location = None  # cstorch's "cache" keeps lazily read tensors; ours are read at once
    target = _existing_file(path)
    place = device_mapper(map_location)  # argument errors before touching the file
    with open(target, "rb") as handle:
        head = handle.read(len(_HDF5_SIGNATURE))
    if head.startswith(b"PK\x03\x04") or head[:1] == b"\x80":  # torch.save: zip, or legacy pickle
        return _load_torch_file(target, map_location, unsafe_unpickle)
    if head != _HDF5_SIGNATURE:
        raise CheckpointError(
            f"Cannot load {target!r}: it is neither a torchtally checkpoint (HDF5) nor a "
            f"torch.save file (its first bytes are {head!r})."
        )
    h5py = import_h5py()
    from torchtally.runtime._checkpoint.cstorch import is_cstorch_file, read_cstorch
    from torchtally.runtime._checkpoint.decode import decode_tree
    from torchtally.runtime._checkpoint.hdf5 import read_container

    try:
        with h5py.File(target, "r") as f:
            if is_cstorch_file(f):
                return read_cstorch(
                    h5py,
                    f,
                    place,
                    unsafe_unpickle=unsafe_unpickle,
                    max_bytes=max_bytes,
                    file_size=os.path.getsize(target),
                )
            manifest, specs, arrays = read_container(h5py, f)
        return decode_tree(manifest, specs, arrays, place)
    except ImportError:
        raise
    except CheckpointError as err:
        raise CheckpointError(f"Cannot load {target!r}: {err}") from err
    except Exception as err:  # HDF5 and numpy report damage as OSError, KeyError, ValueError...
        raise CheckpointError(
            f"Cannot load {target!r}: the file is damaged or is not a valid checkpoint "
            f"({type(err).__name__}: {err})."
        ) from err


#: A torch.save zip stores its members uncompressed, so what it inflates to is about its size on
#: disk. A member that inflates far beyond that is a decompression bomb, refused before reading.
_ZIP_INFLATION_LIMIT = 4
_ZIP_SLACK_BYTES = 1 << 20
_VIEW_LIMIT_BYTES = VIEW_LIMIT_BYTES  # the same bound for our HDF5 files and torch.save zips


def _check_zip_bounds(target: str) -> None:
    if not zipfile.is_zipfile(target):
        return
    try:
        with zipfile.ZipFile(target) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise CheckpointError(f"Cannot load {target!r}: damaged zip ({err}).") from err
    limit = _ZIP_INFLATION_LIMIT * os.path.getsize(target) + _ZIP_SLACK_BYTES
    if inflated > limit:
        raise CheckpointError(
            f"Cannot load {target!r}: its zip members inflate to {inflated} bytes, more than "
            f"{_ZIP_INFLATION_LIMIT}x the file's size; torch.save never compresses, so this is "
            "refused as a decompression bomb."
        )


def _check_view_bounds(value: Any, target: str, depth: int = 0) -> None:
    """Refuse tensors whose logical size is a memory bomb over a small storage."""
    if depth > 1000:
        raise CheckpointError(f"Cannot load {target!r}: nested more than 1000 levels deep.")
    if isinstance(value, torch.Tensor):
        logical = value.numel() * value.element_size()
        stored = value.untyped_storage().nbytes()
        if logical > _VIEW_LIMIT_BYTES and logical > stored:
            raise CheckpointError(
                f"Cannot load {target!r}: a tensor of shape {tuple(value.shape)} views "
                f"{logical} bytes over a storage of {stored} bytes; refused, since copying it "
                "would exhaust memory."
            )
    elif isinstance(value, dict):
        for item in value.values():
            _check_view_bounds(item, target, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_view_bounds(item, target, depth + 1)


def _load_torch_file(target: str, map_location: Any, unsafe_unpickle: bool) -> Any:
    _check_zip_bounds(target)
    try:
        loaded = torch.load(target, map_location=map_location, weights_only=not unsafe_unpickle)
        _check_view_bounds(loaded, target)
        return loaded
    except CheckpointError:
        raise
    except Exception as err:
        if unsafe_unpickle:
            raise CheckpointError(f"Cannot load {target!r} as a torch.save file ({err}).") from err
        raise CheckpointError(
            f"Cannot load {target!r} as a torch.save file: it was loaded with "
            f"weights_only=True, which only accepts tensors and plain containers ({err}). "
            "Unpickling anything else runs code stored in the file; pass "
            "`unsafe_unpickle=True` only if you trust it."
        ) from err


def _write_atomically(
    target: str, write: Callable[[str, Callable[[str], None] | None], None]
) -> None:
    """Write under a temporary name in the target's directory, fsync, then rename onto it."""
    directory, name = os.path.split(target)
    # Same directory, so the rename is atomic (same filesystem); hidden and unique per save.
    temp = os.path.join(directory, f".{name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    _remove_orphans(directory, name)
    hook = _pause_hook
    try:
        write(temp, None if hook is None else lambda s: hook(s, temp))
        _fsync_path(temp, os.O_RDONLY)
        if hook is not None:
            hook("written", temp)
        os.replace(temp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.remove(temp)
        if _out_of_space(err):
            raise CheckpointError(
                f"Cannot save {target!r}: the disk is full or the file size limit was reached "
                f"({err}). The previous checkpoint at that path, if any, is intact; free space "
                "and save again."
            ) from err
        raise
    if os.name == "posix":  # make the rename itself durable
        _fsync_path(directory, os.O_RDONLY)


def _remove_orphans(directory: str, name: str) -> None:
    """Delete temporaries of earlier saves to the same path by processes that no longer
    exist (a killed save leaves its full-size temporary behind). A live process's
    temporary, or one whose name does not parse, is left alone."""
    prefix = f".{name}."
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        parts = entry[len(prefix) : -len(".tmp")].split(".")
        if len(parts) != 2 or not parts[0].isdigit() or _alive(int(parts[0])):
            continue
        with contextlib.suppress(OSError):
            os.remove(os.path.join(directory, entry))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # exists but not ours, or cannot tell: keep its file
    return True


def _out_of_space(err: BaseException) -> bool:
    """Whether a failed write ran out of space (HDF5 reports it in its message, not errno)."""
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return True
    text = str(err)
    return isinstance(err, Exception) and any(
        marker in text
        for marker in ("No space left on device", "File too large", "Disk quota exceeded")
    )


def _fsync_path(path: str, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError:
        if os.path.isfile(path):
            raise  # a file that cannot be synced is a failed save; some systems refuse dirs
    finally:
        os.close(fd)


def _as_path(path: Any) -> str:
    try:
        text = os.fspath(path)
    except TypeError:
        text = None
    if not isinstance(text, str):
        raise TypeError(f"Argument `path` must be a str or os.PathLike. Received: {path!r}")
    return os.path.abspath(text)


def _save_target(path: Any) -> str:
    target = _as_path(path)
    if os.path.isdir(target):
        raise IsADirectoryError(f"Argument `path` must name a file, not a directory: {target!r}")
    if not os.path.isdir(os.path.dirname(target)):
        raise FileNotFoundError(
            f"Argument `path` must be in an existing directory. Received: {target!r}"
        )
    return target


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """`load` was given a path that is not an existing file (missing, or a directory)."""


def _existing_file(path: Any) -> str:
    target = _as_path(path)
    if not os.path.isfile(target):
        what = "a directory" if os.path.isdir(target) else "missing"
        raise CheckpointNotFoundError(
            f"Argument `path` must name an existing file. Received: {target!r} ({what})"
        )
    return target


def _resolve_limit(explicit: int | Literal[_Unset.TOKEN] | None) -> int | None:
    if explicit is not _UNSET:
        check_int("max_checkpoints", explicit, 1, allow_none=True)
        return explicit
    backend = _current_backend()
    if backend is None:
        return None
    value = backend.max_checkpoints
    check_int("max_checkpoints", value, 1, allow_none=True)
    return value


def _current_backend() -> Backend | None:
    """The active cstorch backend, or None; the backend module is optional at this layer."""
    try:
        from torchtally.runtime._backend import current_backend
    except ImportError as err:
        # Tolerate only the backend module (or its function) being absent, not its own bugs.
        if err.name not in ("torchtally.runtime._backend", "torchtally.runtime", "torchtally"):
            raise
        return None
    return current_backend()
