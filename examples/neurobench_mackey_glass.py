"""NeuroBench's Mackey-Glass task end to end, offline: data, model, benchmark, result files.

The series is generated locally (`torchtally.bench.datasets.MackeyGlass`, NeuroBench's data set
interface and train/test split). The model is a small random-feature network: a fixed random
ReLU layer over a lookback window of the series, and a linear readout fitted by least squares
on the training points. `torchtally.bench.Benchmark` then scores one-step-ahead prediction on
the test points with NeuroBench's metrics (sMAPE and R2, plus its static and operation counts).

Run:
    python examples/neurobench_mackey_glass.py [--out runs/mackey_glass]

It prints the results dictionary and, with --out, writes it as JSON.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset

import torchtally.bench as tb
from torchtally.bench.datasets import MackeyGlass


def build_model(window: int, features: int, seed: int = 0) -> nn.Sequential:
    """A random ReLU feature layer and a linear readout (to be fitted), in float64."""
    generator = torch.Generator().manual_seed(seed)
    net = nn.Sequential(
        nn.Flatten(), nn.Linear(window, features), nn.ReLU(), nn.Linear(features, 1)
    )
    with torch.no_grad():
        net[1].weight.copy_(torch.randn(features, window, generator=generator) * 2.0)
        net[1].bias.copy_(torch.randn(features, generator=generator))
    return net.double()


def fit_readout(net: nn.Sequential, dataset: MackeyGlass) -> None:
    """Least-squares readout on the training points (ridge-regularised, for conditioning)."""
    inputs, targets = dataset[dataset.ind_train]
    with torch.no_grad():
        features = net[2](net[1](net[0](inputs)))
        design = torch.cat([features, torch.ones(len(features), 1, dtype=features.dtype)], 1)
        ridge = 1e-8 * torch.eye(design.shape[1], dtype=design.dtype)
        solution = torch.linalg.solve(design.T @ design + ridge, design.T @ targets)
        net[3].weight.copy_(solution[:-1].T)
        net[3].bias.copy_(solution[-1])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--traintime", type=float, default=10.0)
    parser.add_argument("--testtime", type=float, default=10.0)
    parser.add_argument("--out", default=None, help="write the results as <out>.json")
    args = parser.parse_args(argv)

    dataset = MackeyGlass(traintime=args.traintime, testtime=args.testtime, bin_window=args.window)
    net = build_model(args.window, args.features)
    fit_readout(net, dataset)
    test_loader = DataLoader(Subset(dataset, dataset.ind_test.tolist()), batch_size=100)
    metrics = [
        [tb.ParameterCount, tb.Footprint, tb.ConnectionSparsity],
        [tb.SMAPE, tb.R2, tb.ActivationSparsity, tb.SynapticOperations],
    ]
    benchmark = tb.Benchmark(tb.TorchModel(net), test_loader, [], [], metrics)
    results = benchmark.run(quiet=True)
    print(results)
    if args.out:
        print(f"written: {benchmark.save_benchmark_results(args.out, 'json')}")
    return results


if __name__ == "__main__":
    main()
