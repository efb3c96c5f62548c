"""Every built-in metric gives NeuroBench 2.3.0's value, bit for bit, wherever NeuroBench can
compute it: both `Benchmark.run`s on copies of the same model and data, dicts compared."""

from __future__ import annotations

import copy

import pytest
import torch
from bench_helpers import SAMPLES, RunBoth, argmax_last, make_loader
from torch import nn

STATIC = ["Footprint", "ParameterCount", "ConnectionSparsity"]
CLASSIFICATION = ["ClassificationAccuracy", "ActivationSparsity", "SynapticOperations"]


def _assert_same(theirs: dict, ours: dict) -> None:
    assert list(ours) == list(theirs)
    assert ours == theirs
    assert all(value is not None for value in ours.values())


def test_mlp_matches_neurobench(run_both: RunBoth, mlp, class_data) -> None:
    theirs, ours = run_both(mlp, make_loader(*class_data), STATIC, CLASSIFICATION, [argmax_last])
    _assert_same(theirs, ours)
    ops = ours["SynapticOperations"]
    assert ops["Dense"] == 12 * 16 + 16 * 8 + 8 * 4  # per sample, hand-computed
    assert 0 < ops["Effective_MACs"] < ops["Dense"]  # the ReLU zeros are skipped
    assert ops["Effective_ACs"] == 0


def test_pruned_mlp_matches_neurobench(run_both: RunBoth, pruned_mlp, class_data) -> None:
    theirs, ours = run_both(
        pruned_mlp, make_loader(*class_data), STATIC, CLASSIFICATION, [argmax_last]
    )
    _assert_same(theirs, ours)
    weights = [m.weight for m in pruned_mlp if isinstance(m, nn.Linear)]
    zeros = sum(int((w == 0).sum()) for w in weights)
    assert ours["ConnectionSparsity"] == pytest.approx(
        zeros / sum(w.numel() for w in weights), abs=5e-5
    )
    assert ours["ConnectionSparsity"] > 0.5


def test_spike_input_counts_accumulates(run_both: RunBoth, mlp, class_data) -> None:
    spikes = torch.bernoulli(
        torch.full((SAMPLES, 12), 0.3), generator=torch.Generator().manual_seed(3)
    )
    theirs, ours = run_both(
        mlp, make_loader(spikes, class_data[1]), STATIC, CLASSIFICATION, [argmax_last]
    )
    _assert_same(theirs, ours)
    # The first layer's inputs are spikes (ACs); the later ones are ReLU/Sigmoid outputs (MACs).
    assert ours["SynapticOperations"]["Effective_ACs"] > 0
    assert ours["SynapticOperations"]["Effective_MACs"] > 0


def _cnn2d() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(4, 6, 3, stride=2, groups=2),
        nn.ReLU(),
        nn.Conv2d(6, 6, 2, dilation=2, padding="same", padding_mode="reflect"),
        nn.Flatten(),
        nn.Linear(6 * 3 * 3, 4),
    )


def _cnn1d() -> nn.Module:
    return nn.Sequential(
        nn.Conv1d(3, 4, 3, padding=2, stride=2),
        nn.ReLU(),
        nn.Conv1d(4, 4, 2, groups=4),
        nn.Flatten(),
        nn.Linear(4 * 5, 4),
    )


def _cnn3d() -> nn.Module:
    return nn.Sequential(
        nn.Conv3d(1, 3, 2, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 5**3, 4)
    )


@pytest.mark.parametrize(
    ("build", "input_shape"),
    [(_cnn2d, (2, 8, 8)), (_cnn1d, (3, 10)), (_cnn3d, (1, 4, 4, 4))],
    ids=["conv2d", "conv1d", "conv3d"],
)
def test_cnn_matches_neurobench(run_both: RunBoth, build, input_shape, class_data) -> None:
    torch.manual_seed(4)
    net = build()
    with torch.no_grad():  # some zero weights, so effective and dense differ in the weights too
        net[0].weight[net[0].weight.abs() < 0.15] = 0.0
    inputs = torch.relu(torch.randn(SAMPLES, *input_shape))
    theirs, ours = run_both(
        net, make_loader(inputs, class_data[1]), STATIC, CLASSIFICATION, [argmax_last]
    )
    _assert_same(theirs, ours)
    assert 0 < ours["SynapticOperations"]["Effective_MACs"] < ours["SynapticOperations"]["Dense"]


