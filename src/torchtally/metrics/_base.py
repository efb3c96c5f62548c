"""The `Metric` base class: the contract every torchtally metric keeps.

A metric's state is a set of registered tensors. Each carries a *reduction* (`sum`, `max`, `min`
or `cat`) that says how two states of the same metric combine: it is what `merge_state` and the
distributed sync use. `update` only does tensor work on that state; `compute` turns it into the
value. Errors that need the data (a label out of range, a NaN score) are counted into a state
tensor during `update` and raised by `compute`, so `update` never inspects a tensor's value.

The machinery lives beside this class, one mechanism a module, none importing this one:
`_runtime` (every bookkeeping field), `_routing` (what wraps a subclass's own methods),
`_engine` (how an update call runs: direct, traced, held, compiled), `_coalesce` (held
batches), `_cat` (`cat` states), `_boundary` (input conversion), `_sharing` (collections),
`_sync` (torch.distributed) and `_registry` (cstorch's registry). A subclass writes `update`,
`compute` and optionally `reset` as plain methods; `__init_subclass__` routes them through the
engine, the checks and the cache (`_routing.WRAPPERS`): every metric, the same guarantees.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, cast

import torch
from torch import Tensor, nn

from torchtally._errors import ErrorKinds, MetricValueError, raise_for_counts, tracing
from torchtally.metrics import _coalesce, _engine, _sync
from torchtally.metrics._cat import CatState
from torchtally.metrics._lightning import LightningHooks, activate_if_loaded
from torchtally.metrics._registry import REGISTRY, Registry, compute_all_metrics, get_all_metrics
from torchtally.metrics._routing import (
    WRAPPERS,
    StateAllocationError,
    check_mergeable,
    error_position,
    explained_allocation,
    is_cat_count,
    merge_tensor,
    reset_bookkeeping,
    snake_case,
)
from torchtally.metrics._runtime import COUNT_SUFFIX, Reduction, Runtime, attach, maybe_runtime

__all__ = [
    "CatState",
    "ErrorKinds",
    "Metric",
    "Reduction",
    "StateAllocationError",
    "compute_all_metrics",
    "get_all_metrics",
]

_REDUCTIONS = ("sum", "max", "min", "cat")
_UNSET = object()
_PLAIN = (bool, int, float, str, type(None))


class Metric(LightningHooks, nn.Module, ABC):
    """Base class of every torchtally metric (the cstorch `Metric` contract, extended).

    Subclasses register their state with `register_state` and implement `update` and
    `compute`; `reset` restores every registered state to its initial value in place, so a
    subclass only overrides it to do more. Calling the metric runs `update` then returns
    `compute()`, as in cstorch; `float(metric)` is `float(metric.compute())`.

    Args:
        name: The metric's name, used as its key in logs and collections. Defaults to the
            class name in snake case.
        check_values: Count data errors (labels out of range, non-finite values, negative
            weights) during `update` and raise them from `compute`. Turning it off saves a few
            elementwise ops per update; bad values then go unreported.

    Example:
        >>> class Total(Metric):
        ...     def __init__(self, name="total"):
        ...         super().__init__(name)
        ...         self.register_state("total", torch.tensor(0.0))
        ...     def update(self, x):
        ...         self.total.add_(x.sum())
        ...     def compute(self):
        ...         return self.total.clone()
        >>> m = Total()
        >>> float(m(torch.ones(3)))
        3.0
    """

    #: The data errors `update` counts, by name: `{name: what it is}`; `record_errors(name=n)`
    #: adds to one, and `compute` raises naming every kind seen.
    error_kinds: Mapping[str, str] = ErrorKinds()
    #: Display unit of the values ("%": fractions shown ×100; "" for none).
    unit: str = ""
    #: Whether a larger value is better (True), smaller (False), or neither / unknown (None).
    higher_is_better: bool | None = None
    #: What `update` takes: a key of `metrics._metadata.INPUT_KINDS` ("" for undeclared).
    input_kind: str = ""
    #: The dtype `compute` casts a floating value to (None: leave it; `float`: a Python float
    #: outside tracing; cstorch: float32, AUC and @K a float). An update's `dtype=` overrides it.
    result_dtype: torch.dtype | type[float] | None = None
    #: Names of `update` arguments that are array data: Python lists, tuples, numbers and numpy
    #: arrays given for them are converted to tensors on the state's device at the boundary
    #: (eagerly only: under torch.compile a list or array raises instead of being baked in).
    array_inputs: tuple[str, ...] = ()
    #: Names of `update` arguments whose autograd node the metric reads (perplexity tells a
    #: mean loss from a summed one by it): the boundary leaves them attached, and the metric
    #: must detach them itself before they touch a state.
    autograd_inputs: tuple[str, ...] = ()
    #: How an overflowing `cat` state is worded where `cat` states are an implementation detail:
    #: its rows ("samples"), a constant-memory alternative ("" for none); None: the state's own.
    cat_overflow_terms: tuple[str, str] | None = None
    #: Whether a derived value is still right when the collection's updates carry `weights`.
    derived_supports_weights: bool = True
    #: The largest batch worth holding back (elements of its widest input; None: the engine's
    #: limit): an update that works in blocks amortizes its per-op cost past about one block.
    max_held_elements: int | None = None
    #: Every live metric by name, in creation order, as cstorch's `Metric.registry`
    #: (`name -> [metrics]`); it holds weak references, so metrics are not kept alive by it.
    registry: Registry = REGISTRY
    #: The bookkeeping (metrics._runtime), in the instance's __dict__ from construction on.
    _runtime: Runtime

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method, wrap in WRAPPERS.items():
            own = cls.__dict__.get(method)
            if own is not None and not getattr(own, "_torchtally_wrapped", False):
                setattr(cls, method, wrap(own))
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_torchtally_wrapped", False):
            cls.__init__ = explained_allocation(init)  # type: ignore[method-assign]

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__()
        # Reads of it apply batches held back by coalescing (see metrics._coalesce).
        self._buffers = _coalesce.StateBuffers()
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Argument `name` must be a string or None. Received: name={name!r}")
        # Held small batches for the metrics that declare their update row-additive.
        attach(self, coalesce=type(self)._coalescible is not Metric._coalescible)
        self.name: str = name if name is not None else snake_case(type(self).__name__)
        self.check_values = bool(check_values)
        #: Reduce the state over the process group in `compute` when torch.distributed is on.
        self.sync_on_compute = True
        #: The process group `compute` syncs over (None: the default group).
        self.process_group: Any = None
        kinds = self.error_kinds
        if not isinstance(kinds, Mapping):
            raise TypeError(
                f"{type(self).__name__}.error_kinds must be a mapping of names to "
                f"descriptions. Received: {type(kinds).__name__}"
            )
        self._runtime.error_index = {kind: i for i, kind in enumerate(kinds)}
        # Non-persistent as every state by default (cstorch): a model holding metrics loads a
        # plain model checkpoint strictly. `persistent(True)` saves them with the rest.
        self._register("_num_updates", torch.zeros((), dtype=torch.int64), False, "sum")
        self._register("_errors", torch.zeros(len(kinds), dtype=torch.int64), False, "sum")
        REGISTRY.add(self)
        activate_if_loaded(Metric)  # `LightningModule.log(name, metric)`, if Lightning is loaded
        if type(self).reset is not Metric.reset:
            # cstorch metrics define their state in `reset`; register it now, as cstorch does.
            self.reset()

    # ----------------------------------------------------------------------------- state

    def register_state(
        self, name: str, tensor: Tensor, persistent: bool = False, reduction: Reduction = "sum"
    ) -> None:
        """Register a state tensor (a buffer) and how it combines across metrics.

        Registering a name again copies the new value into the existing tensor in place, so
        a cstorch-style `reset` that re-registers its states keeps their memory addresses
        (which CUDA graphs capture).

        Args:
            name: Attribute name of the state.
            tensor: Its initial value. For `reduction="cat"` the first dimension is the
                preallocated capacity: reach it through `cat_state(name)`.
            persistent: Whether the state is part of `state_dict()`.
            reduction: `sum`, `max`, `min` or `cat`.
        """
        if not isinstance(tensor, Tensor):
            raise TypeError(
                f"Argument `tensor` must be a torch.Tensor. Received: tensor={type(tensor).__name__}"
            )
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Argument `reduction` must be one of {_REDUCTIONS}. Received: reduction={reduction!r}"
            )
        if reduction == "cat" and tensor.dim() == 0:
            raise ValueError(
                "Argument `tensor` must have a capacity dimension for reduction='cat'. "
                f"Received: tensor of shape {tuple(tensor.shape)}"
            )
        if reduction == "cat":
            # One spare row past the capacity absorbs writes that overflow it.
            tensor = torch.cat([tensor, torch.zeros_like(tensor[:1])])
        runtime = self._runtime
        existing = self._buffers.get(name)
        if name in runtime.reductions and existing is not None:
            stored = tensor.reshape(1) if tensor.dim() == 0 else tensor
            if existing.shape == stored.shape and existing.dtype == stored.dtype:
                existing.copy_(stored)
                runtime.defaults[name] = stored.detach().clone()
                if reduction == "cat":
                    CatState(self, name).count_buffer.zero_()
                    CatState(self, name).reset_note()
                return
            del self._buffers[name]
        self._register(name, tensor, persistent, reduction)
        if reduction == "cat":
            count = torch.zeros((), dtype=torch.int64)
            self._register(name + COUNT_SUFFIX, count, persistent, "sum")
            CatState(self, name).reset_note()

    def _register(self, name: str, tensor: Tensor, persistent: bool, reduction: Reduction) -> None:
        # torch 2.13's compiled graphs drop in-place updates of 0-d tensor inputs, so a 0-d
        # state is stored with shape (1,) and read through a 0-d view (see __getattr__).
        runtime = self._runtime
        scalar = tensor.dim() == 0
        if scalar:
            tensor = tensor.reshape(1)
            runtime.scalars.add(name)
        anchor = self._buffers.get("_num_updates")
        value = tensor.detach().clone()
        self.register_buffer(name, value if anchor is None else value.to(anchor.device), persistent)
        runtime.defaults[name] = tensor.detach().clone()
        runtime.reductions[name] = reduction

    def register_internal_state(
        self, name: str, tensor: Tensor, reduction: Reduction = "sum"
    ) -> None:
        """Register a non-persistent bookkeeping state (a `_` name, not in `state_names()`)."""
        if not name.startswith("_"):
            raise ValueError(f"Argument `name` must start with '_'. Received: name={name!r}")
        self._register(name, tensor, False, reduction)

    def cat_state(self, name: str) -> CatState:
        """The `cat` state `name`: append rows, read the filled ones (see `CatState`)."""
        return CatState(self, name)

    def initial_state(self, name: str) -> Tensor:
        """The value `reset` restores for state `name` (a 0-d state as `(1,)`)."""
        return self._runtime.defaults[name]

    def state_reduction(self, name: str) -> Reduction:
        """How state `name` combines across metrics ("sum", "max", "min" or "cat")."""
        return self._runtime.reductions[name]

    def state_names(self) -> list[str]:
        """Names of the registered states (bookkeeping states excluded)."""
        return [n for n in self._runtime.reductions if not n.startswith("_")]

    def states(self) -> Iterator[tuple[str, Tensor, Reduction]]:
        """Yield `(name, tensor, reduction)` for every state, bookkeeping included."""
        self.flush()
        for name, reduction in self._runtime.reductions.items():
            yield name, self._buffers[name], reduction  # type: ignore[misc]

    @property
    def update_counter(self) -> Tensor:
        """The update count as a 0-d int64 tensor (no host read; traceable)."""
        return cast(Tensor, self._num_updates)

    def __getattr__(self, name: str) -> Any:
        runtime = maybe_runtime(self)
        if runtime is not None:
            stage = runtime.stage
            # An update's reads must not apply (nor guard on) held batches: it adds to the
            # state as it is, and sums commute.
            if stage is not None and stage.calls and not _coalesce.in_compiled_update():
                self.flush()  # a state read sees every update so far
            if name in runtime.scalars:
                buffer = self._buffers.get(name)
                if buffer is not None:
                    if torch.compiler.is_compiling():
                        return buffer.view(())  # traced as a view, so the update is kept
                    # Eager: reuse the view while it views this very buffer.
                    view = runtime.views.get(name)
                    if view is None or view._base is not buffer:
                        view = runtime.views[name] = buffer.view(())
                    return view
        return super().__getattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        runtime = maybe_runtime(self)
        if runtime is not None and not name.startswith("_"):
            # A setting changes: held batches and the cached value predate it, and a collection
            # member no longer updates as its siblings do.
            if runtime.stage is not None and runtime.stage.calls:
                self.flush()
            runtime.cached = None
            old = getattr(self, name, _UNSET)
            changed = not (old is value or (type(old) in _PLAIN and old == value))
            if changed and runtime.link is not None and not runtime.link.driving():
                runtime.link.unshare()
        super().__setattr__(name, value)

    def persistent(self, mode: bool = True) -> Metric:
        """Include every state in `state_dict()` (mode=True) or leave them all out."""
        for name in self._runtime.reductions:
            if mode:
                self._non_persistent_buffers_set.discard(name)
            else:
                self._non_persistent_buffers_set.add(name)
        return self

    # ------------------------------------------------------------------ the API proper

    @abstractmethod
    def update(self, *args: Any, **kwargs: Any) -> None:
        """Fold one batch into the state with tensor ops only."""

    @abstractmethod
    def compute(self) -> Any:
        """The metric's value from the accumulated state (data errors counted by `update`
        raise `MetricValueError` first; cached until the state changes)."""

    def reset(self) -> None:
        """Restore every registered state to its initial value, in place, and drop the cached
        value and the `dtype=` of earlier updates."""
        self._before_own_write()
        runtime = self._runtime
        for name, default in runtime.defaults.items():
            self._buffers[name].copy_(default)  # type: ignore[union-attr]
        for name, reduction in runtime.reductions.items():
            if reduction == "cat":
                CatState(self, name).reset_note()
        reset_bookkeeping(self)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run `update` on the batch, then return `compute()` over everything seen so far."""
        self.update(*args, **kwargs)
        self._keep_batch(args, kwargs)
        return self.compute()

    def __float__(self) -> float:
        return float(self.compute())

    @property
    def num_updates(self) -> Any:
        """How many times `update` ran since the last reset: an `int`, as in cstorch (while
        tracing, the 0-d int64 state tensor, so that reading it does not sync)."""
        if torch.compiler.is_compiling() or tracing(self._num_updates):
            return self._num_updates
        self.flush()
        return int(self._num_updates)

    # ------------------------------------------------------- held batches, compile_update

    def compile_update(self, enabled: bool = True, **compile_kwargs: Any) -> Metric:
        """Run this metric's eager `update` calls through one cached `torch.compile(
        fullgraph=True)` graph (or back to eager with `enabled=False`); returns the metric.

        For metrics updated eagerly in a hot loop, where an update costs the dispatch of many
        small ops. The boundary stays eager; the update, its value checks and the update count
        run in the graph. The batch dimension is dynamic, grad is off inside, a move or a copy
        drops the graph (rebuilt on next use), and an update that cannot be compiled runs
        eagerly with one warning: the numbers are always those of eager. See the performance
        docs for what it costs and saves.

        Args:
            enabled: Compile (True) or run `update` eagerly (False).
            **compile_kwargs: Passed to `torch.compile` (`backend`, `mode`, `options`,
                `dynamic`); `fullgraph` is always True.
        """
        runtime = self._runtime
        runtime.compiler = _engine.configure(runtime.compiler, enabled, compile_kwargs)
        return self

    @property
    def update_is_compiled(self) -> bool:
        """Whether eager `update` calls go through the compiled callable (`compile_update`)."""
        compiler = self._runtime.compiler
        return compiler is not None and compiler.active

    def describe_for_compile(self) -> str:  # how compile_update's fallback names it
        return f"`{self.name}` ({type(self).__name__})"

    def coalesce_updates(self, enabled: bool = True) -> Metric:
        """Let small eager batches be held back and updated together (the default for the
        metrics whose update is row-additive), or update every call directly
        (`enabled=False`, which also frees the buffers); returns the metric. Every state read
        applies the held batches first, so values, checkpoints, syncs and merges are
        unchanged (metrics._coalesce).

        Example:
            >>> from torchtally.metrics import MeanMetric
            >>> metric = MeanMetric().coalesce_updates(False)  # every update direct
        """
        if not isinstance(enabled, bool):
            raise TypeError(f"Argument `enabled` must be a bool. Received: enabled={enabled!r}")
        runtime = self._runtime
        if not enabled:
            self.flush()
            runtime.stage = None
        runtime.coalesce = enabled and type(self)._coalescible is not Metric._coalescible
        return self

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        """Whether eager batches shaped like `args` (equal leading sizes, no keyword arguments)
        may be concatenated along dim 0 before `update`: only when the update is row-additive
        for them whatever their values (the same state, up to the order of float sums).
        Subclasses say so for the inputs they accept. Consulted once per input signature."""
        return False

    def flush(self) -> None:
        """Apply the batches held back by `coalesce_updates` to the state now (a no-op when
        none are held); a member of a collection derived from a sibling's statistic is filled
        from it. Every read of the state does this itself; call it to time an update loop
        whole, or before handing the state tensors to code that reads them directly."""
        runtime = self._runtime
        _engine.flush(self)  # held batches, and the update count kept on the host
        if runtime.link is not None:
            runtime.link.refresh()

    def prepare_state_write(self) -> None:
        """Before a write to the state outside `update`: apply held batches, unshare, uncache."""
        self.flush()
        self._before_own_write()
        self._runtime.invalidate()

    def _before_own_write(self) -> None:
        """This metric's state is about to be written on its own (not by its collection)."""
        link = self._runtime.link
        if link is not None and not link.driving():
            link.unshare()

    # ---------------------------------------------------------------------- value checks

    def record_errors(self, **counts: Tensor | None) -> None:
        """Add data-error counts by kind (`error_kinds` names; None: none of that kind)."""
        # From _buffers: `self._errors` costs a failed attribute lookup and __getattr__.
        errors: Tensor = self._buffers["_errors"]  # type: ignore[assignment]
        runtime = self._runtime
        index = runtime.error_index
        if errors.is_cpu and not torch.compiler.is_compiling():
            # Eager CPU: one add_ per count into a cached (1,) view of its kind, where a stack
            # and an index_add_ cost two dispatches plus the Python that builds them.
            slots = runtime.error_slots
            if slots is None or slots[0] is not errors:
                slots = runtime.error_slots = (errors, errors.split(1))
            for kind, count in counts.items():
                if count is not None:
                    slots[1][error_position(index, kind, self)].add_(count)
            return
        present = sorted(
            ((error_position(index, k, self), c) for k, c in counts.items() if c is not None),
            key=lambda pair: pair[0],
        )
        leading = len(present)
        if (
            leading >= 2
            and present[-1][0] == leading - 1
            and all(c.device == errors.device for _, c in present)
        ):
            # Kinds 0..k-1 (the common call): one stack and one add_, no host-built index.
            errors[:leading].add_(torch.stack([c for _, c in present]))
            return
        for position, count in present:
            errors[position].add_(count)

    def check_errors(self) -> None:
        """Raise `MetricValueError` if `update` saw bad values, then if a `cat` state saw
        more rows than its capacity (whatever `check_values` says). This reads the error
        and fill counts (small device-to-host copies), so it is skipped while tracing."""
        inherited = self._runtime.inherited_error
        if inherited is not None:
            raise MetricValueError(inherited)
        if self.error_kinds and not tracing(self._errors):
            raise_for_counts(self.name, tuple(self.error_kinds.values()), self._errors)
        for name, reduction in self._runtime.reductions.items():
            if reduction == "cat":
                CatState(self, name).check_capacity()

    # -------------------------------------------------------------------- checkpoints

    def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
        self.flush()
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # A `cat` state is saved as its filled rows only, not its whole preallocated buffer.
        for name, reduction in self._runtime.reductions.items():
            if reduction == "cat" and prefix + name in destination:
                rows = CatState(self, name).save()
                destination[prefix + name] = rows if keep_vars else rows.detach()

    def _load_from_state_dict(
        self, state_dict: Any, prefix: str, *args: Any, **kwargs: Any
    ) -> None:
        self.flush()  # as if the held batches had gone in before the load
        self._runtime.drop_caches()
        if prefix + "_errors" in state_dict:  # the loaded counts are the truth now
            self._runtime.inherited_error = None
        for name, reduction in self._runtime.reductions.items():
            saved = state_dict.get(prefix + name)
            buffer = self._buffers[name]
            if reduction == "cat" and isinstance(saved, Tensor) and saved.shape != buffer.shape:  # type: ignore[union-attr]
                state_dict[prefix + name] = CatState(self, name).restore(saved)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def load_state_dict(self, state_dict: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        self._before_own_write()
        return super().load_state_dict(state_dict, *args, **kwargs)

    def state_dict_all(self) -> dict[str, Tensor]:
        """Every state, bookkeeping included, whatever its persistence: the metrics-only
        state to save for a resumed evaluation (`load_state_dict_all` restores it). A `cat`
        state holds its filled rows only (as in `state_dict()`)."""
        return {
            name: (CatState(self, name).save() if reduction == "cat" else buffer.detach().clone())
            for name, buffer, reduction in self.states()
        }

    def load_state_dict_all(self, state: dict[str, Tensor]) -> None:
        """Restore, in place, the states saved by `state_dict_all` (every one must be there)."""
        reductions = self._runtime.reductions
        missing, unexpected = (
            sorted(set(reductions) - set(state)),
            sorted(set(state) - set(reductions)),
        )
        if missing or unexpected:
            raise KeyError(
                f"Argument `state` must hold exactly the states of {type(self).__name__} "
                f"{self.name!r}. Received: missing={missing}, unexpected={unexpected}"
            )
        self._before_own_write()
        self.flush()
        for name, value in state.items():
            buffer: Tensor = self._buffers[name]  # type: ignore[assignment]
            if reductions[name] == "cat" and value.shape != buffer.shape:
                value = CatState(self, name).restore(value)
            if value.shape != buffer.shape:
                raise ValueError(
                    f"Argument `state` must hold {name!r} of shape {tuple(buffer.shape)}. "
                    f"Received: shape {tuple(value.shape)}"
                )
            buffer.copy_(value)
        self._runtime.drop_caches()

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Metric:
        # Lightning moves the model at the start of `fit`, in every process it starts: metrics
        # built before `import lightning`, or unpickled by `ddp_spawn`, become loggable here.
        activate_if_loaded(Metric)
        self.flush()
        before = list(dict.values(self._buffers))
        fills = CatState.notes_of(self)  # the values move with the states: so do their notes
        result = cast(Metric, super()._apply(fn, recurse))  # type: ignore[no-untyped-call]
        # A move or a cast replaces the states (on its own, a collection member then leaves
        # the sharing), the compiled graph would only fail its guards, and the staging buffers
        # live on the CPU. A "move" to where they are (Lightning's at every `self.log`)
        # replaces nothing: all stays as it is then.
        if any(a is not b for a, b in zip(before, dict.values(self._buffers), strict=True)):
            self._before_own_write()
            runtime = self._runtime
            if runtime.compiler is not None:
                runtime.compiler.drop()
            runtime.stage = None
            runtime.drop_caches()
            CatState.renote(self, fills)
        return result

    def __getstate__(self) -> dict[str, Any]:
        self.flush()  # a copy holds no batches back (the runtime copies its settings only)
        return dict(super().__getstate__())  # type: ignore[no-untyped-call]

    # ----------------------------------------------------------------- shared statistics

    def shared_statistic(self) -> Hashable | None:
        """A key naming the sufficient statistic this metric's state holds, or None.

        Metrics of a `MetricCollection` with equal keys share one state and one `update`:
        equal keys promise identical state layouts and identical update semantics (the key
        holds every constructor argument that `update` depends on), while `compute` may differ.
        """
        return None

    def derives_from(self, statistic: Hashable) -> bool:
        """Whether this metric's state can be computed exactly from another metric's
        statistic `statistic` (a `shared_statistic()` key); then a collection skips this
        metric's `update` and calls `load_derived` before its state is read."""
        return False

    def load_derived(self, source: Metric) -> None:
        """Fill this metric's state in place from `source`, whose statistic it derives from."""
        raise NotImplementedError(f"{type(self).__name__} derives from no statistic")

    # ---------------------------------------------------------------------- distributed

    def sync(self, process_group: Any = None) -> None:
        """Replace the local state with the global one over `process_group` (every rank must
        call it). One collective per (dtype, reduction) of the states; `unsync` undoes it."""
        group = process_group if process_group is not None else self.process_group
        _sync.sync_states([self], group)

    def unsync(self) -> None:
        """Restore the local state saved by `sync`."""
        _sync.unsync_states([self])

    @contextlib.contextmanager
    def synced(self) -> Iterator[Metric]:
        """Within the block the state is global (synced if torch.distributed is on and it is
        not synced already), as in `compute`; for methods that read state besides compute
        (`with metric.synced(): bound = metric.error_bound()`)."""
        synced_here = self._should_sync()
        if synced_here:
            self.sync()
        try:
            yield self
        finally:
            if synced_here:
                self.unsync()

    @property
    def is_synced(self) -> bool:
        """Whether the state currently holds the global values (between sync and unsync)."""
        return self._runtime.local_states is not None

    def _should_sync(self) -> bool:
        if not self.sync_on_compute or self.is_synced or tracing(self._num_updates):
            return False
        return _sync.distributed_world_size(self.process_group) > 1

    # ---------------------------------------------------------------------- combination

    def merge_state(self, others: Metric | Sequence[Metric]) -> Metric:
        """Fold the state of other metrics of the same kind and configuration into this one,
        by reduction (states of other shapes are refused before anything is merged)."""
        others = [others] if isinstance(others, Metric) else list(others)
        for other in others:
            if type(other) is not type(self):
                raise TypeError(
                    f"Argument `others` must hold metrics of type {type(self).__name__}. "
                    f"Received: {type(other).__name__}"
                )
            check_mergeable(self, other)
        self._before_own_write()
        self.flush()
        for other in others:
            other.flush()
            for name, reduction in self._runtime.reductions.items():
                if reduction == "cat":
                    CatState(self, name).merge_from(CatState(other, name))
                elif not is_cat_count(self._runtime, name):
                    merge_tensor(self._buffers[name], other._buffers[name], reduction)  # type: ignore[arg-type]
        self._runtime.drop_caches()
        return self

    def extra_repr(self) -> str:
        return f"name={self.name!r}"
