"""torchtally.bench vs NeuroBench 2.3.0: `Benchmark.run` on the same models and data.

Both harnesses evaluate the same metric set on identical builds of the same network; runs are
interleaved round-robin (each round times one run of each) and the medians compared. Every
run's results must be identical between the two, or the script fails.

    python -m benchmarks.bench_neurobench [--rounds 7] [--threads 1]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import torchtally.bench as tb
from benchmarks._timing import interleaved

STATIC = ["Footprint", "ParameterCount", "ConnectionSparsity"]
WORKLOAD = ["ClassificationAccuracy", "ActivationSparsity", "SynapticOperations"]


@dataclass(frozen=True)
class Workload:
    name: str
    build: Callable[[], nn.Module]  # seeded: every call gives the same weights
    inputs: torch.Tensor
    batch_size: int
    workload: list[str]
    snn: bool = False


def _labels(count: int) -> torch.Tensor:
    return torch.randint(0, 10, (count,), generator=torch.Generator().manual_seed(1))


def _seeded(build: Callable[[], nn.Module], seed: int) -> Callable[[], nn.Module]:
    def seeded_build() -> nn.Module:
        torch.manual_seed(seed)
        return build()

    return seeded_build


def _mlp() -> Workload:
    def build() -> nn.Module:
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 256),
            nn.ReLU(),
            nn.Linear(256, 256),
            nn.ReLU(),
            nn.Linear(256, 10),
        )

    inputs = torch.rand(2048, 1, 28, 28, generator=torch.Generator().manual_seed(2))
    return Workload("mlp 784-256-256-10", _seeded(build, 5), inputs, 128, WORKLOAD)


def _cnn() -> Workload:
    def build() -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * 13 * 13, 10),
        )

    inputs = torch.relu(torch.randn(512, 1, 28, 28, generator=torch.Generator().manual_seed(3)))
    return Workload("cnn 2 conv + linear", _seeded(build, 6), inputs, 64, WORKLOAD)


def _snn() -> Workload:
    import snntorch as snn

    class SpikingMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(100, 128), nn.Linear(128, 10)
            self.lif1 = snn.Leaky(beta=0.9, threshold=0.5, init_hidden=True)
            self.lif2 = snn.Leaky(beta=0.9, threshold=0.5, init_hidden=True, output=True)

        def forward(self, x: torch.Tensor) -> Any:
            return self.lif2(self.fc2(self.lif1(self.fc1(x))))

    spikes = torch.bernoulli(
        torch.full((256, 25, 100), 0.2), generator=torch.Generator().manual_seed(4)
    )
    workload = [*WORKLOAD, "MembraneUpdates", "NeuronOperations"]
    return Workload(
        "snn 100-128-10, 25 steps", _seeded(SpikingMLP, 7), spikes, 64, workload, snn=True
    )


def _lstm_cell() -> Workload:
    class CellLoop(nn.Module):
        """An LSTMCell unrolled from a learned, partly zero state (NeuroBench counts cells)."""

        def __init__(self) -> None:
            super().__init__()
            self.cell, self.act, self.head = nn.LSTMCell(40, 64), nn.ReLU(), nn.Linear(64, 10)
            state = torch.randn(2, 64)
            state[:, ::3] = 0.0
            self.register_buffer("state", state)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.state[0].expand(x.shape[0], -1)
            hx = (h, self.state[1].expand_as(h))
            for t in range(x.shape[1]):
                hx = self.cell(x[:, t], hx)
            return self.head(self.act(hx[0]))

    inputs = torch.randn(512, 20, 40, generator=torch.Generator().manual_seed(8))
    inputs[inputs.abs() < 0.5] = 0.0
    return Workload("lstm cell 40-64, 20 steps", _seeded(CellLoop, 9), inputs, 64, WORKLOAD)


def _runner(workload: Workload, ours: bool) -> Callable[[], dict[str, Any]]:
    """A zero-argument run of one harness's Benchmark on its own copy of the network."""
    loader = DataLoader(
        TensorDataset(workload.inputs, _labels(len(workload.inputs))), workload.batch_size
    )
    post: list[Callable[..., Any]] = (
        [tb.ChooseMaxCount()] if workload.snn else [lambda p: p.argmax(-1)]
    )
    # A fresh build per harness, not a deep copy: snntorch.utils.reset (NeuroBench's reset
    # between batches) skips the neurons of a copied network.
    net = workload.build()
    if ours:
        model: Any = tb.SNNTorchModel(net) if workload.snn else tb.TorchModel(net)
        metrics = [[getattr(tb, n) for n in STATIC], [getattr(tb, n) for n in workload.workload]]
        bench: Any = tb.Benchmark(model, loader, [], post, metrics)
    else:
        from neurobench.benchmarks import Benchmark
        from neurobench.metrics import static
        from neurobench.metrics import workload as nb_workload
        from neurobench.models import SNNTorchModel, TorchModel

        model = SNNTorchModel(net) if workload.snn else TorchModel(net)
        metrics = [
            [getattr(static, n) for n in STATIC],
            [getattr(nb_workload, n) for n in workload.workload],
        ]
        bench = Benchmark(model, loader, [], post, metrics)
    return lambda: bench.run(quiet=True)


def _checked(run: Callable[[], dict[str, Any]], sink: list[dict[str, Any]]) -> Callable[[], None]:
    def call() -> None:
        sink.append(run())

    return call


def measure(workload: Workload, rounds: int, warmup: int) -> dict[str, Any]:
    """Time both harnesses on one workload; fail unless every run's results are identical."""
    theirs: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []
    contenders = {
        "neurobench": _checked(_runner(workload, ours=False), theirs),
        "torchtally": _checked(_runner(workload, ours=True), ours),
    }
    timings = interleaved(contenders, rounds=rounds, warmup=warmup)
    assert theirs == ours, f"{workload.name}: results differ\n{theirs[-1]}\n{ours[-1]}"
    # From the second run on: the first one sizes snnTorch's state buffers, which Footprint
    # counts (NeuroBench's definition), to the batch.
    assert len(set(map(repr, ours[1:]))) == 1, f"{workload.name}: runs are not repeatable"
    neurobench_s, torchtally_s = timings["neurobench"].median_s, timings["torchtally"].median_s
    return {
        "workload": workload.name,
        "neurobench_ms": round(neurobench_s * 1e3, 1),
        "torchtally_ms": round(torchtally_s * 1e3, 1),
        "speedup": round(neurobench_s / torchtally_s, 2),
        "identical_results": True,
        "rounds": rounds,
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per harness")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds, medians")
    print(f"{'workload':<28}{'NeuroBench':>14}{'torchtally':>14}{'speed-up':>10}")
    rows = []
    for workload in (_mlp(), _cnn(), _snn(), _lstm_cell()):
        row = measure(workload, args.rounds, args.warmup)
        rows.append(row)
        print(
            f"{row['workload']:<28}{row['neurobench_ms']:>11.1f} ms"
            f"{row['torchtally_ms']:>11.1f} ms{row['speedup']:>9.1f}x"
        )
    print("results identical in every run")
    return rows


if __name__ == "__main__":
    main()
