"""`CatState`: a `cat` state of a metric — a preallocated buffer of rows and its fill count.

A `cat` state holds rows appended over updates (the scores AUROC sorts at compute). Its buffer
is preallocated at the capacity given to `register_state`, plus one spare row that absorbs
writes past the capacity; its fill count (the state `name + "_count"`) counts every row
appended, stored or not, so `compute` reports an overflow instead of a value over partial data.

Both tensors are registered states: the buffer is the truth, synced, merged and checkpointed as
its filled rows. Eagerly, on every device with storage (CPU, CUDA, ...), a host note of the
fill count (tied to the count tensor's identity, storage and version counter) lets an append
be one slice copy per state plus one add for every count, and a compute read only the filled
rows; any write the note did not see (a compiled step, a merge, a sync, a load, a device move)
makes it stale, and the general path (positions + `index_copy_`, or the whole capacity) runs
instead: never a different number. An eager compute renews a stale note with one read of the
count (a device sync off the CPU, as its error check already makes).

A CUDA graph replay writes the count without bumping its version, so a count written while a
CUDA graph was being captured is never noted again (each compute reads it instead).

A metric reaches its `cat` states through `Metric.cat_state(name)`; "Writing a metric" in the
docs shows the pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
from torch import Tensor
from torch.utils.weak import WeakIdKeyDictionary

from torchtally._errors import MetricValueError, tracing
from torchtally.metrics._runtime import COUNT_SUFFIX, runtime_of

__all__ = ["CatState", "common_fill", "note_fill"]

#: Devices whose tensors have storage and a version counter that each eager write bumps: there
#: an eager append may use the host note. (XLA and lazy tensors have neither: a host fill there
#: would also make each traced step's shape differ.)
_NOTED_DEVICES = frozenset({"cpu", "cuda", "meta", "mps", "xpu", "hpu"})
#: Fill counts written while a CUDA graph was captured: its replays write them unseen.
_GRAPH_WRITTEN: WeakIdKeyDictionary = WeakIdKeyDictionary()


class CatState:
    """One `cat` state of a metric (see the module docstring).

    Args:
        metric: The metric that registered it.
        name: The state's name.
    """

    __slots__ = ("_metric", "count_name", "name")

    def __init__(self, metric: Any, name: str) -> None:
        if runtime_of(metric).reductions.get(name) != "cat":
            raise KeyError(
                f"Argument `name` must name a `cat` state of {type(metric).__name__}. "
                f"Received: name={name!r}"
            )
        self._metric = metric
        self.name = name
        self.count_name = name + COUNT_SUFFIX

    # ------------------------------------------------------------------------- reading

    @property
    def buffer(self) -> Tensor:
        """The whole buffer: `capacity` rows and the spare row."""
        return cast(Tensor, self._metric._buffers[self.name])

    @property
    def count_buffer(self) -> Tensor:
        """The fill count as stored, a `(1,)` int64 tensor."""
        return cast(Tensor, self._metric._buffers[self.count_name])

    @property
    def capacity(self) -> int:
        return self.buffer.shape[0] - 1

    @property
    def count(self) -> Tensor:
        """Rows appended since the last reset (overflow included), a 0-d int64 tensor."""
        return self.count_buffer.view(())

    def rows(self) -> Tensor:
        """The buffer without its spare row: eagerly, with a current fill note, only the
        filled rows (so compute costs in proportion to the samples seen); else every row of
        the capacity (empty rows hold the registered initial value)."""
        capacity = self.capacity
        fill = self.known_fill()
        return self.buffer[: capacity if fill is None else min(fill, capacity)]

    def stored_fill(self) -> int | None:
        """In an eager compute: the rows stored (the fill, at most the capacity), from the
        note or one read of the count (a device sync off the CPU), the note renewed; None
        while tracing or compiling (use `values()` then). Never in `update`."""
        fill = self.known_fill(read=True)
        return None if fill is None else min(fill, self.capacity)

    def values(self) -> tuple[Tensor, Tensor]:
        """The rows (as `rows()`) and the number of valid ones among them, a 0-d tensor."""
        return self.rows(), self.count.clamp(max=self.capacity)

    def filled_rows(self) -> Tensor:
        """Exactly the stored rows (one host read of the fill count unless noted: not while
        tracing)."""
        fill = self.stored_fill()
        if fill is not None:
            return self.buffer[:fill]
        rows, valid = self.values()
        return rows[: int(valid)]

    def overflow(self) -> Tensor:
        """Rows seen beyond the capacity, a 0-d tensor."""
        return (self.count - self.capacity).clamp(min=0)

    # ------------------------------------------------------------------------- writing

    def append(self, values: Tensor) -> None:
        """Append `values` (along dim 0) without a host sync. Rows past the capacity are not
        stored, but counted, so `compute` raises instead of using partial data."""
        buffer = self.buffer
        fill = self.known_fill(values)
        n = values.shape[0]
        if fill is not None and fill + n <= buffer.shape[0] - 1:
            # Eager fast path: one slice copy instead of positions + index_copy_.
            buffer[fill : fill + n].copy_(values)
            self.count_buffer.add_(n)
            note_fill((self,), fill + n)
            return
        count = self.count
        positions = count + torch.arange(n, device=buffer.device)
        buffer.index_copy_(0, positions.clamp(max=buffer.shape[0] - 1), values.to(buffer.dtype))
        count.add_(n)

    @staticmethod
    def append_rows(states: Sequence[CatState], values: Sequence[Tensor]) -> None:
        """Append `values[i]` to `states[i]`, the same number of rows each (states appended
        together, whose counts always agree), without a host sync: eagerly one slice copy per
        state and one add for all the counts; else one set of positions and an `index_copy_`
        per state."""
        rows = values[0].shape[0]
        start = CatState.reserve(states, rows, *values)
        if start is not None:
            for state, value in zip(states, values, strict=True):
                state.buffer[start : start + rows].copy_(value)
            CatState.commit(states, start, rows)
            return
        first = states[0]
        last = first.buffer.shape[0] - 1  # the spare row
        positions = (first.count + torch.arange(rows, device=first.buffer.device)).clamp(max=last)
        for state, value in zip(states, values, strict=True):
            buffer = state.buffer
            buffer.index_copy_(0, positions, value.to(buffer.dtype))
        _add_to_counts(states, rows)

    @staticmethod
    def reserve(states: Sequence[CatState], rows: int, *tensors: Tensor) -> int | None:
        """The first row at which an eager update may write `rows` rows straight into each of
        `states` (their common fill), when every note is current, they agree and the rows fit
        the capacity; None when the general path must run (compiled, traced, no room...).
        After writing, call `commit`."""
        start = common_fill(states, *tensors)
        if start is None or start + rows > states[0].capacity:
            return None
        return start

    @staticmethod
    def commit(states: Sequence[CatState], start: int, rows: int) -> None:
        """After an eager update wrote `rows` rows at `start` (from `reserve`) into each of
        `states`: advance every fill count (one op for all) and note the new fill."""
        _add_to_counts(states, rows)
        note_fill(states, start + rows)

    @staticmethod
    def common_fill(states: Sequence[CatState], *tensors: Tensor) -> int | None:
        """The common fill of several `cat` states appended together in one eager call
        (their counts always agree), or None when the general path must run."""
        return common_fill(states, *tensors)

    @staticmethod
    def note_fill(states: Sequence[CatState], fill: int) -> None:
        """After an eager in-place append to `states`: each now holds `fill` rows."""
        note_fill(states, fill)

    def reset_note(self) -> None:
        """The state was just emptied (reset or registered)."""
        note_fill((self,), 0)

    @staticmethod
    def notes_of(metric: Any) -> dict[str, int]:
        """The current fill notes of `metric`'s `cat` states, by name: what a device move
        keeps (`renote`)."""
        if torch.compiler.is_compiling():
            return {}
        runtime = runtime_of(metric)
        fills = {}
        for name, note in runtime.cat_fill.items():
            count = metric._buffers.get(name + COUNT_SUFFIX)
            if count is not None and _current(note, count):
                fills[name] = note[3]
        return fills

    @staticmethod
    def renote(metric: Any, fills: dict[str, int]) -> None:
        """Note `fills` (from `notes_of`) again after the states were replaced by copies of
        the same values (a device move or a cast: `Metric._apply`), so that eager appends on
        the new device write in place from the first update."""
        for name, fill in fills.items():
            note_fill((CatState(metric, name),), fill)

    # ------------------------------------------------------------------ fill notes

    def known_fill(self, *tensors: Tensor, read: bool = False) -> int | None:
        """The host note of the fill count if it is current and the call is eager (not
        compiling, tracing or on fake tensors), else None.

        With `read=True` (compute, which reads the error counts anyway; never in `update`), a
        stale note is renewed from the count itself: one read (a device sync off the CPU).
        Then this compute, and the eager appends after it, take their fast paths again after
        a write the note did not see.
        """
        if torch.compiler.is_compiling():
            # First, so that a compiled update never reads (and guards on) the note, which
            # every eager append changes: a guard on it would recompile after each one.
            return None
        self._metric.flush()  # held batches first: their appends move the note
        count = self.count_buffer
        if count.is_cuda and _capturing((self,)):
            return None
        note = runtime_of(self._metric).cat_fill.get(self.name)
        if note is not None and _current(note, count) and not _traced(count, tensors):
            return note[3]
        if (
            not read
            or torch._C._len_torch_dispatch_stack()  # a compute being traced (make_fx, fake)
            or _traced(count, tensors)
        ):
            return None
        fill = int(count)
        note_fill((self,), fill)  # where the count may be noted
        return fill

    # ------------------------------------------------------------- checkpoints, merges

    def save(self) -> Tensor:
        """The filled rows, copied (a view would take the whole buffer into a checkpoint)."""
        return self.filled_rows().clone()

    def restore(self, rows: Tensor) -> Tensor:
        """The full buffer holding `rows` (saved filled rows) first, initial rows after."""
        metric = self._metric
        default = runtime_of(metric).defaults[self.name]
        capacity = default.shape[0] - 1
        if rows.dim() != default.dim() or rows.shape[1:] != default.shape[1:]:
            raise ValueError(
                f"Argument `state` must hold rows of shape {tuple(default.shape[1:])} for the "
                f"`cat` state {self.name!r}. Received: shape {tuple(rows.shape)}"
            )
        if rows.shape[0] > capacity:
            raise ValueError(
                f"Argument `state` must hold at most capacity={capacity} rows for the `cat` "
                f"state {self.name!r} of `{metric.name}`. Received: {rows.shape[0]} rows"
            )
        full = default.clone().to(self.buffer.device)
        full[: rows.shape[0]] = rows.to(full.dtype)
        return full

    def merge_from(self, other: CatState) -> None:
        """Append another metric's stored rows, keeping its overflow visible."""
        rows = other.filled_rows().to(self.buffer.device)
        lost = other.overflow()
        self.append(rows)
        self.count_buffer.add_(lost.to(self.count_buffer.device))

    def check_capacity(self) -> None:
        """Raise `MetricValueError` if the state saw more rows than its capacity (whatever
        `check_values` says): a value over the rows kept would silently differ from the
        value over the rows seen. One host read, skipped while tracing."""
        metric = self._metric
        capacity = self.capacity
        # With `read=True`: a stale note is renewed by the read this check makes anyway, so
        # that compute then finds it current.
        fill = self.known_fill(read=True)
        if fill is not None:
            dropped = max(0, fill - capacity)
        else:
            lost = self.overflow()
            if tracing(lost):
                return
            dropped = int(lost)
        if not dropped:
            return
        per_rank = runtime_of(metric).synced_cat_counts.get(self.name)
        if per_rank is not None:
            raise MetricValueError(self._synced_overflow_message(per_rank.tolist()))
        raise MetricValueError(self._overflow_message(capacity, dropped))

    def _overflow_message(self, capacity: int, dropped: int) -> str:
        metric = self._metric
        seen = capacity + dropped
        terms = metric.cat_overflow_terms
        if terms is None:
            return (
                f"`{metric.name}` received {seen} rows into its `cat` state {self.name!r} of "
                f"capacity {capacity}: {dropped} rows were dropped. Register it with a "
                f"capacity of at least {seen}."
            )
        rows, alternative = terms
        return (
            f"`{metric.name}` received {seen} {rows} but its buffer holds capacity={capacity}: "
            f"{dropped} {rows} were dropped. Construct it with capacity >= {seen}"
            + (f", or {alternative}." if alternative else ".")
        )

    def _synced_overflow_message(self, counts: list[int]) -> str:
        metric = self._metric
        local = (runtime_of(metric).local_states or {}).get(self.name)
        default = runtime_of(metric).defaults[self.name]
        capacity = (local.shape[0] if local is not None else default.shape[0]) - 1
        over = [rank for rank, count in enumerate(counts) if count > capacity]
        dropped = sum(count - capacity for count in counts if count > capacity)
        return (
            f"`{metric.name}` received {sum(counts)} rows over {len(counts)} ranks into its "
            f"`cat` state {self.name!r} of capacity {capacity} per rank; rank(s) {over} saw "
            f"more (up to {max(counts)} rows): {dropped} rows were dropped. Register it with "
            f"a capacity of at least {max(counts)}."
        )


