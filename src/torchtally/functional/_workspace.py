"""Reused scratch buffers for blocked eager CPU work (MSE, MAE, R2, weighted mean).

A blocked sum converts each block of a large float32 batch to float64 before the arithmetic.
A fresh buffer per call is an allocation of half a megabyte or more, which the CPU allocator
often hands back to the system and page-faults in again on the next call: R2 at 2^18 elements
took twice as long with fresh blocks as with these buffers. Only eager CPU paths (never while
tracing or compiling) use them; each thread has its own, one set per dtype, so two threads never
share a buffer.
"""

from __future__ import annotations

import threading

import torch
from torch import Tensor

__all__ = ["float64_scratch", "leading", "scratch", "scratch_allowed"]

_LOCAL = threading.local()


def scratch(dtype: torch.dtype, count: int, elements: int) -> list[Tensor]:
    """`count` CPU buffers of `dtype` of at least `elements` elements each, this thread's own,
    valid until its next call for that dtype (their contents are garbage)."""
    pool: dict[torch.dtype, list[Tensor]] = _LOCAL.__dict__.setdefault("pools", {})
    buffers = pool.get(dtype, [])
    if len(buffers) < count or buffers[0].numel() < elements:
        size = max(elements, buffers[0].numel() if buffers else 0)
        # Normal tensors even when first asked for inside `torch.inference_mode()`: an inference
        # tensor could not be written by a later call outside it (an eval loop under inference
        # mode, then a training-time update, raised).
        with torch.inference_mode(False):
            buffers = [torch.empty(size, dtype=dtype) for _ in range(max(count, len(buffers)))]
        pool[dtype] = buffers
    return buffers[:count]


def float64_scratch(count: int, elements: int) -> list[Tensor]:
    """`scratch` of float64: the blocked float64 sums' block copies."""
    return scratch(torch.float64, count, elements)


def scratch_allowed(*tensors: Tensor) -> bool:
    """Whether a blocked sum may copy `tensors` into the scratch buffers: not when autograd
    records them. A copy from a tensor that requires grad makes the shared buffer a node of its
    graph, and every later sum of this thread (a metric's update included) would then carry
    a graph; the next block's copy would also overwrite what the backward pass needs. Those
    calls take the unblocked path, differentiable through fresh float64 copies."""
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))


def leading(tensor: Tensor, size: int) -> Tensor:
    """`tensor[:size]`, or `tensor` itself when that is all of it: a slice costs a dispatch
    (about 1-2 µs), and a batch in one block with a buffer of its size needs none."""
    return tensor if tensor.shape[0] == size else tensor[:size]
