"""Ctrl-C during a run: the first press asks the learner to stop after the current step.

While a run is in progress in the main thread, and nobody else has taken over SIGINT (a
dashboard reading keys may), the first Ctrl-C calls the learner's `request_stop` (it then
finishes the step, saves a checkpoint and ends the run), and a second Ctrl-C raises
`KeyboardInterrupt` as usual, which the learner also turns into a stop.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["stop_on_sigint"]

_log = logging.getLogger("torchtally.learn")


@contextlib.contextmanager
def stop_on_sigint(
    request_stop: Callable[[], None], stopping: Callable[[], bool], enabled: bool = True
) -> Iterator[None]:
    """Within the block, turn the first SIGINT into `request_stop()`.

    Args:
        request_stop: Called on the first Ctrl-C.
        stopping: Whether a stop was already requested (a Ctrl-C then interrupts).
        enabled: Install the handler at all.

    Example:
        >>> import os, signal
        >>> stop = threading.Event()
        >>> with stop_on_sigint(stop.set, stop.is_set):
        ...     os.kill(os.getpid(), signal.SIGINT)  # the first Ctrl-C only asks to stop
        >>> stop.is_set()
        True
    """
    in_main = threading.current_thread() is threading.main_thread()
    if (
        not enabled
        or not in_main
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if stopping():
            raise KeyboardInterrupt
        _log.warning("Stopping after the current step (press Ctrl-C again to interrupt it).")
        request_stop()

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
