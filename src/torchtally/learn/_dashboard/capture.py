"""Catching what user code prints while the dashboard owns the screen.

While the dashboard is up, `sys.stdout` and `sys.stderr` are replaced by `CapturedStream`s that
collect complete lines: the dashboard shows the last few in its output panel, and when it closes
it writes every captured line to the real terminal, so nothing printed during training is lost
and nothing printed tears the display. Logging handlers that write to the terminal are pointed at
the capture too. Output written straight to the file descriptors (C extensions, subprocesses)
cannot be caught this way; the next refresh, which redraws the whole screen, paints over it.
"""

from __future__ import annotations

import io
import logging
import sys
import threading
from collections import deque
from typing import Any, TextIO, final

__all__ = ["CapturedStream", "OutputCapture"]

_MAX_PENDING = 8192  # characters of an unterminated line kept (a \r-redrawn bar grows forever)


@final
class OutputCapture:
    """Swaps `sys.stdout`/`sys.stderr` for capturing streams and keeps what they receive.

    Args:
        max_lines: Lines kept for the replay at `uninstall` (older ones are counted, dropped).

    Example:
        >>> capture = OutputCapture()
        >>> capture.install()
        >>> print("hello")
        >>> capture.uninstall()
        ['hello']
    """

    def __init__(self, max_lines: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._dropped = 0
        self._saved: tuple[TextIO, TextIO] | None = None
        self._streams: tuple[CapturedStream, CapturedStream] | None = None
        self._handlers: list[tuple[logging.StreamHandler[Any], Any]] = []

    def install(self) -> None:
        """Replace `sys.stdout` and `sys.stderr` (no-op when already installed)."""
        if self._saved is not None:
            return
        self._saved = (sys.stdout, sys.stderr)
        self._streams = (CapturedStream(self, sys.stdout), CapturedStream(self, sys.stderr))
        sys.stdout, sys.stderr = self._streams
        # Logging handlers made earlier (logging.basicConfig) hold the old streams: point them
        # at ours too, or their lines would land in the middle of a frame and be drawn over.
        for handler in _stream_handlers():
            for original, captured in zip(self._saved, self._streams):
                if handler.stream is original:
                    handler.setStream(captured)
                    self._handlers.append((handler, original))

    def uninstall(self) -> list[str]:
        """Put the original streams back.

        Returns:
            Every captured line (pending partial lines included), oldest first, preceded by a
            note when older lines were dropped.
        """
        if self._saved is not None:
            # Only undo our own swap: leave a stream someone installed after us alone.
            if self._streams is not None and sys.stdout is self._streams[0]:
                sys.stdout = self._saved[0]
            if self._streams is not None and sys.stderr is self._streams[1]:
                sys.stderr = self._saved[1]
            for handler, original in self._handlers:
                if handler.stream in (self._streams or ()):
                    handler.setStream(original)
            self._handlers.clear()
            for stream in self._streams or ():
                stream.flush_partial()
            self._saved = self._streams = None
        with self._lock:
            lines = list(self._lines)
            if self._dropped:
                lines.insert(0, f"[{self._dropped} earlier output lines dropped]")
            self._lines.clear()
            self._dropped = 0
        return lines

    def recent(self, count: int) -> list[str]:
        """The last `count` complete lines, oldest first."""
        with self._lock:
            return list(self._lines)[-count:] if count > 0 else []

    def add(self, line: str) -> None:
        """Keep one complete line."""
        with self._lock:
            if len(self._lines) == self._lines.maxlen:
                self._dropped += 1
            self._lines.append(line)


@final
class CapturedStream(io.TextIOBase):
    """A text stream that hands complete lines to an `OutputCapture`. A carriage return
    restarts the pending line, so `\\r`-redrawn progress bars keep only their last state.

    Args:
        sink: The capture receiving the lines.
        original: The stream it replaces (for `encoding` and `fileno`).

    Example:
        >>> stream = CapturedStream(capture, sys.stdout)  # doctest: +SKIP
    """

    def __init__(self, sink: OutputCapture, original: TextIO) -> None:
        super().__init__()
        self._sink = sink
        self._original = original
        self._pending = ""
        self._lock = threading.Lock()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._original, "encoding", None) or "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False  # other libraries must not draw their own terminal animations here

    def fileno(self) -> int:
        return self._original.fileno()

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            *complete, self._pending = (self._pending + text).split("\n")
            self._pending = self._pending[-_MAX_PENDING:]
        for line in complete:
            self._sink.add(_last_redraw(line))
        return len(text)

    def flush(self) -> None:
        pass  # lines are kept as they complete

    def flush_partial(self) -> None:
        """Hand over a pending unterminated line."""
        with self._lock:
            pending, self._pending = self._pending, ""
        if pending:
            self._sink.add(_last_redraw(pending))


def _stream_handlers() -> list[logging.StreamHandler[Any]]:
    """Every `logging.StreamHandler` attached to a logger (file handlers excluded)."""
    loggers: list[Any] = [logging.getLogger()]
    loggers += [
        v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)
    ]
    return [
        handler
        for logger in loggers
        for handler in logger.handlers
        if type(handler) is logging.StreamHandler
    ]


def _last_redraw(line: str) -> str:
    """What a terminal would show of `line`: the text after its last carriage return."""
    return line.rstrip("\r").rsplit("\r", 1)[-1]
