"""Activation sparsity counted over every sample, checked against hand-computed values where
NeuroBench 2.3.0 cannot compute it."""

from __future__ import annotations

import copy

import pytest
import torch
from bench_helpers import make_loader
from torch import nn

import torchtally.bench as tb


def _fixed_linear(weight: list[list[float]]) -> nn.Linear:
    layer = nn.Linear(len(weight[0]), len(weight), bias=False)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(weight))
    return layer


# Three samples through [[1, 0], [0, 1], [1, 1]] and a ReLU: (1, 1) -> (1, 1, 2), no zero;
# (-1, 1) -> (0, 1, 0), two zeros; (-1, -1) -> (0, 0, 0), three zeros. 5 zeros in 9.
INPUTS = torch.tensor([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0]])


@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_activation_sparsity_by_hand(batch_size: int) -> None:
    net = nn.Sequential(_fixed_linear([[1, 0], [0, 1], [1, 1]]), nn.ReLU())
    loader = make_loader(INPUTS, torch.zeros(3), batch_size)
    results = tb.Benchmark(net, loader, [], [], [[], [tb.ActivationSparsity]]).run(quiet=True)
    assert results["ActivationSparsity"] == pytest.approx(5 / 9, rel=1e-15)


snn = pytest.importorskip("snntorch")


class StepNeuron(snn.SpikingNeuron):
    """A stateless spiking neuron that returns its spikes alone (no `(spikes, mem)` tuple)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x > 0).float()


def test_every_sample_of_a_bare_spike_output_counts() -> None:
    # Spikes of the three samples: (1, 1, 1), (0, 1, 0), (0, 0, 0): 5 zeros in 9. NeuroBench
    # 2.3.0 still indexes element 0 of a bare spike tensor unless the neuron has
    # init_hidden=True (the #258 pattern): it sees the first sample alone, with no zeros.
    from neurobench.benchmarks import Benchmark as NeuroBenchBenchmark
    from neurobench.metrics.workload import ActivationSparsity
    from neurobench.models import TorchModel

    net = nn.Sequential(_fixed_linear([[1, 0], [0, 1], [1, 1]]), StepNeuron())
    loader = make_loader(INPUTS, torch.zeros(3), batch_size=3)
    theirs_model = TorchModel(copy.deepcopy(net))
    theirs_model.add_activation_module(StepNeuron)
    theirs = NeuroBenchBenchmark(theirs_model, loader, [], [], [[], [ActivationSparsity]])
    assert theirs.run(quiet=True)["ActivationSparsity"] == 0.0
    ours_model = tb.TorchModel(net)
    ours_model.add_activation_module(StepNeuron)
    ours = tb.Benchmark(ours_model, loader, [], [], [[], [tb.ActivationSparsity]]).run(quiet=True)
    assert ours["ActivationSparsity"] == pytest.approx(5 / 9, rel=1e-15)


class Block(nn.Module):
    def __init__(self, weight: list[list[float]]) -> None:
        super().__init__()
        self.fc = _fixed_linear(weight)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


def test_activation_sparsity_by_layer_by_hand() -> None:
    # block1 is the model above: 5 zeros in 9. block2 maps block1's outputs (1, 1, 2),
    # (0, 1, 0), (0, 0, 0) through [[1, -1, 0], [-1, 0, 0]]: (0, 0), (0, 0), (0, 0) -> 6 in 6.
    # Both ReLUs are called `act`; NeuroBench would key both as "act".
    net = nn.Sequential()
    net.add_module("block1", Block([[1, 0], [0, 1], [1, 1]]))
    net.add_module("block2", Block([[1, -1, 0], [-1, 0, 0]]))
    loader = make_loader(INPUTS, torch.zeros(3), batch_size=2)
    metrics = [[], [tb.ActivationSparsityByLayer, tb.ActivationSparsity]]
    results = tb.Benchmark(net, loader, [], [], metrics).run(quiet=True)
    assert results["ActivationSparsityByLayer"] == {"block1.act": 5 / 9, "block2.act": 1.0}
    assert results["ActivationSparsity"] == pytest.approx(11 / 15, rel=1e-15)


def test_neurobench_cannot_construct_activation_sparsity_by_layer() -> None:
    from neurobench.benchmarks import Benchmark as NeuroBenchBenchmark
    from neurobench.metrics.workload import ActivationSparsityByLayer
    from neurobench.models import TorchModel

    with pytest.raises(AttributeError):
        NeuroBenchBenchmark(TorchModel(nn.ReLU()), [], [], [], [[], [ActivationSparsityByLayer]])


def test_model_without_activation_layers_raises_with_the_metric_name() -> None:
    loader = make_loader(INPUTS, torch.zeros(3))
    bench = tb.Benchmark(nn.Linear(2, 3), loader, [], [], [[], [tb.ActivationSparsity]])
    with pytest.raises(tb.MetricFailedError, match=r"`ActivationSparsity`.*add_activation_module"):
        bench.run(quiet=True)
