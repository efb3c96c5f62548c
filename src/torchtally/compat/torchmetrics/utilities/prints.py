"""`torchmetrics.utilities.prints`: warnings and log lines issued on rank 0 only."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["rank_zero_debug", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]

_F = TypeVar("_F", bound=Callable[..., Any])
_log = logging.getLogger("torchtally.compat.torchmetrics")


def _rank() -> int:
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")))


def rank_zero_only(fn: _F) -> _F:
    """`fn` runs on the process of rank 0 only (by `RANK`/`LOCAL_RANK`), returning None
    elsewhere."""

    @wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs) if _rank() == 0 else None

    return wrapped  # type: ignore[return-value]


@rank_zero_only
def rank_zero_warn(*args: Any, **kwargs: Any) -> None:
    """`warnings.warn` on rank 0."""
    warnings.warn(*args, **kwargs)


@rank_zero_only
def rank_zero_info(*args: Any, **kwargs: Any) -> None:
    """An info log line on rank 0."""
    _log.info(*args, **kwargs)


@rank_zero_only
def rank_zero_debug(*args: Any, **kwargs: Any) -> None:
    """A debug log line on rank 0."""
    _log.debug(*args, **kwargs)
