"""The Dashboard in a real terminal: a child process runs a fake training run (`_dash_child.py`)
on a pseudo-terminal; what it writes goes through a small terminal emulator (`_dash_screen.py`)
and the tests look at the resulting screen, resize it, print into it, press `q` and Ctrl-C.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _dash_screen import Screen

CHILD = Path(__file__).with_name("_dash_child.py")
FIRST_FRAME_S = 60.0  # the child imports torch first
STEP_S = 15.0
# Variables that would pin rich's idea of the terminal's size or colours.
ENV_OVERRIDES = {"COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "COLORTERM", "TTY_COMPATIBLE"}
BRAILLE = re.compile("[\u2801-\u28ff]")


def _set_size(fd: int, columns: int, lines: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))


class Terminal:
    """A child process on a pseudo-terminal, and the screen it draws."""

    def __init__(self, mode: str, columns: int, lines: int) -> None:
        master, slave = pty.openpty()
        _set_size(slave, columns, lines)
        env = {k: v for k, v in os.environ.items() if k not in ENV_OVERRIDES}
        env["TERM"] = "xterm-256color"
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), mode],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)  # the child holds the only copy: reads fail with EIO once it exits
        self.fd = master
        self.screen = Screen(columns, lines)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.eof = False

    def pump(self, seconds: float) -> None:
        """Feed the screen what the child writes during `seconds` (or until it closes)."""
        deadline = time.monotonic() + seconds
        while not self.eof:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(left, 0))
            if not ready:
                return
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:  # EIO: the child closed the terminal
                data = b""
            if not data:
                self.eof = True
                self.screen.feed(self._decoder.decode(b"", final=True))
                return
            self.screen.feed(self._decoder.decode(data))

    def wait_for(self, condition: Callable[[Screen], object], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition(self.screen):
                return
            if self.eof:
                break
            self.pump(0.05)
        if condition(self.screen):
            return
        raise AssertionError(
            f"timed out waiting for {what}; the screen shows:\n{self.screen.text()}"
        )

    def resize(self, columns: int, lines: int) -> None:
        _set_size(self.fd, columns, lines)
        self.process.send_signal(signal.SIGWINCH)
        self.screen.resize(columns, lines)

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait_exit(self, seconds: float) -> int:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.process.poll() is None:
            self.pump(0.05)
        self.pump(0.5)  # the last writes
        code = self.process.poll()
        if code is None:
            raise AssertionError(f"the child did not exit; the screen shows:\n{self.screen.text()}")
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        os.close(self.fd)


def _first_frame(screen: Screen) -> bool:
    text = screen.text()
    return bool(
        screen.alternate
        and "╭─ loss" in text
        and "╭─ accuracy (%)" in text
        and len(BRAILLE.findall(text)) > 40
        and re.search(r"step \d+/40", text)
        and "cpu usage" in text
    )


def _global_step(screen: Screen) -> int:
    match = re.search(r"global step (\d+)", screen.text())
    return int(match.group(1)) if match else -1


def _right_edge(screen: Screen, char: str) -> bool:
    return any(line[screen.columns - 1] == char for line in screen.display)


def test_dashboard_draws_resizes_shows_prints_and_quits_on_q():
    term = Terminal("quit", 100, 32)
    try:
        term.wait_for(_first_frame, FIRST_FRAME_S, "the first full frame")
        screen = term.screen
        text = screen.text()
        # The status line, the bars and their counts, rate and ETA.
        assert screen.display[0].startswith(" torchtally  train │ epoch ")
        assert re.search(r"│ epoch \d+/50 │ step \d+/40 │ global step \d+", text)
        assert re.search(r" run +━+.* epoch \d+/50 +ETA >?\d+:\d\d:\d\d", text)
        assert re.search(r" train +━+.* \d+/40 1000 samples/s +ETA \d+:\d\d:\d\d", text)
        # The plots: braille lines inside titled panels, y labels, x axis in epochs, legend.
        assert re.search(r"│ +\d+\.\d+┤[\u2800-\u28ff ]+│", text)
        assert "epoch" in text and "━ train" in text
        # The metrics panel: values per split (percentages ×100), then the machine metrics.
        assert re.search(r"│ accuracy +\d+\.\d\d%", text)
        assert re.search(r"│ loss +-?\d+\.\d{3}", text)
        assert "23.10%" in text and "12.3 GiB" in text and "61.0°C" in text
        assert _right_edge(screen, "╮") and not screen.cursor_visible

        term.resize(132, 40)  # wider and taller: the layout follows
        term.wait_for(
            lambda s: s.display[39][131] == "╯" and _right_edge(s, "╮"), STEP_S, "redraw at 132×40"
        )

        os.kill(term.process.pid, signal.SIGUSR1)  # the child's loop prints once
        term.wait_for(lambda s: "│ hello from user code" in s.text(), STEP_S, "the user's print")
        before = _global_step(term.screen)
        term.wait_for(
            lambda s: _global_step(s) > before + 5 and "│ hello from user code" in s.text(),
            STEP_S,
            "the dashboard to keep going after the print",
        )

        term.resize(84, 26)  # narrower than 90 columns: the metrics panel moves under the plots
        term.wait_for(
            lambda s: (
                s.display[25][83] == "╯"
                and any(line.startswith("╭─ metrics") for line in s.display)
            ),
            STEP_S,
            "redraw at 84×26",
        )

        term.send(b"q")
        code = term.wait_exit(STEP_S)
        screen = term.screen
        after = screen.main_text()
        assert code == 0, after
        assert not screen.alternate and screen.cursor_visible
        assert "STOP_CALLBACK_FIRED" in after
        assert "TERMIOS_RESTORED" in after and "STREAMS_RESTORED" in after
        assert "hello from user code" in after  # replayed on the normal screen
        assert re.search(r"torchtally: run stopped early after \d+:\d\d:\d\d", after)
        assert screen.unknown == set()
    finally:
        term.close()


@pytest.mark.parametrize("mode", ["interrupt", "unhandled"])
def test_ctrl_c_leaves_the_terminal_clean(mode):
    term = Terminal(mode, 100, 30)
    try:
        term.wait_for(_first_frame, FIRST_FRAME_S, "the first full frame")
        term.send(b"\x03")  # the terminal turns it into SIGINT for the foreground group
        code = term.wait_exit(STEP_S)
        screen = term.screen
        after = screen.main_text()
        assert not screen.alternate and screen.cursor_visible, after
        assert "TERMIOS_RESTORED" in after
        if mode == "interrupt":  # the learner's way: catch it, end the run
            assert code == 0 and "INTERRUPT_HANDLED" in after
            assert "torchtally: run stopped early" in after
        else:  # uncaught: the traceback is replayed after the screen is restored
            assert code == -signal.SIGINT
            assert "KeyboardInterrupt" in after
    finally:
        term.close()
