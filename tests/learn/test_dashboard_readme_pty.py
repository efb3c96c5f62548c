"""`q` stops the README's learner setup: `make_renderer()` without a stop callback, in a real
terminal (a pseudo-terminal driven like test_dashboard_pty.py), ends `fit` early with a final
checkpoint; and the status line offers `q` only because the learner bound its stop to it."""

from __future__ import annotations

import codecs
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _dash_screen import Screen
from test_dashboard_pty import ENV_OVERRIDES, _set_size

CHILD = Path(__file__).with_name("_readme_child.py")
SRC = Path(__file__).resolve().parents[2] / "src"


def _read(fd: int, screen: Screen, decoder: codecs.IncrementalDecoder, seconds: float) -> bool:
    """Feed the screen for `seconds`; False once the child closed the terminal."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        if not ready:
            return True
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            data = b""
        if not data:
            screen.feed(decoder.decode(b"", final=True))
            return False
        screen.feed(decoder.decode(data))


@pytest.mark.slow
@pytest.mark.parametrize("key", [b"q", b"\x03"], ids=["q", "ctrl-c"])
def test_q_stops_the_readme_learner_with_a_final_checkpoint(tmp_path, key):
    pytest.importorskip("rich")
    master, slave = pty.openpty()
    _set_size(slave, 110, 36)
    env = {k: v for k, v in os.environ.items() if k not in ENV_OVERRIDES}
    env["TERM"] = "xterm-256color"
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    logdir = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, str(CHILD), str(logdir)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        close_fds=True,
    )
    os.close(slave)
    screen = Screen(110, 36)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    try:
        deadline = time.monotonic() + 90
        open_ = True
        while open_ and time.monotonic() < deadline:
            open_ = _read(master, screen, decoder, 0.1)
            text = screen.text()
            if screen.alternate and "q: stop" in text and re.search(r"global step [1-9]", text):
                break
        assert "q: stop" in screen.text(), screen.text()
        os.write(master, key)  # Ctrl-C: the terminal sends SIGINT to the foreground group
        deadline = time.monotonic() + 60
        while open_ and process.poll() is None and time.monotonic() < deadline:
            open_ = _read(master, screen, decoder, 0.1)
        while open_:
            open_ = _read(master, screen, decoder, 0.5)
        code = process.wait(timeout=10)
        after = screen.main_text()
        assert code == 0, after
        assert not screen.alternate
        assert "STOP_REQUESTED=True" in after
        epochs = int(re.search(r"EPOCHS_DONE=(\d+)", after).group(1))  # type: ignore[union-attr]
        assert epochs < 500
        name = re.search(r"CHECKPOINT=(\S+)", after).group(1)  # type: ignore[union-attr]
        assert (logdir / "checkpoints" / name).is_file()
        assert "run stopped early" in after
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        os.close(master)


def test_a_learner_binds_its_stop_to_a_dashboard_made_without_one():
    pytest.importorskip("rich")
    import io
    import warnings

    import torch

    import torchtally as cstorch
    from torchtally.learn import Dashboard, Learner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # not a terminal: plain fallback
        unbound, bound, own = (Dashboard(stream=io.StringIO(), keys=False) for _ in range(3))
    calls: list[int] = []
    own_callback = lambda: calls.append(1)  # noqa: E731
    assert own.bind_stop(own_callback) is True
    model = torch.nn.Linear(2, 2)
    learner = Learner(model, cstorch.optim.SGD(model.parameters(), lr=0.1), observers=[bound, own])
    unbound._on_key("q")  # nothing bound: `q` is not honoured, so nothing happens
    assert not learner.stop_requested
    own._on_key("q")  # its own callback was kept
    assert calls == [1] and not learner.stop_requested
    bound._on_key("q")
    assert learner.stop_requested
    with pytest.raises(TypeError, match="callback"):
        unbound.bind_stop(3)  # type: ignore[arg-type]
