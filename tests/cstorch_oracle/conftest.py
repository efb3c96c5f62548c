"""Skip the oracle parity suite only when the real Cerebras wheels cannot be fetched."""

from __future__ import annotations

import types

import _oracle
import pytest


@pytest.fixture(scope="session")
def cs_metrics() -> types.ModuleType:
    """The real ``cerebras.pytorch.metrics`` module."""
    try:
        return _oracle.module("metrics")
    except _oracle.OracleUnavailable as exc:  # pragma: no cover - network
        pytest.skip(f"cerebras_pytorch {_oracle.VERSION} wheel unavailable: {exc}")


def _real(name: str) -> types.ModuleType:
    try:
        return _oracle.module(name)
    except _oracle.OracleUnavailable as exc:  # pragma: no cover - network
        pytest.skip(f"cerebras_pytorch {_oracle.VERSION} wheel unavailable: {exc}")


@pytest.fixture(scope="session")
def cs_optim() -> types.ModuleType:
    """The real ``cerebras.pytorch.optim`` package (optimizers and both scheduler modules)."""
    return _real("optim")


@pytest.fixture(scope="session")
def cs_amp() -> types.ModuleType:
    """The real ``cerebras.pytorch.amp`` package."""
    return _real("amp")
