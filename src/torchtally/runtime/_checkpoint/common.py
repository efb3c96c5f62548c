"""What the checkpoint readers and writers share that needs only torch: the error type, the
device mapping of `load`, and the import of h5py with its install hint.

numpy and h5py are optional (the `checkpoint` extra): `import torchtally` must work with torch
alone, so the modules that use numpy at import time (`format`, `encode`, `decode`, `hdf5`,
`cstorch`) are imported by `save` and `load` only once h5py, which needs numpy, is there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import torch

from torchtally._optional import import_optional

__all__ = [
    "VIEW_LIMIT_BYTES",
    "CheckpointError",
    "DevicePlacer",
    "device_mapper",
    "import_h5py",
    "short_where",
]

#: A loaded tensor may view more elements than its storage holds (stride 0, as `expand` makes)
#: only up to this many bytes: beyond it, the first copy of the view would exhaust memory.
VIEW_LIMIT_BYTES = 1 << 30

DevicePlacer = Callable[[str], torch.device]


class CheckpointError(RuntimeError, ValueError):
    """A file is not a readable checkpoint: corrupt, truncated, incomplete, or not allowed.

    Example:
        >>> from pathlib import Path
        >>> from torchtally.runtime import load
        >>> _ = Path("notes.txt").write_text("not a checkpoint")
        >>> try:
        ...     load("notes.txt")
        ... except CheckpointError as err:
        ...     print(err)  # names the file and what is wrong with it
        Cannot load '.../notes.txt': it is neither a torchtally checkpoint (HDF5) nor a torch.save file (its first bytes are b'not a ch').
    """


def short_where(where: str, limit: int = 160) -> str:
    """Shorten a location such as "state_dict['a'][0]…" for an error message.

    Args:
        where: The location string.
        limit: Longest string returned.

    Returns:
        `where`, or its start and end joined by "…" when it is longer than `limit`.

    Example:
        >>> short_where("abcdefghij", limit=5)
        'ab…ij'
    """
    if len(where) <= limit:
        return where
    keep = (limit - 1) // 2
    return f"{where[:keep]}…{where[-keep:]}"


def import_h5py() -> ModuleType:
    """Import h5py, which is an optional dependency, with an install hint when it is missing.

    Returns:
        The h5py module.

    Example:
        >>> h5py = import_h5py()
    """
    return import_optional("h5py", "Saving and loading torchtally checkpoints", "checkpoint")


def device_mapper(map_location: Any) -> DevicePlacer:
    """Turn a torch-style `map_location` into a function from saved device to target device.

    Args:
        map_location: None (keep the saved device), a str or torch.device (everything there),
            or a dict from saved device strings to target devices (others stay put).

    Returns:
        A function taking a saved device string and returning the device to load onto.

    Example:
        >>> device_mapper("cpu")("cuda:0")
        device(type='cpu')
    """

    def parse(value: Any, what: str) -> torch.device:
        try:
            return torch.device(value)
        except (RuntimeError, TypeError, ValueError) as err:
            raise ValueError(
                f"Argument `map_location` must name a valid device{what}. Received: {value!r}"
            ) from err

    if map_location is None:
        return lambda saved: torch.device(saved)
    if isinstance(map_location, (str, torch.device)):
        target = parse(map_location, "")
        return lambda saved: target
    if isinstance(map_location, Mapping):
        table = {}
        for key, value in map_location.items():
            if not isinstance(key, str):
                raise TypeError(
                    "Argument `map_location` as a dict must have str keys (saved devices such as "
                    f"'cuda:0'). Received key: {key!r}"
                )
            table[key] = parse(value, f" for saved device {key!r}")
        return lambda saved: table[saved] if saved in table else torch.device(saved)
    raise TypeError(
        "Argument `map_location` must be None, a str, a torch.device, or a dict mapping saved "
        f"device strings to devices. Received: {map_location!r}"
    )
