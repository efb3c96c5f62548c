"""`make_renderer`: the dashboard on a terminal, plain lines everywhere else."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from typing import TextIO

from torchtally._records import Observer
from torchtally.learn._dashboard.dashboard import Dashboard
from torchtally.learn._dashboard.plain import PlainRenderer

__all__ = ["make_renderer"]


def make_renderer(
    stop_callback: Callable[[], None] | None = None, stream: TextIO | None = None
) -> Observer:
    """The progress display that suits where the output goes.

    A `Dashboard` when `stream` is a terminal (`isatty()`), rich is installed and `TERM` is not
    "dumb"; otherwise a `PlainRenderer` (CI logs, pipes, files, notebooks).

    Args:
        stop_callback: What `q` calls on the dashboard (e.g. `learner.request_stop`).
        stream: Where the output goes (default: `sys.stdout`).

    Returns:
        The observer.

    Example:
        >>> renderer = make_renderer(learner.request_stop)  # doctest: +SKIP
    """
    if stop_callback is not None and not callable(stop_callback):
        raise TypeError(
            "Argument `stop_callback` must be callable or None. "
            f"Received: stop_callback={stop_callback!r}"
        )
    stream = stream if stream is not None else sys.stdout
    if _is_terminal(stream) and os.environ.get("TERM") != "dumb" and _rich_available():
        return Dashboard(stop_callback, stream=stream)
    return PlainRenderer(stream)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or not a real stream
        return False


def _rich_available() -> bool:
    return importlib.util.find_spec("rich") is not None
