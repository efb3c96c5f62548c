"""The harness itself: metric kinds, failures that name the metric, hooks, run overrides,
progress output and argument checks."""

from __future__ import annotations

import copy
import functools
import json

import pytest
import torch
from bench_helpers import argmax_last, make_loader
from torch import nn

import torchtally.bench as tb
from torchtally.metrics import Metric


class Exploding(tb.WorkloadMetric):
    def __call__(self, model, preds, data):
        raise RuntimeError("boom")


class ExplodingStatic(tb.StaticMetric):
    def __call__(self, model):
        raise RuntimeError("static boom")


class ExplodingCompute(tb.AccumulatedMetric):
    def __call__(self, model, preds, data):
        return None

    def compute(self):
        raise ZeroDivisionError("no samples")

    def reset(self):
        return None


class NeedsArgument(tb.WorkloadMetric):
    def __init__(self, scale: float) -> None:
        super().__init__()

    def __call__(self, model, preds, data):
        return 0.0


@pytest.fixture
def loader(class_data):
    return make_loader(*class_data)


@pytest.mark.parametrize(
    ("metric_list", "pattern"),
    [
        (
            [[], [tb.ClassificationAccuracy, Exploding]],
            r"Metric `Exploding` failed at batch 0: RuntimeError: boom",
        ),
        (
            [[tb.ParameterCount, ExplodingStatic], []],
            r"`ExplodingStatic` failed at static evaluation",
        ),
        ([[], [ExplodingCompute]], r"`ExplodingCompute` failed at compute: ZeroDivisionError"),
    ],
    ids=["workload", "static", "compute"],
)
def test_failing_metric_raises_with_its_name(mlp, loader, metric_list, pattern) -> None:
    bench = tb.Benchmark(mlp, loader, [], [argmax_last], metric_list)
    with pytest.raises(tb.MetricFailedError, match=pattern) as caught:
        bench.run(quiet=True)
    assert caught.value.metric in pattern
    assert bench.results is None


def test_failing_construction_raises_with_its_name(mlp, loader) -> None:
    with pytest.raises(tb.MetricFailedError, match="`NeedsArgument` failed at construction"):
        tb.Benchmark(mlp, loader, [], [], [[], [NeedsArgument]])


def test_neurobench_would_have_reported_zero(mlp, loader) -> None:
    # The defect the error replaces: NeuroBench 2.3.0 catches the exception and reports 0.0.
    from neurobench.benchmarks import Benchmark as NeuroBenchBenchmark
    from neurobench.metrics.abstract import WorkloadMetric
    from neurobench.models import TorchModel

    class NeuroBenchExploding(WorkloadMetric):
        def __call__(self, model, preds, data):
            raise RuntimeError("boom")

    bench = NeuroBenchBenchmark(TorchModel(mlp), loader, [], [], [[], [NeuroBenchExploding]])
    assert bench.run(quiet=True) == {"NeuroBenchExploding": 0.0}


def test_hooks_are_removed_after_a_run_even_when_a_metric_fails(mlp, loader) -> None:
    bench = tb.Benchmark(mlp, loader, [], [argmax_last], [[], [tb.SynapticOperations, Exploding]])
    with pytest.raises(tb.MetricFailedError):
        bench.run(quiet=True)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in mlp.modules())
    assert bench.model.activation_hooks == [] and bench.model.connection_hooks == []


# ------------------------------------------------------ the seed's custom-metric examples


class ParameterCountMetric(tb.StaticMetric):
    def __call__(self, model):
        return sum(p.numel() for p in model.__net__().parameters())


class AccuracyMetric(tb.WorkloadMetric):
    def __call__(self, model, preds, data):
        _inputs, labels = data
        correct = (preds.argmax(dim=1) == labels).sum().item()
        return correct / len(labels) * 100


class MaximumLossMetric(tb.AccumulatedMetric):
    def __init__(self) -> None:
        super().__init__()
        self.max_loss = 0.0

    def __call__(self, model, preds, data):
        loss = nn.functional.cross_entropy(preds, data[1]).item()
        self.max_loss = max(self.max_loss, loss)

    def compute(self):
        return self.max_loss

    def reset(self):
        self.max_loss = 0.0


def test_custom_metrics_from_the_guide(mlp, class_data) -> None:
    inputs, labels = class_data
    loader = make_loader(inputs, labels)
    metrics = [[ParameterCountMetric], [AccuracyMetric, MaximumLossMetric]]
    results = tb.Benchmark(mlp, loader, [], [], metrics).run(quiet=True)
    with torch.no_grad():
        logits = mlp(inputs)
    losses = [
        nn.functional.cross_entropy(logits[i : i + 16], labels[i : i + 16]).item()
        for i in range(0, 50, 16)
    ]
    assert results == {
        "ParameterCountMetric": 12 * 16 + 16 + 16 * 8 + 8 + 8 * 4 + 4,
        "AccuracyMetric": pytest.approx(
            100 * int((logits.argmax(1) == labels).sum()) / 50, rel=1e-12
        ),
        "MaximumLossMetric": pytest.approx(max(losses), rel=1e-6),
    }


