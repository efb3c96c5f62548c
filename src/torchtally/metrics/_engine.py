"""The update engine: how an `update` call runs, for one metric or a collection's members.

A subclass writes `update` as plain tensor work; the base class hands every call to
`update_metric`, and a `MetricCollection` hands its calls to `update_members`. Four paths,
each written once here:

- **direct** (`run_direct`): the host prologue (cstorch's `dtype=`, the input boundary), the
  subclass's update, then the bookkeeping: the update count and the dropped cache. Only the
  outermost call does the prologue and the bookkeeping (a metric's update may call another's).
- **traced** (inside `torch.compile` or a traced step): the direct path marked as such, so
  that its reads of the state do not apply held batches (held eager batches commute with it).
- **held** (eager CPU, small row-additive batches, metrics._coalesce): the batch is copied
  into a staging buffer and applied with the batches held with it at the next read.
- **compiled** (`compile_update()`): the prologue eager, then one cached
  `torch.compile(fullgraph=True)` callable running the updates of a tuple of metrics (one
  metric's, or a collection's runners) and their counts.

Module-level functions taking what they need as arguments: Dynamo guards on every function a
trace reaches through a closure, per metric class, on every call, where a global is guarded
once.
"""

from __future__ import annotations

import functools
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import user_stacklevel
from torchtally.metrics._boundary import convert_inputs

# Names, not the module: a module object that a traced update reaches both here and through
# its own functions' globals makes Dynamo add an aliasing guard per access (85 of the 502
# guards of five metrics traced into one step, each checked on every call).
from torchtally.metrics._coalesce import (
    Stage,
    StateBuffers,
    count_update,
    cycle_started,
    enter_traced_update,
    exit_traced_update,
    hold,
    largest_held,
    outside_tracing,
    release_buffers,
)
from torchtally.metrics._runtime import Runtime, runtime_of

__all__ = [
    "Compiler",
    "UpdateSpec",
    "compile_options",
    "flush",
    "update_members",
    "update_metric",
]

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


class UpdateSpec:
    """What the engine needs of a metric class's `update`: the subclass's own function, whether
    it takes cstorch's `dtype=` itself, and its positional argument names (for messages)."""

    __slots__ = ("body", "names", "own_dtype")

    def __init__(self, body: Callable[..., Any], names: tuple[str, ...], own_dtype: bool) -> None:
        self.body = body
        self.names = names
        self.own_dtype = own_dtype


def spec_of(metric: Any) -> UpdateSpec:
    return type(metric).update.spec  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- direct path


