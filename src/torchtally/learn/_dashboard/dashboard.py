"""`Dashboard`: the live terminal view of a run, drawn with rich.

It takes over the terminal's alternate screen (as Burn's TUI does), so a resize never leaves
stale fragments behind: every refresh redraws the whole screen at the size the terminal has
now. What user code prints meanwhile is caught, shown in an output panel, and written to the
normal screen when the dashboard closes. `q` asks the learner to stop after the current step;
Ctrl-C still interrupts, and the terminal (screen, cursor, echo) is restored however the run
ends: by `on_run_end`, `close`, or at interpreter exit.

If rich is missing, the output is not a terminal, or drawing fails mid-run, the dashboard hands
over to `PlainRenderer` lines and training goes on.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, cast, final

from torchtally._records import MetricRecord, Observer, Progress, RunInfo
from torchtally.learn._dashboard.capture import OutputCapture
from torchtally.learn._dashboard.keys import KeyReader
from torchtally.learn._dashboard.plain import PlainRenderer
from torchtally.learn._dashboard.state import RunState
from torchtally.learn._history import logged_before

if TYPE_CHECKING:
    from types import TracebackType

    from rich.console import Console, RenderableType
    from rich.live import Live

__all__ = ["Dashboard"]

_log = logging.getLogger(__name__)
_OUTPUT_LINES = 4
_BUSY_FACTOR = 9.0  # idle time per unit of drawing time, at least


@final
class Dashboard(Observer):
    """An observer drawing the run live in the terminal: a plot per metric (one coloured line
    per split), the latest values and machine metrics, progress bars with rate and ETA.

    Args:
        stop_callback: Called (once, from the key-reading thread) when `q` is pressed; the
            learner passes its thread-safe `request_stop`. None: a `Learner` given this
            dashboard binds its own (`bind_stop`); until something is bound the screen does
            not offer `q`, and `q` does nothing.
        refresh_per_second: Redraws per second (> 0).
        console: A rich `Console` to draw on (default: one on `stream`).
        stream: The terminal to draw on when no console is given (default: `sys.stdout`).
        keys: Read `q` from standard input when it is a terminal.
        capture_output: Catch `print`s and `sys.stderr` writes while the dashboard is up.
        clock: Monotonic time source (seconds).

    Example:
        >>> learner = Learner(..., observers=[Dashboard(stop_callback=...)])  # doctest: +SKIP
        >>> # or, letting the output decide: observers=[make_renderer(learner.request_stop)]
    """

    def __init__(
        self,
        stop_callback: Callable[[], None] | None = None,
        refresh_per_second: float = 4,
        console: Console | None = None,
        *,
        stream: TextIO | None = None,
        keys: bool = True,
        capture_output: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if stop_callback is not None and not callable(stop_callback):
            raise TypeError(
                "Argument `stop_callback` must be callable or None. "
                f"Received: stop_callback={stop_callback!r}"
            )
        if (
            isinstance(refresh_per_second, bool)
            or not isinstance(refresh_per_second, (int, float))
            or not (math.isfinite(refresh_per_second) and refresh_per_second > 0)
        ):
            raise ValueError(
                "Argument `refresh_per_second` must be a finite number > 0. "
                f"Received: refresh_per_second={refresh_per_second!r}"
            )
        self._stop_callback = stop_callback
        self._interval = 1.0 / refresh_per_second
        self._clock = clock
        self._state = RunState(clock)
        self._capture = OutputCapture() if capture_output else None
        self._keys = KeyReader(self._on_key) if keys else None
        self._keys_active = False
        self._lock = threading.RLock()
        self._live: Live | None = None
        self._refresher: threading.Thread | None = None
        self._done = threading.Event()
        self._failure: BaseException | None = None
        self._fallback: PlainRenderer | None = None
        self._stop_requested = False
        self._closed = False
        self._console: Any = console
        self._stream: TextIO = stream if stream is not None else sys.stdout
        self._owns_console = console is None
        try:
            from rich.console import Console
        except ImportError:
            self._fall_back("rich is not installed (pip install 'torchtally[dashboard]')")
            return
        if console is None:
            self._console = Console(file=self._stream, highlight=False)
        else:
            self._stream = cast("TextIO", console.file)
            console.file = self._stream  # pinned: `sys.stdout` is about to be swapped
        if not self._console.is_terminal or self._console.is_dumb_terminal:
            self._fall_back("the output is not a terminal")

    def bind_stop(self, callback: Callable[[], None]) -> bool:
        """Make `q` call `callback`, unless a stop callback was given already.

        The `Learner` calls this with its `request_stop`, so a dashboard made without one
        (`make_renderer()`) still stops the run it shows.

        Args:
            callback: The stop request (thread-safe; called from the key-reading thread).

        Returns:
            True when `callback` is now the stop callback, False when one was already set.
        """
        if not callable(callback):
            raise TypeError(
                f"Argument `callback` must be callable. Received: callback={callback!r}"
            )
        with self._lock:
            if self._stop_callback is not None:
                return False
            self._stop_callback = callback
            return True

    @property
    def fallback(self) -> PlainRenderer | None:
        """The plain renderer now doing the work, None while the dashboard draws."""
        return self._fallback

    def on_run_start(self, info: RunInfo) -> None:
        """Start drawing at once (no blank screen while the first step compiles). A dashboard
        whose run ended starts over: one instance can watch several runs in turn."""
        if self._fallback is not None:
            self._fallback.on_run_start(info)
            return
        with self._lock:
            if self._closed:  # a second run on the same dashboard: start afresh
                self._state = RunState(self._clock)
                self._closed = self._stop_requested = False
        # a resumed run's plots start from what it logged before its checkpoint
        self._state.start(info, logged_before(info))
        if not self._active():
            self._plain().on_run_start(info)

    def on_progress(self, progress: Progress) -> None:
        """Update the progress bars and the status line."""
        if self._active():
            self._state.progress(progress)
        else:
            self._plain().on_progress(progress)

    def on_records(self, records: list[MetricRecord]) -> None:
        """Add values (thread-safe: system samples come from the sampler's thread)."""
        fallback = self._fallback
        if fallback is not None:
            fallback.on_records(records)
        else:
            self._state.records(records)

    def on_epoch_end(self, split: str, epoch: int) -> None:
        """Note the end of a split's epoch."""
        if self._active():
            self._state.epoch_end(split, epoch)
        else:
            self._plain().on_epoch_end(split, epoch)

    def on_run_end(self, stopped_early: bool) -> None:
        """Leave the screen, replay what user code printed, and print a summary."""
        if self._fallback is not None:
            self._fallback.on_run_end(stopped_early)
            return
        self._state.finish()
        self._close(stopped_early)

    def close(self) -> None:
        """Restore the terminal now (idempotent; also runs at interpreter exit)."""
        self._close(None)

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _active(self) -> bool:
        """Start the display, or check it is healthy; False once plain lines took over."""
        if self._fallback is None:
            self._guarded(self._tick)
        return self._fallback is None

    def _plain(self) -> PlainRenderer:
        assert self._fallback is not None
        return self._fallback

    def _tick(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._live is None and not self._closed:
            self._start()

    def _start(self) -> None:
        from rich.live import Live

        with self._lock:
            if self._live is not None or self._closed:
                return
            atexit.register(self.close)
            if self._capture is not None:
                self._capture.install()
            if self._keys is not None:
                self._keys_active = self._keys.start()
            self._live = Live(
                console=self._console,
                screen=True,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
                get_renderable=self._render,
            )
            self._live.start(refresh=True)
            self._done.clear()
            self._refresher = threading.Thread(
                target=self._refresh_loop, name="torchtally-dashboard", daemon=True
            )
            self._refresher.start()

    def _refresh_loop(self) -> None:
        wait = self._interval
        while not self._done.wait(wait):
            live = self._live
            if live is None:
                return
            began = time.perf_counter()
            try:
                live.refresh()
            except Exception as error:
                self._failure = self._failure or error
                return
            # Drawing holds the GIL: keep it under ~10% of the time, whatever the history size.
            wait = max(self._interval, _BUSY_FACTOR * (time.perf_counter() - began))

    def _render(self) -> RenderableType:
        from rich.text import Text

        try:
            from torchtally.learn._dashboard.layout import build_screen

            width, height = self._size()
            snapshot = self._state.snapshot(with_history=True)
            output = self._capture.recent(_OUTPUT_LINES) if self._capture else []
            note = "stopping after this step…" if self._stop_requested else ""
            # Never offer a key nothing honours: `q` shows only with a stop callback.
            keys = self._keys_active and self._stop_callback is not None
            return build_screen(snapshot, output, note, keys, width, height)
        except Exception as error:
            self._failure = self._failure or error
            return Text("torchtally: the dashboard failed; switching to plain output")

    def _size(self) -> tuple[int, int]:
        """The terminal's size now; pinned on our own console (COLUMNS/LINES can't go stale)."""
        if self._owns_console:
            try:
                columns, lines = os.get_terminal_size(self._stream.fileno())
            except (AttributeError, ValueError, OSError):
                pass
            else:
                if columns > 0 and lines > 0:
                    self._console.size = (columns, lines)
        size = self._console.size
        return size.width, size.height

    def _on_key(self, key: str) -> None:
        callback = self._stop_callback
        if key in ("q", "Q") and callback is not None and not self._stop_requested:
            self._stop_requested = True
            callback()

    def _guarded(self, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception as error:
            self._switch_to_plain(error)

    def _switch_to_plain(self, error: BaseException) -> None:
        with self._lock:
            if self._fallback is not None:
                return
            self._write_lines(self._teardown())
            _log.warning(
                "torchtally: the dashboard failed (%r); continuing with plain progress lines",
                error,
                exc_info=error,
            )
            self._fallback = PlainRenderer(self._stream, state=self._state)

    def _fall_back(self, reason: str) -> None:
        warnings.warn(
            f"torchtally: Dashboard unavailable: {reason}; using plain progress lines instead.",
            RuntimeWarning,
            stacklevel=3,
        )
        self._fallback = PlainRenderer(self._stream, state=self._state)

    def _close(self, stopped_early: bool | None) -> None:
        with self._lock:
            if self._closed or self._fallback is not None:
                return
            self._closed = True
            started = self._live is not None
            self._write_lines(self._teardown())
            if started:
                self._print_summary(stopped_early)

    def _teardown(self) -> list[str]:
        """Stop drawing and undo every change to the process and the terminal.

        Returns:
            The captured output, to be written to the terminal now that it is back.
        """
        lines: list[str] = []
        self._done.set()
        refresher, self._refresher = self._refresher, None
        live, self._live = self._live, None
        if refresher is not None and refresher is not threading.current_thread():
            refresher.join(timeout=5.0)
        try:
            if live is not None:
                live.stop()  # leaves the alternate screen, shows the cursor
        except Exception as error:  # e.g. the terminal went away: still restore the rest
            _log.warning("torchtally: leaving the dashboard's screen failed: %r", error)
        finally:
            try:
                if self._capture is not None:
                    lines = self._capture.uninstall()
            finally:
                if self._keys is not None:
                    self._keys.stop()  # restores echo and line buffering
                atexit.unregister(self.close)
        return lines

    def _write_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        try:
            self._stream.write("\n".join(lines) + "\n")
            self._stream.flush()
        except Exception as error:
            _log.warning("torchtally: could not replay the captured output: %r", error)

    def _print_summary(self, stopped_early: bool | None) -> None:
        from torchtally.learn._dashboard.widgets import metrics_panel
        from torchtally.learn._format import format_duration

        snapshot = self._state.snapshot()
        elapsed = format_duration(snapshot.elapsed)
        how = {True: "stopped early after", False: "finished in", None: "ended after"}
        try:
            self._console.print(f"torchtally: run {how[stopped_early]} {elapsed}")
            if snapshot.latest or snapshot.system:
                self._console.print(metrics_panel(snapshot, expand=False))
        except Exception as error:
            _log.warning("torchtally: could not print the run summary: %r", error)
