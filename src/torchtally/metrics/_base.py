"""The `Metric` base class: preallocated tensor state, updated in place, with no host sync.

A metric's state is a set of registered tensors. Each carries a *reduction* (`sum`, `max`, `min`
or `cat`) that says how two states of the same metric combine: it is what `merge_state` and the
distributed sync use. `update` only does tensor work on that state; `compute` turns it into the
value. Errors that need the data (a label out of range, a NaN score) are counted into a state
tensor during `update` and raised by `compute`, so `update` never inspects a tensor's value.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Literal, TypeVar, cast

import torch
from torch import Tensor, nn

from torchtally._errors import MetricValueError, raise_for_counts, tracing
from torchtally.metrics import _coalesce

__all__ = ["Metric", "Reduction", "compute_all_metrics", "get_all_metrics"]

Reduction = Literal["sum", "max", "min", "cat"]
_REDUCTIONS = ("sum", "max", "min", "cat")
_COUNT_SUFFIX = "_count"
_F = TypeVar("_F", bound=Callable[..., Any])
#: `update` arguments that hold per-sample weights in every metric: array data by definition.
_WEIGHT_ARGUMENTS = frozenset({"weight", "weights", "sample_weight"})


def _own_code(wrapped: Callable[..., Any]) -> Callable[..., Any]:
    """Give a wrapper its own code object. Dynamo caches compiled frames per code object, so a
    wrapper shared by every metric class would pool all their compilations into one cache and
    hit its recompile limit after a handful of unrelated metrics."""
    wrapped.__code__ = wrapped.__code__.replace()
    wrapped._torchtally_wrapped = True  # type: ignore[attr-defined]
    return wrapped


def _host_prologue(
    metric: Metric,
    own_dtype: bool,
    names: tuple[str, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The outermost update call's host work: `dtype=`, then the boundary conversions."""
    if not own_dtype:
        # As cstorch: each update sets it, so an update without it clears it.
        dtype = kwargs.pop("dtype", None) if kwargs else None
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise TypeError(
                f"Argument `dtype` must be a torch.dtype or None. Received: dtype={dtype!r}"
            )
        # Stored without reading the old value, so that a compiled update does not guard
        # on it (and recompile when it first changes).
        metric.__dict__["_output_dtype"] = dtype
    return metric._boundary(names, args, kwargs)


