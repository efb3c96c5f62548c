"""Reused float64 scratch buffers for blocked eager CPU sums (MSE, MAE, R2, weighted mean).

A blocked sum converts each block of a large float32 batch to float64 before the arithmetic.
A fresh float64 block per call is an allocation of half a megabyte or more, which the CPU
allocator often hands back to the system and page-faults in again on the next call: R2 at
2^18 elements took twice as long with fresh blocks as with these buffers. Only the blocked
path (eager, CPU, never while tracing or compiling) uses them; each thread has its own, so
two threads never share a buffer.
"""

from __future__ import annotations

import threading

import torch
from torch import Tensor

__all__ = ["float64_scratch", "leading", "scratch_allowed"]

_LOCAL = threading.local()


def float64_scratch(count: int, elements: int) -> list[Tensor]:
    """`count` float64 CPU buffers of at least `elements` elements each, this thread's own,
    valid until its next call (their contents are garbage)."""
    buffers: list[Tensor] = getattr(_LOCAL, "buffers", [])
    if len(buffers) < count or buffers[0].numel() < elements:
        size = max(elements, buffers[0].numel() if buffers else 0)
        # Normal tensors even when first asked for inside `torch.inference_mode()`: an inference
        # tensor could not be written by a later call outside it (an eval loop under inference
        # mode, then a training-time update, raised).
        with torch.inference_mode(False):
            buffers = [
                torch.empty(size, dtype=torch.float64) for _ in range(max(count, len(buffers)))
            ]
        _LOCAL.buffers = buffers
    return buffers[:count]


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