def prologue(
    metric: Any, spec: UpdateSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Inputs:
    """The outermost call's host work: `dtype=`, then the boundary's conversions."""
    runtime = runtime_of(metric)
    if not spec.own_dtype:
        # As cstorch: each update sets it, so an update without it clears it.
        dtype = kwargs.pop("dtype", None) if kwargs else None
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise TypeError(
                f"Argument `dtype` must be a torch.dtype or None. Received: dtype={dtype!r}"
            )
        runtime.output_dtype = dtype
    # Past StateBuffers' read hook: the device is no read of the count.
    device = dict.__getitem__(metric._buffers, "_num_updates").device
    return convert_inputs(
        spec.names, args, kwargs, device, metric.array_inputs, metric.autograd_inputs
    )


def run_direct(
    metric: Any,
    spec: UpdateSpec,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    converted: bool = False,
) -> Any:
    """Run the subclass's update with the outermost call's prologue and bookkeeping."""
    runtime = runtime_of(metric)
    outermost = runtime.depth == 0
    dtype_before = runtime.output_dtype
    if outermost and not converted:
        args, kwargs = prologue(metric, spec, args, kwargs)
    runtime.depth += 1
    try:
        result = spec.body(metric, *args, **kwargs)
    except BaseException:
        if outermost and not converted:
            runtime.output_dtype = dtype_before  # a refused call leaves no trace
        raise
    finally:
        runtime.depth -= 1
    if outermost:
        count_update(metric._buffers)
        runtime.cached = None
    return result


def run_traced(metric: Any, spec: UpdateSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """An update traced into a compiled step: the direct path, marked so that its reads of the
    state skip held batches (a guard on them would recompile the step with each held cycle)."""
    link = runtime_of(metric).link
    if link is not None and not link.driving() and link.shares():
        raise RuntimeError(
            f"Metric `{metric.name}` shares its state with other members of a "
            "MetricCollection; inside a compiled step update it through the collection, or "
            "take it out of the sharing first with `collection.unshare(name)`."
        )
    enter_traced_update()
    try:
        return run_direct(metric, spec, args, kwargs)
    finally:
        exit_traced_update()


# ------------------------------------------------------------------------- entry points


def update_metric(metric: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """One metric's `update` call (what the base class's wrapper runs)."""
    # Most calls of an eager loop take the held path below: this function is the per-call
    # host cost of every metric, so it reads each field once and claims without a lock.
    runtime = runtime_of(metric)
    if torch.compiler.is_compiling():
        return run_traced(metric, spec_of(metric), args, kwargs)
    key = id(runtime)
    me = threading.get_ident()
    owner = _OWNERS.get(key)
    if owner is None:
        # dict.setdefault tests and claims in one step: no lock on the per-call path.
        if _OWNERS.setdefault(key, me) != me:
            raise _two_threads(metric)
    elif owner != me:  # first: another thread's update is no nested call
        raise _two_threads(metric)
    dtype_before = runtime.output_dtype
    try:
        if runtime.depth:  # this metric's own update calling it again: the plain path
            return run_direct(metric, spec_of(metric), args, kwargs)
        link = runtime.link
        if link is not None and not link.driving():
            link.unshare()  # used on its own: it stops sharing state with its collection
        inspected = torch._C._len_torch_dispatch_stack()
        compiler = runtime.compiler
        if compiler is not None and compiler.active and not inspected:
            # Under a dispatch mode (FakeTensorMode, make_fx, a profiler's) the call is being
            # traced or inspected, not run: it takes the plain path.
            flush(metric)
            spec = spec_of(metric)
            inputs = (prologue(metric, spec, args, kwargs),)
            return run_compiled(metric, compiler, (metric,), inputs, args, kwargs)
        if runtime.coalesce and not inspected and not torch._C._is_tracing():
            return run_held(metric, runtime, args, kwargs)
        return run_direct(metric, spec_of(metric), args, kwargs)
    except BaseException:
        runtime.output_dtype = dtype_before  # a refused call leaves no trace
        raise
    finally:
        if owner is None:
            del _OWNERS[key]


def update_members(
    owner: Any,
    runners: Sequence[Any],
    compiler: Compiler | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """A collection's `update`: each runner (one per shared statistic) once, directly or
    through the collection's compiled callable."""
    if (
        compiler is not None
        and compiler.active
        and not torch.compiler.is_compiling()
        and not torch._C._len_torch_dispatch_stack()
    ):
        claimed = claim(runners)
        dtypes = [runtime_of(m).output_dtype for m in runners]
        try:
            # Each member's own host work, eagerly, in the order eager updates would run it.
            inputs = tuple(prologue(m, spec_of(m), args, dict(kwargs)) for m in runners)
        except Exception:
            inputs = ()  # a member refuses the call: each decides for itself, eagerly
        try:
            if inputs:
                if _same_inputs(inputs):
                    inputs = inputs[:1]  # fewer graph inputs to guard: the common call
                run_compiled(owner, compiler, tuple(runners), inputs, args, kwargs)
                return
        except Exception as error:
            # A refused call leaves no trace: the refusing members keep their `dtype=`.
            refused = getattr(error, "torchtally_refused", runners)
            for metric, dtype in zip(runners, dtypes):
                if any(metric is m for m in refused):
                    runtime_of(metric).output_dtype = dtype
            raise
        finally:
            release(claimed)
        for metric, dtype in zip(runners, dtypes):
            runtime_of(metric).output_dtype = dtype  # the eager updates below set their own
    attempt_each([(m, functools.partial(m.update, *args, **kwargs)) for m in runners])


def attempt_each(calls: Sequence[tuple[Any, Callable[[], Any]]]) -> Any:
    """Run each member's update of one collection call, even after one refused it (as each
    would alone: the collection's call is no reason for another member to miss the batch);
    then raise the first refusal, with the members that refused as its `torchtally_refused`
    attribute. Returns the last result otherwise."""
    refused: list[Any] = []
    first: Exception | None = None
    result = None
    for metric, call in calls:
        try:
            result = call()
        except Exception as error:
            refused.append(metric)
            first = first or error
    if first is not None:
        first.torchtally_refused = tuple(refused)  # type: ignore[attr-defined]
        raise first
    return result


# ----------------------------------------------------------------------------- held path


def run_held(metric: Any, runtime: Runtime, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Hold the batch back, or apply what is held and update directly (metrics._coalesce)."""
    stage = runtime.stage
    spec = spec_of(metric)
    if stage is not None and not kwargs and stage.take_matching(args):
        # Another batch like the held ones (plain tensors: the boundary has nothing to do),
        # held with the least Python: this is most calls of an eager loop.
        if not spec.own_dtype:
            runtime.output_dtype = None  # as the prologue: an update without dtype= clears it
        if stage.calls == 1:
            cycle_started(metric)
        runtime.cached = None
        return None
    args, kwargs = prologue(metric, spec, args, kwargs)
    if kwargs:
        flush(metric)
        return run_direct(metric, spec, args, kwargs, converted=True)
    held, key = hold(metric, runtime, args)
    if held:
        runtime.cached = None
        return None
    result = run_direct(metric, spec, args, kwargs, converted=True)
    if key is not None:
        runtime.stage = Stage(spec.body, key, args, largest_held(key, metric.max_held_elements))
    return result


def flush(metric: Any) -> None:
    """Apply the batches held back to the state now (a no-op when none are held), and the
    update count kept on the host."""
    buffers = metric._buffers
    runtime = runtime_of(metric)
    # Not inside an update (its own flushes before appending rows would cost the kernel the
    # host count saves): its reads of the count itself still add it (StateBuffers).
    if type(buffers) is StateBuffers and buffers.pending and not runtime.depth:
        buffers.count_pending()
    stage = runtime.stage
    if stage is None:
        return
    release_buffers(metric._buffers)
    released = stage.release()
    if released is None:
        return
    views, calls = released
    runtime.depth += 1
    try:
        # Held batches are eager history: under make_fx, a dispatch mode or torch.jit.trace
        # they are applied as plain eager work, not recorded (a recorded flush would apply
        # them again at every replay of the trace).
        with outside_tracing():
            stage.body(metric, *views)
            count_update(metric._buffers, calls)
    finally:
        runtime.depth -= 1
    runtime.cached = None


# ------------------------------------------------------------------------- compiled path

#: What `compile_update` passes on to `torch.compile`.
_COMPILE_KWARGS = frozenset({"backend", "mode", "options", "dynamic", "fullgraph"})


class Compiler:
    """`compile_update()` of a metric or a collection: its options and the compiled callable
    (built on first use for the tuple of metrics it runs; rebuilt after a move, a copy, or a
    change of those metrics)."""

    __slots__ = ("active", "built_for", "options", "run")

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.active = True
        self.run: Callable[..., Any] | None = None
        self.built_for: tuple[int, ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        # A compiled callable cannot be pickled, nor usefully deep-copied (its graphs guard on
        # the original metrics): a copy rebuilds its own on first use.
        return (_restored_compiler, (self.options, self.active))

    def copy_options(self) -> Compiler:
        """The same settings without the callable (its graphs guard on the original)."""
        twin = Compiler(self.options)
        twin.active = self.active
        return twin

    def drop(self) -> None:
        self.run = None
        self.built_for = ()

    def callable_for(self, metrics: tuple[Any, ...]) -> Callable[..., Any]:
        ids = tuple(id(m) for m in metrics)
        if self.run is None or self.built_for != ids:
            bodies = tuple(spec_of(m).body for m in metrics)

            def compiled_update(members: tuple[Any, ...], inputs: tuple[Inputs, ...]) -> Any:
                # One (args, kwargs) for every member when their boundaries changed nothing.
                shared = len(inputs) == 1
                result = None
                enter_traced_update()
                try:
                    for i, (body, metric) in enumerate(zip(bodies, members)):
                        args, kwargs = inputs[0 if shared else i]
                        result = body(metric, *args, **kwargs)
                        metric._buffers["_num_updates"].add_(1)
                finally:
                    exit_traced_update()
                return result

            # A code object per owner: Dynamo keeps one cache and one recompile limit per
            # code object, so owners must not share (and evict) each other's graphs.
            compiled_update.__code__ = compiled_update.__code__.replace()
            self.run = torch.compile(compiled_update, **self.options)
            self.built_for = ids
        return self.run


def _restored_compiler(options: dict[str, Any], active: bool) -> Compiler:
    compiler = Compiler(options)
    compiler.active = active
    return compiler


def compile_options(enabled: bool, compile_kwargs: dict[str, Any]) -> dict[str, Any] | None:
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


def configure(
    compiler: Compiler | None, enabled: bool, compile_kwargs: dict[str, Any]
) -> Compiler | None:
    """The compiler after `compile_update(enabled, **compile_kwargs)`: switching off keeps the
    callable (switching back on with the same options reuses its graphs)."""
    options = compile_options(enabled, compile_kwargs)
    if options is None:
        if compiler is not None:
            compiler.active = False
        return compiler
    if compiler is None or compiler.options != options:
        return Compiler(options)
    compiler.active = True
    return compiler


def run_compiled(
    owner: Any,
    compiler: Compiler,
    metrics: tuple[Any, ...],
    inputs: tuple[Inputs, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Run the updates of `metrics` through `compiler`'s callable (the prologues done)."""
    run = compiler.callable_for(metrics)
    if compiler.options["dynamic"] is None:
        marked: set[int] = set()
        for member_args, member_kwargs in inputs:
            if id(member_args) not in marked:  # members given the same tensors mark them once
                marked.add(id(member_args))
                _mark_batch_dynamic(member_args, member_kwargs)
            elif member_kwargs:
                _mark_batch_dynamic((), member_kwargs)
    runtimes = [runtime_of(m) for m in metrics]
    for runtime in runtimes:
        runtime.depth += 1
    # Grad mode is part of every graph's guards: run the graph in one mode whatever the
    # caller's (an update never needs autograd), so that an eval loop under no_grad and a
    # training loop share it instead of compiling twice.
    grad = torch.is_grad_enabled()
    if grad:
        torch._C._set_grad_enabled(False)
    failure: Exception | None = None
    result = None
    try:
        try:
            result = run(metrics, inputs)
        except Exception as error:
            if not _is_compile_failure(error):
                raise
            failure = error
    finally:
        for runtime in runtimes:
            runtime.depth -= 1
        if grad:
            torch._C._set_grad_enabled(True)
    for runtime in runtimes:
        runtime.cached = None
        # The graph wrote any `cat` fill counts: a host note of them is stale (it is by the
        # counts' version already; this holds for any backend).
        runtime.cat_fill.clear()
    if failure is not None:
        # Dynamo fails while tracing, before any of the graph runs, so the states are
        # untouched and the eager update decides: its own error (bad arguments) is the user's
        # to see; if it runs, the update cannot be compiled and stays eager from now on.
        each = inputs if len(inputs) == len(metrics) else inputs * len(metrics)
        result = attempt_each(
            [
                (m, functools.partial(run_direct, m, spec_of(m), a, dict(k), converted=True))
                for m, (a, k) in zip(metrics, each)
            ]
        )
        compiler.active = False
        compiler.drop()
        _warn_fallback(owner, failure)
    return result


def _warn_fallback(owner: Any, error: Exception) -> None:
    """Say once why `owner` (a metric or a collection) runs its updates eagerly from now on."""
    summary = str(error).strip().splitlines()[0] if str(error).strip() else ""
    warnings.warn(
        f"{owner.describe_for_compile()}: update cannot be compiled ({type(error).__name__}: "
        f"{summary}); it runs eagerly from now on, with the same results. Call "
        "compile_update(False) on it to leave this warning out.",
        RuntimeWarning,
        stacklevel=user_stacklevel(),
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


def _same_inputs(inputs: tuple[Inputs, ...]) -> bool:
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


# -------------------------------------------------------------------------- thread claims


def claim(metrics: Sequence[Any]) -> list[int]:
    """Claim every metric for this thread (updates are not thread-safe: states are mutated in
    place by several ops, and a second thread entering is misuse, reported instead of
    silently interleaving); the keys claimed, to release. A metric this thread holds already
    (a nested call) is not claimed again."""
    me = threading.get_ident()
    claimed: list[int] = []
    for metric in metrics:
        key = id(runtime_of(metric))
        if key in _OWNERS and _OWNERS[key] == me:
            continue
        # dict.setdefault tests and claims in one step: no lock on the per-call path.
        if _OWNERS.setdefault(key, me) != me:
            release(claimed)
            raise _two_threads(metric)
        claimed.append(key)
    return claimed


def release(claimed: list[int]) -> None:
    for key in claimed:
        del _OWNERS[key]


def _two_threads(metric: Any) -> RuntimeError:
    return RuntimeError(
        f"Metric `{metric.name}` is being updated from two threads at once; metrics are not "
        "thread-safe. Give each thread its own metric and combine them with merge_state(), "
        "or serialise the updates with a lock."
    )


#: The thread inside each metric's `update`, by `id` of the metric's runtime (alive while
#: claimed, so the ids are unique among the keys).
_OWNERS: dict[int, int] = {}
