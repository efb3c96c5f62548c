"""The Dashboard in this process: output capture and replay, and every way it hands over to the
plain renderer (no rich, no terminal, a failure while drawing) without stopping training."""

from __future__ import annotations

import fcntl
import io
import logging
import os
import pty
import re
import select
import struct
import sys
import termios
import threading
import time

import pytest

import torchtally.learn._dashboard.layout as layout
from torchtally._records import MetricRecord, Progress, RunInfo
from torchtally.learn._dashboard.capture import OutputCapture
from torchtally.learn._dashboard.dashboard import Dashboard
from torchtally.learn._dashboard.keys import KeyReader
from torchtally.learn._dashboard.plain import PlainRenderer

INFO = RunInfo(("train",), 2, {"train": ("loss",)})


class Pty:
    """A pseudo-terminal whose output is drained (and kept) by a thread."""

    def __init__(self) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.stream = os.fdopen(slave, "w", encoding="utf-8")
        self._chunks: list[bytes] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._done.is_set():
            if select.select([self.master], [], [], 0.02)[0]:
                try:
                    self._chunks.append(os.read(self.master, 1 << 16))
                except OSError:
                    return

    def output(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")

    def wait_for(self, text: str, seconds: float = 10.0, after: str = "") -> None:
        """Wait until `text` is in the output (after the last `after`, when given)."""
        deadline = time.monotonic() + seconds
        while True:
            output = self.output()
            if after:
                output = output.rpartition(after)[2] if after in output else ""
            if text in output:
                return
            assert time.monotonic() < deadline, f"{text!r} never appeared"
            time.sleep(0.02)

    def close(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        self.stream.close()
        os.close(self.master)


@pytest.fixture
def tty(monkeypatch):
    for name in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = Pty()
    yield terminal
    terminal.close()


def _step(dashboard: Dashboard, step: int) -> None:
    dashboard.on_progress(Progress("train", 1, 2, step, 10, step, 100.0))
    dashboard.on_records([MetricRecord("train", 1, step, "loss", 1.0 / step, time.time())])


def test_prints_go_to_the_output_panel_then_back_to_the_terminal(tty):
    stdout, stderr = sys.stdout, sys.stderr
    dashboard = Dashboard(stream=tty.stream, keys=False, refresh_per_second=50)
    dashboard.on_run_start(INFO)
    tty.wait_for("\x1b[?1049h")  # the alternate screen, at once
    _step(dashboard, 1)
    print("hello from user code")
    print("a warning", file=sys.stderr)
    tty.wait_for("hello from user code")  # drawn in the output panel
    assert sys.stdout is not stdout and not sys.stdout.isatty()
    dashboard.on_run_end(stopped_early=False)
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    tty.wait_for("run finished in")
    tty.wait_for("╯", after="run finished in")  # the summary's metrics panel
    output = tty.output()
    tail = output.rsplit("\x1b[?1049l", 1)[1]  # after leaving the alternate screen
    assert "hello from user code\na warning\ntorchtally: run finished in" in tail.replace(
        "\r\n", "\n"
    )
    assert re.search(r"│ loss +1\.000 │", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", tail))
    assert output.rfind("\x1b[?25h") > output.rfind("\x1b[?25l")  # the cursor is back
    dashboard.close()  # idempotent


def test_a_failure_while_drawing_hands_over_to_plain_lines(tty, monkeypatch, caplog):
    real_build = layout.build_screen
    calls = []

    def failing_build(*args, **kwargs):
        calls.append(1)
        if len(calls) >= 3:  # draw twice, then break
            raise RuntimeError("boom in layout")
        return real_build(*args, **kwargs)

    monkeypatch.setattr(layout, "build_screen", failing_build)
    stdout = sys.stdout
    dashboard = Dashboard(stream=tty.stream, keys=False, refresh_per_second=50)
    dashboard.on_run_start(INFO)
    deadline = time.monotonic() + 10
    while len(calls) < 3:
        assert time.monotonic() < deadline, "the dashboard stopped refreshing"
        time.sleep(0.02)
    _step(dashboard, 2)  # training goes on: this call notices the failure and switches
    assert isinstance(dashboard.fallback, PlainRenderer)
    assert sys.stdout is stdout
    for step in (3, 4):
        _step(dashboard, step)
    dashboard.on_run_end(stopped_early=False)
    tty.wait_for("run finished in")
    tail = tty.output().rsplit("\x1b[?1049l", 1)[1].replace("\r\n", "\n")
    assert "[train] epoch 1/2 step 2/10" in tail and "run finished in" in tail
    failures = [r for r in caplog.records if "dashboard failed" in r.getMessage()]
    assert len(failures) == 1 and "boom in layout" in failures[0].getMessage()


def test_without_a_terminal_it_warns_and_writes_plain_lines():
    out = io.StringIO()
    with pytest.warns(RuntimeWarning, match="Dashboard unavailable: the output is not a terminal"):
        dashboard = Dashboard(stream=out)
    dashboard.on_run_start(INFO)
    _step(dashboard, 1)
    dashboard.on_run_end(stopped_early=True)
    assert out.getvalue().splitlines() == [
        "run: 2 epochs (train)",
        "[train] epoch 1/2 step 1/10 100 samples/s",  # its values come after it
        "run stopped early after 0:00:00",
    ]


def test_without_rich_it_warns_and_writes_plain_lines(tty, monkeypatch):
    monkeypatch.setitem(sys.modules, "rich.console", None)  # `import rich.console` fails
    with pytest.warns(RuntimeWarning, match=r"rich is not installed \(pip install"):
        dashboard = Dashboard(stream=tty.stream)
    assert isinstance(dashboard.fallback, PlainRenderer)
    dashboard.on_run_start(INFO)
    tty.wait_for("run: 2 epochs (train)")
    assert "\x1b[" not in tty.output()


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="Argument `stop_callback` must be callable or None"):
        Dashboard(stop_callback=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`refresh_per_second` must be a finite number > 0"):
        Dashboard(refresh_per_second=0)


def test_output_capture_keeps_lines_and_restores_the_streams():
    stdout, stderr = sys.stdout, sys.stderr
    capture = OutputCapture(max_lines=3)
    capture.install()
    try:
        print("one")
        sys.stdout.write("progress 10%\rprogress 50%\rprogress 100%\n")
        sys.stderr.write("two\r\n")
        sys.stdout.write("three")  # no newline yet
        assert capture.recent(2) == ["progress 100%", "two"]
    finally:
        lines = capture.uninstall()
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert lines == ["[1 earlier output lines dropped]", "progress 100%", "two", "three"]


def test_key_reader_leaves_non_terminals_and_foreign_terminals_alone(caplog):
    read, write = os.pipe()
    master, slave = pty.openpty()
    try:
        assert KeyReader(lambda key: None, fd=read).start() is False  # a pipe
        before = termios.tcgetattr(slave)
        reader = KeyReader(lambda key: None, fd=slave)
        assert reader.start() is False  # not our controlling terminal: do not touch it
        reader.stop()
        assert termios.tcgetattr(slave) == before and not reader.active
    finally:
        for fd in (read, write, master, slave):
            os.close(fd)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_one_dashboard_can_watch_two_runs(tty):
    dashboard = Dashboard(stream=tty.stream, keys=False, refresh_per_second=50)
    for run in (1, 2):
        dashboard.on_run_start(INFO)
        _step(dashboard, run)
        dashboard.on_run_end(stopped_early=False)
        deadline = time.monotonic() + 10
        while tty.output().count("run finished in") < run:
            assert time.monotonic() < deadline, f"run {run} never finished"
            time.sleep(0.02)
        output = tty.output()
        assert output.count("\x1b[?1049h") == run == output.count("\x1b[?1049l")
        assert output.count("torchtally: run finished in") == run


def test_output_capture_also_catches_logging_handlers_made_before():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("torchtally.tests.capture")
    logger.addHandler(handler)
    original = handler.stream
    capture = OutputCapture()
    try:
        capture.install()
        try:
            logger.warning("from a logger")
        finally:
            lines = capture.uninstall()
    finally:
        logger.removeHandler(handler)
    assert lines == ["WARNING from a logger"]
    assert handler.stream is original
