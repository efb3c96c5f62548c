"""Optional dependencies, imported where a feature needs them, with the extra that installs them.

The core (`import torchtally`, the metrics, collections, the functional API, compat) needs only
torch; numpy, h5py and the rest come with extras and are imported on first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_numpy", "import_optional"]


def import_optional(name: str, feature: str, extra: str) -> ModuleType:
    """Import the optional module `name`, or raise an ImportError that says what needs it and
    which extra installs it.

    Args:
        name: The module to import, e.g. "numpy".
        feature: What needs it, for the message, e.g. "`to_numpy`".
        extra: The torchtally extra that installs it, e.g. "numpy".

    Returns:
        The module.

    Example:
        >>> json = import_optional("json", "this example", "none")
    """
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(
            f"{feature} needs {name}, which is not installed. Install it with "
            f"`pip install torchtally[{extra}]` (or `pip install {name}`)."
        ) from err


def import_numpy(feature: str) -> ModuleType:
    """Import numpy (the `numpy` extra), naming `feature` in the error when it is missing.

    Example:
        >>> np = import_numpy("`to_numpy`")
    """
    return import_optional("numpy", feature, "numpy")
