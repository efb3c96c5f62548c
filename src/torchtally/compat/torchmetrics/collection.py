"""TorchMetrics' `MetricCollection` over torchtally's collection.

TorchMetrics discovers "compute groups" at run time by comparing states after the first update;
here metrics whose `shared_statistic()` keys are equal (same task and input arguments) share one
state and one update, decided at construction from constructor arguments. `compute` syncs every
state of the collection with one collective per (dtype, reduction).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from torch import nn

from torchtally.compat.torchmetrics._base import Metric, _Batch, _GroupBatches
from torchtally.metrics import MetricCollection as _TallyCollection

__all__ = ["MetricCollection"]


class MetricCollection(nn.Module):
    """TorchMetrics' `MetricCollection(metrics, *additional_metrics, prefix=, postfix=,
    compute_groups=True)`.

    A list of metrics is keyed by class name, a dict by its keys. `forward` returns each
    metric's value on the batch; `compute` the values over everything seen, keyed
    `prefix + name + postfix`.
    """

    def __init__(
        self,
        metrics: Metric | Sequence[Metric] | Mapping[str, Metric],
        *additional_metrics: Metric,
        prefix: str | None = None,
        postfix: str | None = None,
        compute_groups: bool = True,
    ) -> None:
        super().__init__()
        named = _named(metrics, additional_metrics)
        if not isinstance(compute_groups, bool):
            raise ValueError(
                "Argument `compute_groups` must be a bool (groups come from constructor "
                f"arguments here, never a list). Received: compute_groups={compute_groups!r}"
            )
        self.prefix = _affix("prefix", prefix)
        self.postfix = _affix("postfix", postfix)
        self.compute_groups = compute_groups
        self._inner = _TallyCollection(named, share_statistics=compute_groups)

    # ------------------------------------------------------------------------ the API

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update every metric (each shared state once)."""
        self._inner.update(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Update with the batch and return every metric's value on this batch alone."""
        batches = _GroupBatches()
        for group in self._inner.groups:
            owner = self._inner[group[0]]
            batches[id(owner)] = _Batch(owner._batch(*args, **kwargs))
        self._inner.update(batches)
        results: dict[str, Any] = {}
        for group in self._inner.groups:
            batch = batches[id(self._inner[group[0]])]
            self._inner[group[0]].check_errors()
            values = {k: v for k, v in batch.items() if not k.startswith("_")}
            for name in group:
                results[name] = self._inner[name]._value(values)
                self._inner[name].set_batch_value(results[name])  # its `_forward_cache`
        return {self._key(name): results[name] for name in self._inner}

    def compute(self) -> dict[str, Any]:
        """Every metric's value over everything seen, synced across ranks."""
        values = self._inner.compute()
        return {self._key(name): value for name, value in values.items()}

    def reset(self) -> None:
        self._inner.reset()

    def persistent(self, mode: bool = True) -> None:
        """Save every metric's states in `state_dict()` (mode=True) or leave them out
        (TorchMetrics' collection defaults `mode` to True; its metrics start non-persistent)."""
        for metric in self.values():
            metric.persistent(mode)

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MetricCollection:
        """A deep copy with a new prefix/postfix (state kept, as TorchMetrics' clone)."""
        twin = copy.deepcopy(self)
        if prefix is not None:
            twin.prefix = _affix("prefix", prefix)
        if postfix is not None:
            twin.postfix = _affix("postfix", postfix)
        return twin

    @property
    def compute_groups_list(self) -> list[list[str]]:
        """The names sharing one state and one update (TorchMetrics' `compute_groups`)."""
        return self._inner.groups

    def _key(self, name: str) -> str:
        return f"{self.prefix}{name}{self.postfix}"

    # ---------------------------------------------------------------------- mapping

    def __getitem__(self, name: str) -> Metric:
        return self._inner[name]  # type: ignore[return-value]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, name: object) -> bool:
        return name in self._inner

    def keys(self, keep_base: bool = False) -> list[str]:
        names = self._inner.keys()
        return names if keep_base else [self._key(n) for n in names]

    def values(self) -> list[Metric]:
        return self._inner.values()  # type: ignore[return-value]

    def items(self, keep_base: bool = False) -> list[tuple[str, Metric]]:
        return [
            (n if keep_base else self._key(n), m)  # type: ignore[misc]
            for n, m in self._inner.items()
        ]


def _named(
    metrics: Metric | Sequence[Metric] | Mapping[str, Metric], extra: Sequence[Metric]
) -> dict[str, Metric]:
    if isinstance(metrics, Mapping):
        if extra:
            raise ValueError(
                "Argument `additional_metrics` must be empty when `metrics` is a dict. "
                f"Received: {len(extra)} additional metrics"
            )
        pairs = list(metrics.items())
    else:
        listed = [metrics] if isinstance(metrics, Metric) else list(metrics)
        pairs = [(type(m).__name__, m) for m in [*listed, *extra]]
    named: dict[str, Metric] = {}
    for name, metric in pairs:
        if not isinstance(metric, Metric):
            raise ValueError(
                "Argument `metrics` must hold torchtally.compat.torchmetrics metrics. "
                f"Received: {name!r}={type(metric).__name__}"
            )
        if name in named:
            raise ValueError(
                f"Argument `metrics` must not hold two metrics named {name!r} (pass a dict to "
                "name them yourself)"
            )
        named[name] = metric
    return named


def _affix(argument: str, value: str | None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"Argument `{argument}` must be a string. Received: {argument}={value!r}")
    return value