class CorrectFraction(Metric):
    """A torchtally metric: `update(labels, predictions)` on tensor state."""

    def __init__(self) -> None:
        super().__init__()
        self.register_state("correct", torch.tensor(0))
        self.register_state("seen", torch.tensor(0))

    def update(self, labels, predictions):
        self.correct.add_((labels == predictions).sum())
        self.seen.add_(labels.numel())

    def compute(self):
        return self.correct / self.seen


def test_torchtally_metric_is_a_workload_metric(mlp, class_data) -> None:
    inputs, labels = class_data
    loader = make_loader(inputs, labels)
    metrics = [[], [CorrectFraction, tb.ClassificationAccuracy]]
    results = tb.Benchmark(mlp, loader, [], [argmax_last], metrics).run(quiet=True)
    with torch.no_grad():
        expected = int((mlp(inputs).argmax(1) == labels).sum()) / 50
    assert results["CorrectFraction"] == pytest.approx(expected, rel=1e-6)
    assert results["ClassificationAccuracy"] == pytest.approx(expected, rel=1e-12)


def test_torchtally_catalog_metrics_agree_with_the_builtins(class_data) -> None:
    from torchtally.metrics import AccuracyMetric, MAEMetric, MSEMetric, R2ScoreMetric, SMAPEMetric

    torch.manual_seed(13)
    net = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 2))
    inputs = class_data[0]
    targets = torch.randn(50, 2, generator=torch.Generator().manual_seed(14))
    r2_two_outputs = functools.partial(R2ScoreMetric, num_outputs=2)  # keyed "R2ScoreMetric"
    metrics = [[], [MSEMetric, MAEMetric, SMAPEMetric, r2_two_outputs, tb.MSE, tb.SMAPE, tb.R2]]
    results = tb.Benchmark(net, make_loader(inputs, targets), [], [], metrics).run(quiet=True)
    assert results["MSEMetric"] == pytest.approx(results["MSE"], rel=1e-6)
    assert results["SMAPEMetric"] == pytest.approx(results["SMAPE"], rel=1e-6)
    assert results["R2ScoreMetric"] == pytest.approx(results["R2"], rel=1e-5)
    with torch.no_grad():
        assert results["MAEMetric"] == pytest.approx(
            (net(inputs) - targets).abs().mean().item(), rel=1e-6
        )
    classifier = tb.Benchmark(
        copy.deepcopy(net),
        make_loader(*class_data),
        [],
        [argmax_last],
        [[], [AccuracyMetric, tb.ClassificationAccuracy]],
    )
    accuracy = classifier.run(quiet=True)
    assert accuracy["AccuracyMetric"] == pytest.approx(
        accuracy["ClassificationAccuracy"],
        rel=1e-7,  # float32, as cstorch
    )


def test_results_are_plain_python_and_repeatable(mlp, loader) -> None:
    metrics = [
        [tb.Footprint, tb.ConnectionSparsity],
        [tb.ClassificationAccuracy, tb.SynapticOperations],
    ]
    bench = tb.Benchmark(mlp, loader, [], [argmax_last], metrics)
    first = bench.run(quiet=True)
    assert json.loads(json.dumps(first)) == first
    assert isinstance(first["Footprint"], int) and isinstance(
        first["ClassificationAccuracy"], float
    )
    assert bench.run(quiet=True) == first  # state is reset between runs


def test_run_overrides_apply_to_that_run_only(mlp, class_data) -> None:
    inputs, labels = class_data
    loader = make_loader(inputs, labels)
    bench = tb.Benchmark(
        mlp, loader, [], [argmax_last], [[], [tb.ClassificationAccuracy, tb.SynapticOperations]]
    )
    full = bench.run(quiet=True)
    always_zero = bench.run(quiet=True, postprocessors=[argmax_last, torch.zeros_like])
    assert always_zero["ClassificationAccuracy"] == pytest.approx(
        (labels == 0).float().mean().item()
    )
    half = bench.run(quiet=True, dataloader=make_loader(inputs[:25], labels[:25]))
    assert half["SynapticOperations"]["Dense"] == full["SynapticOperations"]["Dense"]
    assert bench.run(quiet=True) == full


def test_preprocessors_feed_the_model_and_metrics_see_the_raw_batch(mlp, class_data) -> None:
    inputs, labels = class_data
    seen = []

    def zero_inputs(data):
        return (torch.zeros_like(data[0]), data[1])

    class Recorder(tb.WorkloadMetric):
        def __call__(self, model, preds, data):
            seen.append(data[0])
            return 0.0

    metrics = [[], [Recorder, tb.SynapticOperations]]
    bench = tb.Benchmark(mlp, make_loader(inputs, labels), [zero_inputs], [argmax_last], metrics)
    results = bench.run(quiet=True, device="cpu")
    assert torch.equal(torch.cat(seen), inputs)
    # The first layer saw zeros, so only its Dense counts: 12 x 16 of Linear 1 are skipped.
    dense = results["SynapticOperations"]["Dense"]
    assert results["SynapticOperations"]["Effective_MACs"] <= dense - 12 * 16


