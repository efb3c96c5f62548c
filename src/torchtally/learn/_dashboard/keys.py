"""Single key presses from the terminal, read on a background thread in cbreak mode.

cbreak mode turns off line buffering and echo but keeps signals: Ctrl-C still raises
KeyboardInterrupt in the training thread. The terminal's settings are restored by `stop`, which
also runs at interpreter exit, so an interrupted run never leaves a terminal without echo.
"""

from __future__ import annotations

import atexit
import logging
import os
import select
import sys
import threading
from collections.abc import Callable
from typing import Any, final

__all__ = ["KeyReader"]

_log = logging.getLogger(__name__)
_POLL_S = 0.1  # how long `stop` may wait for the thread to notice


@final
class KeyReader:
    """Calls `on_key(character)` for every key pressed while it runs.

    Does nothing (`start` returns False) when the input is not a terminal, when the process is
    not in the terminal's foreground (a background job), or on platforms without `termios`.

    Args:
        on_key: Called on the reader thread with each character; exceptions are logged.
        fd: The terminal's file descriptor (default: standard input's).

    Example:
        >>> keys = KeyReader(lambda key: key == "q" and learner.request_stop())
        >>> keys.start()  # doctest: +SKIP
        >>> keys.stop()
    """

    def __init__(self, on_key: Callable[[str], None], fd: int | None = None) -> None:
        if not callable(on_key):
            raise TypeError(f"Argument `on_key` must be callable. Received: on_key={on_key!r}")
        self._on_key = on_key
        self._fd = fd
        self._saved: list[Any] | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether keys are being read."""
        return self._thread is not None

    def start(self) -> bool:
        """Switch the terminal to cbreak mode and start reading.

        Returns:
            True when keys are now read, False when this terminal cannot be read from.
        """
        with self._lock:
            if self._thread is not None:
                return True
            try:
                import termios
            except ImportError:  # Windows
                return False
            try:
                fd = self._fd if self._fd is not None else sys.stdin.fileno()
                if not os.isatty(fd) or os.tcgetpgrp(fd) != os.getpgrp():
                    return False
                saved = termios.tcgetattr(fd)
                mode = termios.tcgetattr(fd)
                mode[3] &= ~(termios.ECHO | termios.ICANON)
                mode[6][termios.VMIN] = 1
                mode[6][termios.VTIME] = 0
                termios.tcsetattr(fd, termios.TCSANOW, mode)
            except (AttributeError, ValueError, OSError, termios.error):
                return False
            self._fd, self._saved = fd, saved
            self._done.clear()
            atexit.register(self.stop)
            self._thread = threading.Thread(target=self._run, name="torchtally-keys", daemon=True)
            self._thread.start()
            return True

    def stop(self) -> None:
        """Stop reading and restore the terminal's settings (safe to call repeatedly)."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._done.set()
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=5 * _POLL_S)
            saved, self._saved = self._saved, None
            if saved is not None and self._fd is not None:
                import termios

                try:
                    termios.tcsetattr(self._fd, termios.TCSADRAIN, saved)
                except (OSError, termios.error) as error:
                    _log.warning("torchtally: could not restore the terminal settings: %r", error)
            atexit.unregister(self.stop)

    def _run(self) -> None:
        fd = self._fd
        assert fd is not None
        while not self._done.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], _POLL_S)
                data = os.read(fd, 64) if ready else b""
            except (OSError, ValueError):
                return
            if ready and not data:
                return  # end of input
            for key in data.decode(errors="ignore"):
                try:
                    self._on_key(key)
                except Exception:
                    _log.exception("torchtally: key handler failed on %r", key)
