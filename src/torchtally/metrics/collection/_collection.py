"""`MetricCollection`: many metrics, one update call, shared statistics, one sync."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, final

import torch
from torch import nn

from torchtally.metrics import _engine
from torchtally.metrics._base import Metric
from torchtally.metrics._sharing import SharingPlan
from torchtally.metrics._sync import distributed_world_size, sync_states, unsync_states

__all__ = ["MetricCollection"]


@final
class MetricCollection(nn.Module):
    """A dict of metrics updated together, computed to one flat `{name: value}` dict.

    Metrics that declare the same `shared_statistic()` (for example precision, recall and F1
    over the same classes) share one state tensor and one `update`; a metric whose state
    `derives_from` another group's statistic (accuracy from a confusion matrix, say) is not
    updated at all and is filled from that statistic before it is read. Groups are decided
    once, at construction, from constructor arguments, never by comparing values. A member
    used on its own (updated, reset, merged, loaded or moved by itself) first leaves the
    sharing, so it and its siblings give the numbers plain metrics fed the same calls give
    (see metrics._sharing).

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
        named = _named(metrics)
        self.metrics = nn.ModuleDict(named)
        self.prefix, self.postfix = _affix("prefix", prefix), _affix("postfix", postfix)
        self.process_group = process_group
        self.share_statistics = share_statistics
        for metric in named.values():
            # Members may share state tensors, which a member's held batches would leave
            # stale for the others: the collection updates every member directly.
            metric.coalesce_updates(False)
        self._sharing = SharingPlan(named, share_statistics)
        self._compiler: _engine.Compiler | None = None
        # A checkpoint loaded into the members through any parent module: the plan checks
        # that shared and derived members' saved states agree (see SharingPlan.after_load).
        self.register_load_state_dict_post_hook(_after_load)  # type: ignore[no-untyped-call]

    # ------------------------------------------------------------------------ grouping

    @property
    def groups(self) -> list[list[str]]:
        """Names of the metrics that share one update, one list per update that runs."""
        return self._sharing.groups()

    @property
    def derived(self) -> dict[str, str]:
        """Derived metric name -> the metric whose statistic it is computed from."""
        return dict(self._sharing.sources)

    def unshare(self, name: str) -> None:
        """Take member `name` out of the sharing: from now on it holds and updates its own
        state (what using it on its own does by itself, eagerly)."""
        if self._sharing.shares(name):
            self._sharing.unshare(name)

    # ---------------------------------------------------------------------- the API

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update every metric (each shared statistic once) with the same inputs."""
        if "weights" in kwargs and kwargs["weights"] is not None:
            self._refuse_weights_for_derived()
        sharing = self._sharing
        if not torch.compiler.is_compiling():
            sharing.follow(self.metrics._modules)
        # The depth by hand, not a context manager: traced into a compiled step, a
        # generator-based one would add guards on contextlib's internals to every call.
        sharing.depth += 1
        try:
            _engine.update_members(self, sharing.runners, self._compiler, args, kwargs)
        except Exception as error:
            sharing.depth -= 1
            refused = getattr(error, "torchtally_refused", sharing.runners)
            sharing.updated(kwargs.get("dtype"), refused)
            sharing.refused(refused, args, kwargs)
            raise
        else:
            sharing.depth -= 1
        sharing.updated(kwargs.get("dtype"))

    def compile_update(self, enabled: bool = True, **compile_kwargs: Any) -> MetricCollection:
        """Run eager `update` calls of the whole collection through one cached `torch.compile`
        (or go back to plain eager with `enabled=False`); returns the collection.

        `Metric.compile_update` for a collection: one `torch.compile(fullgraph=True)` graph
        holds every member's update (each shared statistic once, as eagerly), so N metrics
        pay one compiled call's overhead instead of N eager updates' Python dispatch. The
        same contract and the same engine (metrics._engine): each member's boundary stays
        eager, update counters and caches are kept exactly, the batch dimension is dynamic,
        the graph runs with grad off, a device move or a copy drops the compiled callable,
        and so does a change of the members that update. A collection whose update cannot be
        compiled runs eagerly, with one warning, and stays eager. Inside an outer
        `torch.compile` or a traced step the update is traced as usual.

        Args:
            enabled: Compile (True) or update eagerly (False).
            **compile_kwargs: Passed to `torch.compile` (`backend`, `mode`, `options`,
                `dynamic`), as for `Metric.compile_update`.

        Example:
            >>> from torchtally.metrics import AccuracyMetric, F1ScoreMetric
            >>> metrics = MetricCollection(  # doctest: +SKIP
            ...     [AccuracyMetric(), F1ScoreMetric(10, average_type="macro")]
            ... ).compile_update()
            >>> for scores, labels in loader:  # doctest: +SKIP
            ...     metrics.update(labels, scores)
        """
        self._compiler = _engine.configure(self._compiler, enabled, compile_kwargs)
        return self

    @property
    def update_is_compiled(self) -> bool:
        """Whether eager `update` calls go through one compiled graph (`compile_update`)."""
        return self._compiler is not None and self._compiler.active

    def describe_for_compile(self) -> str:
        return f"MetricCollection {list(self.metrics)}"

    def _refuse_weights_for_derived(self) -> None:
        sources = self._sharing.sources
        refusing = [n for n in sources if not self._metric(n).derived_supports_weights]
        if refusing:
            raise ValueError(
                f"Argument `weights` cannot be used with metrics {refusing} of this collection: "
                "they are derived from a shared statistic that cannot express their weighting. "
                "Build the collection with share_statistics=False to update them on their own."
            )

    def compute(self) -> dict[str, Any]:
        """Compute every metric: `{prefix + name + postfix: value}`, synced across ranks."""
        if not torch.compiler.is_compiling():
            self._sharing.follow(self.metrics._modules)
        runners = self._sharing.runners
        synced = distributed_world_size(self.process_group) > 1 and not any(
            m.is_synced for m in runners
        )
        with self._sharing.driving():
            if synced:
                sync_states(runners, self.process_group)
                self._sharing.alias()
            try:
                return self._compute_local()
            finally:
                if synced:
                    unsync_states(runners)
                    self._sharing.alias()

    def _compute_local(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        saved = {name: m.sync_on_compute for name, m in self._items()}
        try:
            for _, metric in self._items():
                metric.sync_on_compute = False
            self._sharing.fill_derived()
            for name, metric in self._items():
                results[f"{self.prefix}{name}{self.postfix}"] = metric.compute()
        finally:
            for name, metric in self._items():
                metric.sync_on_compute = saved[name]
        return results

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Update with the batch, then return `compute()`."""
        self.update(*args, **kwargs)
        return self.compute()

    def reset(self) -> None:
        """Reset every metric in place."""
        with self._sharing.driving():
            for metric in self._sharing.members.values():
                metric.reset()

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MetricCollection:
        """An independent copy (fresh aliasing) with a new prefix/postfix, e.g. per split."""
        twin = copy.deepcopy(self)
        twin.prefix = self.prefix if prefix is None else _affix("prefix", prefix)
        twin.postfix = self.postfix if postfix is None else _affix("postfix", postfix)
        twin.reset()
        return twin

    def persistent(self, mode: bool = True) -> MetricCollection:
        """Include (or leave out) every metric's state in `state_dict()`."""
        for metric in self._sharing.members.values():
            metric.persistent(mode)
        return self

    def sync(self) -> None:
        """Replace every state with its global value (every rank must call it)."""
        sync_states(self._sharing.runners, self.process_group)
        self._sharing.alias()

    def unsync(self) -> None:
        """Restore the local states saved by `sync`."""
        unsync_states(self._sharing.runners)
        self._sharing.alias()

    def load_state_dict(self, state_dict: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        with self._sharing.driving():
            return super().load_state_dict(state_dict, *args, **kwargs)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A copy of the whole collection (deepcopy, pickle): its members' copies come
        # unlinked (a member copied alone is in no collection) and are tied to its plan again;
        # shared tensors stayed shared, as the copy keeps one copy of each.
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        self._sharing.relink()

    def _load_from_state_dict(
        self, state_dict: Any, prefix: str, *args: Any, **kwargs: Any
    ) -> None:
        # Runs before the members load theirs (nn.Module loads a parent first).
        self._sharing.before_load(state_dict, prefix + "metrics.")
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _apply(self, fn: Callable[..., Any], recurse: bool = True) -> MetricCollection:
        # A move or a cast replaces the states: the graph would only fail its guards.
        if self._compiler is not None:
            self._compiler.drop()
        with self._sharing.driving():
            super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        self._sharing.alias()  # .to()/.cuda() re-allocate each member's buffers
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


def _after_load(collection: nn.Module, incompatible_keys: Any) -> None:
    collection._sharing.after_load()  # type: ignore[union-attr, operator]


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
