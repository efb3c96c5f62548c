"""Synaptic operations of Linear and Conv layers, as NeuroBench 2.3.0 counts them.

NeuroBench binarises a copy of the layer (non-zero weights to 1, bias to 0), runs it on the
binarised input and sums the output: the number of products whose weight and input are both
non-zero. "Dense" does the same with every weight and input set to 1. The sums factor, so they
are computed here without copying the layer or running it at full width:

* Linear: sum over input features of (non-zero inputs) x (non-zero weights leaving it).
* Conv: one convolution of the binary input summed over the call's samples with the binary
  weight summed over each group's output channels (one sample and one output channel per
  group instead of all of them).
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import Tensor, nn

from torchtally.bench._ops.counting import count_true
from torchtally.bench._ops.op_count import OpCache, OpCount, spike_valued_calls, split_by_spiking

__all__ = ["conv_ops", "linear_ops"]

_FLOAT32_EXACT = 2**24  # integers up to this are exact in float32
_TF32_EXACT = 2**11  # ... and up to this in TF32, which CUDA convolutions may use


def linear_ops(layer: nn.Linear, calls: Tensor, cache: OpCache) -> OpCount:
    """Operations of calls of a Linear layer.

    Args:
        layer: The layer.
        calls: The inputs of `K` calls stacked on a leading dimension, `(K, ..., in_features)`.
        cache: Per-run memo of the weight's non-zeros per input feature.

    Returns:
        The calls' `OpCount`.

    Example:
        >>> layer = nn.Linear(2, 3)
        >>> linear_ops(layer, torch.tensor([[[1.0, 0.0]]]), OpCache()).dense
        6
    """
    weight = layer.weight
    calls_count = calls.shape[0]
    active_inputs = count_true((calls != 0).reshape(calls_count, -1, layer.in_features), dim=1)
    fan_out = cache.for_weight("fan_out", weight, lambda: count_true(weight != 0, dim=0))
    effective = (active_inputs * fan_out).sum(1)
    spiking = spike_valued_calls(calls, active_inputs.sum(1))
    macs, acs = split_by_spiking(effective, spiking)
    return OpCount(macs, acs, calls.numel() * layer.out_features)


def conv_ops(layer: nn.Conv1d | nn.Conv2d | nn.Conv3d, calls: Tensor, cache: OpCache) -> OpCount:
    """Operations of calls of a Conv1d/2d/3d layer.

    Args:
        layer: The layer.
        calls: The inputs of `K` calls stacked on a leading dimension: `(K, N, C, *spatial)`
            for batched calls, `(K, C, *spatial)` for unbatched ones.
        cache: Per-run memo of the weight summed per group, and of the dense count per
            sample for each input shape (it depends on the padding, so it is computed once,
            by a convolution of ones).

    Returns:
        The calls' `OpCount`.

    Example:
        >>> layer = nn.Conv1d(1, 2, 3)
        >>> int(conv_ops(layer, torch.ones(1, 1, 1, 5), OpCache()).dense)  # 2 x 3 positions x 3
        18
    """
    weight = layer.weight
    calls_count = calls.shape[0]
    sample_shape = calls.shape[-weight.dim() + 1 :]  # (C, *spatial)
    per_call = calls.reshape(calls_count, -1, *sample_shape)  # (K, N, C, *spatial)
    summed = cache.for_weight("summed_per_group", weight, lambda: _summed_per_group(layer))
    dtype = _exact_dtype(layer, summed, per_call.shape[1])
    active = per_call != 0
    # The count is linear in the binary input, so the samples of a call are summed first and
    # convolved as one: a convolution per call, not per sample.
    active_per_call = active.sum(1, dtype=torch.int32).to(dtype)
    counts = _conv_sums(layer, active_per_call, summed.to(dtype))
    nonzero = count_true(active.reshape(calls_count, -1), dim=1)
    macs, acs = split_by_spiking(counts, spike_valued_calls(calls, nonzero))
    per_sample = cache.get(
        ("conv_dense", id(layer), tuple(sample_shape)),
        lambda: _conv_sums(
            layer,
            torch.ones(1, *sample_shape, dtype=dtype, device=calls.device),
            _every(layer, summed, dtype),
        ).sum(),
    )
    return OpCount(macs, acs, per_sample * (calls.numel() // math.prod(sample_shape)))


def _summed_per_group(layer: nn.Conv1d | nn.Conv2d | nn.Conv3d) -> Tensor:
    # (out, in/groups, *k) -> (groups, in/groups, *k): binary weight summed over the output
    # channels of each group. A convolution with it has one output channel per group whose
    # value is the sum of the full convolution's outputs over that group's channels.
    weight = layer.weight != 0
    grouped = weight.reshape(layer.groups, layer.out_channels // layer.groups, *weight.shape[1:])
    return grouped.sum(1)


def _every(layer: nn.Conv1d | nn.Conv2d | nn.Conv3d, summed: Tensor, dtype: torch.dtype) -> Tensor:
    # The summed weight of an all-ones layer: every output channel of the group.
    return torch.full_like(summed, layer.out_channels // layer.groups, dtype=dtype)


def _exact_dtype(
    layer: nn.Conv1d | nn.Conv2d | nn.Conv3d, summed: Tensor, samples: int
) -> torch.dtype:
    # Inputs are counts up to `samples`, weights up to out/groups, outputs up to the bound
    # below: float32 holds them exactly, and TF32 (which CUDA convolutions may use) the
    # inputs and weights, while they are small enough; float64 otherwise.
    per_group = layer.out_channels // layer.groups
    per_output = samples * math.prod(summed.shape[1:]) * per_group
    fits = per_output < _FLOAT32_EXACT and max(samples, per_group) <= _TF32_EXACT
    return torch.float32 if fits else torch.float64


def _conv_sums(layer: nn.Conv1d | nn.Conv2d | nn.Conv3d, samples: Tensor, weight: Tensor) -> Tensor:
    """Per sample, the exact integer sum of the layer's convolution of `samples` with `weight`.

    `_conv_forward` applies the layer's stride, dilation, groups and padding mode to another
    weight. Fast algorithms (Winograd, FFT) may leave tiny errors on the integer outputs, so
    each is rounded before the exact float64 total.
    """
    out = layer._conv_forward(samples, weight, None)
    totals = out.round().reshape(samples.shape[0], -1).sum(1, dtype=torch.float64)
    return cast(Tensor, totals.to(torch.int64))
