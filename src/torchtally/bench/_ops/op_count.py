"""`OpCount`, the synaptic operations of layer calls, and the helpers that count them.

Counts are int64 tensors so that a whole run accumulates on the device; `dense` is whatever the
shapes give (an int, or a tensor when a convolution's padding decides it). The calls of a layer
with same-shaped inputs (a spiking network's time steps) are stacked and counted together:
a few tensor ops per layer and batch instead of a few per call.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import NamedTuple, final

import torch
from torch import Tensor

from torchtally.bench._ops.counting import count_true

__all__ = ["OpCache", "OpCount", "spike_valued_calls", "split_by_spiking", "stack_by_shape"]


@final
class OpCount(NamedTuple):
    """Operations of one or more calls of a layer.

    Attributes:
        macs: Effective multiply-accumulates (non-spike inputs), a 0-d int64 tensor.
        acs: Effective accumulates (spike inputs), a 0-d int64 tensor.
        dense: Every operation the layer performs, zeros included.
    """

    macs: Tensor
    acs: Tensor
    dense: int | Tensor


def spike_valued_calls(calls: Tensor, nonzero: Tensor) -> Tensor:
    """Per call, whether every input value is 0, 1 or -1: NeuroBench's test for spike input
    (then the call's multiply-accumulates are accumulates). A bool tensor, so no host read.

    It holds when every non-zero value has magnitude 1; counting those against the non-zero
    counts the caller already has takes three passes over the input instead of six.

    Args:
        calls: Inputs of `K` calls stacked on a leading dimension.
        nonzero: `(K,)` counts of their non-zero values (NaN counts as non-zero).

    Returns:
        `(K,)` bool tensor.

    Example:
        >>> x = torch.tensor([[0.0, 1.0, -1.0], [0.0, 0.5, 1.0]])
        >>> spike_valued_calls(x, (x != 0).sum(1)).tolist()
        [True, False]
    """
    magnitude_one = count_true((calls.abs() == 1).reshape(calls.shape[0], -1), dim=1)
    return magnitude_one == nonzero


def split_by_spiking(effective: Tensor, spiking: Tensor) -> tuple[Tensor, Tensor]:
    """Route effective operations to MACs or ACs by the spike test, elementwise.

    Args:
        effective: int64 operation counts.
        spiking: bool tensor broadcastable to `effective`.

    Returns:
        `(macs, acs)`, each summed to a 0-d tensor.

    Example:
        >>> split_by_spiking(torch.tensor([3, 4]), torch.tensor([True, False]))
        (tensor(4), tensor(3))
    """
    zero = torch.zeros_like(effective)
    macs = torch.where(spiking, zero, effective).sum()
    acs = torch.where(spiking, effective, zero).sum()
    return macs, acs


@final
class OpCache:
    """Per-run memo of what a layer's counts derive from its weights or input shape.

    Weight-derived entries are keyed by the weight tensor's identity and version counter,
    which every in-place change bumps, so a weight edited between batches is recounted.

    Example:
        >>> cache, weight = OpCache(), torch.eye(2)
        >>> cache.for_weight("fan_out", weight, lambda: (weight != 0).sum(0)).tolist()
        [1, 1]
    """

    def __init__(self) -> None:
        self._entries: dict[Hashable, Tensor] = {}

    def for_weight(self, kind: str, weight: Tensor, compute: Callable[[], Tensor]) -> Tensor:
        """The cached `compute()` for this weight, as it is now.

        Args:
            kind: What is computed (one weight can have several entries).
            weight: The weight it derives from.
            compute: Computes it.

        Returns:
            The value.
        """
        key = (kind, id(weight), weight.data_ptr(), weight._version)
        return self.get(key, compute)

    def get(self, key: Hashable, compute: Callable[[], Tensor]) -> Tensor:
        """The cached `compute()` under `key`.

        Args:
            key: Any hashable key.
            compute: Computes the value on a miss.

        Returns:
            The value.
        """
        if key not in self._entries:
            self._entries[key] = compute()
        return self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


def stack_by_shape(tensors: list[Tensor]) -> list[Tensor]:
    """Stack tensors of equal shape, dtype and device on a new leading dimension.

    Args:
        tensors: The inputs of a layer's calls, in call order.

    Returns:
        One stacked tensor per distinct (shape, dtype, device), in order of first appearance.

    Example:
        >>> [t.shape for t in stack_by_shape([torch.ones(2), torch.ones(3), torch.ones(2)])]
        [torch.Size([2, 2]), torch.Size([1, 3])]
    """
    groups: dict[tuple[object, ...], list[Tensor]] = {}
    for tensor in tensors:
        groups.setdefault((tensor.shape, tensor.dtype, tensor.device), []).append(tensor)
    return [g[0].unsqueeze(0) if len(g) == 1 else torch.stack(g) for g in groups.values()]
