"""A metric's runtime state: every bookkeeping field the machinery keeps beside the registered
state tensors, declared in one place.

The registered tensors (`Metric._buffers`) are the truth: values, `state_dict()`, syncs and
checkpoints read them. Everything here is either the layout of those tensors (their
reductions, initial values, which are stored as `(1,)` for a 0-d state) or a cache or mode
that must give exactly the number the plain path gives (held batches, the compute cache, host
notes of `cat` fill counts, a compiled callable, a collection's sharing). Keeping them in one
typed object, instead of keys scattered over the module's `__dict__`, lets a copy decide once
what survives it (`__getstate__`): the layout and the user's settings do; caches, which may
alias tensors a copy no longer shares, do not.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from torch import Tensor

__all__ = ["COUNT_SUFFIX", "Reduction", "Runtime", "attach", "maybe_runtime", "runtime_of"]

Reduction = Literal["sum", "max", "min", "cat"]

#: The fill count of `cat` state `name` is the state `name + COUNT_SUFFIX`.
COUNT_SUFFIX = "_count"

#: Fields a copy keeps: the state layout and the user's settings. The rest are caches.
_KEPT = (
    "reductions",
    "defaults",
    "scalars",
    "error_index",
    "inherited_error",
    "coalesce",
    "compiler",
    "output_dtype",
)


class Runtime:
    """The bookkeeping of one metric (see the module docstring)."""

    __slots__ = (
        "cached",
        "cat_fill",
        "coalesce",
        "compiler",
        "defaults",
        "depth",
        "error_index",
        "error_slots",
        "forward_inputs",
        "forward_twin",
        "forward_value",
        "inherited_error",
        "link",
        "local_states",
        "output_dtype",
        "reductions",
        "refused",
        "scalars",
        "stage",
        "synced_cat_counts",
        "views",
    )

    def __init__(self, coalesce: bool) -> None:
        #: Reduction of every registered state, in registration order.
        self.reductions: dict[str, Reduction] = {}
        #: The value `reset` restores, per state (as stored: a 0-d state as `(1,)`).
        self.defaults: dict[str, Tensor] = {}
        #: States registered 0-d, stored `(1,)` and read through a 0-d view.
        self.scalars: set[str] = set()
        #: Nesting of `update` calls (one metric's update calling another's): only the
        #: outermost one counts, converts its inputs and drops the cache.
        self.depth = 0
        #: The last `compute()` value, until the state changes (never while synced).
        self.cached: Any = None
        #: cstorch's `update(..., dtype=)`: the dtype `compute` casts to (None: the default).
        self.output_dtype: torch.dtype | None = None
        #: Whether small eager batches may be held back (metrics._coalesce).
        self.coalesce = coalesce
        # The three mechanism objects below are typed Any: their modules import this one, and
        # this module imports none of them (no import circle in metrics/, even for types).
        #: The held batches, a `_coalesce.Stage` (None: nothing staged yet).
        self.stage: Any = None
        #: A call signature (`_coalesce.Signature`) the metric refused to hold, not asked again.
        self.refused: Any = None
        #: `compile_update()`: an `_engine.Compiler`, options and callable (None: eager).
        self.compiler: Any = None
        #: Host notes of `cat` fill counts: name -> (id, data_ptr, version, fill) of the count.
        self.cat_fill: dict[str, tuple[int, int, int, int]] = {}
        #: Eager 0-d views of `(1,)` scalar states, remade when a buffer is replaced.
        self.views: dict[str, Tensor] = {}
        #: Position of each error kind (by name) in the error-count state.
        self.error_index: dict[str, int] = {}
        #: A data error seen while this metric's state was derived from a collection
        #: sibling's (kept when it left the sharing; raised by `compute` until a reset).
        self.inherited_error: str | None = None
        #: Eager `(1,)` views of the error counts, one per kind, with the buffer they view.
        self.error_slots: tuple[Tensor, tuple[Tensor, ...]] | None = None
        #: The local states while synced (between `sync` and `unsync`).
        self.local_states: dict[str, Tensor] | None = None
        #: Per-rank fill counts of synced `cat` states, for an overflow message.
        self.synced_cat_counts: dict[str, Tensor] = {}
        #: The last `forward`'s batch, kept for its value alone, that value, and the spare
        #: copy that computes it (metrics._lightning: what Lightning logs on step).
        self.forward_inputs: Any = None
        self.forward_value: Any = None
        self.forward_twin: Any = None
        #: Its tie to the collection it shares state with, a `_sharing.Link` (None: none).
        self.link: Any = None

    def invalidate(self) -> None:
        """The state changed: the cached value no longer holds."""
        self.cached = None

    def drop_caches(self) -> None:
        """Forget everything derived from the current tensors (after they were replaced)."""
        self.cached = None
        self.cat_fill.clear()
        self.views.clear()
        self.error_slots = None

    def __getstate__(self) -> dict[str, Any]:
        # Caches may hold views of tensors that a pickled copy no longer shares (plain pickle
        # stores each view's storage apart from its base's): a copy starts without them. A
        # copy of a collection member alone is in no collection (its state is its own copy);
        # a copied collection links its copied members again (MetricCollection.__setstate__).
        return {name: getattr(self, name) for name in _KEPT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state.get("coalesce", False))  # type: ignore[misc]
        for name, value in state.items():
            setattr(self, name, value)
        if self.compiler is not None:
            self.compiler = self.compiler.copy_options()


def runtime_of(module: Any) -> Runtime:
    """The runtime of a metric (made by `attach`)."""
    return module.__dict__["_runtime"]  # type: ignore[no-any-return]


def maybe_runtime(module: Any) -> Runtime | None:
    """The runtime of a metric, or None while nn.Module's own construction runs (read past
    __getattr__, which asks for it)."""
    return module.__dict__.get("_runtime")  # type: ignore[no-any-return]


def attach(module: Any, coalesce: bool) -> Runtime:
    """Give a newly constructed metric its runtime (written past nn.Module.__setattr__, which
    would look for parameters, buffers and submodules of the name first)."""
    runtime = Runtime(coalesce)
    module.__dict__["_runtime"] = runtime
    return runtime
