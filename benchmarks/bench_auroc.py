"""Binary AUROC over 10 million samples: torchtally vs TorchMetrics and scikit-learn.

1. Exact compute: `AUROCMetric` (exact mode, its buffer filled by updates) against
   TorchMetrics' exact `BinaryAUROC()` (its list state filled the same way) and
   scikit-learn's `roc_auc_score` on the same data. Each metric's cached value is cleared
   before every timed call; torchtally's timing also includes restoring its buffer's arrival
   order (its compute sorts the buffer in place). The values must agree with scikit-learn
   (torchtally to 1e-12; TorchMetrics, which accumulates in float32, to 1e-6).
2. Binned update: all samples in batches through `AUROCMetric(num_bins=B)` against
   TorchMetrics' `BinaryAUROC(thresholds=200)` (reset before each timed pass).

Runs are interleaved round-robin (every contender once per round) and the medians compared.
Peak memory of each exact compute is measured in a fresh subprocess from the kernel's
high-water mark of resident memory (`VmHWM` after resetting it through
`/proc/self/clear_refs`; Linux only): it sees every allocation (PyTorch's CPU allocator and
NumPy alike), which `tracemalloc` would not. It is the peak above the resident memory just
before `compute`, i.e. beyond the stored state.

    python -m benchmarks.bench_auroc [--samples 10000000] [--rounds 5] [--batch 1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from torchmetrics.classification import BinaryAUROC

from benchmarks._timing import interleaved
from torchtally.metrics.ranking import AUROCMetric

MIB = 2**20


def make_data(samples: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 scores (many exact ties at this size) and int64 0/1 labels, 30% positive."""
    g = torch.Generator().manual_seed(seed)
    labels = (torch.rand(samples, generator=g) < 0.3).long()
    scores = (torch.rand(samples, generator=g) + 0.4 * labels) / 1.4
    return labels, scores


def _batches(samples: int, batch: int) -> list[slice]:
    return [slice(a, min(a + batch, samples)) for a in range(0, samples, batch)]


def _filled_torchtally(labels: torch.Tensor, scores: torch.Tensor, batch: int) -> AUROCMetric:
    metric = AUROCMetric(capacity=labels.shape[0])
    for part in _batches(labels.shape[0], batch):
        metric.update(labels[part], scores[part])
    return metric


def _filled_torchmetrics(
    labels: torch.Tensor, scores: torch.Tensor, batch: int, thresholds: int | None = None
) -> BinaryAUROC:
    metric = BinaryAUROC(thresholds=thresholds)
    for part in _batches(labels.shape[0], batch):
        metric.update(scores[part], labels[part])
    return metric


def _uncached(metric: Any, attribute: str) -> Callable[[], float]:
    def run() -> float:
        setattr(metric, attribute, None)  # the value is cached until the next update
        return float(metric.compute())

    return run


def _unsorted_compute(metric: AUROCMetric) -> Callable[[], float]:
    """Binary exact `compute` sorts the buffer in place, and a sorted buffer makes the next
    sort's label gather sequential: restore the arrival order first, inside the timing."""
    bits, codes = metric.score_bits.clone(), metric.codes.clone()

    def run() -> float:
        metric.score_bits.copy_(bits)
        metric.codes.copy_(codes)
        metric._runtime.invalidate()
        return float(metric.compute())

    return run


def exact_contenders(
    labels: torch.Tensor, scores: torch.Tensor, batch: int
) -> dict[str, Callable[[], float]]:
    labels_np, scores_np = labels.numpy(), scores.numpy()
    return {
        "torchtally AUROCMetric (exact)": _unsorted_compute(
            _filled_torchtally(labels, scores, batch)
        ),
        "torchmetrics BinaryAUROC()": _uncached(
            _filled_torchmetrics(labels, scores, batch), "_computed"
        ),
        "sklearn roc_auc_score": lambda: float(roc_auc_score(labels_np, scores_np)),
    }


