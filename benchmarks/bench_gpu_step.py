"""A training step of a small transformer with six metrics: step time with torchtally metrics
inside the compiled step vs no metrics vs TorchMetrics (eager, it cannot be compiled), and the
host syncs the torchtally step makes under `torch.cuda.set_sync_debug_mode` (issue 7, GPU mode;
target: overhead ≤ 3% of the step, zero host syncs).

    python -m benchmarks.bench_gpu_step [--device cuda] [--steps 200]

On CUDA the forward + loss + metric updates are compiled with mode="reduce-overhead" (CUDA
graphs); on CPU the script runs the same comparison without graphs or sync counting.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torchmetrics
import torchmetrics.classification as tm
from torch import Tensor, nn

import torchtally.metrics as tt
from benchmarks._timing import interleaved

CLASSES, VOCAB, SEQ = 10, 1000, 64


class TinyTransformer(nn.Module):
    def __init__(self, width: int = 256, layers: int = 4, heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(width, CLASSES)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.head(self.encoder(self.embed(tokens)).mean(1))


def six_torchtally(device: torch.device) -> tt.MetricCollection:
    return tt.MetricCollection(
        {
            "accuracy": tt.AccuracyMetric(),
            "precision": tt.PrecisionMetric(CLASSES, average_type="macro"),
            "recall": tt.RecallMetric(CLASSES, average_type="macro"),
            "f1": tt.F1ScoreMetric(CLASSES, average_type="macro"),
            "top3": tt.TopKAccuracyMetric(3),
            "auroc": tt.AUROCMetric(CLASSES, num_bins=256),
        }
    ).to(device)


def six_torchmetrics(device: torch.device) -> torchmetrics.MetricCollection:
    return torchmetrics.MetricCollection(
        {
            "accuracy": tm.MulticlassAccuracy(CLASSES, average="micro"),
            "precision": tm.MulticlassPrecision(CLASSES, average="macro"),
            "recall": tm.MulticlassRecall(CLASSES, average="macro"),
            "f1": tm.MulticlassF1Score(CLASSES, average="macro"),
            "top3": tm.MulticlassAccuracy(CLASSES, top_k=3, average="micro"),
            "auroc": tm.MulticlassAUROC(CLASSES, thresholds=256),
        }
    ).to(device)


def make_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    metrics: Any,
    kind: str,
    compile_mode: str | None,
) -> Callable[[Tensor, Tensor], None]:
    def forward(tokens: Tensor, labels: Tensor) -> Tensor:
        logits = model(tokens)
        if kind == "torchtally":
            metrics.update(labels, torch.softmax(logits.detach().float(), -1))
        return nn.functional.cross_entropy(logits, labels)

    compiled = torch.compile(forward, mode=compile_mode) if compile_mode else forward

    def step(tokens: Tensor, labels: Tensor) -> None:
        loss = compiled(tokens, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        if kind == "TorchMetrics":
            with torch.no_grad():
                metrics.update(torch.softmax(model(tokens).float(), -1), labels)

    return step


def count_syncs(step: Callable[[Tensor, Tensor], None], tokens: Tensor, labels: Tensor) -> int:
    """Host syncs of one step, from torch's sync-debug warnings."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step(tokens, labels)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=256)
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    mode = "reduce-overhead" if cuda else None
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (args.batch, SEQ), generator=g).to(device)
    labels = torch.randint(0, CLASSES, (args.batch,), generator=g).to(device)
    steps: dict[str, Callable[[], None]] = {}
    for kind in ("no metrics", "torchtally", "TorchMetrics"):
        torch.manual_seed(0)
        model = TinyTransformer(args.width).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=cuda)
        metrics = six_torchtally(device) if kind == "torchtally" else six_torchmetrics(device)
        step = make_step(model, optimizer, metrics, kind, mode)
        steps[kind] = lambda s=step: s(tokens, labels)  # type: ignore[misc]
    sync = torch.cuda.synchronize if cuda else None
    timings = interleaved(steps, rounds=max(5, args.steps // 10), inner=10, warmup=3, sync=sync)
    base = timings["no metrics"].median_s
    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "step ms (no metrics)": round(base * 1e3, 3),
        "step ms (torchtally)": round(timings["torchtally"].median_s * 1e3, 3),
        "step ms (TorchMetrics)": round(timings["TorchMetrics"].median_s * 1e3, 3),
        "torchtally overhead %": round((timings["torchtally"].median_s / base - 1) * 100, 2),
        "TorchMetrics overhead %": round((timings["TorchMetrics"].median_s / base - 1) * 100, 2),
    }
    if cuda:
        result["host syncs per torchtally step"] = count_syncs(
            lambda t, y: steps["torchtally"](), tokens, labels
        )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
