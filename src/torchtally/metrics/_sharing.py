"""A collection's sharing plan: which members share one state, which derive theirs, and what
happens when a member is used on its own.

Members of a `MetricCollection` with equal `shared_statistic()` keys share their state tensors
(one update for all of them); a member whose state `derives_from` another's statistic is not
updated at all and is filled from it before it is read. Both are decided once, from
constructor arguments.

A member stays a metric of its own: updated, reset, merged, loaded or moved on its own, it must
give the number a plain metric fed the same calls gives, and its siblings must not see it. So
any such use first takes the member out of the sharing (`Link.unshare`): a derived member is
filled from its source and from then on updated by the collection itself; a sharing member
gets its own copy of the state (the others keep theirs); the last member of a group takes its
derived members' state with it by filling them first. The collection's own operations run
with the plan `driving`, so they touch the shared state as one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from torchtally._errors import MetricValueError
from torchtally.metrics._runtime import runtime_of

__all__ = ["Link", "SharingPlan"]


class SharingPlan:
    """The sharing of one collection's members (see the module docstring).

    Args:
        members: The collection's members by name, in order.
        share: Whether to share at all (False: every member updates on its own).
    """

    def __init__(self, members: Mapping[str, Any], share: bool) -> None:
        for name, metric in members.items():
            if runtime_of(metric).link is not None:
                raise ValueError(
                    "Argument `metrics` must hold metrics that are in no other collection. "
                    f"Received: {name!r}, already in one (pass a copy: copy.deepcopy(metric))"
                )
        self.members = dict(members)
        #: Member -> the member whose state it shares (its group's owner).
        self.owners: dict[str, str] = {}
        #: Derived member -> the owner whose statistic it is filled from.
        self.sources: dict[str, str] = {}
        #: Nesting of the collection's own operations (its members' hooks stay quiet).
        self.depth = 0
        #: The members whose update runs (one per group), and every member: plain tuples,
        #: remade when the plan changes (traced into a compiled step, walking the dicts would
        #: guard on every key of them, checked on every call).
        self.runners: tuple[Any, ...] = ()
        self.all: tuple[Any, ...] = tuple(self.members.values())
        #: Members whose states a checkpoint being loaded holds (between before/after_load).
        self.loaded: set[str] = set()
        if share:
            self._plan()
        self._replan()
        self.relink()
        self.alias()

    def _plan(self) -> None:
        first_with: dict[Hashable, str] = {}
        for name, metric in self.members.items():
            key = metric.shared_statistic()
            if key is None:
                continue
            if key in first_with:
                self.owners[name] = first_with[key]
                _check_same_layout(self.members[first_with[key]], metric)
            else:
                first_with[key] = name
        for name, metric in self.members.items():
            if name in self.owners:
                continue
            source = next((o for k, o in first_with.items() if metric.derives_from(k)), None)
            if source is not None and source != name:
                self.sources[name] = source

    def relink(self) -> None:
        """Tie every member to this plan (after construction, or in a copy of the whole
        collection, whose members' copies come unlinked). A member that left the sharing
        has no relation left in the plan, so its link only marks it as a member."""
        for name, metric in self.members.items():
            runtime_of(metric).link = Link(self, name)

    @contextlib.contextmanager
    def driving(self) -> Iterator[None]:
        """The collection's own operation: members' standalone hooks stay quiet."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def alias(self) -> None:
        """Point each sharing member's state tensors at its owner's (after any re-allocation)."""
        for member, owner in self.owners.items():
            source, target = self.members[owner], self.members[member]
            for state in runtime_of(source).reductions:
                target._buffers[state] = source._buffers[state]
            runtime_of(target).drop_caches()

    def updated(self, dtype: Any, refused: Any = ()) -> None:
        """The collection updated its members: every member's cached value is stale (a
        sharing or derived member's state changed through another), and each that took the
        batch takes the call's cstorch `dtype=` as its own update would have (None clears
        it); one whose statistic's update refused the call (`refused`) keeps its own."""
        failed = {id(m) for m in refused or ()}
        for name, metric in self.members.items():
            runtime = runtime_of(metric)
            runtime.cached = None
            holder = self.owners.get(name, name)
            while holder in self.sources:
                holder = self.owners.get(self.sources[holder], self.sources[holder])
            took = id(self.members[holder]) not in failed and id(metric) not in failed
            if took and not type(metric).update.spec.own_dtype:
                runtime.output_dtype = dtype

    def refused(self, refused: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A collection update some members refused (`refused`: those that raised). A member
        derived from a refusing source would have taken the batch on its own where its own
        checks accept it: it leaves the sharing (filled first) and is given the batch
        itself, so it holds what it would alone."""
        refused = set(map(id, refused or ()))
        names = {id(m): n for n, m in self.members.items()}
        failed = {names[i] for i in refused if i in names}
        for name in [n for n in self.members if n in self.sources]:
            source = self.sources[name]
            while source in self.sources:
                source = self.sources[source]
            if source in failed or self.owners.get(source) in failed:
                self.unshare(name)
                # refused alone too: the first refusal is the one raised
                with contextlib.suppress(Exception):
                    self.members[name].update(*args, **kwargs)

    def shares(self, name: str) -> bool:
        """Whether member `name` still takes part in the sharing."""
        return runtime_of(self.members[name]).link is not None

    def groups(self) -> list[list[str]]:
        """Names of the members that share one update, one list per update that runs."""
        runs = [n for n in self.members if n not in self.owners and n not in self.sources]
        return [[r] + [m for m, o in self.owners.items() if o == r] for r in runs]

    def follow(self, members: Mapping[str, Any]) -> None:
        """Take in a change of the collection's members made after construction (a metric
        added, replaced or removed through `collection.metrics`): a removed one leaves the
        sharing; an added one updates on its own (its history is its own, so it shares with
        nobody)."""
        current = dict(members)
        if len(current) == len(self.members) and all(
            current.get(name) is metric for name, metric in self.members.items()
        ):
            return
        for name, metric in list(self.members.items()):
            if current.get(name) is not metric:
                if runtime_of(metric).link is not None:
                    self.unshare(name)
                del self.members[name]
        for name, metric in current.items():
            if name not in self.members:
                if runtime_of(metric).link is not None:
                    raise ValueError(
                        f"Argument `metrics` must hold metrics that are in no other "
                        f"collection. Received: {name!r}, already in one"
                    )
                metric.coalesce_updates(False)
                self.members[name] = metric
                runtime_of(metric).link = Link(self, name)
        self.members = {name: self.members[name] for name in current}
        self.all = tuple(self.members.values())
        self._replan()

    def _replan(self) -> None:
        self.runners = tuple(self.members[group[0]] for group in self.groups())

    def fill_derived(self) -> None:
        """Fill every derived member from its source (sources derived themselves first)."""
        done: set[str] = set()
        for name in self.sources:
            self._fill(name, done)

    def _fill(self, name: str, done: set[str], keep_errors: bool = False) -> None:
        """Fill derived member `name` from its source. The source's data errors raise (as
        the member's own update would have counted them), or with `keep_errors` (the member
        leaves the sharing before an update of its own) stay with the member, raised by its
        `compute` until it is reset."""
        if name in done:
            return
        source = self.sources[name]
        if source in self.sources:
            self._fill(source, done, keep_errors)
        origin, derived = self.members[source], self.members[name]
        if set(origin.error_kinds) == set(derived.error_kinds):
            # The same kinds counted by the same rules: the member's counts are the source's,
            # and its own compute raises them in its own words, as its own update would have.
            index = list(origin.error_kinds)
            counts = origin._buffers["_errors"]
            for position, kind in enumerate(derived.error_kinds):
                derived._buffers["_errors"][position] = counts[index.index(kind)]
            runtime_of(derived).inherited_error = runtime_of(origin).inherited_error
        else:
            try:
                origin.check_errors()
            except MetricValueError as error:
                if not keep_errors:
                    raise
                runtime_of(derived).inherited_error = str(error)
        with self.driving():
            derived.load_derived(origin)
            derived._buffers["_num_updates"].copy_(origin._buffers["_num_updates"])
        runtime_of(derived).invalidate()
        done.add(name)

    def unshare(self, name: str) -> None:
        """Take member `name` out of the sharing before it is used on its own: it keeps the
        state it has now (filled first if derived) as a copy of its own, and the others go on
        as they were (a group it led is led by its next member, derived members of a
        statistic only it held are filled and update on their own from now on)."""
        with self.driving():
            derived_from = self.sources.pop(name, None)
            if derived_from is not None:
                self.sources[name] = derived_from  # filled below while still derived
                self._fill(name, set(), keep_errors=True)
                del self.sources[name]
            sharers = [m for m, o in self.owners.items() if o == name]
            if name in self.owners:
                owner = self.owners[name]
                if owner in self.sources:  # the shared state is derived: filled before copying
                    self._fill(owner, set(), keep_errors=True)
                self._own_copy(name)
                del self.owners[name]
            elif sharers:
                # The group goes on under its next member, with the same buffers.
                heir = sharers[0]
                self._own_copy(name)
                for member in sharers:
                    del self.owners[member]
                for member in sharers[1:]:
                    self.owners[member] = heir
                if derived_from is not None:
                    self.sources[heir] = derived_from
                for member, origin in self.sources.items():
                    if origin == name:
                        self.sources[member] = heir
            else:
                # The last holder of its statistic: its derived members keep what they have
                # seen, and update on their own from now on.
                done: set[str] = set()
                for member in [m for m, o in self.sources.items() if o == name]:
                    self._fill(member, done, keep_errors=True)
                    del self.sources[member]
        runtime_of(self.members[name]).link = None
        self._replan()

    def before_load(self, state_dict: Mapping[str, Any], prefix: str) -> None:
        """A checkpoint is about to be loaded into the members (`prefix`: the members' keys'
        prefix). A sharing member whose saved state differs from its owner's saved state had
        a history of its own (it was used on its own before the save): it leaves the sharing
        first, so each loads its own state."""
        self.loaded = {
            name
            for name in self.members
            if any(k.startswith(f"{prefix}{name}.") for k in state_dict)
        }
        for member, owner in list(self.owners.items()):
            for state in runtime_of(self.members[member]).reductions:
                mine, theirs = (
                    state_dict.get(f"{prefix}{member}.{state}"),
                    state_dict.get(f"{prefix}{owner}.{state}"),
                )
                if mine is not None and theirs is not None and not _same(mine, theirs):
                    self.unshare(member)
                    break

    def after_load(self) -> None:
        """After the load: a derived member whose loaded state is not what its source's
        loaded statistic gives had a history of its own: it keeps its loaded state and
        leaves the sharing; the others are derived as before."""
        names = [n for n in self.sources if n in self.loaded]
        # Every loaded state first: filling one member fills its chain of sources too, and
        # a source that is itself derived must be judged by what it loaded, not by its fill.
        loaded = {
            name: {n: t.clone() for n, t, _ in _own_states(self.members[name])} for name in names
        }
        for name in names:
            if name not in self.sources:
                continue
            metric = self.members[name]
            saved = loaded[name]
            with self.driving():
                self._fill(name, set(), keep_errors=True)
            if all(_same(t, saved[n]) for n, t, _ in _own_states(metric)):
                continue
            for n, t, _ in _own_states(metric):
                t.copy_(saved[n])
            runtime_of(metric).inherited_error = None
            del self.sources[name]
            # Still tied where it leads a group (members sharing its state, which loaded the
            # same state) or is a source: its own use must unshare it from them.
            if not Link(self, name).shares():
                runtime_of(metric).link = None
            self._replan()
        self.loaded = set()

    def _own_copy(self, name: str) -> None:
        metric = self.members[name]
        for state in runtime_of(metric).reductions:
            metric._buffers[state] = metric._buffers[state].clone()
        runtime_of(metric).drop_caches()


class Link:
    """A member's tie to its collection's sharing plan."""

    __slots__ = ("name", "plan")

    def __init__(self, plan: SharingPlan, name: str) -> None:
        self.plan = plan
        self.name = name

    def driving(self) -> bool:
        """Whether the collection itself is operating on its members right now."""
        return self.plan.depth > 0

    def unshare(self) -> None:
        """The member is used on its own: take it out of the sharing first."""
        self.plan.unshare(self.name)

    def shares(self) -> bool:
        """Whether the member's state is tied to another member's (shared, derived, or the
        source of a derived one): only then does using it on its own concern the others."""
        plan, name = self.plan, self.name
        return (
            name in plan.owners
            or name in plan.sources
            or name in plan.owners.values()
            or name in plan.sources.values()
        )

    def refresh(self) -> None:
        """Before the member's state is read on its own: fill it if it is derived, or if it
        shares the state of a derived member."""
        plan = self.plan
        if plan.depth == 0:
            holder = plan.owners.get(self.name, self.name)
            if holder in plan.sources:
                plan._fill(holder, set())


def _same(a: Any, b: Any) -> bool:
    return bool(a.shape == b.shape and a.dtype == b.dtype and bool((a == b).all()))


def _own_states(metric: Any) -> list[tuple[str, Any, str]]:
    """The member's states as stored, read without filling it (no refresh)."""
    return [(n, metric._buffers[n], r) for n, r in runtime_of(metric).reductions.items()]


def _check_same_layout(owner: Any, member: Any) -> None:
    mine = {n: (b.shape, b.dtype) for n, b, _ in owner.states()}
    theirs = {n: (b.shape, b.dtype) for n, b, _ in member.states()}
    if mine != theirs:
        raise ValueError(
            f"Metrics `{owner.name}` and `{member.name}` declare the same shared statistic "
            f"{owner.shared_statistic()!r} but hold different states: {mine} vs {theirs}"
        )
