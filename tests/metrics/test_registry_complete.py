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

# Metrics that cannot satisfy the registry's invariants by design, each with its reason and the
# test module that covers it instead. Nothing else may be left out.
NOT_IN_REGISTRY = {
    "torchtally.metrics.WordErrorRateMetric": "string inputs are host work; raises if traced "
    "(tests/metrics/text/test_error_rates.py)",
    "torchtally.metrics.CharErrorRateMetric": "string inputs are host work; raises if traced "
    "(tests/metrics/text/test_error_rates.py)",
    "torchtally.metrics.IterationSpeedMetric": "its value is wall-clock time, so batching and "
    "merging cannot reproduce it exactly (tests/metrics/throughput/test_speed.py)",
}


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
        if not any(issubclass(r, cls) for r in registered) and name not in NOT_IN_REGISTRY
    )
    assert not missing, f"exported metrics with no Case in tests/metrics/cases_*.py: {missing}"


def test_the_registry_is_not_empty() -> None:
    assert len(_exported_metric_classes()) >= 20


def test_exemptions_are_exported_and_not_registered() -> None:
    exported = _exported_metric_classes()
    registered = {type(case.make()) for case in ALL_CASES}
    for name in NOT_IN_REGISTRY:
        assert name in exported, f"stale exemption: {name} is no longer exported"
        assert exported[name] not in registered, f"{name} is registered: drop its exemption"
