"""Error counts kept in a metric's own state (issue 26), for the class-count family.

The fused updates (`functional/classification/_fused.py`) count invalid labels and non-finite
scores in bins of the statistic's own state, filled by the same scatter as the statistic, so
the counts cannot also be in the base's `_errors` buffer without an op per update. A metric
using this mixin keeps every count of its kinds in its state instead: the bins of the fused
update plus one slot per kind (in `error_kinds` order, at the start of the state) that
`record_errors` adds to, so the other update paths record as before. Its `_errors` buffer
stays zero, and:

- `check_errors` reads the state with one host read (no op: the state is small; a large one
  has its error views gathered by one `cat` first) and raises as the base does, inherited
  errors of a collection first;
- reading `metric._errors` gives the counts by kind (int64), as for any other metric;
- a derived member of a collection takes its source's counts with the state (`load_derived`).

Sums, merges, syncs, resets and checkpoints need nothing: the counts are part of a `sum` state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import tracing
from torchtally.metrics._base import Metric

__all__ = ["HeldErrors"]

#: Up to this many state elements, `check_errors` reads the whole state (no op); above, it
#: gathers the error views with one `cat` first (a large confusion matrix).
_READ_WHOLE_UP_TO = 1 << 16


def _select(position: int) -> Callable[[Tensor], Tensor]:
    def select(state: Tensor) -> Tensor:
        return state[position]

    return select


class HeldErrors(Metric):
    """Mixin of the metrics whose error counts live in their state (see the module
    docstring). The flat state `_held_state()` starts with one slot per error kind;
    subclasses implement `_held_totals` and `_held_device_totals`. A subclass that keeps its
    counts in `_errors` after all (a layout without bins) returns None from `_held_state`."""

    #: The host copy of the state while `check_errors` runs (what `_errors` reads then).
    _host_counts: list[float] | None = None
    #: `(id, data_ptr, version, host copy)` of the state last checked without an error: a
    #: `compute` right after its check may take numbers from the copy instead of ops.
    _checked: tuple[int, int, int, list[float]] | None = None
    #: Eager views of the state, by key (see `_state_view`).
    _view_cache: dict[str, Tensor] | None = None

    def _held_state(self) -> Tensor | None:
        """The flat float64 state whose first `len(error_kinds)` elements are the slots; None
        when the counts are in `_errors` (the base's behavior)."""
        return None

    def _held_totals(self, values: list[float]) -> list[float]:
        """The count of each kind, from the host copy `values` of the flat state (or of the
        views `_held_views` gives, concatenated)."""
        raise NotImplementedError

    def _held_views(self, state: Tensor) -> list[Tensor]:
        """For a large state: the views holding every count, read after one `cat` (in this
        order, handed to `_held_totals`) instead of the whole state."""
        return [state]

    def _held_device_totals(self, state: Tensor) -> Tensor:
        """`(K,)` float64 counts by kind on the state's device (tensor ops, no host read)."""
        raise NotImplementedError

    def held_error_counts(self) -> Tensor:
        """The data errors counted so far by kind (`error_kinds` order), as an int64 tensor on
        the state's device, without a host read: what `_errors` holds for a metric that
        counts there."""
        errors: Tensor = self._buffers["_errors"]  # type: ignore[assignment]
        state = self._held_state()
        if state is None:
            return errors.clone()
        self.flush()
        return errors + self._held_device_totals(state).to(torch.int64)

    # -------------------------------------------------------------------------- the base's API

    def record_errors(self, **counts: Tensor | None) -> None:
        state = self._held_state()
        if state is None:
            super().record_errors(**counts)
            return
        kinds = list(self.error_kinds)
        present = []
        for kind, count in counts.items():
            if kind not in kinds:
                raise KeyError(
                    f"Argument `{kind}` must name one of {type(self).__name__}'s error kinds "
                    f"{sorted(kinds)}. Received: {kind!r}"
                )
            if count is not None:
                present.append((kinds.index(kind), count))
        if not present:
            return
        if state.is_cpu and not torch.compiler.is_compiling():
            # Eager CPU: one add_ per count into a cached view of its slot.
            for position, count in present:
                self._state_view(state, f"slot {position}", _select(position)).add_(count)
            return
        slots = state[: len(kinds)]
        present.sort(key=lambda pair: pair[0])
        leading = len(present)
        if leading >= 2 and present[-1][0] == leading - 1:
            # Kinds 0..k-1 (the common call): one stack and one add_, as the base does.
            slots[:leading].add_(torch.stack([count for _, count in present]))
            return
        for position, count in present:
            slots[position].add_(count)

    def check_errors(self) -> None:
        state = self._held_state()
        self._checked = None
        if state is None or not self.error_kinds or tracing(state):
            super().check_errors()
            return
        whole = state.numel() <= _READ_WHOLE_UP_TO
        source = state if whole else torch.cat(self._held_views(state))
        host: list[float] = source.detach().tolist()  # the one host read, at compute time only
        # The base raises: an inherited error first, then the counts, which it reads as
        # `self._errors` (answered from this copy while it runs).
        self._host_counts = host
        try:
            super().check_errors()
        finally:
            self._host_counts = None
        if whole:
            self._checked = (id(state), state.data_ptr(), state._version, host)

    def _checked_copy(self, state: Tensor) -> list[float] | None:
        """The host copy of `state` made by the `check_errors` just before (the compute
        wrapper runs it first), if `state` is unchanged since; taken once."""
        checked, self._checked = self._checked, None
        if checked is None or tracing(state):
            return None
        if checked[:3] != (id(state), state.data_ptr(), state._version):
            return None
        return checked[3]

    def __getattr__(self, name: str) -> Any:
        if name == "_errors" and self._held_ready():
            host = self._host_counts
            if host is not None:
                # made on the host from the copy: no op and no second read
                return torch.tensor([int(n) for n in self._held_totals(host)], dtype=torch.int64)
            return self.held_error_counts()
        return super().__getattr__(name)

    # ------------------------------------------------------------------------------ helpers

    def _state_view(self, state: Tensor, key: str, make: Callable[[Tensor], Tensor]) -> Tensor:
        """`make(state)`, a view of the flat state, cached eagerly (an indexing costs a
        microsecond of Python per call on the CPU paths). A cached view is used only while
        it views this very state (a move, a copy or a load replaces it)."""
        if torch.compiler.is_compiling():
            return make(state)
        cache = self._view_cache
        if cache is None:
            cache = self._view_cache = {}
        view = cache.get(key)
        if view is None or view._base is not state:
            view = cache[key] = make(state)
        return view

    def _held_ready(self) -> bool:
        try:
            return self._held_state() is not None
        except (AttributeError, KeyError):  # during construction
            return False
