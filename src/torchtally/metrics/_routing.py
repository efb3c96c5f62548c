"""How a subclass's own methods are routed: the base class (metrics._base) installs these
wrappers around a subclass's `update`, `compute`, `reset` and `__init__` in
`__init_subclass__`, so every metric, built-in or a user's, gets the same bookkeeping.

- `update` runs through the engine (metrics._engine): counted once, cache dropped, inputs
  converted, held or compiled where asked.
- `compute` raises the data errors counted so far, casts the value as the metric declares,
  and caches it until the state changes; each caller gets its own copy of a cached tensor,
  and a compute that syncs never answers from the cache.
- `reset` resets the base's bookkeeping too, even when the subclass does not call ours.
- `__init__` names the arguments that sized a state the allocator refused.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from torch import Tensor

from torchtally._errors import tracing
from torchtally.metrics._coalesce import drop_pending, release_buffers
from torchtally.metrics._engine import UpdateSpec, update_metric
from torchtally.metrics._runtime import COUNT_SUFFIX, Reduction, Runtime, runtime_of

__all__ = [
    "WRAPPERS",
    "StateAllocationError",
    "cast_result",
    "check_mergeable",
    "error_position",
    "explained_allocation",
    "is_cat_count",
    "merge_tensor",
    "own_code",
    "reset_bookkeeping",
    "snake_case",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def own_code(wrapped: Callable[..., Any]) -> Callable[..., Any]:
    """Give a wrapper its own code object. Dynamo caches compiled frames per code object, so a
    wrapper shared by every metric class would pool all their compilations into one cache and
    hit its recompile limit after a handful of unrelated metrics."""
    wrapped.__code__ = wrapped.__code__.replace()
    wrapped._torchtally_wrapped = True  # type: ignore[attr-defined]
    return wrapped


def _routed_update(update: _F) -> _F:
    """A subclass's `update`, run by the engine (see metrics._engine); cstorch's `dtype=` (the
    dtype `compute` casts its value to) is taken unless `update` has its own."""
    parameters = inspect.signature(update).parameters
    spec = UpdateSpec(update, tuple(parameters)[1:], "dtype" in parameters)

    @functools.wraps(update)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        return update_metric(self, args, kwargs)

    wrapped.spec = spec  # type: ignore[attr-defined]
    return own_code(wrapped)  # type: ignore[return-value]


def _checked_compute(compute: _F) -> _F:
    """A subclass's `compute`: data errors raise first, the value is cast as declared, and it
    is cached until the state changes (each caller gets its own copy of a cached tensor)."""

    @functools.wraps(compute)
    def wrapped(self: Any) -> Any:
        runtime = runtime_of(self)
        # A compute that syncs always syncs: a cached value must never stand in for a
        # collective that the other ranks enter.
        syncing = self._should_sync()
        eager = not torch.compiler.is_compiling()
        if eager and not syncing and runtime.cached is not None:
            return _copied(runtime.cached)
        self.flush()
        with self.synced() if syncing else contextlib.nullcontext():
            self.check_errors()
            value = cast_result(self, compute(self))
        if not eager or syncing or self.is_synced or _traced_value(value):
            return value
        runtime.cached = value
        return _copied(value)

    return own_code(wrapped)  # type: ignore[return-value]


def _reset_internals(reset: _F) -> _F:
    """A subclass's `reset`: the base bookkeeping is reset even when it does not call ours."""

    @functools.wraps(reset)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._before_own_write()
        reset_bookkeeping(self)
        return reset(self, *args, **kwargs)

    return own_code(wrapped)  # type: ignore[return-value]


class StateAllocationError(MemoryError):
    """A metric's constructor asked for more state memory than could be allocated."""


def explained_allocation(init: _F) -> _F:
    """A subclass's `__init__`: an allocation failure of its state names the arguments that
    sized it, instead of surfacing as the allocator's raw message."""

    @functools.wraps(init)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            init(self, *args, **kwargs)
        except (RuntimeError, MemoryError) as error:
            if isinstance(error, StateAllocationError) or not _is_allocation_failure(error):
                raise
            try:
                bound = inspect.signature(init).bind(self, *args, **kwargs).arguments
            except TypeError:
                bound = {}
            # The sizing arguments as the constructor resolved them (a default capacity
            # shows as its value), else as given.
            sizes = ", ".join(
                f"{name}={getattr(self, name, bound.get(name))!r}"
                for name in _SIZING
                if name in bound or isinstance(getattr(self, name, None), int)
            )
            raise StateAllocationError(
                f"{type(self).__name__}({sizes}) cannot allocate its state: "
                f"{str(error).strip().splitlines()[0]}. Arguments "
                f"{sizes or '(none)'} size it: use smaller values (or a binned / "
                "constant-memory mode where the metric has one)."
            ) from error

    wrapped._torchtally_wrapped = True  # type: ignore[attr-defined]
    return wrapped  # type: ignore[return-value]


