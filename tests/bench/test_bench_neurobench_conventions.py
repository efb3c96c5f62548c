"""NeuroBench 2.3.0's calling conventions, checked against NeuroBench itself.

Each built-in metric is called directly, as NeuroBench's own test suite and users' scripts call
it (`metric(model, preds, data)` on a hooked model after one forward pass), on ANN, CNN,
recurrent-cell and snnTorch models; the return type and value must be NeuroBench's. The checks
NeuroBench's test suite makes (tests/test_metrics.py at v2.3.0) are restated here as our own
hand counts. `Benchmark` accepts NeuroBench's deprecated string names, keyed as NeuroBench keys
them, with its deprecation notice on stdout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import snntorch as snn
import torch
from bench_helpers import argmax_last, make_loader
from snntorch import surrogate
from torch import nn

import torchtally.bench as tb

WORKLOAD = [
    "ClassificationAccuracy",
    "MSE",
    "SMAPE",
    "R2",
    "ActivationSparsity",
    "SynapticOperations",
    "MembraneUpdates",
    "NeuronOperations",
]
FLOAT_METRICS = {"ClassificationAccuracy", "MSE", "SMAPE", "R2", "ActivationSparsity"}


def _theirs(name: str) -> Any:
    from neurobench.metrics import static, workload

    return (getattr(static, name, None) or getattr(workload, name))()


def _models(net: nn.Module, spiking: bool) -> tuple[Any, Any]:
    from neurobench.models import SNNTorchModel, TorchModel

    # The same module under both wrappers: the hooks of each record the same forward pass.
    if spiking:
        return SNNTorchModel(net), tb.SNNTorchModel(net)
    return TorchModel(net), tb.TorchModel(net)


def _call_both(
    build: Callable[[], nn.Module], inputs: Any, data: Any, names: list[str], spiking: bool
) -> list[tuple[str, Any, Any]]:
    """For each metric: build the net, forward once under NeuroBench's hooks and once under
    ours (fresh nets, same seed), and call both metrics. Returns (name, theirs, ours)."""
    out = []
    for name in names:
        torch.manual_seed(0)
        their_model, _ = _models(build(), spiking)
        their_model.register_hooks()
        their_preds = their_model(inputs)
        theirs = _theirs(name)(their_model, their_preds, data)
        torch.manual_seed(0)
        _, our_model = _models(build(), spiking)
        our_model.register_hooks()
        our_preds = our_model(inputs)
        ours = getattr(tb, name)()(our_model, our_preds, data)
        our_model.cleanup_hooks()
        out.append((name, theirs, ours))
    return out


def _assert_same_value_and_type(results: list[tuple[str, Any, Any]]) -> None:
    for name, theirs, ours in results:
        assert type(ours) is type(theirs), (name, theirs, ours)
        if isinstance(theirs, dict):
            assert list(ours) == list(theirs), name
            for key in theirs:
                assert type(ours[key]) is type(theirs[key]), (name, key)
        assert ours == theirs, (name, theirs, ours)


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3), nn.Sigmoid())


def _cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3), nn.ReLU()
    )


def _snn() -> nn.Module:
    grad = surrogate.fast_sigmoid()
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(6, 8),
        snn.Leaky(beta=0.9, spike_grad=grad, init_hidden=True),
        nn.Linear(8, 3),
        snn.Leaky(beta=0.9, spike_grad=grad, init_hidden=True, output=True),
    )


def test_ann_metric_calls_return_neurobench_types_and_values() -> None:
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(5, 6, generator=generator)
    labels = torch.rand(5, 3, generator=generator)
    names = [n for n in WORKLOAD if "Neuron" not in n and n != "R2"]
    results = _call_both(_mlp, x, (x, labels), names, False)
    # NeuroBench's R2 reads two columns (x, y) and ignores any further ones: give it two.
    two = nn.Sequential(nn.Linear(6, 2), nn.Tanh())
    results += _call_both(lambda: two, x, (x, labels[:, :2]), ["R2"], False)
    _assert_same_value_and_type(results)
    kinds = {name: type(ours) for name, _, ours in results}
    assert all(kinds[n] is float for n in FLOAT_METRICS)
    assert kinds["SynapticOperations"] is dict


def test_cnn_metric_calls_return_neurobench_types_and_values() -> None:
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(4, 1, 6, 6, generator=generator)
    labels = torch.rand(4, 3, generator=generator)
    names = ["MSE", "SMAPE", "ActivationSparsity", "SynapticOperations"]
    _assert_same_value_and_type(_call_both(_cnn, x, (x, labels), names, False))


def test_snn_metric_calls_return_neurobench_types_and_values() -> None:
    spikes = torch.bernoulli(torch.full((3, 7, 6), 0.4), generator=torch.Generator().manual_seed(3))
    labels = torch.rand(3, 7, 3)
    names = ["ActivationSparsity", "SynapticOperations", "MembraneUpdates", "NeuronOperations"]
    _assert_same_value_and_type(_call_both(_snn, spikes, (spikes, labels), names, True))


class _Cell(nn.Module):
    def __init__(self, cell: nn.RNNCellBase) -> None:
        super().__init__()
        self.cell, self.act = cell, nn.ReLU()

    def forward(self, inp: list[Any]) -> torch.Tensor:
        out = self.cell(inp[0], inp[1])
        return self.act(out[0] if isinstance(out, tuple) else out)


@pytest.mark.parametrize("cell_type", [nn.LSTMCell, nn.RNNCell, nn.GRUCell])
def test_recurrent_cell_calls_match_neurobench(cell_type: type[nn.RNNCellBase]) -> None:
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(3, 7, generator=generator)
    x[x.abs() < 0.4] = 0.0
    h = torch.randn(3, 5, generator=generator)
    h[h.abs() < 0.5] = 0.0
    state = (h, torch.randn(3, 5, generator=generator)) if cell_type is nn.LSTMCell else h
    inp = [x, state]

    def build() -> nn.Module:
        cell = cell_type(7, 5)
        with torch.no_grad():
            cell.weight_hh[cell.weight_hh.abs() < 0.1] = 0.0
        return _Cell(cell)

    _assert_same_value_and_type(
        _call_both(build, inp, inp, ["SynapticOperations", "ActivationSparsity"], False)
    )


# ------------------------------------ NeuroBench's own test-suite checks, as hand counts


def test_accumulated_call_adds_the_batch_and_returns_compute() -> None:
    r2 = tb.R2()
    labels = torch.tensor([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0]])
    preds = torch.tensor([[0.5, 1.0], [1.0, 2.0], [2.0, 2.0]])
    first = r2(None, preds[:2], (None, labels[:2]))
    # first batch: x: 1 - 0.25/0.5, y: 1 - 1/2
    assert first == pytest.approx(0.5)
    both = r2(None, preds[2:], (None, labels[2:]))
    assert both == r2.compute()
    x_r2 = 1 - 0.25 / 2.0  # var(0,1,2)*3 = 2
    y_r2 = 1 - 1.0 / (2 / 3 * 3)  # var(1,3,2)*3 = 2
    assert both == pytest.approx((x_r2 + y_r2) / 2)
    r2.reset()
    with pytest.raises(ValueError, match="no batch"):
        r2.compute()


def test_workload_calls_as_in_neurobench_suite() -> None:
    data = (torch.randn(10), torch.arange(1, 11))
    half = torch.tensor([0 if i % 2 == 0 else i + 1 for i in range(10)])
    accuracy = tb.ClassificationAccuracy()(None, half, data)
    assert isinstance(accuracy, float) and accuracy == 0.5
    preds = torch.tensor([1.1 * i for i in range(10)])
    mse = tb.MSE()(None, preds, (None, torch.arange(10)))
    assert mse == pytest.approx(sum((0.1 * i) ** 2 for i in range(10)) / 10, rel=1e-5)
    smape = tb.SMAPE()(None, preds + 1.1, (None, torch.arange(1, 11)))
    hand = 200 / 10 * sum(0.1 * i / (i + 1.1 * i) for i in range(1, 11))
    assert smape == pytest.approx(hand, rel=1e-5)


def test_synaptic_operations_call_on_lstm_cell_with_state_by_hand() -> None:
    # NeuroBench's suite: LSTMCell(25, 5), all-ones state, one non-spike input value:
    # per sample 4H(I+H) + 3H = 20 * 30 + 15 = 615 MACs.
    model = tb.TorchModel(_Cell(nn.LSTMCell(25, 5)))
    inp = [torch.ones(2, 25), (torch.ones(2, 5), torch.ones(2, 5))]
    inp[0][0, 0] = 4
    model.register_hooks()
    ops = tb.SynapticOperations()(model, model(inp), inp)
    assert ops == {"Effective_MACs": 615.0, "Effective_ACs": 0.0, "Dense": 615.0}


def test_snn_membrane_updates_and_neuron_ops_by_hand() -> None:
    # NeuroBench's suite: Linear(20, 5) + Leaky, 10 steps of all-ones spikes: 5 neurons x 10
    # steps = 50 updates per sample; a Leaky update with subtract reset costs 4 operations.
    def build() -> nn.Module:
        torch.manual_seed(0)
        grad = surrogate.fast_sigmoid()
        return nn.Sequential(
            nn.Linear(20, 5, bias=False),
            snn.Leaky(beta=0.9, spike_grad=grad, init_hidden=True, output=True),
        )

    inp = torch.ones(5, 10, 20)
    model = tb.SNNTorchModel(build())
    model.register_hooks()
    updates = tb.MembraneUpdates()(model, model(inp), (inp, 0))
    assert updates == 50
    model = tb.SNNTorchModel(build())
    model.register_hooks()
    ops = tb.NeuronOperations()(model, model(inp), (inp, 0))
    assert ops == {"Effective Neuron Ops": 200.0, "Neuron Dense Ops": 200.0}
    model = tb.SNNTorchModel(build())
    model.register_hooks()
    ops = tb.SynapticOperations()(model, model(inp), (inp, 0))
    assert ops["Effective_ACs"] == 10 * 20 * 5 and ops["Effective_MACs"] == 0


def test_static_metric_calls_return_numbers() -> None:
    model = tb.TorchModel(nn.Linear(3, 2))
    assert tb.ParameterCount()(model) == 8
    assert tb.Footprint()(model) == 32
    sparsity = tb.ConnectionSparsity()(model)
    assert isinstance(sparsity, float) and sparsity == 0.0


def test_requires_hooks_as_neurobench() -> None:
    for name in WORKLOAD:
        assert getattr(tb, name)().requires_hooks is _theirs(name).requires_hooks, name


def test_string_metric_names_are_deprecated_and_keyed_as_given(
    capsys: pytest.CaptureFixture[str], mlp: nn.Module, class_data: Any
) -> None:
    loader = make_loader(*class_data)
    metrics = [["parameter_count", "footprint"], ["classification_accuracy", "sMAPE"]]
    bench = tb.Benchmark(mlp, loader, [], [argmax_last], metrics)
    printed = capsys.readouterr().out
    assert printed.count("[DEPRECATION WARNING]") == 4
    assert "'ClassificationAccuracy'" in printed
    results = bench.run(quiet=True)
    assert list(results) == ["parameter_count", "footprint", "classification_accuracy", "sMAPE"]
    by_class = tb.Benchmark(
        mlp, loader, [], [argmax_last], [[tb.ParameterCount], [tb.ClassificationAccuracy]]
    ).run(quiet=True)
    assert results["parameter_count"] == by_class["ParameterCount"]
    assert results["classification_accuracy"] == by_class["ClassificationAccuracy"]


def test_unknown_string_metric_name_is_a_clear_error(mlp: nn.Module) -> None:
    with pytest.raises(ValueError, match=r"`metric_list\[1\]\[0\]` must name a built-in workload"):
        tb.Benchmark(mlp, None, [], [], [[], ["no_such_metric"]])
    with pytest.raises(ValueError, match=r"built-in static metric.*'MSE'"):
        tb.Benchmark(mlp, None, [], [], [["mse"], []])
