"""Fixtures for every test of the suite."""

from __future__ import annotations

import signal
import warnings
from collections.abc import Iterator

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background by a non-interactive shell (`make test &`, `nohup`)
    inherits an ignored SIGINT, and so does every process it spawns. The tests of Ctrl-C
    handling need Python's own handler, which a run from a terminal has: put it back (in the
    main process and in each xdist worker)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigint_handler_restored() -> Iterator[None]:
    """Put back the SIGINT handler a test found. Third-party code a test runs may leave it
    changed (Lightning ignores SIGINT once a fit was interrupted, and sets SIG_DFL after
    tearing down a process group): a later test in the same worker then cannot turn Ctrl-C
    into a stop, and the terminals it spawns inherit an ignored SIGINT. The change is reported
    as a warning."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    now = signal.getsignal(signal.SIGINT)
    if handler is not None and now is not handler:
        warnings.warn(f"the test left SIGINT's handler at {now!r}: restored", stacklevel=1)
        signal.signal(signal.SIGINT, handler)