class CellLoop(nn.Module):
    """A recurrent cell stepped over time from a non-zero initial state, then ReLU and Linear."""

    def __init__(self, cell: nn.RNNCellBase) -> None:
        super().__init__()
        self.cell = cell
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(cell.hidden_size, 4))
        generator = torch.Generator().manual_seed(5)
        self.register_buffer("h0", torch.randn(cell.hidden_size, generator=generator))
        self.register_buffer("c0", torch.randn(cell.hidden_size, generator=generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.h0.expand(x.shape[0], -1)
        state = (h, self.c0.expand_as(h)) if isinstance(self.cell, nn.LSTMCell) else h
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            h = state[0] if isinstance(state, tuple) else state
        return self.head(h)


@pytest.mark.parametrize("cell_type", [nn.LSTMCell, nn.RNNCell], ids=["lstm_cell", "rnn_cell"])
@pytest.mark.parametrize("spikes", [False, True], ids=["real_input", "spike_input"])
def test_recurrent_cell_with_state_matches_neurobench(
    run_both: RunBoth, cell_type, spikes, class_data
) -> None:
    torch.manual_seed(6)
    net = CellLoop(cell_type(5, 6))
    with torch.no_grad():
        net.cell.weight_ih[net.cell.weight_ih.abs() < 0.1] = 0.0
    generator = torch.Generator().manual_seed(7)
    inputs = torch.randn(SAMPLES, 3, 5, generator=generator)
    if spikes:
        inputs = (inputs > 0.5).float()
    else:
        inputs[inputs.abs() < 0.4] = 0.0
    theirs, ours = run_both(
        net, make_loader(inputs, class_data[1]), STATIC, CLASSIFICATION, [argmax_last]
    )
    _assert_same(theirs, ours)
    assert ours["SynapticOperations"]["Effective_ACs" if spikes else "Effective_MACs"] > 0


class RecurrentClassifier(nn.Module):
    """A stacked recurrent layer (batch_first), then ReLU and Linear on the last step."""

    def __init__(self, layer: nn.RNNBase) -> None:
        super().__init__()
        self.layer = layer
        out = layer.hidden_size if getattr(layer, "proj_size", 0) == 0 else layer.proj_size
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(out * (2 if layer.bidirectional else 1), 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layer(x)[0][:, -1])


@pytest.mark.parametrize(
    "build",
    [
        lambda: nn.LSTM(5, 6, num_layers=2, batch_first=True, bidirectional=True),
        pytest.param(
            lambda: nn.LSTM(5, 6, batch_first=True, proj_size=3),
            marks=pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning"),
        ),
        lambda: nn.GRU(5, 6, num_layers=2, batch_first=True, bias=False),
    ],
    ids=["lstm_bidirectional", "lstm_projected", "gru_no_bias"],
)
def test_recurrent_models_match_neurobench_where_it_counts(
    run_both: RunBoth, build, class_data
) -> None:
    # NeuroBench cannot count nn.LSTM/nn.GRU operations (#147; see test_bench_recurrent_ops),
    # but its static metrics, accuracy and activation sparsity work on these models.
    torch.manual_seed(15)
    net = RecurrentClassifier(build())
    with torch.no_grad():  # pruned: ConnectionSparsity counts recurrent biases too
        for weight in net.layer.parameters():
            weight[weight.abs() < 0.1] = 0.0
    inputs = torch.randn(SAMPLES, 3, 5, generator=torch.Generator().manual_seed(16))
    theirs, ours = run_both(
        net,
        make_loader(inputs, class_data[1]),
        STATIC,
        ["ClassificationAccuracy", "ActivationSparsity"],
        [argmax_last],
    )
    _assert_same(theirs, ours)
    assert ours["ConnectionSparsity"] > 0


def test_regression_metrics_match_neurobench(run_both: RunBoth) -> None:
    torch.manual_seed(8)
    net = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 2))
    generator = torch.Generator().manual_seed(9)
    inputs = torch.randn(SAMPLES, 6, generator=generator)
    targets = torch.randn(SAMPLES, 2, generator=generator)
    theirs, ours = run_both(
        net, make_loader(inputs, targets), STATIC, ["MSE", "SMAPE", "R2", "SynapticOperations"]
    )
    _assert_same(theirs, ours)
    assert ours["MSE"] > 0 and 0 < ours["SMAPE"] < 200 and ours["R2"] < 1