#: Constructor arguments that size a metric's state, named in an allocation failure.
_SIZING = ("num_classes", "num_labels", "num_outputs", "capacity", "num_bins", "window")


def _is_allocation_failure(error: BaseException) -> bool:
    text = str(error)
    return isinstance(error, MemoryError) or "allocate" in text or "out of memory" in text


#: The methods a subclass writes plainly and the base routes (engine, checks, caching).
WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "update": _routed_update,
    "compute": _checked_compute,
    "reset": _reset_internals,
}


def error_position(index: dict[str, int], kind: str, metric: Any) -> int:
    position = index.get(kind)
    if position is None:
        raise KeyError(
            f"Argument `{kind}` must name one of {type(metric).__name__}'s error kinds "
            f"{sorted(index)}. Received: {kind!r}"
        )
    return position


def is_cat_count(runtime: Runtime, name: str) -> bool:
    """Whether `name` is the fill count of a `cat` state (merged together with it)."""
    return (
        name.endswith(COUNT_SUFFIX) and runtime.reductions.get(name[: -len(COUNT_SUFFIX)]) == "cat"
    )


def merge_tensor(mine: Tensor, theirs: Tensor, reduction: Reduction) -> None:
    theirs = theirs.to(mine.device)
    if reduction == "sum":
        mine.add_(theirs)
    elif reduction == "max":
        torch.maximum(mine, theirs, out=mine)
    else:
        torch.minimum(mine, theirs, out=mine)


def _copied(value: Any) -> Any:
    """A cached value as handed out: tensors copied, so that a caller's in-place op on what
    it got cannot change the next `compute()`."""
    if isinstance(value, Tensor):
        return value.clone()
    if isinstance(value, tuple | list):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


def _traced_value(value: Any) -> bool:
    if isinstance(value, Tensor):
        return tracing(value)
    if isinstance(value, tuple | list):
        return any(_traced_value(v) for v in value)
    if isinstance(value, dict):
        return any(_traced_value(v) for v in value.values())
    return False


def snake_case(class_name: str) -> str:
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


def cast_result(self: Any, value: Any) -> Any:
    """A compute value cast as the metric declares (`dtype=` of the last update first)."""
    if isinstance(value, Tensor) and value.is_floating_point():
        if runtime_of(self).output_dtype is not None:
            return value.to(runtime_of(self).output_dtype)
        if self.result_dtype is float:
            # cstorch returns a Python float here; while tracing it stays a tensor.
            return value if tracing(value) else float(value)
        if isinstance(self.result_dtype, torch.dtype):
            return value.to(self.result_dtype)
    return value


def check_mergeable(self: Any, other: Any) -> None:
    """Refuse, before anything is merged, a metric whose states differ in layout."""
    mine, theirs = runtime_of(self), runtime_of(other)
    for name, reduction in mine.reductions.items():
        a, b = mine.defaults[name], theirs.defaults.get(name)
        same = (
            b is not None
            and theirs.reductions[name] == reduction
            and a.dtype == b.dtype
            and (a.shape[1:] == b.shape[1:] if reduction == "cat" else a.shape == b.shape)
        )
        if not same:
            got = "no such state" if b is None else f"{tuple(b.shape)} {b.dtype}"
            raise ValueError(
                f"Argument `others` must hold metrics configured as `{self.name}`: its "
                f"state {name!r} is {tuple(a.shape)} {a.dtype}. Received: {got} "
                f"(from `{other.name}`)"
            )


def reset_bookkeeping(metric: Any) -> None:
    """What every reset resets besides the registered states: held batches, the counts, the
    cache, `dtype=` and an inherited error."""
    runtime = runtime_of(metric)
    if runtime.stage is not None:
        runtime.stage.drop()
        release_buffers(metric._buffers)
    drop_pending(metric._buffers)
    metric._buffers["_num_updates"].zero_()
    metric._buffers["_errors"].zero_()
    runtime.cached = None
    runtime.output_dtype = None
    runtime.inherited_error = None
    runtime.forward_inputs = runtime.forward_value = None
