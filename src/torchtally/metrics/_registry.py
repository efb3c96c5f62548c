"""cstorch's registry of live metrics: `Metric.registry`, `get_all_metrics`,
`compute_all_metrics`."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

__all__ = ["REGISTRY", "Registry", "compute_all_metrics", "get_all_metrics"]


class Registry:
    """cstorch's `Metric.registry` (`name -> list of metrics`), over weak references so that
    metrics are not kept alive by it."""

    def __init__(self) -> None:
        self._metrics: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self._next = 0

    def add(self, metric: Any) -> None:
        self._metrics[self._next] = metric
        self._next += 1

    def _live(self) -> list[Any]:
        return list(self._metrics.values())

    def __getitem__(self, name: str) -> list[Any]:
        return [m for m in self._live() if m.name == name]

    def __contains__(self, name: object) -> bool:
        return any(m.name == name for m in self._live())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        return list(dict.fromkeys(m.name for m in self._live()))

    def items(self) -> list[tuple[str, list[Any]]]:
        return [(name, self[name]) for name in self.keys()]

    def values(self) -> list[list[Any]]:
        return [metrics for _, metrics in self.items()]

    def clear(self) -> None:
        self._metrics.clear()


REGISTRY = Registry()


def get_all_metrics() -> Iterator[tuple[str, Any]]:
    """Yield `(name, metric)` for every live metric, as cstorch: a name shared by several
    metrics is suffixed with each one's index in creation order (`"acc.0"`, `"acc.1"`)."""
    for name, metrics in REGISTRY.items():
        for index, metric in enumerate(metrics):
            yield (f"{name}.{index}" if len(metrics) > 1 else name), metric


def compute_all_metrics() -> dict[str, Any]:
    """`{name: metric.compute()}` over `get_all_metrics()`."""
    return {name: metric.compute() for name, metric in get_all_metrics()}
