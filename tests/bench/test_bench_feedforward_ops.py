"""Linear and Conv operation counts against NeuroBench 2.3.0's `single_layer_MACs` (which runs a
binarised copy of the layer), over strides, dilations, groups, padding modes and input kinds."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from torchtally.bench._metrics.synaptic_operations import layer_ops
from torchtally.bench._ops.op_count import OpCache


def _neurobench_counts(layer: nn.Module, inputs: torch.Tensor) -> tuple[int, bool, int]:
    from neurobench.metrics.utils.layers import single_layer_MACs

    effective, spiking = single_layer_MACs(inputs, layer)
    dense, _ = single_layer_MACs(inputs, layer, total=True)
    return effective, spiking, dense


def _assert_same_counts(layer: nn.Module, inputs: torch.Tensor) -> None:
    effective, spiking, dense = _neurobench_counts(layer, inputs)
    ops = layer_ops(layer, (inputs,), OpCache())
    assert (int(ops.acs) if spiking else int(ops.macs)) == effective
    assert int(ops.macs if spiking else ops.acs) == 0
    assert int(ops.dense) == dense


def _sparse(shape: tuple[int, ...], seed: int, spikes: bool) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator)
    if spikes:  # -1 counts as a spike too
        return torch.sign(values) * (values.abs() > 0.8)
    return values * (values.abs() > 0.5)


def _prune(layer: nn.Module, seed: int) -> nn.Module:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        layer.weight.mul_(torch.rand(layer.weight.shape, generator=generator) > 0.4)
    return layer


CONVS = {
    "conv1d_stride_padding": (lambda: nn.Conv1d(3, 4, 3, stride=2, padding=2), (2, 3, 11)),
    "conv1d_unbatched": (lambda: nn.Conv1d(3, 4, 3, padding=1), (3, 9)),
    "conv2d_groups_dilation": (
        lambda: nn.Conv2d(4, 6, 3, dilation=2, groups=2, padding=1),
        (2, 4, 9, 9),
    ),
    "conv2d_same_reflect": (
        lambda: nn.Conv2d(2, 3, (2, 3), padding="same", padding_mode="reflect"),
        (2, 2, 6, 7),
    ),
    "conv2d_circular": (
        lambda: nn.Conv2d(2, 2, 3, padding=2, padding_mode="circular"),
        (1, 2, 5, 5),
    ),
    "conv2d_replicate_depthwise": (
        lambda: nn.Conv2d(3, 6, 3, padding=1, groups=3, padding_mode="replicate"),
        (2, 3, 5, 5),
    ),
    "conv3d": (lambda: nn.Conv3d(2, 3, 2, stride=(1, 2, 1), padding=1), (2, 2, 4, 5, 3)),
}


@pytest.mark.parametrize("spikes", [False, True], ids=["real", "spikes"])
@pytest.mark.parametrize("case", list(CONVS))
def test_conv_counts_match_neurobench(case: str, spikes: bool) -> None:
    torch.manual_seed(30)
    build, shape = CONVS[case]
    _assert_same_counts(_prune(build(), 31), _sparse(shape, 32, spikes))


@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 7), (7,)], ids=["2d", "3d", "unbatched"])
@pytest.mark.parametrize("spikes", [False, True], ids=["real", "spikes"])
def test_linear_counts_match_neurobench(shape: tuple[int, ...], spikes: bool) -> None:
    torch.manual_seed(33)
    _assert_same_counts(_prune(nn.Linear(7, 5), 34), _sparse(shape, 35, spikes))


def test_conv_dense_is_cached_per_input_shape_and_weights_per_version() -> None:
    layer, cache = nn.Conv2d(1, 1, 3, padding=1), OpCache()
    first = layer_ops(layer, (torch.ones(2, 1, 4, 4),), cache)
    second = layer_ops(layer, (torch.ones(5, 1, 4, 4),), cache)
    layer_ops(layer, (torch.ones(1, 1, 6, 6),), cache)
    assert len(cache) == 3  # the weight summed per group, and two input shapes' dense counts
    # 4x4 output, taps inside the zero padding excluded: 4 corners x 4 + 8 edges x 6 + 4 x 9
    assert int(first.dense) == 2 * 100 and int(second.dense) == 5 * 100
    before = int(layer_ops(layer, (torch.ones(1, 1, 4, 4),), cache).acs)  # ones are spikes
    with torch.no_grad():
        layer.weight[0, 0, 0, 0] = 0.0  # an in-place edit bumps the version: recounted
    after = int(layer_ops(layer, (torch.ones(1, 1, 4, 4),), cache).acs)
    assert before - after == 9  # that tap reached 9 of the 16 positions (3 x 3 in bounds)


def test_unknown_layer_type_is_rejected() -> None:
    with pytest.raises(TypeError, match="ConvTranspose2d"):
        layer_ops(nn.ConvTranspose2d(1, 1, 2), (torch.ones(1, 1, 3, 3),), OpCache())
