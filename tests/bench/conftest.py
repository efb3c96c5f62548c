"""Shared fixtures for the torchtally.bench tests: small models, data, and a side-by-side run
of NeuroBench 2.3.0 (the oracle) and torchtally.bench on copies of the same model."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
from bench_helpers import SAMPLES, RunBoth
from torch import nn
from torch.utils.data import DataLoader

import torchtally.bench as tb


def _neurobench_class(name: str) -> type:
    from neurobench.metrics import static, workload

    found = getattr(static, name, None) or getattr(workload, name, None)
    assert found is not None, name
    return found


def _neurobench_model(net: nn.Module, snn: bool) -> Any:
    from neurobench.models import SNNTorchModel, TorchModel

    return SNNTorchModel(net) if snn else TorchModel(net)


@pytest.fixture
def run_both() -> RunBoth:
    """Run NeuroBench's and torchtally's `Benchmark` on copies of `net` with the same data,
    processors and metric names; return `(neurobench_results, torchtally_results)`.

    `net` may be a factory instead: each harness then gets a fresh build. snnTorch networks
    need that: `snntorch.utils.reset`, which NeuroBench uses between batches, skips the
    neurons of a deep copy (they are not in its registry of constructed neurons)."""

    def run(
        net: nn.Module | Callable[[], nn.Module],
        loader: DataLoader,
        static: Sequence[str],
        workload: Sequence[str],
        postprocessors: Sequence[Callable[..., Any]] = (),
        snn: bool = False,
        activation_modules: Sequence[type] = (),
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        from neurobench.benchmarks import Benchmark as NeuroBenchBenchmark

        def build() -> nn.Module:
            return copy.deepcopy(net) if isinstance(net, nn.Module) else net()

        theirs_model = _neurobench_model(build(), snn)
        ours_model = tb.SNNTorchModel(build()) if snn else tb.TorchModel(build())
        for module in activation_modules:
            theirs_model.add_activation_module(module)
            ours_model.add_activation_module(module)
        theirs_metrics = [
            [_neurobench_class(n) for n in static],
            [_neurobench_class(n) for n in workload],
        ]
        ours_metrics = [[getattr(tb, n) for n in static], [getattr(tb, n) for n in workload]]
        theirs = NeuroBenchBenchmark(theirs_model, loader, [], list(postprocessors), theirs_metrics)
        theirs_results = theirs.run(quiet=True)
        ours = tb.Benchmark(ours_model, loader, [], list(postprocessors), ours_metrics)
        return theirs_results, ours.run(quiet=True)

    return run


@pytest.fixture
def class_data() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(SAMPLES, 12, generator=generator)
    labels = torch.randint(0, 4, (SAMPLES,), generator=generator)
    return inputs, labels


@pytest.fixture
def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8), nn.Sigmoid(), nn.Linear(8, 4)
    )


@pytest.fixture
def pruned_mlp(mlp: nn.Module) -> nn.Module:
    """The MLP with about 60% of its weights and some biases set to zero."""
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for layer in mlp:
            if isinstance(layer, nn.Linear):
                keep = torch.rand(layer.weight.shape, generator=generator) > 0.6
                layer.weight.mul_(keep)
                layer.bias[::2] = 0.0
    return mlp