def test_progress_bar_and_verbose_output(mlp, loader, capsys) -> None:
    bench = tb.Benchmark(mlp, loader, [], [argmax_last], [[], [tb.ClassificationAccuracy]])
    bench.run(quiet=True)
    quiet = capsys.readouterr()
    assert quiet.out == "" and quiet.err == ""
    bench.run(verbose=True)
    loud = capsys.readouterr()
    assert "4/4" in loud.err  # tqdm's bar
    assert loud.out.count("ClassificationAccuracy") == 4  # one line per batch


def test_snntorch_model_steps_over_time() -> None:
    snn = pytest.importorskip("snntorch")

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.lif = snn.Leaky(beta=0.5, threshold=0.1, init_hidden=True, output=True)

        def forward(self, x):
            return self.lif(self.fc(x))

    model = tb.SNNTorchModel(Net())
    spikes = model(torch.ones(4, 5, 3))
    assert spikes.shape == (4, 5, 2)
    assert set(spikes.unique().tolist()) <= {0.0, 1.0}
    with pytest.raises(TypeError, match="custom_forward"):
        tb.SNNTorchModel(nn.Linear(3, 2))(torch.ones(4, 5, 3))
    assert tb.SNNTorchModel(nn.Linear(3, 2), custom_forward=True)(torch.ones(5, 4, 3)).shape == (
        4,
        5,
        2,
    )


def test_shared_activation_module_is_hooked_once() -> None:
    relu = nn.ReLU()
    net = nn.Sequential(nn.Linear(2, 2), relu, nn.Sequential(relu, nn.Linear(2, 2)))
    model = tb.TorchModel(net)
    assert [name for name, _ in model.activation_layers()] == ["1"]
    assert [name for name, _ in model.connection_layers()] == ["0", "2.1"]


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"metric_list": [[tb.Footprint]]}, TypeError, r"`metric_list` must be \[\[static"),
        (
            {"metric_list": [[tb.Footprint()], []]},
            TypeError,
            r"`metric_list\[0\]\[0\]` must be a StaticMetric subclass \(the class",
        ),
        (
            {"metric_list": [[], [tb.Footprint]]},
            TypeError,
            r"`metric_list\[1\]\[0\]` must be a WorkloadMetric or Metric",
        ),
        ({"metric_list": [[], [tb.MSE, tb.MSE]]}, ValueError, r"twice.*\['MSE'\]"),
        (
            {"postprocessors": [argmax_last, 3]},
            TypeError,
            r"`postprocessors` must hold only callables.*postprocessors\[1\]=3",
        ),
        ({"preprocessors": argmax_last}, TypeError, r"`preprocessors` must be a list of callables"),
        ({"model": "net"}, TypeError, r"`model` must be a BenchModel or a torch.nn.Module"),
    ],
)
def test_malformed_arguments_are_named(mlp, loader, kwargs, error, pattern) -> None:
    arguments = {
        "model": mlp,
        "dataloader": loader,
        "preprocessors": [],
        "postprocessors": [],
        "metric_list": [[], []],
    }
    with pytest.raises(error, match=pattern):
        tb.Benchmark(**{**arguments, **kwargs})


def test_missing_or_empty_dataloader_is_named(mlp) -> None:
    bench = tb.Benchmark(mlp, None, [], [], [[], [tb.MSE]])
    with pytest.raises(ValueError, match="`dataloader` must be given"):
        bench.run(quiet=True)
    with pytest.raises(ValueError, match="`dataloader` must yield at least one batch"):
        bench.run(quiet=True, dataloader=[])


def test_shape_mismatch_names_the_metric(mlp, loader) -> None:
    bench = tb.Benchmark(copy.deepcopy(mlp), loader, [], [], [[], [tb.ClassificationAccuracy]])
    with pytest.raises(
        tb.MetricFailedError, match=r"ClassificationAccuracy.*ChooseMaxCount.*\(16, 4\)"
    ):
        bench.run(quiet=True)


def test_neuron_without_an_operation_cost_names_the_metric() -> None:
    snn = pytest.importorskip("snntorch")

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.lif = snn.Leaky(beta=0.5, init_hidden=True, output=True, reset_mechanism="none")

        def forward(self, x):
            return self.lif(self.fc(x))

    loader = make_loader(torch.ones(4, 5, 3), torch.zeros(4, dtype=torch.long))
    metrics = [[], [tb.MembraneUpdates, tb.NeuronOperations]]
    bench = tb.Benchmark(tb.SNNTorchModel(Net()), loader, [], [tb.ChooseMaxCount()], metrics)
    with pytest.raises(
        tb.MetricFailedError, match=r"`NeuronOperations`.*`lif` of type Leaky.*'none'"
    ):
        bench.run(quiet=True)