def _run_counted(
    metric: Metric,
    update: Callable[..., Any],
    own_dtype: bool,
    names: tuple[str, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    boundary_done: bool = False,
) -> Any:
    """Run a subclass's `update` and, for the outermost call (not one metric's update calling
    another's), its host work first and the count and cache invalidation after. Plain
    attributes are written through __dict__: nn.Module.__setattr__ (which looks for
    parameters, buffers and submodules first) costs more than some tensor ops."""
    state = metric.__dict__
    outermost = state["_update_depth"] == 0
    if outermost and not boundary_done:
        args, kwargs = _host_prologue(metric, own_dtype, names, args, kwargs)
    state["_update_depth"] += 1
    try:
        result = update(metric, *args, **kwargs)
    finally:
        state["_update_depth"] -= 1
    if outermost:
        # The (1,) buffer itself: `metric._num_updates` goes through __getattr__ and a 0-d view.
        state["_buffers"]["_num_updates"].add_(1)
        state["_cached"] = None
    return result


def _traced_update(
    metric: Metric,
    update: Callable[..., Any],
    own_dtype: bool,
    names: tuple[str, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """An update traced into a compiled step: `_run_counted` marked as such for its reads of
    the state. The update adds to the state as it is (held eager batches commute with it), so
    its reads need not look at them (a guard on them would recompile the step with each held
    cycle). Module-level functions taking what they need as arguments: Dynamo guards on every
    function a trace reaches through a closure, per metric class, on every call (a compiled
    step's guard checks grow with them), where a global is guarded once."""
    _coalesce.enter_traced_update()
    try:
        return _run_counted(metric, update, own_dtype, names, args, kwargs)
    finally:
        _coalesce.exit_traced_update()


def _count_update(update: _F) -> _F:
    """Wrap a subclass's `update` so every call counts once and drops the cached result, and
    take cstorch's `dtype=` (the dtype `compute` casts its value to) unless `update` has its own."""
    parameters = inspect.signature(update).parameters
    own_dtype = "dtype" in parameters
    # Positional argument names after `self`, for the boundary's error messages.
    names = tuple(parameters)[1:]

    @functools.wraps(update)
    def wrapped(self: Metric, *args: Any, **kwargs: Any) -> Any:
        if torch.compiler.is_compiling():
            return _traced_update(self, update, own_dtype, names, args, kwargs)
        # Updates are not thread-safe (states are mutated in place by several ops): a second
        # thread entering while another is inside `update` is misuse, reported instead of
        # silently interleaving. `dict.setdefault` claims the metric atomically. Eager only.
        me = threading.get_ident()
        owner = self.__dict__.setdefault("_update_thread", me)
        if owner != me:
            raise RuntimeError(
                f"Metric `{self.name}` is being updated from two threads at once; metrics are "
                "not thread-safe. Give each thread its own metric and combine them with "
                "merge_state(), or serialise the updates with a lock."
            )
        outermost = self._update_depth == 0
        try:
            if (
                outermost
                and self.__dict__.get("_compile_options") is not None
                # Under a dispatch mode (FakeTensorMode, make_fx, a profiler's) the call is
                # being traced or inspected, not run: it takes the plain path.
                and not torch._C._len_torch_dispatch_stack()
            ):
                return _compiled_update(self, args, kwargs)
            if (
                outermost
                and self.__dict__["_coalesce"]
                and not torch._C._len_torch_dispatch_stack()
                and not torch._C._is_tracing()  # torch.jit.trace records the ops it runs
            ):
                return _coalesced_update(self, args, kwargs)
            return _update_body(self, args, kwargs)
        finally:
            if outermost:
                self.__dict__.pop("_update_thread", None)

    def _prologue(
        self: Metric, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return _host_prologue(self, own_dtype, names, args, kwargs)

    def _coalesced_update(self: Metric, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The eager path of a metric that coalesces small batches (see metrics._coalesce):
        hold the batch back, or apply what is held and update directly."""
        state = self.__dict__
        stage: _coalesce.Stage | None = state.get("_stage")
        if stage is not None and not kwargs and stage.take_matching(args):
            # Another batch like the held ones (plain tensors: the boundary has nothing to
            # do), held with the least Python: this is most calls of an eager loop.
            if not own_dtype:
                state["_output_dtype"] = None  # as _prologue: an update without dtype= clears it
            if stage.calls == 1:
                _coalesce.cycle_started(self)
            state["_cached"] = None
            return None
        args, kwargs = _prologue(self, args, kwargs)
        if kwargs:
            self.flush()
            return _update_body(self, args, kwargs, boundary_done=True)
        held, key = _coalesce.hold(self, args)
        if held:
            self.__dict__["_cached"] = None
            return None
        result = _update_body(self, args, kwargs, boundary_done=True)
        if key is not None:
            _coalesce.start(self, update, key, args)
        return result

    def _compiled_update(self: Metric, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The `compile_update()` path: host work eager, the update through the metric's
        cached compiled callable (built on first use, and again after a move or a copy)."""
        self.flush()
        args, kwargs = _prologue(self, args, kwargs)
        state = self.__dict__
        run = state.get("_compiled_callable")
        if run is None:
            run = self._build_compiled_update()
        if state["_compile_mark_dynamic"]:
            _mark_batch_dynamic(args, kwargs)
        state["_update_depth"] += 1
        # Grad mode is part of every graph's guards: run the graph in one mode whatever the
        # caller's (an update never needs autograd), so that an eval loop under no_grad and a
        # training loop share it instead of compiling twice.
        grad = torch.is_grad_enabled()
        if grad:
            torch._C._set_grad_enabled(False)
        try:
            failure: Exception | None = None
            try:
                result = run(self, args, kwargs)
            except Exception as error:
                if not _is_compile_failure(error):
                    raise
                failure = error
            if failure is not None:
                # Dynamo fails while tracing, before any of the graph runs, so the state is
                # untouched and the eager update decides: its own error (bad arguments) is
                # the user's to see; if it runs, the update cannot be compiled and the
                # metric stays eager from now on.
                result = update(self, *args, **kwargs)
                state["_buffers"]["_num_updates"].add_(1)
                self._give_up_compiling(failure)
        finally:
            state["_update_depth"] -= 1
            if grad:
                torch._C._set_grad_enabled(True)
        state["_cached"] = None
        # The graph wrote the `cat` fill counts: eager appends must not trust a host note of
        # them (it is stale by the counts' version already; this holds for any backend).
        state.pop("_cat_fill", None)
        return result

    def _update_body(
        self: Metric, args: tuple[Any, ...], kwargs: dict[str, Any], boundary_done: bool = False
    ) -> Any:
        return _run_counted(self, update, own_dtype, names, args, kwargs, boundary_done)

    # Its own code object per metric class too, should Dynamo ever compile it as a frame.
    _update_body.__code__ = _update_body.__code__.replace()
    # For a caller that compiles several metrics' update bodies into one graph (a collection's
    # `compile_update`): it runs each metric's host work itself, eagerly, before the graph.
    wrapped._torchtally_prologue = _prologue  # type: ignore[attr-defined]
    return _own_code(wrapped)  # type: ignore[return-value]


def _checked_compute(compute: _F) -> _F:
    """Wrap a subclass's `compute`: raise data errors first, and cache the value until the
    next `update`, `reset`, merge or state load."""

    @functools.wraps(compute)
    def wrapped(self: Metric) -> Any:
        if self._cached is not None:
            return self._cached
        self.flush()
        # `synced()` only when it syncs: the common case skips its generator (~10 µs a compute)
        with self.synced() if self._should_sync() else contextlib.nullcontext():
            self.check_errors()
            value = compute(self)
        if isinstance(value, Tensor) and value.is_floating_point():
            if self._output_dtype is not None:
                value = value.to(self._output_dtype)
            elif self.result_dtype is float:
                # cstorch returns a Python float here; while tracing it stays a tensor.
                value = value if tracing(value) else float(value)
            elif isinstance(self.result_dtype, torch.dtype):
                value = value.to(self.result_dtype)
        self._cached = value
        return value

    return _own_code(wrapped)  # type: ignore[return-value]


def _reset_internals(reset: _F) -> _F:
    """Wrap a subclass's `reset` so the base bookkeeping is reset even when it is not called."""

    @functools.wraps(reset)
    def wrapped(self: Metric, *args: Any, **kwargs: Any) -> Any:
        self._reset_bookkeeping()
        return reset(self, *args, **kwargs)

    return _own_code(wrapped)  # type: ignore[return-value]


#: The methods a subclass writes plainly and the base wraps (bookkeeping, checks, caching).
_WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "update": _count_update,
    "compute": _checked_compute,
    "reset": _reset_internals,
}


class Metric(nn.Module, ABC):
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

    #: Labels for the data errors a subclass counts, indexed by position in `_errors`.
    error_kinds: tuple[str, ...] = ()
    #: Display unit of the values ("%": fractions shown ×100; "" for none).
    unit: str = ""
    #: Whether a larger value is better (True), smaller (False), or neither / unknown (None).
    higher_is_better: bool | None = None
    #: What `update` takes: a key of `metrics._metadata.INPUT_KINDS` ("" for undeclared).
    input_kind: str = ""

    #: The dtype `compute` casts a floating 0-d/any tensor value to (None: leave it; `float`: a
    #: Python float outside tracing). cstorch's metrics return float32 whatever their state
    #: holds, AUC and @K a Python float. An update's `dtype=` overrides it.
    result_dtype: torch.dtype | type[float] | None = None

    #: Names of `update` arguments that are array data: Python lists, tuples, numbers and numpy
    #: arrays given for them are converted to tensors on the state's device at the boundary
    #: (eagerly only: under torch.compile a list or array raises instead of being baked into
    #: the graph as a constant).
    array_inputs: tuple[str, ...] = ()

    #: Names of `update` arguments whose autograd node the metric reads (perplexity tells a
    #: mean loss from a summed one by it): the boundary leaves them attached, and the metric
    #: must detach them itself before they touch a state.
    autograd_inputs: tuple[str, ...] = ()

    #: Every live metric by name, in creation order, as cstorch's `Metric.registry`
    #: (`name -> [metrics]`); it holds weak references, so metrics are not kept alive by it.
    registry: _Registry

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method, wrap in _WRAPPERS.items():
            own = cls.__dict__.get(method)
            if own is not None and not getattr(own, "_torchtally_wrapped", False):
                setattr(cls, method, wrap(own))

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__()
        # Reads of it apply batches held back by coalescing (see metrics._coalesce).
        self.__dict__["_buffers"] = _coalesce.StateBuffers()
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Argument `name` must be a string or None. Received: name={name!r}")
        self.name: str = name if name is not None else _snake_case(type(self).__name__)
        self.check_values = bool(check_values)
        self._reductions: dict[str, Reduction] = {}
        self._defaults: dict[str, Tensor] = {}
        self._scalar_states: set[str] = set()
        self._update_depth = 0
        self._cached: Any = None
        self._output_dtype: torch.dtype | None = None
        self._local_states: dict[str, Tensor] | None = None
        # Whether small eager batches are held back and updated together (metrics._coalesce):
        # for the metrics that declare their update row-additive, until `coalesce_updates(False)`.
        self._coalesce = type(self)._coalescible is not Metric._coalescible
        #: Reduce the state over the process group in `compute` when torch.distributed is on.
        self.sync_on_compute = True
        #: The process group `compute` syncs over (None: the default group).
        self.process_group: Any = None
        # Non-persistent as every state by default (cstorch): a model holding metrics loads a
        # plain model checkpoint strictly. `persistent(True)` saves them with the rest, so a
        # resumed evaluation still raises earlier errors.
        self._register("_num_updates", torch.zeros((), dtype=torch.int64), False, "sum")
        self._register(
            "_errors", torch.zeros(len(self.error_kinds), dtype=torch.int64), False, "sum"
        )
        _REGISTRY.add(self)
        if type(self).reset is not Metric.reset:
            # cstorch metrics define their state in `reset`; register it now, as cstorch does.
            self.reset()

    # ----------------------------------------------------------------------------- state

    def register_state(
        self,
        name: str,
        tensor: Tensor,
        persistent: bool = False,
        reduction: Reduction = "sum",
    ) -> None:
        """Register a state tensor (a buffer) and how it combines across metrics.

        Registering a name again copies the new value into the existing tensor in place, so
        a cstorch-style `reset` that re-registers its states keeps their memory addresses
        (which CUDA graphs capture).

        Args:
            name: Attribute name of the state.
            tensor: Its initial value. For `reduction="cat"` the first dimension is the
                preallocated capacity; a fill count named `{name}_count` is registered too.
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
            # One spare row past the capacity absorbs writes that overflow it (see _cat_append).
            tensor = torch.cat([tensor, torch.zeros_like(tensor[:1])])
        existing = self._buffers.get(name)
        if name in self._reductions and existing is not None:
            stored = tensor.reshape(1) if tensor.dim() == 0 else tensor
            if existing.shape == stored.shape and existing.dtype == stored.dtype:
                existing.copy_(stored)
                self._defaults[name] = stored.detach().clone()
                if reduction == "cat":
                    self._buffers[name + _COUNT_SUFFIX].zero_()  # type: ignore[union-attr]
                    self._note_cat_fill(name, 0)
                return
            del self._buffers[name]
        self._register(name, tensor, persistent, reduction)
        if reduction == "cat":
            self._register(
                name + _COUNT_SUFFIX, torch.zeros((), dtype=torch.int64), persistent, "sum"
            )
            self._note_cat_fill(name, 0)

    def _register(self, name: str, tensor: Tensor, persistent: bool, reduction: Reduction) -> None:
        # torch 2.13's compiled graphs drop in-place updates of 0-d tensor inputs, so a 0-d
        # state is stored with shape (1,) and read through a 0-d view (see __getattr__).
        scalar = tensor.dim() == 0
        if scalar:
            tensor = tensor.reshape(1)
        anchor = self._buffers.get("_num_updates")
        device = anchor.device if anchor is not None else None
        value = tensor.detach().clone()
        self.register_buffer(name, value if device is None else value.to(device), persistent)
        if scalar:
            self._scalar_states.add(name)
        self._defaults[name] = tensor.detach().clone()
        self._reductions[name] = reduction

    def __getattr__(self, name: str) -> Any:
        if not _coalesce.in_compiled_update():  # first: an update's reads must not guard on it
            stage = self.__dict__.get("_stage")
            if stage is not None and stage.calls:
                self.flush()  # a state read sees every update so far
        scalars = self.__dict__.get("_scalar_states")
        if scalars is not None and name in scalars:
            buffer = self.__dict__["_buffers"].get(name)
            if buffer is not None:
                return self._scalar_view(name, buffer)
        return super().__getattr__(name)

    def _scalar_view(self, name: str, buffer: Tensor) -> Tensor:
        if torch.compiler.is_compiling():
            return buffer.view(())  # traced as a view of the buffer, so the update is kept
        # Eager: reuse the view while it still views this very buffer (a move, a sync or a
        # collection's aliasing replaces buffers), saving a view op on every state access.
        views: dict[str, Tensor] = self.__dict__.setdefault("_views", {})
        view = views.get(name)
        if view is None or view._base is not buffer:
            view = views[name] = buffer.view(())
        return view

    def persistent(self, mode: bool = True) -> Metric:
        """Include every state in `state_dict()` (mode=True) or leave them all out."""
        for name in self._reductions:
            if mode:
                self._non_persistent_buffers_set.discard(name)
            else:
                self._non_persistent_buffers_set.add(name)
        return self

    def compile_update(self, enabled: bool = True, **compile_kwargs: Any) -> Metric:
        """Run this metric's eager `update` calls through one cached `torch.compile` (or go
        back to plain eager with `enabled=False`); returns the metric, as `persistent()`.

        For metrics updated eagerly in a hot loop, where an update costs Python dispatch of
        10-30 small ops rather than arithmetic. The boundary stays eager (array conversion,
        `dtype=`, the thread check); the update itself, value checks and error counting
        included, and the update counter run as one `torch.compile(fullgraph=True)` graph per
        metric instance. The first call pays the compile (seconds on CPU), so it pays only
        over many calls: see the performance docs for measured numbers.

        Guards are set up not to recompile on successive calls or a changing batch size: the
        leading dimension of every tensor argument is marked dynamic up front (a batch of 0
        or 1 rows still gets its own graph, as torch specializes those sizes), and the graph
        runs with grad off whatever the caller's mode (inputs made under
        `torch.inference_mode()` get a second graph: their tensors differ). A device move
        or a copy (`deepcopy`, pickling) drops the compiled callable, rebuilt on next use.
        Updates inside an outer `torch.compile` or a traced step are traced as usual.

        A metric whose update cannot be compiled (it reads data on the host by design) runs
        eagerly instead, with a warning, and stays eager: the numbers are those of eager.

        A method rather than a constructor keyword so that every metric, built-in or a
        user's subclass, gets it without a signature change, and so that it can be switched
        on an existing metric (in a collection, after loading a checkpoint).

        Args:
            enabled: Compile (True) or run `update` eagerly (False).
            **compile_kwargs: Passed to `torch.compile` (`backend`, `mode`, `options`,
                `dynamic`). `fullgraph` is always True; `dynamic=True` makes every size
                symbolic instead of the batch dimension only.

        Example:
            >>> from torchtally.metrics import MeanMetric
            >>> metric = MeanMetric().compile_update()  # doctest: +SKIP
            >>> for batch in loader:  # doctest: +SKIP
            ...     metric.update(batch)
        """
        options = _compile_update_options(enabled, compile_kwargs)
        if options is None:
            # The compiled callable is kept: switching back on with the same options reuses
            # its graphs instead of compiling again.
            self.__dict__["_compile_options"] = None
            return self
        if options != self.__dict__.get("_compiled_with"):
            self.__dict__.pop("_compiled_callable", None)
        self.__dict__["_compile_mark_dynamic"] = options["dynamic"] is None
        self.__dict__["_compile_options"] = options
        return self

    def coalesce_updates(self, enabled: bool = True) -> Metric:
        """Let small eager batches be held back and updated together (the default for the
        metrics that support it), or update every call directly (`enabled=False`); returns
        the metric.

        On a CPU an eager update of a small batch costs the dispatch of its tensor ops, not
        arithmetic, so a metric whose update is row-additive (accuracy, confusion matrices,
        errors, means, AUROC, ...) copies each batch of up to 65,536 elements into a staging
        buffer (262,144 elements of the widest input: 1 MiB of float32 scores, plus its other
        inputs' rows) and updates once per buffer. Every state read applies the held batches
        first, so values, `state_dict()`, syncs and merges are unchanged; the calls are
        counted as they come. `enabled=False` also frees the buffers. See the performance
        docs for what it saves.

        Example:
            >>> from torchtally.metrics import MeanMetric
            >>> metric = MeanMetric().coalesce_updates(False)  # every update direct
        """
        if not isinstance(enabled, bool):
            raise TypeError(f"Argument `enabled` must be a bool. Received: enabled={enabled!r}")
        if not enabled:
            self.flush()
            self.__dict__.pop("_stage", None)
        self.__dict__["_coalesce"] = enabled and type(self)._coalescible is not Metric._coalescible
        return self

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        """Whether eager batches shaped like `args` (tensors with equal leading sizes, no
        keyword arguments) may be concatenated along dim 0 before `update`: only when the
        update is row-additive for them (the state after the concatenation equals the state
        after the batches one by one, up to the summation order of floats), whatever their
        values (a batch whose meaning depends on all its values, such as scores read as logits
        when any is outside [0, 1], is not row-additive). Subclasses whose update is say so
        for the inputs they accept. Consulted once per input signature."""
        return False

    def flush(self) -> None:
        """Apply the batches held back by `coalesce_updates` to the state now (a no-op when
        none are held). Every read of the state does this itself; call it to time an update
        loop whole, or before handing the state tensors to code that reads them directly."""
        stage: _coalesce.Stage | None = self.__dict__.get("_stage")
        if stage is None:
            return
        state = self.__dict__
        _coalesce.release_buffers(state["_buffers"])
        released = stage.release()
        if released is None:
            return
        views, calls = released
        state["_update_depth"] += 1
        try:
            # Held batches are eager history: under make_fx, a dispatch mode or
            # torch.jit.trace they are applied as plain eager work, not recorded (a recorded
            # flush would apply them again at every replay of the trace).
            with _coalesce.outside_tracing():
                stage.body(self, *views)
                state["_buffers"]["_num_updates"].add_(calls)
        finally:
            state["_update_depth"] -= 1
        state["_cached"] = None

    @property
    def update_is_compiled(self) -> bool:
        """Whether eager `update` calls go through the compiled callable (`compile_update`)."""
        return self.__dict__.get("_compile_options") is not None

    def _update_prologue(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The host work of an outermost `update` call (`dtype=`, the boundary's conversions),
        for a caller that then runs `_update_body_function()` itself (`kwargs` is consumed)."""
        prologue = type(self).update._torchtally_prologue  # type: ignore[attr-defined]
        return prologue(self, args, kwargs)  # type: ignore[no-any-return]

    def _update_body_function(self) -> Callable[..., Any]:
        """This metric's plain `update` (the subclass's own code, without the bookkeeping)."""
        update = type(self).update
        return getattr(update, "__wrapped__", update)

    def _build_compiled_update(self) -> Callable[..., Any]:
        body = self._update_body_function()

        def compiled_update(metric: Metric, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            with _coalesce.updating():
                result = body(metric, *args, **kwargs)
                metric.__dict__["_buffers"]["_num_updates"].add_(1)
            return result

        # A code object per metric instance: Dynamo keeps one cache and one recompile limit
        # per code object, so metrics must not share (and evict) each other's graphs.
        compiled_update.__code__ = compiled_update.__code__.replace()
        options = dict(self.__dict__["_compile_options"])
        run = torch.compile(compiled_update, **options)
        self.__dict__["_compiled_callable"] = run
        self.__dict__["_compiled_with"] = options
        return run

    def _give_up_compiling(self, error: Exception) -> None:
        _fall_back_to_eager(self, f"`{self.name}` ({type(self).__name__})", error)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Metric:
        # A move or a cast replaces the states; the graph compiled for the old ones would
        # only fail its guards and recompile, so drop it now and rebuild on next use.
        self.__dict__.pop("_compiled_callable", None)
        self.flush()
        self.__dict__.pop("_stage", None)  # staging buffers live on the CPU
        return cast(Metric, super()._apply(fn, recurse))  # type: ignore[no-untyped-call]

    def __getstate__(self) -> dict[str, Any]:
        # A compiled callable cannot be pickled (nor deep-copied usefully: its graphs guard
        # on the original metric); the copy rebuilds its own on first use.
        self.flush()
        state = super().__getstate__()  # type: ignore[no-untyped-call]
        state = dict(state)
        state.pop("_compiled_callable", None)
        state.pop("_stage", None)
        return state

    @staticmethod
    def cat_count_name(name: str) -> str:
        """The name of the fill-count state of the `cat` state `name`."""
        return name + _COUNT_SUFFIX

    def cat_count(self, name: str) -> Tensor:
        """The fill count of the `cat` state `name` (rows appended, overflow included)."""
        self.flush()
        count = self._buffers.get(self.cat_count_name(name))
        if count is None or self._reductions.get(name) != "cat":
            raise KeyError(
                f"Argument `name` must name a `cat` state of {type(self).__name__}. "
                f"Received: name={name!r}"
            )
        return count

    def state_names(self) -> list[str]:
        """Names of the registered states (bookkeeping states excluded)."""
        return [n for n in self._reductions if not n.startswith("_")]

    def states(self) -> Iterator[tuple[str, Tensor, Reduction]]:
        """Yield `(name, tensor, reduction)` for every state, bookkeeping included."""
        self.flush()
        for name, reduction in self._reductions.items():
            yield name, self._buffers[name], reduction  # type: ignore[misc]

    def _cat_append(self, name: str, values: Tensor) -> None:
        """Append `values` (along dim 0) to the `cat` state `name` without a host sync.

        Rows past the capacity are not stored, but the fill count still counts them, so
        `compute` can report the overflow instead of returning a value over partial data.
        """
        buffer: Tensor = self._buffers[name]  # type: ignore[assignment]
        fill = self._known_cat_fill(name, values)
        if fill is not None and fill + values.shape[0] <= buffer.shape[0] - 1:
            # Eager fast path: one slice copy instead of positions + index_copy_.
            buffer[fill : fill + values.shape[0]].copy_(values)
            count_buffer: Tensor = self._buffers[name + _COUNT_SUFFIX]  # type: ignore[assignment]
            count_buffer.add_(values.shape[0])
            note = self.__dict__["_cat_fill"][name]
            self.__dict__["_cat_fill"][name] = (
                *note[:2],
                count_buffer._version,
                fill + values.shape[0],
            )
            return
        count: Tensor = getattr(self, name + _COUNT_SUFFIX)
        capacity = buffer.shape[0] - 1
        positions = count + torch.arange(values.shape[0], device=buffer.device)
        buffer.index_copy_(0, positions.clamp(max=capacity), values.to(buffer.dtype))
        count.add_(values.shape[0])

    def _note_cat_fill(self, name: str | tuple[str, ...], fill: int) -> None:
        """Remember on the host that the `cat` state `name` (or each of several appended
        together) holds `fill` rows now.

        The fill-count tensor stays the single source of truth: the note is tied to that
        tensor's identity, storage and version counter, so any other write to it (a compiled
        or traced step, a merge, a sync, a checkpoint load, a device move) makes the note
        stale and the next append takes the general path. CPU only: a CUDA graph replay
        writes the count without bumping its version.
        """
        if torch.compiler.is_compiling():
            return  # a compiled reset bumps the count's version: the note goes stale anyway
        notes: dict[str, tuple[int, int, int, int]] = self.__dict__.setdefault("_cat_fill", {})
        for one in (name,) if isinstance(name, str) else name:
            count: Tensor = self._buffers[one + _COUNT_SUFFIX]  # type: ignore[assignment]
            if count.device.type != "cpu" or count.is_inference():
                notes.pop(one, None)
            else:
                notes[one] = (id(count), count.data_ptr(), count._version, fill)

    def _known_cat_fill(
        self, name: str | tuple[str, ...], *tensors: Tensor, read: bool = False
    ) -> int | None:
        """The host note of `cat` state `name`'s fill count if it is current and the call
        is eager (not compiling, tracing or on fake tensors), else None. For several states
        appended together (a tuple of names): their common fill, or None unless every note
        is current and they agree (one check of the call for all of them).

        With `read=True` (for compute, which reads the counts anyway; never in `update`), a
        stale note of a single state's eager CPU count is renewed from the count itself: one
        memory read, no device sync. Then this compute, and the eager appends after it, take
        their fast paths again after a write the note did not see (a compiled step, a merge,
        a load).
        """
        if torch.compiler.is_compiling():
            # First, so that a compiled update never reads (and guards on) the note, which
            # every eager append changes: a guard on it would recompile after each one.
            return None
        self.flush()  # held batches first: their appends move the notes read below
        notes = self.__dict__.get("_cat_fill", {})
        buffers = self._buffers
        if isinstance(name, str):
            note = notes.get(name)
            if note is None and not read:
                return None
            count: Tensor = buffers[name + _COUNT_SUFFIX]  # type: ignore[assignment]
            if (
                note is not None
                and note[0] == id(count)
                and note[2] == count._version
                and note[1] == count.data_ptr()
                and not count.is_inference()
                and not torch.jit.is_tracing()
                and not tracing(count, *tensors)
            ):
                return cast(int, note[3])
            if (
                not read
                or count.device.type != "cpu"
                or count.is_inference()
                or torch.jit.is_tracing()
                # under a dispatch mode (FakeTensorMode, make_fx) the compute is being traced
                or torch._C._len_torch_dispatch_stack()
                or tracing(count, *tensors)
            ):
                return None
            fill = int(count)
            self._note_cat_fill(name, fill)
            return fill
        fill_: int | None = None
        counts = []
        for one in name:
            note = notes.get(one)
            count = buffers[one + _COUNT_SUFFIX]  # type: ignore[assignment]
            if (
                note is None
                or note[0] != id(count)
                or note[2] != count._version
                or note[1] != count.data_ptr()
                or count.is_inference()
                or (fill_ is not None and note[3] != fill_)
            ):
                return None
            fill_ = note[3]
            counts.append(count)
        if torch.jit.is_tracing() or tracing(*counts, *tensors):
            return None
        return fill_

    def _cat_values(self, name: str) -> tuple[Tensor, Tensor]:
        """The `cat` state's buffer and the number of valid rows in it (a tensor)."""
        capacity = self._buffers[name].shape[0] - 1  # type: ignore[union-attr]
        count: Tensor = getattr(self, name + _COUNT_SUFFIX)  # the 0-d view of the (1,) state
        return self._cat_rows(name), count.clamp(max=capacity)

    def _cat_rows(self, name: str) -> Tensor:
        """The `cat` state's buffer, without its spare row: eager, with a current fill note,
        only the filled rows, so that compute costs in proportion to the samples seen, not to
        the capacity (for a caller that needs no count tensor: `_cat_values` without it)."""
        buffer: Tensor = self._buffers[name]  # type: ignore[assignment]
        capacity = buffer.shape[0] - 1
        fill = self._known_cat_fill(name)
        return buffer[: capacity if fill is None else min(fill, capacity)]

    def _cat_overflow(self, name: str) -> Tensor:
        """How many rows the `cat` state `name` saw beyond its capacity (a 0-d tensor)."""
        buffer: Tensor = self._buffers[name]  # type: ignore[assignment]
        count: Tensor = getattr(self, name + _COUNT_SUFFIX)
        return (count - (buffer.shape[0] - 1)).clamp(min=0)

    # ---------------------------------------------------------------------- value checks

    def _record_errors(self, *counts: Tensor | None) -> None:
        """Add per-kind error counts (in `error_kinds` order; None skips a kind)."""
        # From _buffers: `self._errors` costs a failed attribute lookup and __getattr__ per call.
        all_errors: Tensor = self.__dict__["_buffers"]["_errors"]
        if all_errors.is_cpu and not torch.compiler.is_compiling():
            # Eager CPU: one add_ per count into a cached (1,) view of its kind, where a stack
            # and an index_add_ cost two dispatches plus the Python that builds them. The
            # views are remade when the buffer is replaced (a move, a sync, a load).
            slots = self.__dict__.get("_error_slots")
            if slots is None or slots[0] is not all_errors:
                slots = self.__dict__["_error_slots"] = (all_errors, all_errors.split(1))
            views = slots[1]
            for index_, count in enumerate(counts):
                if count is not None:
                    views[index_].add_(count)
            return
        leading = len(counts)
        while leading and counts[leading - 1] is None:
            leading -= 1
        head = counts[:leading]
        if leading >= 2 and all(c is not None and c.device == all_errors.device for c in head):
            # One stack and one add_ instead of a select and an add_ per kind.
            errors = all_errors if leading == all_errors.shape[0] else all_errors[:leading]
            errors.add_(torch.stack(head))  # type: ignore[arg-type]
            return
        for index_, count in enumerate(counts):
            if count is not None:
                all_errors[index_].add_(count)

    def check_errors(self) -> None:
        """Raise `MetricValueError` if `update` saw bad values, then if a `cat` state saw
        more rows than its capacity (whatever `check_values` says). This reads the error
        and fill counts (small device-to-host copies), so it is skipped while tracing."""
        if self.error_kinds and not tracing(self._errors):
            raise_for_counts(self.name, self.error_kinds, self._errors)
        self._check_cat_capacity()

    def _cat_names(self) -> list[str]:
        return [name for name, reduction in self._reductions.items() if reduction == "cat"]

    def _check_cat_capacity(self) -> None:
        """Raise `MetricValueError` if a `cat` state saw more rows than its capacity, whatever
        `check_values` says: a value over the rows kept would silently differ from the value
        over the rows seen. One host read per `cat` state, skipped while tracing."""
        for name in self._cat_names():
            capacity = self._buffers[name].shape[0] - 1  # type: ignore[union-attr]
            fill = self._known_cat_fill(name)
            if fill is not None:
                # A current host note of the count (eager): no tensor ops and no read
                dropped = max(0, fill - capacity)
            else:
                lost = self._cat_overflow(name)
                if tracing(lost):
                    return
                dropped = int(lost)
            if dropped:
                per_rank = self.__dict__.get("_synced_cat_counts", {}).get(name)
                if per_rank is not None:
                    self._raise_synced_overflow(name, per_rank.tolist())
                raise MetricValueError(self._cat_overflow_message(name, capacity, dropped))

    #: How an overflowing `cat` state is worded for a metric whose `cat` states are an
    #: implementation detail: what its rows are ("samples") and a constant-memory alternative
    #: ("use binned mode (num_bins=...) for constant memory"; "" for none). None: the state's
    #: own terms (rows of the named state).
    cat_overflow_terms: tuple[str, str] | None = None

    def _cat_overflow_message(self, name: str, capacity: int, dropped: int) -> str:
        """What to tell a user whose `cat` state `name` (of `capacity` rows) dropped
        `dropped` rows, in the metric's `cat_overflow_terms` when it declares them."""
        seen = capacity + dropped
        if self.cat_overflow_terms is None:
            return (
                f"`{self.name}` received {seen} rows into its `cat` state {name!r} of capacity "
                f"{capacity}: {dropped} rows were dropped. Register it with a capacity of at "
                f"least {seen}."
            )
        rows, alternative = self.cat_overflow_terms
        return (
            f"`{self.name}` received {seen} {rows} but its buffer holds capacity={capacity}: "
            f"{dropped} {rows} were dropped. Construct it with capacity >= {seen}"
            + (f", or {alternative}." if alternative else ".")
        )

    def _raise_synced_overflow(self, name: str, counts: list[int]) -> None:
        """The overflow of a synced `cat` state, in each rank's own rows and capacity."""
        local = (self._local_states or {}).get(name)
        capacity = (local.shape[0] if local is not None else self._defaults[name].shape[0]) - 1
        over = [rank for rank, count in enumerate(counts) if count > capacity]
        dropped = sum(count - capacity for count in counts if count > capacity)
        raise MetricValueError(
            f"`{self.name}` received {sum(counts)} rows over {len(counts)} ranks into its "
            f"`cat` state {name!r} of capacity {capacity} per rank; rank(s) {over} saw more "
            f"(up to {max(counts)} rows): {dropped} rows were dropped. Register it with a "
            f"capacity of at least {max(counts)}."
        )

    def _filled_rows(self, name: str) -> Tensor:
        """The stored rows of the `cat` state `name` (one host read of its fill count)."""
        values, valid = self._cat_values(name)
        return values[: int(valid)]

    def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
        self.flush()
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # A `cat` state is saved as its filled rows only, not its whole preallocated buffer.
        for name in self._cat_names():
            if prefix + name in destination:
                # A copy: a view would take the whole buffer along, as checkpoint formats that
                # keep views tied (ours, torch.save) store a view's entire storage.
                rows = self._filled_rows(name).clone()
                destination[prefix + name] = rows if keep_vars else rows.detach()

    def _restore_cat_rows(self, name: str, rows: Tensor) -> Tensor:
        """The full buffer for `cat` state `name` holding `rows` (saved filled rows) first."""
        default = self._defaults[name]
        capacity = default.shape[0] - 1
        if rows.dim() != default.dim() or rows.shape[1:] != default.shape[1:]:
            raise ValueError(
                f"Argument `state` must hold rows of shape {tuple(default.shape[1:])} for the "
                f"`cat` state {name!r}. Received: shape {tuple(rows.shape)}"
            )
        if rows.shape[0] > capacity:
            raise ValueError(
                f"Argument `state` must hold at most capacity={capacity} rows for the `cat` "
                f"state {name!r} of `{self.name}`. Received: {rows.shape[0]} rows"
            )
        full = default.clone().to(self._buffers[name].device)  # type: ignore[union-attr]
        full[: rows.shape[0]] = rows.to(full.dtype)
        return full

    # ------------------------------------------------------------------------ boundary

    def _boundary(
        self, names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Check and normalise `update`'s arguments before any tensor work.

        Tensors are detached, so a state never joins an autograd graph (`update(loss)` without
        `.detach()` would otherwise keep every step's graph alive through the state). Meta
        tensors given to a metric with real state are refused: they have no values to count.
        Array data for the arguments named in `array_inputs` is converted to tensors.
        """
        # The common call, plain tensors that need nothing, without a method call per argument.
        for v in (*args, *kwargs.values()) if kwargs else args:
            if type(v) is not Tensor or v.requires_grad or v.is_meta:
                break
        else:
            return args, kwargs
        state_device = self.__dict__["_buffers"]["_num_updates"].device
        positional = tuple(
            self._boundary_value(names[i] if i < len(names) else f"args[{i}]", v, state_device)
            for i, v in enumerate(args)
        )
        keyword = {k: self._boundary_value(k, v, state_device) for k, v in kwargs.items()}
        return positional, keyword

    def _boundary_value(self, name: str, value: Any, state_device: torch.device) -> Any:
        if isinstance(value, Tensor):
            if value.device.type == "meta" and state_device.type != "meta":
                raise ValueError(
                    f"Argument `{name}` must hold data on the metric's device "
                    f"({state_device}). Received: a meta tensor of shape {tuple(value.shape)}"
                )
            if value.requires_grad and name not in self.autograd_inputs:
                return value.detach()
            return value
        if value is None or isinstance(value, str | bytes):
            return value  # the metric's own checks name what it accepts
        # A numpy array is array data whatever the metric; lists and numbers only where the
        # metric declares the argument as array data (a text metric takes lists of strings).
        declared = name in self.array_inputs or name in _WEIGHT_ARGUMENTS
        if not (_is_numpy(value) or (declared and _is_array_like(value))):
            return value
        if torch.compiler.is_compiling() and not isinstance(value, int | float | bool):
            raise TypeError(
                f"Argument `{name}` must be a torch.Tensor inside a compiled step (a "
                f"{type(value).__name__} would be baked into the graph as a constant). "
                f"Received: {type(value).__name__}"
            )
        # A Python float weight keeps its float64 value (float32 would round it, and flush 1e-200 to zero).
        exact = torch.float64 if name in _WEIGHT_ARGUMENTS and type(value) is float else None
        try:
            if type(value) in (int, float, bool):
                # A fill on the metric's device: the number travels as a kernel argument,
                # where a host tensor copied to a GPU synchronizes (`weight=batch_size`).
                return torch.full((), value, dtype=exact, device=state_device)
            return torch.as_tensor(value, dtype=exact, device=state_device)
        except (TypeError, ValueError, RuntimeError, OverflowError) as error:
            raise TypeError(
                f"Argument `{name}` must be a tensor or convertible to one (a number, a "
                f"rectangular list of numbers or a numpy array). Received: "
                f"{type(value).__name__} ({error})"
            ) from None

    # ------------------------------------------------------------------ the API proper

    @abstractmethod
    def update(self, *args: Any, **kwargs: Any) -> None:
        """Fold one batch into the state with tensor ops only."""

    @abstractmethod
    def compute(self) -> Any:
        """Return the metric's value from the accumulated state.

        Subclasses write the pure computation; the base wraps it so that data errors counted
        by `update` raise `MetricValueError` first and the value is cached until the state
        changes."""

    def reset(self) -> None:
        """Restore every registered state to its initial value, in place, and drop the cached
        value and the `dtype=` of earlier updates."""
        for name, default in self._defaults.items():
            self._buffers[name].copy_(default)  # type: ignore[union-attr]
        for name in self._cat_names():
            self._note_cat_fill(name, 0)
        self._reset_bookkeeping()

    def _reset_bookkeeping(self) -> None:
        stage = self.__dict__.get("_stage")
        if stage is not None:
            stage.drop()
            _coalesce.release_buffers(self.__dict__["_buffers"])
        self._num_updates.zero_()
        self._errors.zero_()
        self._cached = None
        self._output_dtype = None

    def named_buffers(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, Tensor]]:
        self.flush()  # a caller reading the buffers sees every update so far
        return super().named_buffers(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run `update` on the batch, then return `compute()` over everything seen so far."""
        self.update(*args, **kwargs)
        return self.compute()

    def __float__(self) -> float:
        return float(self.compute())

    def _load_from_state_dict(
        self, state_dict: Any, prefix: str, *args: Any, **kwargs: Any
    ) -> None:
        self.flush()  # as if the held batches had gone in before the load
        self._cached = None
        for name in self._cat_names():
            key = prefix + name
            saved = state_dict.get(key)
            buffer = self._buffers[name]
            if isinstance(saved, Tensor) and buffer is not None and saved.shape != buffer.shape:
                state_dict[key] = self._restore_cat_rows(name, saved)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @property
    def num_updates(self) -> Any:
        """How many times `update` ran since the last reset: an `int`, as in cstorch (while
        tracing, the 0-d int64 state tensor, so that reading it does not sync)."""
        if torch.compiler.is_compiling() or tracing(self._num_updates):
            return self._num_updates
        self.flush()
        return int(self._num_updates)

    def state_dict_all(self) -> dict[str, Tensor]:
        """Every state, bookkeeping included, whatever its persistence: the metrics-only
        state to save for a resumed evaluation (`load_state_dict_all` restores it). A `cat`
        state holds its filled rows only (as in `state_dict()`)."""
        return {
            name: (self._filled_rows(name) if reduction == "cat" else buffer).detach().clone()
            for name, buffer, reduction in self.states()
        }

    def load_state_dict_all(self, state: dict[str, Tensor]) -> None:
        """Restore, in place, the states saved by `state_dict_all` (every one must be there)."""
        missing = sorted(set(self._reductions) - set(state))
        unexpected = sorted(set(state) - set(self._reductions))
        if missing or unexpected:
            raise KeyError(
                f"Argument `state` must hold exactly the states of {type(self).__name__} "
                f"{self.name!r}. Received: missing={missing}, unexpected={unexpected}"
            )
        self.flush()
        for name, value in state.items():
            buffer: Tensor = self._buffers[name]  # type: ignore[assignment]
            if self._reductions[name] == "cat" and value.shape != buffer.shape:
                value = self._restore_cat_rows(name, value)
            if value.shape != buffer.shape:
                raise ValueError(
                    f"Argument `state` must hold {name!r} of shape {tuple(buffer.shape)}. "
                    f"Received: shape {tuple(value.shape)}"
                )
            buffer.copy_(value)
        self._cached = None

    # ----------------------------------------------------------------- shared statistics

    def shared_statistic(self) -> Hashable | None:
        """A key naming the sufficient statistic this metric's state holds, or None.

        Metrics of a `MetricCollection` with equal keys share one state and one `update`:
        equal keys promise identical state layouts and identical update semantics (the key
        holds every constructor argument that `update` depends on), while `compute` may differ.
        """
        return None

    #: Whether a derived value is still right when the collection's updates carry `weights`.
    derived_supports_weights: bool = True

    def derives_from(self, statistic: Hashable) -> bool:
        """Whether this metric's state can be computed from another metric's statistic
        `statistic` (a `shared_statistic()` key); then a collection skips this metric's
        `update` and calls `load_derived` before computing it."""
        return False

    def load_derived(self, source: Metric) -> None:
        """Fill this metric's state in place from `source`, whose statistic it derives from."""
        raise NotImplementedError(f"{type(self).__name__} derives from no statistic")

    # ---------------------------------------------------------------------- distributed
    # The state swaps of a sync (metrics._sync): the metric owns its buffers, so the sync
    # asks it to save, replace and restore them rather than writing its attributes.

    def _save_local_states(self) -> None:
        """Keep a copy of the local states, which a sync is about to replace."""
        self.flush()
        if self._local_states is not None:
            raise RuntimeError(
                f"Metric `{self.name}` is already synced; call unsync() before syncing again"
            )
        self._local_states = {n: b.clone() for n, b in self._buffers.items() if b is not None}
        self._cached = None

    def _install_synced_cat(
        self, name: str, merged: Tensor, count: Tensor, per_rank_counts: Tensor
    ) -> None:
        """Replace the `cat` state `name` by every rank's rows, compacted into `merged`.

        `count` is the combined fill count; `per_rank_counts` each rank's own, so that an
        overflow is reported with the rows each rank really saw.
        """
        self._buffers[name] = merged
        self._buffers[self.cat_count_name(name)] = count.reshape(1)
        self.__dict__.setdefault("_synced_cat_counts", {})[name] = per_rank_counts

    def _restore_local_states(self) -> None:
        """Put back the local states saved by `_save_local_states` (no-op when not synced)."""
        local = self._local_states
        if local is None:
            return
        for name, value in local.items():
            current = self._buffers[name]
            if current is not None and current.shape == value.shape:
                current.copy_(value)
            else:
                self._buffers[name] = value
        self._local_states = None
        self.__dict__.pop("_synced_cat_counts", None)
        self._cached = None

    def sync(self, process_group: Any = None) -> None:
        """Replace the local state with the global one over `process_group` (every rank must
        call it). One collective per (dtype, reduction) of the states; `unsync` undoes it."""
        from torchtally.metrics._sync import sync_states

        sync_states([self], process_group if process_group is not None else self.process_group)

    def unsync(self) -> None:
        """Restore the local state saved by `sync`."""
        from torchtally.metrics._sync import unsync_states

        unsync_states([self])

    @contextlib.contextmanager
    def synced(self) -> Iterator[Metric]:
        """Within the block the state is global (synced if torch.distributed is on and it is
        not synced already), as in `compute`; for methods that read state besides compute.

        Example:
            >>> with metric.synced():  # doctest: +SKIP
            ...     bound = metric.error_bound()
        """
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
        return self._local_states is not None

    def _should_sync(self) -> bool:
        if not self.sync_on_compute or self.is_synced or tracing(self._num_updates):
            return False
        from torchtally.metrics._sync import distributed_world_size

        return distributed_world_size(self.process_group) > 1

    # ---------------------------------------------------------------------- combination

    def merge_state(self, others: Metric | Sequence[Metric]) -> Metric:
        """Fold the state of other metrics of the same kind into this one, by reduction."""
        self.flush()
        for other in [others] if isinstance(others, Metric) else list(others):
            if type(other) is not type(self):
                raise TypeError(
                    f"Argument `others` must hold metrics of type {type(self).__name__}. "
                    f"Received: {type(other).__name__}"
                )
            other.flush()
            self._merge_one(other)
        self._cached = None
        return self

    def _merge_one(self, other: Metric) -> None:
        for name, reduction in self._reductions.items():
            if (
                name.endswith(_COUNT_SUFFIX)
                and self._reductions.get(name[: -len(_COUNT_SUFFIX)]) == "cat"
            ):
                continue  # merged together with its `cat` buffer
            mine: Tensor = self._buffers[name]  # type: ignore[assignment]
            theirs: Tensor = other._buffers[name].to(mine.device)  # type: ignore[union-attr]
            if reduction == "sum":
                mine.add_(theirs)
            elif reduction == "max":
                torch.maximum(mine, theirs, out=mine)
            elif reduction == "min":
                torch.minimum(mine, theirs, out=mine)
            else:
                self._merge_cat(name, other)

    def _merge_cat(self, name: str, other: Metric) -> None:
        values, valid = other._cat_values(name)
        count_name = name + _COUNT_SUFFIX
        # Keep the other's overflow visible: it saw more rows than it could store.
        lost = other._cat_overflow(name)
        rows = values[: int(valid)].to(self._buffers[name].device)  # type: ignore[union-attr]
        self._cat_append(name, rows)
        self._buffers[count_name].add_(lost.to(self._buffers[count_name].device))  # type: ignore[union-attr]

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


class _Registry:
    """cstorch's `Metric.registry` (`name -> list of metrics`), over weak references."""

    def __init__(self) -> None:
        self._metrics: weakref.WeakValueDictionary[int, Metric] = weakref.WeakValueDictionary()
        self._next = 0

    def add(self, metric: Metric) -> None:
        self._metrics[self._next] = metric
        self._next += 1

    def _live(self) -> list[Metric]:
        return list(self._metrics.values())

    def __getitem__(self, name: str) -> list[Metric]:
        return [m for m in self._live() if m.name == name]

    def __contains__(self, name: object) -> bool:
        return any(m.name == name for m in self._live())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        return list(dict.fromkeys(m.name for m in self._live()))

    def items(self) -> list[tuple[str, list[Metric]]]:
        return [(name, self[name]) for name in self.keys()]

    def values(self) -> list[list[Metric]]:
        return [metrics for _, metrics in self.items()]

    def clear(self) -> None:
        self._metrics.clear()


_REGISTRY = _Registry()
Metric.registry = _REGISTRY


def get_all_metrics() -> Iterator[tuple[str, Metric]]:
    """Yield `(name, metric)` for every live metric, as cstorch: a name shared by several
    metrics is suffixed with each one's index in creation order (`"acc.0"`, `"acc.1"`)."""
    for name, metrics in _REGISTRY.items():
        for index, metric in enumerate(metrics):
            yield (f"{name}.{index}" if len(metrics) > 1 else name), metric


def compute_all_metrics() -> dict[str, Any]:
    """`{name: metric.compute()}` over `get_all_metrics()`."""
    return {name: metric.compute() for name, metric in get_all_metrics()}


#: What `compile_update` passes on to `torch.compile`.
_COMPILE_KWARGS = frozenset({"backend", "mode", "options", "dynamic", "fullgraph"})


def _compile_update_options(enabled: bool, compile_kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """Check `compile_update`'s arguments (a metric's or a collection's): the options for
    `torch.compile` (`fullgraph=True`, `dynamic` defaulted to None), or None when disabled."""
    if not isinstance(enabled, bool):
        raise TypeError(f"Argument `enabled` must be a bool. Received: enabled={enabled!r}")
    if compile_kwargs.get("fullgraph", True) is not True:
        raise ValueError(
            "Argument `fullgraph` must be True for compile_update (a graph break would "
            "run part of the update eagerly, with host syncs). "
            f"Received: fullgraph={compile_kwargs['fullgraph']!r}"
        )
    unknown = sorted(set(compile_kwargs) - _COMPILE_KWARGS)
    if unknown:
        raise TypeError(
            f"Argument `compile_kwargs` must hold torch.compile arguments "
            f"{sorted(_COMPILE_KWARGS)}. Received: {unknown}"
        )
    if not enabled:
        return None
    options = {**compile_kwargs, "fullgraph": True}
    options.setdefault("dynamic", None)
    return options


def _fall_back_to_eager(owner: nn.Module, description: str, error: Exception) -> None:
    """Switch `owner` (a metric or a collection) back to eager updates for good, and say why
    once: the one wording of `compile_update`'s fallback."""
    import warnings

    owner.__dict__["_compile_options"] = None
    owner.__dict__.pop("_compiled_callable", None)
    summary = str(error).strip().splitlines()[0] if str(error).strip() else ""
    warnings.warn(
        f"{description}: update cannot be compiled ({type(error).__name__}: {summary}); it "
        "runs eagerly from now on, with the same results. Call compile_update(False) on it "
        "to leave this warning out.",
        RuntimeWarning,
        stacklevel=5,
    )


def _mark_batch_dynamic(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Mark the leading dimension of every tensor argument dynamic (softly: a metric that
    needs it static specializes it without an error), so that a new batch size reuses the
    graph instead of compiling a second one before Dynamo's automatic dynamic kicks in."""
    from torch._dynamo import maybe_mark_dynamic

    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor) and value.dim():
            maybe_mark_dynamic(value, 0)


def _is_compile_failure(error: Exception) -> bool:
    """Whether `error` is Dynamo or a compiler backend failing (not the update's own error)."""
    exc = sys.modules.get("torch._dynamo.exc")
    # The recompile limit (the update keeps specializing on something that varies) raises
    # its own exception type, outside Dynamo's hierarchy.
    return exc is not None and isinstance(
        error, exc.TorchDynamoException | exc.FailOnRecompileLimitHit
    )


def _is_numpy(value: Any) -> bool:
    """A numpy array or scalar (checked without importing numpy)."""
    return type(value).__module__ == "numpy" and hasattr(value, "__array__")


def _is_array_like(value: Any) -> bool:
    """Python numbers, lists/tuples and numpy arrays."""
    return isinstance(value, int | float | bool | list | tuple) or _is_numpy(value)


def _snake_case(class_name: str) -> str:
    base = class_name.lstrip("_").removesuffix("Metric") or class_name
    out = []
    for i, char in enumerate(base):
        if (
            char.isupper()
            and i
            and (not base[i - 1].isupper() or (i + 1 < len(base) and base[i + 1].islower()))
        ):
            out.append("_")
        out.append(char.lower())
    return "".join(out)