def note_fill(states: Sequence[CatState], fill: int) -> None:
    """Remember on the host that each of `states` holds `fill` rows now (where a note can be
    trusted: see `_notable`)."""
    if torch.compiler.is_compiling():
        return  # a compiled write bumps the count's version: the note goes stale anyway
    for state in states:
        notes = runtime_of(state._metric).cat_fill
        count = state.count_buffer
        if _notable(count):
            notes[state.name] = (id(count), count.data_ptr(), count._version, fill)
        else:
            notes.pop(state.name, None)


def _notable(count: Tensor) -> bool:
    """Whether a host note of `count` can be trusted: a device with storage and a version
    counter (not an inference tensor, which has none), never written by a CUDA graph."""
    if count.device.type not in _NOTED_DEVICES or count.is_inference():
        return False
    if count.is_cuda:
        if count in _GRAPH_WRITTEN:
            return False
        if torch.cuda.is_current_stream_capturing():
            _GRAPH_WRITTEN[count] = True
            return False
    return True


def _capturing(states: Sequence[CatState]) -> bool:
    """While a CUDA graph is captured, no append may use a note (a slice at a host fill would
    be replayed at that fill): the counts are marked, their notes dropped, for good."""
    if not torch.cuda.is_current_stream_capturing():
        return False
    for state in states:
        _GRAPH_WRITTEN[state.count_buffer] = True
        runtime_of(state._metric).cat_fill.pop(state.name, None)
    return True


