"""Fixtures for every test of the suite."""

from __future__ import annotations

import signal
import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _sigint_handler_restored() -> Iterator[None]:
    """Put back the SIGINT handler a test found. Third-party code a test runs may leave it
    changed (Lightning ignores SIGINT once a fit was interrupted, and sets SIG_DFL after
    tearing down a process group): a later test in the same worker then cannot turn Ctrl-C
    into a stop, and the terminals it spawns inherit an ignored SIGINT (a CI run lost three
    Ctrl-C tests and a doctest that way). The change is reported as a warning."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    now = signal.getsignal(signal.SIGINT)
    if handler is not None and now is not handler:
        warnings.warn(f"the test left SIGINT's handler at {now!r}: restored", stacklevel=1)
        signal.signal(signal.SIGINT, handler)
