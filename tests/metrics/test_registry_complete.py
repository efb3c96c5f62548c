"""No exported metric escapes the common invariants (scikit-learn's "don't forget any metric").

Every concrete `Metric` subclass reachable from a public package's `__all__` must have at least
one `Case` in the registry that `test_common.py` runs.
"""

from __future__ import annotations

import importlib
import inspect

from test_common import ALL_CASES

from torchtally.metrics import Metric, MetricCollection

# Public packages whose `__all__` may export metrics.
PUBLIC_PACKAGES = ("torchtally.metrics", "torchtally.metrics.system")


def _exported_metric_classes() -> dict[str, type[Metric]]:
    found: dict[str, type[Metric]] = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, Metric)
                and obj not in (Metric, MetricCollection)
                and not inspect.isabstract(obj)
            ):
                found[f"{package}.{name}"] = obj
    return found


def test_every_exported_metric_is_registered() -> None:
    registered = {type(case.make()) for case in ALL_CASES}
    missing = sorted(
        name
        for name, cls in _exported_metric_classes().items()
        if not any(issubclass(r, cls) for r in registered)
    )
    assert not missing, f"exported metrics with no Case in tests/metrics/cases_*.py: {missing}"


def test_the_registry_is_not_empty() -> None:
    assert len(_exported_metric_classes()) >= 20
