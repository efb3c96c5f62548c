"""Eager coalescing of small updates: a row-additive metric holds back its small eager batches
in a preallocated staging buffer and runs its update once over many of them.

Why: on a CPU, an eager update of a small batch costs the Python dispatch of its 10-20 tensor
ops (1-3 µs each), not arithmetic: 64 rows cost about what 1,000 do. A metric whose update is
row-additive (updating with two batches leaves the same state as updating with their
concatenation: sums of per-row statistics, counts, appended rows) can therefore copy each small
batch into a buffer (one op per input) and update once per few thousand rows.

Invariants:
- The state tensors stay the single source of truth: every read of a state (an attribute,
  `compute`, `state_dict`, a sync, a merge, a move, a copy, `num_updates`) applies the held
  batches first (`Metric.flush`), and `reset` drops them.
- A metric's `_buffers` is a `StateBuffers`, whose eager reads apply held batches first: code
  that reads the buffers directly (a parent module's `buffers()`, a test) sees them too.
- A batch is held only when a batch of the same signature (dtypes, trailing shapes, device)
  already went through the metric's own update, whose argument checks look at dtypes and shapes
  only: so a held batch would have passed them too, and a bad call still raises at the call.
  Value checks count into the state and raise at `compute` either way.
- Only plain eager CPU calls are held: not while compiling or tracing, not under a dispatch mode
  (FakeTensorMode, make_fx, FlopCounterMode), not with keyword arguments, not for metrics in a collection
  (whose members may share state), and only where the metric's `_coalescible` agrees (it refuses
  inputs whose meaning depends on the whole batch, e.g. scores read as logits when any is
  outside [0, 1]).
- Updates inside a compiled step go straight to the state. Sums commute, so held batches
  applied later give the same state; appended rows may come in another order, which no
  order-invariant statistic (AUROC, AP) sees.
- Other traced or compiled reads see the held batches: under make_fx, a dispatch mode or
  torch.jit.trace they are applied as plain eager work (`outside_tracing`), and a compiled read
  applies them in its graph, guarded on the fill it applies.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

if TYPE_CHECKING:
    from torchtally.metrics._runtime import Runtime

__all__ = [
    "Stage",
    "StateBuffers",
    "count_update",
    "cycle_started",
    "drop_pending",
    "enter_traced_update",
    "exit_traced_update",
    "hold",
    "in_compiled_update",
    "outside_tracing",
    "plain_eager",
    "release_buffers",
    "rows_for",
    "signature",
    "updating",
]

#: Elements of the widest input a staging buffer holds: 1 MiB of float32 scores, within this
#: CPU's 2 MiB L2 while the update reads it back. Measured against 2^16 and 2^17 on 1024x10
#: class scores: 23 vs 30 and 27 µs per held call (the update's fixed ops spread over 25
#: calls, not 6), and 2^19 is slower again at batch 64 (the copies leave the cache).
BUDGET = 1 << 18
#: A batch is held only if at least this many of its size fit in the buffer; a larger batch
#: already amortizes the per-op cost and would only pay the extra copy.
MIN_CALLS = 4
#: Hence no input of a held batch has more elements than this.
HELD_ELEMENTS = BUDGET // MIN_CALLS

#: One input's (dtype, trailing shape, whether it is 0-d) and the device of the first.
Signature = tuple[Any, ...]


def signature(args: tuple[Any, ...]) -> tuple[Signature, int] | None:
    """The staging signature of a call and its number of rows, or None when the call cannot
    be staged: a non-tensor, a non-CPU or autograd-tracked tensor, or unequal leading sizes."""
    parts = []
    rows = -1
    for value in args:
        if type(value) is not Tensor or not value.is_cpu or value.requires_grad:
            return None
        shape = value.shape
        if shape:
            n, trailing = shape[0], shape[1:]
        else:
            n, trailing = 1, None
        if n != rows and rows != -1:
            return None
        rows = n
        parts.append((value.dtype, trailing))
    return (tuple(parts), rows) if parts else None


class StateBuffers(dict[str, Any]):
    """A metric's `_buffers`: while it holds batches (`held` is the metric), an eager read of
    it applies them first, so no reader can see a state without them.

    It also keeps the update count of plain eager updates on the host (`pending`, added to the
    `_num_updates` tensor by the first read of it, or of the buffers as a whole): on a GPU an
    `add_` per update is a kernel launch, for bookkeeping that is read once per evaluation.
    The tensor stays the truth for everything that reads it (compiled steps, syncs,
    checkpoints, copies), because each of those reads it through here.

    Always this type, held or not: compiled code guards on the type of `_buffers`, and one
    that changed with every held cycle would recompile. An update traced into a compiled step
    never applies held batches (nor looks at `held`, which would be guarded on): it adds to
    the state as it is, sums commute, and the held batches go in later. Any other compiled read
    applies them in its graph, under guards on the fill it applies (a recompile when they
    differ, never a stale or doubled value).
    """

    __slots__ = ("held", "pending")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.held: Any = None
        self.pending = 0

    def _apply_held(self, key: str = "_num_updates") -> None:
        # The host count only for a read of the count itself: an update reads its states
        # through here, and applying the count there would cost the kernel it saves.
        if not in_compiled_update():
            metric = self.held
            if metric is not None:
                metric.flush()
            if self.pending and key == "_num_updates":
                self.count_pending()

    def count_pending(self) -> None:
        """Add the host-counted updates to the `_num_updates` tensor: in a compiled read, in
        its graph (guarded on the count); anywhere else as plain eager work, as held batches
        are (a recorded add would count them again at every replay of the trace)."""
        pending, self.pending = self.pending, 0
        if torch.compiler.is_compiling():
            dict.__getitem__(self, "_num_updates").add_(pending)
            return
        with outside_tracing():
            dict.__getitem__(self, "_num_updates").add_(pending)

    def __getitem__(self, key: str) -> Any:
        # The eager test inline: an update reads several states, each through here.
        if torch.compiler.is_compiling():
            self._apply_held(key)
        else:
            metric = self.held
            if metric is not None:
                metric.flush()
            if self.pending and key == "_num_updates":
                self.count_pending()
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self._apply_held(key)
        return dict.get(self, key, default)

    def items(self) -> Any:
        self._apply_held()
        return dict.items(self)

    def values(self) -> Any:
        self._apply_held()
        return dict.values(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A copy holds nothing (its metric flushed before copying) and is a plain map of names
        # to tensors until its metric adopts it.
        if self.pending:
            self.count_pending()
        return (StateBuffers, (dict(dict.items(self)),))


def count_update(buffers: dict[str, Any], calls: int = 1) -> None:
    """Outermost updates ran: counted on the host in plain eager code, else in the tensor (a
    traced or inspected run records the `add_`, so that its replay counts too)."""
    if type(buffers) is StateBuffers and plain_eager():
        buffers.pending += calls
    else:
        buffers["_num_updates"].add_(calls)


def drop_pending(buffers: dict[str, Any]) -> None:
    """Forget the host-counted updates (a reset zeroes the count)."""
    if type(buffers) is StateBuffers:
        buffers.pending = 0


def plain_eager() -> bool:
    """Whether ops run as plain eager work: not compiling, not traced by torch.jit, and under
    no dispatch mode other than ones that only watch eager work (a mode says so with a
    class attribute `torchtally_observer = True`, e.g. an op counter)."""
    if torch.compiler.is_compiling() or torch._C._is_tracing():
        return False
    if not torch._C._len_torch_dispatch_stack():
        return True
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return all(getattr(m, "torchtally_observer", False) for m in _get_current_dispatch_mode_stack())


#: How many updates are being traced into a compiled graph right now (see `updating`).
_COMPILED_UPDATES = [0]


@contextlib.contextmanager
def updating() -> Iterator[None]:
    """Mark an update being traced into a compiled graph: its reads of the state skip the held
    batches (see `StateBuffers`)."""
    enter_traced_update()
    try:
        yield
    finally:
        exit_traced_update()


def enter_traced_update() -> None:
    """`updating` without a context manager, for the traced update path (a generator-based
    one adds guards on contextlib's internals to every compiled step)."""
    _COMPILED_UPDATES[0] += 1


def exit_traced_update() -> None:
    """The end of `enter_traced_update`'s mark."""
    _COMPILED_UPDATES[0] -= 1


def in_compiled_update() -> bool:
    """Whether the caller is an update traced into a compiled graph (False in eager code)."""
    return torch.compiler.is_compiling() and _COMPILED_UPDATES[0] > 0


@contextlib.contextmanager
def outside_tracing() -> Iterator[None]:
    """Plain eager execution for the block, even inside make_fx, another dispatch mode or
    torch.jit.trace (a no-op in plain eager code). Not for Dynamo: there the flush is traced
    with guards on the fill it applies, so a graph replays it only for a matching fill."""
    if not torch._C._len_torch_dispatch_stack() and not torch._C._is_tracing():
        yield
        return
    from torch.utils._python_dispatch import _disable_current_modes

    tracer = torch._C._get_tracing_state()
    torch._C._set_tracing_state(None)  # type: ignore[attr-defined]  # untyped in the stubs
    try:
        with _disable_current_modes():
            yield
    finally:
        torch._C._set_tracing_state(tracer)  # type: ignore[attr-defined]


def release_buffers(buffers: dict[str, Any]) -> None:
    """The held cycle of these buffers' metric ended (flushed or reset)."""
    if type(buffers) is StateBuffers:
        buffers.held = None


class Stage:
    """The held batches of one metric: a buffer per input, rows filled, calls held."""

    __slots__ = (
        "body",
        "buffers",
        "calls",
        "checks",
        "fill",
        "largest",
        "rows",
        "signature",
        "slots",
    )

    def __init__(
        self,
        body: Callable[..., Any],
        key: Signature,
        args: tuple[Tensor, ...],
        largest: int,
    ) -> None:
        self.rows = rows_for(key)
        #: The most rows of a batch held (`largest_held`).
        self.largest = largest
        self.body = body
        self.signature = key
        # Per input: its dtype, number of dimensions and trailing sizes, in the form
        # `take_matching` tests fastest (`shape[1:]` makes a torch.Size, ~0.7 µs an input).
        self.checks = tuple(
            (dtype, 0 if trailing is None else len(trailing) + 1, tuple(trailing or ()))
            for dtype, trailing in key
        )
        # Plain tensors even when the first batch came under inference_mode: an inference
        # tensor could not be written by a later call made outside it.
        with torch.inference_mode(False):
            self.buffers = tuple(
                torch.empty((self.rows, *a.shape[1:]) if a.dim() else (self.rows,), dtype=a.dtype)
                for a in args
            )
        self.slots: dict[tuple[int, int], tuple[Tensor, ...]] = {}
        self.fill = 0
        self.calls = 0

    def take(self, args: tuple[Tensor, ...], n: int) -> None:
        start = self.fill
        # The slice views of a slot are made once: with batches of one size the slots repeat,
        # and a copy into a ready view is one dispatch where slicing first is two.
        slot = self.slots.get((start, n))
        if slot is None:
            slot = self.slots[(start, n)] = tuple(b[start : start + n] for b in self.buffers)
        for view, value in zip(slot, args, strict=True):
            view.copy_(value)
        self.fill = start + n
        self.calls += 1

    def take_matching(self, args: tuple[Any, ...]) -> bool:
        """Hold `args` if they are plain CPU tensors of this stage's signature with room left
        (what `hold` decides, without building the call's signature: the loop of equal
        batches that coalescing is for); False for anything else, which takes `hold`."""
        checks = self.checks
        if len(args) != len(checks):
            return False
        rows = -1
        for value, (dtype, dims, trailing) in zip(args, checks, strict=True):
            if (
                type(value) is not Tensor
                or value.dtype is not dtype
                or not value.is_cpu
                or value.requires_grad
            ):
                return False
            shape = value.shape
            if len(shape) != dims:
                return False
            if dims == 0:
                n = 1
            else:
                n = shape[0]
                if dims == 2:
                    if shape[1] != trailing[0]:
                        return False
                elif dims > 2 and shape[1:] != trailing:
                    return False
            if n != rows and rows != -1:
                return False
            rows = n
        start = self.fill
        if rows > self.largest or start + rows > self.rows:
            return False
        slot = self.slots.get((start, rows))
        if slot is None:  # `take` makes it (and copies)
            self.take(args, rows)
            return True
        for view, value in zip(slot, args, strict=True):
            view.copy_(value)
        self.fill = start + rows
        self.calls += 1
        return True

    def release(self) -> tuple[tuple[Tensor, ...], int] | None:
        """The held rows (views of the buffers) and the calls they came from; empties it."""
        if not self.calls:
            return None
        fill, calls = self.fill, self.calls
        self.fill = self.calls = 0
        return tuple(b[:fill] for b in self.buffers), calls

    def drop(self) -> None:
        self.fill = self.calls = 0


def hold(metric: Any, runtime: Runtime, args: tuple[Any, ...]) -> tuple[bool, Signature | None]:
    """Hold the call's batch back if it can be: `(True, None)`. Else apply what is held and
    return `(False, key)`, where `key` is the signature to stage from once the caller's
    direct update of this batch succeeds (None: do not stage)."""
    stage = runtime.stage
    # A batch with an input larger than any held batch's may be (whatever its rows, each has
    # at least that input's elements per row) is not held: it skips building the signature,
    # which every call of an evaluation of large batches would otherwise pay.
    limit = metric.max_held_elements
    cap = HELD_ELEMENTS if limit is None else min(limit, HELD_ELEMENTS)
    found = None if any(type(a) is Tensor and a.numel() > cap for a in args) else signature(args)
    if found is None:
        if stage is not None:
            metric.flush()
        return False, None
    key, n = found
    if stage is not None and stage.signature == key:
        if n > stage.largest:
            metric.flush()
            return False, None
        if stage.fill + n > stage.rows:
            metric.flush()
        stage.take(args, n)
        if stage.calls == 1:
            cycle_started(metric)
        return True, None
    if stage is not None:
        metric.flush()
        runtime.stage = None
    if n > largest_held(key, metric.max_held_elements) or runtime.refused == key:
        return False, None  # too large a batch to gain (no allocation), or refused before
    if not metric._coalescible(args):
        runtime.refused = key
        return False, None
    return False, key


def cycle_started(metric: Any) -> None:
    """The metric's stage took the first batch of a cycle: from now reads of its state flush."""
    buffers = metric._buffers
    if type(buffers) is StateBuffers:
        buffers.held = metric
    else:  # replaced by code that does not know (it gets no guarantee): apply now
        metric.flush()


def rows_for(key: Signature) -> int:
    """How many rows a staging buffer for signature `key` holds (`BUDGET` over its widest
    input's elements per row)."""
    return BUDGET // max(_widest(key), 1)


def largest_held(key: Signature, limit: int | None) -> int:
    """The most rows of a batch of signature `key` that is held back: at least `MIN_CALLS`
    such batches fill the buffer, and it has at most `limit` elements (the metric's
    `max_held_elements`) in its widest input."""
    rows = rows_for(key) // MIN_CALLS
    return rows if limit is None else min(rows, limit // max(_widest(key), 1))


def _widest(key: Signature) -> int:
    """The most elements per row of any input of signature `key`."""
    return max(1 if trailing is None else math.prod(trailing) for _, trailing in key)