def binned_contenders(
    labels: torch.Tensor, scores: torch.Tensor, batch: int, num_bins: int
) -> dict[str, Callable[[], None]]:
    ours = AUROCMetric(num_bins=num_bins)
    theirs = BinaryAUROC(thresholds=200)
    parts = _batches(labels.shape[0], batch)

    def run_ours() -> None:
        ours.reset()
        for part in parts:
            ours.update(labels[part], scores[part])

    def run_theirs() -> None:
        theirs.reset()
        for part in parts:
            theirs.update(scores[part], labels[part])

    return {
        f"torchtally AUROCMetric(num_bins={num_bins}) update": run_ours,
        "torchmetrics BinaryAUROC(thresholds=200) update": run_theirs,
    }


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def measure_peak(name: str, samples: int, batch: int) -> None:
    """Subprocess entry: fill one contender, then print the peak extra RSS of its compute."""
    labels, scores = make_data(samples)
    run = exact_contenders(labels, scores, batch)[name]
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # reset VmHWM to the current RSS
    value = run()
    peak = _status_kib("VmHWM") - before
    print(json.dumps({"peak_mib": peak / 1024, "value": value}))


def peak_in_subprocess(name: str, samples: int, batch: int) -> float:
    command = [sys.executable, "-m", "benchmarks.bench_auroc", "--peak", name]
    command += ["--samples", str(samples), "--batch", str(batch)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["peak_mib"])


def _report(title: str, timings: dict[str, Any], extra: dict[str, str] | None = None) -> None:
    print(f"\n{title}")
    base = next(iter(timings.values())).median_s
    for name, timing in timings.items():
        ratio = timing.median_s / base
        note = f"  {extra[name]}" if extra and name in extra else ""
        print(f"  {name:52s} {timing.median_s:8.3f} s  x{ratio:6.2f}{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--num-bins", type=int, default=1024)
    parser.add_argument("--peak", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak:
        measure_peak(args.peak, args.samples, args.batch)
        return

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.samples} samples")
    labels, scores = make_data(args.samples)
    input_mib = (labels.nbytes + scores.nbytes) / MIB
    print(f"input: float32 scores + int64 labels = {input_mib:.1f} MiB")

    contenders = exact_contenders(labels, scores, args.batch)
    values = {name: run() for name, run in contenders.items()}
    reference = values["sklearn roc_auc_score"]
    for name, value in values.items():
        print(f"  {name:52s} AUROC = {value:.15f}  (sklearn {value - reference:+.1e})")
        # TorchMetrics accumulates its curve in float32; torchtally counts pairs exactly.
        tolerance = 1e-12 if name.startswith("torchtally") else 1e-6
        if abs(value - reference) > tolerance:
            raise SystemExit(f"{name} disagrees with scikit-learn: {value} vs {reference}")
    timings = interleaved(contenders, rounds=args.rounds, warmup=1)
    peaks = {name: peak_in_subprocess(name, args.samples, args.batch) for name in contenders}
    notes = {
        name: f"peak +{peak:7.1f} MiB ({peak / input_mib:.2f}x input)"
        for name, peak in peaks.items()
    }
    _report("Exact binary AUROC compute (median)", timings, notes)

    binned = binned_contenders(labels, scores, args.batch, args.num_bins)
    _report(
        f"Binned update, {args.samples} samples in batches of {args.batch} (median)",
        interleaved(binned, rounds=args.rounds, warmup=1),
    )
    ours = AUROCMetric(num_bins=args.num_bins)
    for part in _batches(args.samples, args.batch):
        ours.update(labels[part], scores[part])
    print(
        f"  binned AUROC = {float(ours.compute()):.6f}, error bound {float(ours.error_bound()):.2e}"
        f", |binned - exact| = {abs(float(ours.compute()) - reference):.2e}"
    )
    np.testing.assert_array_less(abs(float(ours.compute()) - reference), ours.error_bound() + 1e-12)


if __name__ == "__main__":
    main()
