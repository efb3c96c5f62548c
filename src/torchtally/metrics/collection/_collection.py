"""`MetricCollection`: many metrics, one update call, shared statistics, one sync."""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, final

import torch  # noqa: F401  (doctest namespace)
from torch import nn

from torchtally.metrics._base import Metric
from torchtally.metrics._sync import distributed_world_size, sync_states, unsync_states

__all__ = ["MetricCollection"]


@final
class MetricCollection(nn.Module):
    """A dict of metrics updated together, computed to one flat `{name: value}` dict.

    Metrics that declare the same `shared_statistic()` (for example precision, recall and F1
    over the same classes) share one state tensor and one `update`; a metric whose state
    `derives_from` another group's statistic (accuracy from a confusion matrix, say) is not
    updated at all and is filled from that statistic at compute. Groups are decided once, at
    construction, from constructor arguments, never by comparing values.

    Under torch.distributed, `compute` syncs the whole collection with one collective per
    (dtype, reduction) of all its states.

    Args:
        metrics: A mapping of names to metrics, or a sequence (named by each `metric.name`).
        prefix: Prepended to every key of `compute()` (e.g. "valid/").
        postfix: Appended to every key.
        process_group: The process group to sync over (None: the default group).
        share_statistics: Set False to update every metric on its own.

    Example:
        >>> from torchtally.metrics import AccuracyMetric, MeanMetric
        >>> metrics = MetricCollection([AccuracyMetric()], prefix="valid/")
        >>> metrics.update(torch.tensor([1, 0]), torch.tensor([1, 1]))
        >>> {k: float(v) for k, v in metrics.compute().items()}
        {'valid/accuracy': 0.5}
    """

    def __init__(
        self,
        metrics: Mapping[str, Metric] | Sequence[Metric],
        *,
        prefix: str = "",
        postfix: str = "",
        process_group: Any = None,
        share_statistics: bool = True,
    ) -> None:
        super().__init__()
        self.metrics = nn.ModuleDict(_named(metrics))
        self.prefix, self.postfix = _affix("prefix", prefix), _affix("postfix", postfix)
        self.process_group = process_group
        self.share_statistics = share_statistics
        self._owners: dict[str, str] = {}  # member -> the member whose update it shares
        self._sources: dict[str, str] = {}  # derived member -> the owner it derives from
        if share_statistics:
            self._plan_groups()
        self._alias_shared_states()

    # ------------------------------------------------------------------------ grouping

    def _plan_groups(self) -> None:
        first_with: dict[Hashable, str] = {}
        for name, metric in self._items():
            key = metric.shared_statistic()
            if key is None:
                continue
            if key in first_with:
                self._owners[name] = first_with[key]
                _check_same_layout(self._metric(first_with[key]), metric)
            else:
                first_with[key] = name
        for name, metric in self._items():
            if name in self._owners:
                continue
            source = next((o for k, o in first_with.items() if metric.derives_from(k)), None)
            if source is not None and source != name:
                self._sources[name] = source

    def _alias_shared_states(self) -> None:
        """Point each sharing member's state tensors at its owner's (after any re-allocation)."""
        for member, owner in self._owners.items():
            owner_metric, member_metric = self._metric(owner), self._metric(member)
            for state in owner_metric._reductions:
                member_metric._buffers[state] = owner_metric._buffers[state]

    @property
    def groups(self) -> list[list[str]]:
        """Names of the metrics that share one update, one list per update that runs."""
        runs = [n for n in self.metrics if n not in self._owners and n not in self._sources]
        return [[r] + [m for m, o in self._owners.items() if o == r] for r in runs]

    @property
    def derived(self) -> dict[str, str]:
        """Derived metric name -> the metric whose statistic it is computed from."""
        return dict(self._sources)

    # ---------------------------------------------------------------------- the API

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update every metric (each shared statistic once) with the same inputs."""
        if "weights" in kwargs and kwargs["weights"] is not None:
            self._refuse_weights_for_derived()
        for group in self.groups:
            self._metric(group[0]).update(*args, **kwargs)
        for name in self.metrics:
            self._metric(name)._cached = None

    def _refuse_weights_for_derived(self) -> None:
        refusing = [n for n in self._sources if not self._metric(n).derived_supports_weights]
        if refusing:
            raise ValueError(
                f"Argument `weights` cannot be used with metrics {refusing} of this collection: "
                "they are derived from a shared statistic that cannot express their weighting. "
                "Build the collection with share_statistics=False to update them on their own."
            )

    def compute(self) -> dict[str, Any]:
        """Compute every metric: `{prefix + name + postfix: value}`, synced across ranks."""
        runners = [self._metric(g[0]) for g in self.groups]
        synced = distributed_world_size(self.process_group) > 1 and not any(
            m.is_synced for m in runners
        )
        if synced:
            sync_states(runners, self.process_group)
            self._alias_shared_states()
        try:
            return self._compute_local()
        finally:
            if synced:
                unsync_states(runners)
                self._alias_shared_states()
                for _, metric in self._items():
                    metric._cached = None

    def _compute_local(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        saved = {name: m.sync_on_compute for name, m in self._items()}
        try:
            for _, metric in self._items():
                metric.sync_on_compute = False
            loaded: set[str] = set()
            for name in self._sources:
                self._load_derived(name, loaded)
            for name, metric in self._items():
                results[f"{self.prefix}{name}{self.postfix}"] = metric.compute()
        finally:
            for name, metric in self._items():
                metric.sync_on_compute = saved[name]
        return results

    def _load_derived(self, name: str, loaded: set[str]) -> None:
        """Fill a derived metric from its source, loading the source first if it is derived."""
        if name in loaded:
            return
        source = self._sources[name]
        if source in self._sources:
            self._load_derived(source, loaded)
        self._metric(source).check_errors()
        derived = self._metric(name)
        derived.load_derived(self._metric(source))
        derived._num_updates.copy_(self._metric(source)._num_updates)
        derived._cached = None
        loaded.add(name)

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Update with the batch, then return `compute()`."""
        self.update(*args, **kwargs)
        return self.compute()

    def reset(self) -> None:
        """Reset every metric in place."""
        for metric in self.metrics.values():
            metric.reset()  # type: ignore[operator]

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MetricCollection:
        """An independent copy (fresh aliasing) with a new prefix/postfix, e.g. per split."""
        twin = copy.deepcopy(self)
        twin.prefix = self.prefix if prefix is None else _affix("prefix", prefix)
        twin.postfix = self.postfix if postfix is None else _affix("postfix", postfix)
        twin.reset()
        return twin

    def persistent(self, mode: bool = True) -> MetricCollection:
        """Include (or leave out) every metric's state in `state_dict()`."""
        for metric in self.metrics.values():
            metric.persistent(mode)  # type: ignore[operator]
        return self

    def sync(self) -> None:
        """Replace every state with its global value (every rank must call it)."""
        sync_states([self._metric(g[0]) for g in self.groups], self.process_group)
        self._alias_shared_states()

    def unsync(self) -> None:
        """Restore the local states saved by `sync`."""
        unsync_states([self._metric(g[0]) for g in self.groups])
        self._alias_shared_states()

    def _apply(self, fn: Callable[..., Any], recurse: bool = True) -> MetricCollection:
        super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        self._alias_shared_states()  # .to()/.cuda() re-allocate each member's buffers
        return self

    # --------------------------------------------------------------------- mapping

    def _metric(self, name: str) -> Metric:
        return self.metrics[name]  # type: ignore[return-value]

    def _items(self) -> Iterator[tuple[str, Metric]]:
        yield from self.metrics.items()  # type: ignore[misc]

    def __getitem__(self, name: str) -> Metric:
        return self._metric(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.metrics

    def keys(self) -> list[str]:
        return list(self.metrics.keys())

    def values(self) -> list[Metric]:
        return [m for _, m in self._items()]

    def items(self) -> list[tuple[str, Metric]]:
        return list(self._items())


def _named(metrics: Mapping[str, Metric] | Sequence[Metric]) -> dict[str, Metric]:
    pairs = (
        list(metrics.items()) if isinstance(metrics, Mapping) else [(m.name, m) for m in metrics]
    )
    named: dict[str, Metric] = {}
    for name, metric in pairs:
        if not isinstance(metric, Metric):
            raise TypeError(
                f"Argument `metrics` must hold torchtally Metric objects. "
                f"Received: {name!r}={type(metric).__name__}"
            )
        if name in named:
            raise ValueError(
                f"Argument `metrics` must have unique names. Received: {name!r} twice "
                "(pass a dict to name metrics yourself)"
            )
        named[name] = metric
    return named


def _affix(argument: str, value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Argument `{argument}` must be a string. Received: {argument}={value!r}")
    return value


def _check_same_layout(owner: Metric, member: Metric) -> None:
    mine = {n: (b.shape, b.dtype) for n, b, _ in owner.states()}
    theirs = {n: (b.shape, b.dtype) for n, b, _ in member.states()}
    if mine != theirs:
        raise ValueError(
            f"Metrics `{owner.name}` and `{member.name}` declare the same shared statistic "
            f"{owner.shared_statistic()!r} but hold different states: {mine} vs {theirs}"
        )
