"""`CSConfig`: accepted so that cstorch scripts run unchanged; CPU and GPU runs ignore it."""

from __future__ import annotations

from typing import Any, final

__all__ = ["CSConfig"]


@final
class CSConfig:
    """A Cerebras cluster configuration, kept only for source compatibility.

    cstorch scripts pass `cs_config=cstorch.utils.CSConfig(...)` to `DataExecutor`. A CPU or
    GPU run has no cluster to configure, so the settings are stored and otherwise unused.

    Args:
        **settings: Any cluster settings (`num_csx`, `max_wgt_servers`, ...).

    Example:
        >>> config = CSConfig(num_csx=1, max_wgt_servers=2)
        >>> config.settings["num_csx"]
        1
    """

    def __init__(self, **settings: Any) -> None:
        self.settings = dict(settings)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        return f"CSConfig({inner})"
