"""TorchMetrics' `MetricCollection` over torchtally's collection.

TorchMetrics discovers "compute groups" at run time by comparing states after the first update;
here built-in metrics whose `shared_statistic()` keys are equal (same task and input arguments)
share one state and one update, decided at construction from constructor arguments, and
`compute` syncs all their states with one collective per (dtype, reduction). Any other member
(a wrapper, a metric written TorchMetrics' way, a subclass with its own `update`) is updated,
computed and synced on its own, as TorchMetrics does with every member.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, cast

import torch
from torch import nn

from torchtally.compat.torchmetrics._base import Metric, _Batch, _GroupBatches
from torchtally.compat.torchmetrics.utilities.prints import rank_zero_warn
from torchtally.metrics import MetricCollection as _TallyCollection

__all__ = ["MetricCollection"]


def _shares(metric: Metric) -> bool:
    """Whether a member is a built-in metric whose batch statistics the collection computes
    (its own `update` and `compute` are the base class's)."""
    cls = type(metric)
    return (
        not metric._tm_user
        and cls.update is Metric.update
        and cls.compute is Metric.compute
        and cls.forward is Metric.forward
    )


class MetricCollection(nn.Module):
    """TorchMetrics' `MetricCollection(metrics, *additional_metrics, prefix=, postfix=,
    compute_groups=True)`.

    A list of metrics is keyed by class name, a dict by its keys (sorted, as TorchMetrics
    does); a collection inside is flattened into its members. `forward` returns each metric's
    value on the batch, `compute` the values over everything seen, keyed
    `prefix + name + postfix` (a metric returning a dict, `ClasswiseWrapper` say, contributes
    its keys). Keyword arguments reach each metric's `update` only if it takes them.

    `compute_groups`: True shares the state of built-in metrics over the same statistic
    (decided from their arguments); False updates every metric on its own; a list of name
    lists (TorchMetrics' user-defined groups) is checked against the members and otherwise
    treated as True: groups never share state that their arguments do not make equal.
    """

    # TorchScript compiles every property not listed here (`torch.jit.script(collection)`)
    __jit_unused_properties__: ClassVar[list[str]] = [
        "_groups_checked",
        "compute_groups",
        "compute_groups_list",
        "metric_state",
    ]

    def __init__(
        self,
        metrics: Metric | MetricCollection | Sequence[Any] | Mapping[str, Any],
        *additional_metrics: Metric,
        prefix: str | None = None,
        postfix: str | None = None,
        compute_groups: bool | list[list[str]] = True,
    ) -> None:
        super().__init__()
        self.prefix = self._check_arg(prefix, "prefix")
        self.postfix = self._check_arg(postfix, "postfix")
        if not isinstance(compute_groups, bool) and not (
            isinstance(compute_groups, list)
            and all(
                isinstance(g, list) and all(isinstance(n, str) for n in g) for g in compute_groups
            )
        ):
            raise ValueError(
                "Argument `compute_groups` must be a bool or a list of lists of metric names. "
                f"Received: compute_groups={compute_groups!r}"
            )
        self._enable_compute_groups = compute_groups
        self._members: dict[str, Metric] = {}
        self.add_metrics(metrics, *additional_metrics)

    # ----------------------------------------------------------------------- members

    def add_metrics(
        self,
        metrics: Metric | MetricCollection | Sequence[Any] | Mapping[str, Any],
        *additional_metrics: Metric,
    ) -> None:
        """Add metrics (as the constructor takes them) to the collection."""
        members = dict(self._members)
        if isinstance(metrics, Metric):
            metrics = [metrics]
        if isinstance(metrics, Sequence) and not isinstance(metrics, str):
            metrics = list(metrics)
            ignored: list[Any] = []
            for extra in additional_metrics:
                (metrics if isinstance(extra, Metric) else ignored).append(extra)
            if ignored:
                rank_zero_warn(
                    f"You have passes extra arguments {ignored} which are not `Metric` so they "
                    "will be ignored."
                )
        elif additional_metrics:
            raise ValueError(
                f"You have passes extra arguments {additional_metrics} which are not compatible "
                f"with first passed dictionary {metrics} so they will be ignored."
            )
        if isinstance(metrics, Mapping):
            for name in sorted(metrics):
                metric = metrics[name]
                if isinstance(metric, Metric):
                    members[name] = metric
                elif isinstance(metric, MetricCollection):
                    for key, member in metric.items(keep_base=False):
                        members[f"{name}_{key}"] = _from_collection(member, metric)
                else:
                    raise ValueError(
                        f"Value {metric} belonging to key {name} is not an instance of "
                        "`torchmetrics.Metric` or `torchmetrics.MetricCollection`"
                    )
        elif isinstance(metrics, Sequence):
            for metric in metrics:
                if isinstance(metric, Metric):
                    name = type(metric).__name__
                    if name in members:
                        raise ValueError(
                            f"Encountered two metrics both named {name}: argument `metrics` "
                            f"must not hold two metrics named {name!r} (pass a dict to name "
                            "them yourself)"
                        )
                    members[name] = metric
                elif isinstance(metric, MetricCollection):
                    for key, member in metric.items(keep_base=False):
                        members[key] = _from_collection(member, metric)
                else:
                    raise ValueError(
                        f"Input {metric} to `MetricCollection` is not a instance of "
                        "`torchmetrics.Metric` or `torchmetrics.MetricCollection`"
                    )
        elif isinstance(metrics, MetricCollection):
            for name, metric in metrics.items(keep_base=False):
                if name in members:
                    raise ValueError(f"Metric with name '{name}' already exists in the collection.")
                members[name] = _from_collection(metric, metrics)
        else:
            raise ValueError(
                "Unknown input to MetricCollection. Expected, `Metric`, `MetricCollection` or "
                f"`dict`/`sequence` of the previous, but got {metrics}"
            )
        groups = self._enable_compute_groups
        if isinstance(groups, list):
            for group in groups:
                for name in group:
                    if name not in members:
                        raise ValueError(
                            f"Input {name} in `compute_groups` argument does not match a metric "
                            f"in the collection. Please make sure that {groups} matches "
                            f"{list(members)}"
                        )
        self._build(members)

    def _build(self, members: dict[str, Metric]) -> None:
        self._members = members
        shared = {name: m for name, m in members.items() if _shares(m)}
        self._inner = (
            _TallyCollection(shared, share_statistics=self._enable_compute_groups is not False)
            if shared
            else None
        )
        self._others = nn.ModuleDict({name: m for name, m in members.items() if name not in shared})

    def _other_items(self) -> list[tuple[str, Metric]]:
        return [(name, cast(Metric, m)) for name, m in self._others.items()]

    def _other_metrics(self) -> list[Metric]:
        return [metric for _, metric in self._other_items()]

    @staticmethod
    def _check_arg(arg: str | None, name: str) -> str | None:
        if arg is None or isinstance(arg, str):
            return arg
        raise ValueError(f"Expected input `{name}` to be a string, but got {type(arg)}")

    @property
    def _groups_checked(self) -> bool:
        """Whether the groups are settled (TorchMetrics' flag): at construction when the user
        gave them, else once a member has been updated (TorchMetrics compares the states
        after the first update; here the groups follow from the arguments, and are reported
        from then on)."""
        if isinstance(self._enable_compute_groups, list):
            return True
        return any(bool(metric._update_called) for metric in self._members.values())

    @property
    def compute_groups(self) -> dict[int, list[str]]:
        """The members updated together, by group (TorchMetrics' `compute_groups`).

        With user-defined groups: those lists, then every other member alone. Otherwise each
        member alone until the first update, then the groups in effect: built-in metrics over
        one statistic share a group; every other member is a group of its own. None (`{}`)
        with `compute_groups=False`."""
        groups = self._enable_compute_groups
        if groups is False:
            return {}
        if isinstance(groups, list):
            named = [list(group) for group in groups]
            listed = {name for group in named for name in group}
            named += [[name] for name in self._members if name not in listed]
            return dict(enumerate(named))
        if not self._groups_checked:
            return {index: [name] for index, name in enumerate(self._members)}
        shared = [list(group) for group in self._inner.groups] if self._inner is not None else []
        grouped = {name for group in shared for name in group}
        groups = shared + [[name] for name in self._members if name not in grouped]
        order = list(self._members)
        groups.sort(key=lambda group: min(order.index(n) for n in group))
        return {index: sorted(group, key=order.index) for index, group in enumerate(groups)}

    @property
    def compute_groups_list(self) -> list[list[str]]:
        """The names sharing one state and one update, as lists."""
        return list(self.compute_groups.values())

    # ------------------------------------------------------------------------ the API

    def _shared_batches(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _GroupBatches:
        batches = _GroupBatches()
        assert self._inner is not None
        for group in self._inner.groups:
            owner: Metric = self._inner[group[0]]  # type: ignore[assignment]
            batches[id(owner)] = _Batch(owner._batch(*args, **owner._filter_kwargs(**kwargs)))
        return batches

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update every metric (each shared state once) with the inputs it takes."""
        if self._inner is not None:
            self._inner.update(self._shared_batches(args, kwargs))
        for metric in self._other_metrics():
            metric.update(*args, **metric._filter_kwargs(**kwargs))

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Update with the batch and return every metric's value on this batch alone."""
        results: dict[str, Any] = {}
        if self._inner is not None:
            batches = self._shared_batches(args, kwargs)
            self._inner.update(batches)
            for group in self._inner.groups:
                batch = batches[id(self._inner[group[0]])]
                self._inner[group[0]].check_errors()
                values = {k: v for k, v in batch.items() if not k.startswith("_")}
                for name in group:
                    member: Metric = self._inner[name]  # type: ignore[assignment]
                    results[name] = member._batch_value(values)
                    member.set_batch_value(results[name])  # its `_forward_cache`
        for name, metric in self._other_items():
            results[name] = metric(*args, **metric._filter_kwargs(**kwargs))
        return self._flatten({name: results[name] for name in self._members})

    def compute(self) -> dict[str, Any]:
        """Every metric's value over everything seen, synced across ranks."""
        results: dict[str, Any] = {}
        if self._inner is not None:
            results.update(self._inner.compute())
        for name, metric in self._other_items():
            results[name] = metric.compute()
        return self._flatten({name: results[name] for name in self._members})

    def _flatten(self, results: dict[str, Any]) -> dict[str, Any]:
        """Results keyed by member, a member's dict result spread into its own keys (prefixed
        by the member's name when two members' dicts share a key), then prefix and postfix."""
        seen: set[str] = set()
        duplicates = False
        for value in results.values():
            if isinstance(value, dict):
                for key in value:
                    duplicates |= key in seen
                    seen.add(key)
        flat: dict[str, Any] = {}
        for name, value in results.items():
            member = self._members[name]
            if not isinstance(value, dict):
                flat[name] = value
                continue
            for key, item in value.items():
                if duplicates:
                    stripped = name.replace(getattr(member, "prefix", None) or "", "")
                    stripped = stripped.replace(getattr(member, "postfix", None) or "", "")
                    key = f"{stripped}_{key}"
                if member._from_collection and member.prefix is not None:
                    key = f"{member.prefix}{key}"
                if member._from_collection and member.postfix is not None:
                    key = f"{key}{member.postfix}"
                flat[key] = item
        return {self._set_name(key): value for key, value in flat.items()}

    def reset(self) -> None:
        """Reset every metric."""
        if self._inner is not None:
            self._inner.reset()
        for metric in self._other_metrics():
            metric.reset()

    def persistent(self, mode: bool = True) -> None:
        """Save every metric's states in `state_dict()` (mode=True) or leave them out
        (TorchMetrics' collection defaults `mode` to True; its metrics start non-persistent)."""
        for metric in self._members.values():
            metric.persistent(mode)

    def set_dtype(self, dst_type: Any) -> MetricCollection:
        """Cast every metric's floating-point states (`Metric.set_dtype`)."""
        for metric in self._members.values():
            metric.set_dtype(dst_type)
        return self

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MetricCollection:
        """A deep copy with a new prefix/postfix (state kept, as TorchMetrics' clone)."""
        twin = copy.deepcopy(self)
        if prefix:
            twin.prefix = self._check_arg(prefix, "prefix")
        if postfix:
            twin.postfix = self._check_arg(postfix, "postfix")
        return twin

    @property
    def metric_state(self) -> dict[str, dict[str, Any]]:
        """Every metric's states, by prefixed name."""
        return {name: metric.metric_state for name, metric in self.items()}

    def plot(
        self, val: Any = None, ax: Any = None, together: bool = False
    ) -> list[tuple[Any, Any]]:
        """Each metric's plot (`together` is not supported here: one figure per metric).

        Raises:
            ValueError: `together` is not a bool, or True.
        """
        if not isinstance(together, bool):
            raise ValueError(
                f"Expected argument `together` to be a boolean, but got {type(together)}"
            )
        if together:
            raise ValueError(
                "Argument `together` must be False: the drop-in plots each metric in its own "
                "figure. Received: together=True"
            )
        values = val if val is not None else self.compute()
        out = []
        for index, (name, metric) in enumerate(self.items()):
            axis = ax[index] if isinstance(ax, Sequence) else ax
            out.append(metric.plot(values[name] if isinstance(values, dict) else None, ax=axis))
        return out

    def _set_name(self, base: str) -> str:
        name = base if self.prefix is None else self.prefix + base
        return name if self.postfix is None else name + self.postfix

    # ---------------------------------------------------------------------- mapping

    def __getitem__(self, key: str) -> Metric:
        if self.prefix and key.startswith(self.prefix):
            key = key[len(self.prefix) :]
        if self.postfix and key.endswith(self.postfix):
            key = key[: -len(self.postfix)]
        return self._members[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, name: object) -> bool:
        return name in self._members

    def keys(self, keep_base: bool = False) -> list[str]:
        names = list(self._members)
        return names if keep_base else [self._set_name(n) for n in names]

    def values(self, copy_state: bool = True) -> list[Metric]:
        return list(self._members.values())

    def items(self, keep_base: bool = False, copy_state: bool = True) -> list[tuple[str, Metric]]:
        return [(n if keep_base else self._set_name(n), m) for n, m in self._members.items()]


def _from_collection(member: Metric, collection: MetricCollection) -> Metric:
    """A member of a nested collection, as the outer collection holds it: a copy (a metric
    shares its state with one collection only; TorchMetrics holds the same object), keeping
    the nested collection's affixes for the keys of its dict results (`_from_collection`)."""
    member = copy.deepcopy(member)
    # Plain attributes of the member, as TorchMetrics' collection sets them: they shadow a
    # subclass's own class attributes of these names, which its `compute` may read.
    for affix in ("prefix", "postfix"):
        setattr(member, affix, getattr(collection, affix))
    member._from_collection = True
    return member