def test_custom_activation_module_matches_neurobench(run_both: RunBoth, class_data) -> None:
    torch.manual_seed(10)
    net = nn.Sequential(nn.Linear(12, 8), nn.Hardshrink(0.4), nn.Linear(8, 4))
    theirs, ours = run_both(
        net,
        make_loader(*class_data),
        [],
        ["ActivationSparsity"],
        [argmax_last],
        activation_modules=[nn.Hardshrink],
    )
    _assert_same(theirs, ours)
    assert 0 < ours["ActivationSparsity"] < 1


snn = pytest.importorskip("snntorch")


class SpikingNet(nn.Module):
    """Two spiking layers: Leaky with reset-to-zero, Synaptic with reset-by-subtraction."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.lif1 = snn.Leaky(beta=0.9, threshold=0.5, init_hidden=True, reset_mechanism="zero")
        self.fc2 = nn.Linear(16, 4)
        self.lif2 = snn.Synaptic(alpha=0.8, beta=0.9, threshold=0.5, init_hidden=True, output=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        spikes, _, membrane = self.lif2(self.fc2(self.lif1(self.fc1(x))))
        return spikes, membrane


def _seeded_spiking_net() -> SpikingNet:
    torch.manual_seed(11)
    return SpikingNet()


SNN_WORKLOAD = [*CLASSIFICATION, "MembraneUpdates", "NeuronOperations"]


def _spike_loader(labels: torch.Tensor):
    generator = torch.Generator().manual_seed(12)
    return make_loader(
        torch.bernoulli(torch.full((SAMPLES, 6, 12), 0.4), generator=generator), labels
    )


def test_spiking_network_matches_neurobench(run_both: RunBoth, class_data) -> None:
    from torchtally.bench import ChooseMaxCount

    loader = _spike_loader(class_data[1])
    theirs, ours = run_both(
        _seeded_spiking_net, loader, STATIC, SNN_WORKLOAD, [ChooseMaxCount()], snn=True
    )
    _assert_same(theirs, ours)
    assert ours["SynapticOperations"]["Effective_MACs"] == 0  # every layer is fed spikes
    assert ours["SynapticOperations"]["Effective_ACs"] > 0
    assert 0 < ours["ActivationSparsity"] < 1
    assert ours["NeuronOperations"]["Effective Neuron Ops"] > 0


def test_nested_copied_neurons_are_reset_between_batches(run_both: RunBoth, class_data) -> None:
    # snntorch.utils.reset, NeuroBench's reset, skips neurons of a deep copy or nested below
    # the network's children, so they carry state across batches. NeuroBench on a fresh,
    # flat network (which it does reset) is the oracle for a nested deep copy here.
    import torchtally.bench as tb

    loader = _spike_loader(class_data[1])
    post = [tb.ChooseMaxCount()]
    theirs, _ = run_both(_seeded_spiking_net, loader, [], SNN_WORKLOAD, post, snn=True)
    nested = nn.Sequential(copy.deepcopy(_seeded_spiking_net()))
    metrics = [[], [getattr(tb, name) for name in SNN_WORKLOAD]]
    bench = tb.Benchmark(tb.SNNTorchModel(nested), loader, [], post, metrics)
    assert bench.run(quiet=True) == theirs
    assert bench.run(quiet=True) == theirs  # and again: no state left from the last run
