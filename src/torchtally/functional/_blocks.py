"""Eager CPU work over a large batch in cache-sized blocks.

An elementwise temporary of a large batch (a comparison mask, a difference, an int64 copy made
by a reduction) is a fresh allocation of megabytes per call, and on CPU writing fresh pages
costs several times the arithmetic (page faults and cache misses). Worked in blocks of about
a megabyte, the same ops reuse one cached buffer. Only eagerly on CPU: a compiled graph fuses
the temporaries away, and on an accelerator the caching allocator keeps them warm.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import tracing

__all__ = ["BLOCK_ELEMENTS", "add_pieces", "blocked", "cached_ones", "eager_at_least", "may_cache"]

#: Elements per block (a 1 MiB float32 temporary).
BLOCK_ELEMENTS = 1 << 18
#: Batches below this many elements are worked in one piece (blocking only adds dispatch).
_BLOCK_FROM = 1 << 20


def eager_at_least(tensor: Tensor, elements: int) -> bool:
    """Whether `tensor` has at least `elements` elements, outside a compiled graph: an eager
    fast path for large batches. Never while compiling, so that the size switch does not
    become a guard of the graph (a recompile each time a batch size crosses it)."""
    return not torch.compiler.is_compiling() and tensor.numel() >= elements


def blocked(
    tensor: Tensor,
    row_elements: int = 1,
    *,
    from_elements: int | None = None,
    block_elements: int | None = None,
) -> int | None:
    """Rows per block for eager CPU work over `tensor` (rows along dim 0, `row_elements`
    elements each), or None when it should be worked in one piece (below `from_elements`,
    default `_BLOCK_FROM`; blocks of about `block_elements`, default `BLOCK_ELEMENTS`)."""
    if (
        not eager_at_least(tensor, _BLOCK_FROM if from_elements is None else from_elements)
        or tensor.device.type != "cpu"
        or torch.jit.is_tracing()
        or tracing(tensor)
    ):
        return None
    size = BLOCK_ELEMENTS if block_elements is None else block_elements
    return max(1, size // max(1, row_elements))


def add_pieces(totals: tuple[Tensor, ...] | None, pieces: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """The running totals of a blocked loop: the first block's pieces themselves (no zeros
    made for them), then each later block's added to them in place."""
    if totals is None:
        return pieces
    for total, piece in zip(totals, pieces, strict=True):
        total.add_(piece)
    return totals


def may_cache(*tensors: Tensor) -> bool:
    """Whether a tensor made now (on the device of `tensors`) may be kept for later eager
    calls: not while compiling or tracing, nor under any dispatch mode (a fake tensor, an op
    counter's meta tensor made in its count), nor while a CUDA graph is captured (its memory
    is the graph's, rewritten by each replay)."""
    return not (
        torch.compiler.is_compiling()
        or torch.jit.is_tracing()
        or torch._C._len_torch_dispatch_stack()
        or tracing(*tensors)
        or (any(t.is_cuda for t in tensors) and torch.cuda.is_current_stream_capturing())
    )


def cached_ones(count: int, like: Tensor) -> Tensor:
    """`count` float64 ones on `like`'s device: a slice of a cached buffer eagerly on CPU
    (a contiguous source is faster to add than an expanded scalar), else an expanded one
    (eagerly a cached one: no fill per call)."""
    if torch.compiler.is_compiling() or torch.jit.is_tracing() or tracing(like):
        return like.new_ones(()).expand(count)
    if like.device.type != "cpu":
        one = _ONE.get(like.device)
        if one is None:
            one = like.new_ones(())
            if may_cache(like):
                _ONE[like.device] = one
        return one.expand(count)
    ones = _ONES.get("cpu")
    if ones is None or ones.shape[0] < count:
        ones = _ONES["cpu"] = torch.ones(max(count, 1 << 10), dtype=torch.float64)
    return ones[:count]


#: The cached ones of `cached_ones`, grown to the largest batch (blocked batches stay below
#: `_BLOCK` plus a row).
_ONES: dict[str, Tensor] = {}
#: A float64 one per accelerator device, expanded by `cached_ones`.
_ONE: dict[torch.device, Tensor] = {}
