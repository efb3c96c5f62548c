"""`MetricCollection`: many metrics, one update call, shared statistics, one sync."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, final

import torch
from torch import nn

from torchtally.metrics._base import (
    Metric,
    _compile_update_options,
    _fall_back_to_eager,
    _is_compile_failure,
    _mark_batch_dynamic,
)
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
        for _, metric in self._items():
            # Members may share state tensors, which a member's held batches (metrics._coalesce)
            # would leave stale for the others: every member updates directly.
            metric.coalesce_updates(False)
        if share_statistics:
            self._plan_groups()
        self._alias_shared_states()
        # The members to update and to clear, as two plain tuples made once (the members are
        # fixed here): traced into a compiled step, walking `groups` and the ModuleDict would
        # put guards on every key of both dicts, checked on every call.
        self.__dict__["_update_plan"] = (
            tuple(self._metric(group[0]) for group in self.groups),
            tuple(metric for _, metric in self._items()),
        )

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
        if (
            self.__dict__.get("_compile_options") is not None
            and not torch.compiler.is_compiling()
            # Under a dispatch mode (FakeTensorMode, make_fx, a profiler's) the call is being
            # traced or inspected, not run: it takes the plain path, as a metric's does.
            and not torch._C._len_torch_dispatch_stack()
        ):
            self._compiled_update(args, kwargs)
            return
        self._update_eagerly(args, kwargs)

    def _update_eagerly(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        updating, members = self.__dict__["_update_plan"]
        for metric in updating:
            metric.update(*args, **kwargs)
        for metric in members:
            # Through __dict__, where the value lives: Module.__setattr__ would first look
            # for a parameter, buffer or submodule of that name (more guards per call).
            metric.__dict__["_cached"] = None

    # ------------------------------------------------------------------ compile_update

    def compile_update(self, enabled: bool = True, **compile_kwargs: Any) -> MetricCollection:
        """Run eager `update` calls of the whole collection through one cached `torch.compile`
        (or go back to plain eager with `enabled=False`); returns the collection.

        `Metric.compile_update` for a collection: one `torch.compile(fullgraph=True)` graph
        holds every member's update (each shared statistic once, as eagerly), so N metrics
        pay one compiled call's overhead instead of N eager updates' Python dispatch. The
        same contract: each member's boundary stays eager (array conversion, `dtype=`,
        detaching), update counters and caches are kept exactly, the batch dimension is
        dynamic (no recompile when it changes), the graph runs with grad off, a device move
        or a copy drops the compiled callable (rebuilt on next use), and so does a change of
        members. A collection whose update cannot be compiled runs eagerly, with one warning,
        and stays eager: the numbers are those of eager. Inside an outer `torch.compile` or
        a traced step the update is traced as usual.

        Members that enabled their own `compile_update` are inlined (their plain update in
        the collection's graph, never a compile inside a compile); they still use their own
        when updated alone.

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
        options = _compile_update_options(enabled, compile_kwargs)
        state = self.__dict__
        if options is None:
            # Kept: switching back on with the same options reuses the graph.
            state["_compile_options"] = None
            return self
        if options != state.get("_compiled_with"):
            state.pop("_compiled_callable", None)
        state["_compile_options"] = options
        return self

    @property
    def update_is_compiled(self) -> bool:
        """Whether eager `update` calls go through one compiled graph (`compile_update`)."""
        return self.__dict__.get("_compile_options") is not None

    def _runners(self) -> tuple[Metric, ...]:
        """The members whose update runs (one per shared statistic), cached per member set."""
        state = self.__dict__
        members = tuple(state["_modules"]["metrics"].values())
        cached = state.get("_runners_of")
        if cached is not None and cached[0] == members:
            return cached[1]  # type: ignore[no-any-return]
        runners = tuple(self._metric(g[0]) for g in self.groups)
        state["_runners_of"] = (members, runners)
        return runners

    def _build_compiled_update(self, runners: tuple[Metric, ...]) -> Callable[..., Any]:
        bodies = tuple(m._update_body_function() for m in runners)

        def compiled_update(
            members: tuple[Metric, ...], inputs: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]
        ) -> None:
            # One (args, kwargs) for every member when their boundaries changed nothing.
            shared = len(inputs) == 1
            for i, (body, metric) in enumerate(zip(bodies, members)):
                args, kwargs = inputs[0 if shared else i]
                body(metric, *args, **kwargs)
                metric.__dict__["_buffers"]["_num_updates"].add_(1)

        # Its own code object per collection: Dynamo keeps one cache and one recompile limit
        # per code object, so collections must not share (and evict) each other's graphs.
        compiled_update.__code__ = compiled_update.__code__.replace()
        options = dict(self.__dict__["_compile_options"])
        run = torch.compile(compiled_update, **options)
        self.__dict__["_compiled_callable"] = run
        self.__dict__["_compiled_with"] = options
        # The members it was built for: another set (a member added or replaced) rebuilds.
        self.__dict__["_compiled_for"] = tuple(id(m) for m in runners)
        return run

    def _compiled_update(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        state = self.__dict__
        runners = self._runners()
        run = state.get("_compiled_callable")
        if run is None or state.get("_compiled_for") != tuple(id(m) for m in runners):
            run = self._build_compiled_update(runners)
        claimed = _claim(runners)
        try:
            # Each member's own host work, eagerly, in the order eager updates would run it
            # (an argument error is raised by the member that raises it eagerly).
            inputs = tuple(m._update_prologue(args, dict(kwargs)) for m in runners)
            if _same_inputs(inputs):
                # Fewer graph inputs to guard: the common call passes plain tensors that every
                # member's boundary leaves as they are.
                inputs = inputs[:1]
            if state["_compile_options"]["dynamic"] is None:
                marked: set[int] = set()
                for member_args, member_kwargs in inputs:
                    # Members given the same tensors (the common call) mark them once.
                    if id(member_args) not in marked:
                        marked.add(id(member_args))
                        _mark_batch_dynamic(member_args, member_kwargs)
                    elif member_kwargs:
                        _mark_batch_dynamic((), member_kwargs)
            for m in runners:
                m.__dict__["_update_depth"] += 1
            # One grad mode whatever the caller's (see Metric.compile_update).
            grad = torch.is_grad_enabled()
            if grad:
                torch._C._set_grad_enabled(False)
            failure: Exception | None = None
            try:
                run(runners, inputs)
            except Exception as error:
                if not _is_compile_failure(error):
                    raise
                failure = error
            finally:
                if grad:
                    torch._C._set_grad_enabled(True)
                for m in runners:
                    m.__dict__["_update_depth"] -= 1
        finally:
            _release(claimed)
        if failure is not None:
            # Dynamo fails while tracing, before any of the graph runs: the states are
            # untouched and the eager update decides (its own error is the user's to see).
            self._update_eagerly(args, kwargs)
            self._give_up_compiling(failure)
            return
        for member in state["_modules"]["metrics"].values():
            member.__dict__["_cached"] = None
            # The graph wrote any `cat` fill counts: a host note of them is stale.
            member.__dict__.pop("_cat_fill", None)

    def _give_up_compiling(self, error: Exception) -> None:
        _fall_back_to_eager(self, f"MetricCollection {list(self.metrics)}", error)

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
        # A move or a cast replaces the states: the graph would only fail its guards.
        self.__dict__.pop("_compiled_callable", None)
        super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        self._alias_shared_states()  # .to()/.cuda() re-allocate each member's buffers
        return self

    def __getstate__(self) -> dict[str, Any]:
        # A compiled callable cannot be pickled, nor usefully deep-copied (its graphs guard
        # on the original members); the copy rebuilds its own on first use.
        state = dict(super().__getstate__())  # type: ignore[no-untyped-call]
        state.pop("_compiled_callable", None)
        state.pop("_compiled_for", None)
        state.pop("_runners_of", None)
        return state

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


def _same_inputs(inputs: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]) -> bool:
    """Whether every member's boundary returned the same objects (compared by identity)."""
    first_args, first_kwargs = inputs[0] if inputs else ((), {})
    for args, kwargs in inputs[1:]:
        if args is not first_args and (
            len(args) != len(first_args) or any(a is not b for a, b in zip(args, first_args))
        ):
            return False
        if kwargs.keys() != first_kwargs.keys() or any(
            kwargs[k] is not first_kwargs[k] for k in kwargs
        ):
            return False
    return True


def _claim(metrics: tuple[Metric, ...]) -> list[Metric]:
    """Claim every member for this thread, as each one's eager `update` does (metrics are not
    thread-safe); the members claimed, to release."""
    me = threading.get_ident()
    claimed: list[Metric] = []
    for metric in metrics:
        state = metric.__dict__
        mine = "_update_thread" not in state
        if state.setdefault("_update_thread", me) != me:
            _release(claimed)
            raise RuntimeError(
                f"Metric `{metric.name}` is being updated from two threads at once; metrics "
                "are not thread-safe. Give each thread its own metric and combine them with "
                "merge_state(), or serialise the updates with a lock."
            )
        if mine:
            claimed.append(metric)
    return claimed


def _release(claimed: list[Metric]) -> None:
    for metric in claimed:
        metric.__dict__.pop("_update_thread", None)


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