def _add_to_counts(states: Sequence[CatState], rows: int) -> None:
    counts = [state.count_buffer for state in states]
    if len(counts) == 1:
        counts[0].add_(rows)
    else:
        torch._foreach_add_(counts, rows)  # one dispatch for all the counts


def common_fill(states: Sequence[CatState], *tensors: Tensor) -> int | None:
    """The common fill of several `cat` states appended together, when every note is current
    and they agree (one check of the call for all of them); None otherwise."""
    if torch.compiler.is_compiling():
        return None
    fill: int | None = None
    counts = []
    if states[0].count_buffer.is_cuda and _capturing(states):
        return None
    for state in states:
        if fill is None:
            state._metric.flush()
        note = runtime_of(state._metric).cat_fill.get(state.name)
        count = state.count_buffer
        if note is None or not _current(note, count) or (fill is not None and note[3] != fill):
            return None
        fill = note[3]
        counts.append(count)
    if torch.jit.is_tracing() or tracing(*counts, *tensors):
        return None
    return fill


def _current(note: tuple[int, int, int, int], count: Tensor) -> bool:
    return (
        note[0] == id(count)
        and note[2] == count._version
        and note[1] == count.data_ptr()
        and not count.is_inference()
    )


def _traced(count: Tensor, tensors: tuple[Tensor, ...]) -> bool:
    return torch.jit.is_tracing() or tracing(count, *tensors)
