"""A training step of a small transformer with six metrics: step time with torchtally's metrics
inside the step vs no metrics vs torchtally and TorchMetrics updated eagerly after it, and the
host syncs each step makes under `torch.cuda.set_sync_debug_mode` (issues 7 and 16, GPU mode;
target: overhead ≤ 3% of the step, zero host syncs).

    python -m benchmarks.bench_gpu_step [--device cuda] [--steps 200]

On CUDA every step (forward, loss, backward, a capturable AdamW step, and for the in-step
contender the six metric updates) is captured whole in one CUDA graph and replayed: metrics that
can live there cost only their kernels. TorchMetrics cannot be captured (its updates sync), so
it runs after the replayed step, as does the eager torchtally contender. On CPU the same steps
run eagerly, without sync counting.
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


def contender(
    kind: str, device: torch.device, width: int, tokens: Tensor, labels: Tensor
) -> tuple[Callable[[], object], Any]:
    """One training step of its own model, optimizer and metrics, as a zero-argument callable
    (a CUDA graph's replay on CUDA), and the metrics."""
    cuda = device.type == "cuda"
    torch.manual_seed(0)
    model = TinyTransformer(width).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=cuda)
    metrics: Any = None
    if kind.startswith("torchtally"):
        metrics = six_torchtally(device)
    elif kind.startswith("TorchMetrics"):
        metrics = six_torchmetrics(device)
    in_step = kind == IN_GRAPH

    def step() -> Tensor:
        logits = model(tokens)
        if in_step:
            metrics.update(labels, torch.softmax(logits.detach().float(), -1))
        loss = nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        return logits.detach()

    run: Callable[[], Tensor] = step
    if cuda:
        run = captured(step)
    if metrics is None or in_step:
        return run, metrics

    def step_then_metrics() -> None:
        probs = torch.softmax(run().float(), -1)
        if kind.startswith("torchtally"):
            metrics.update(labels, probs)
        else:
            metrics.update(probs, labels)

    return step_then_metrics, metrics


def captured(step: Callable[[], Tensor], warmup: int = 3) -> Callable[[], Tensor]:
    """`step` captured whole in a CUDA graph (warm-up on a side stream, as torch.cuda.graph
    asks): the callable replays it and returns the captured output."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        output = step()

    def replay() -> Tensor:
        graph.replay()
        return output

    return replay


def count_syncs(step: Callable[[], object]) -> int:
    """Host syncs of one step, from torch's sync-debug warnings."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


BARE = "no metrics"
IN_GRAPH = "torchtally (in the step)"
KINDS = (
    BARE,
    IN_GRAPH,
    "torchtally (eager, after the step)",
    "TorchMetrics (eager, after the step)",
)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=256)
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (args.batch, SEQ), generator=g).to(device)
    labels = torch.randint(0, CLASSES, (args.batch,), generator=g).to(device)
    steps: dict[str, Callable[[], object]] = {}
    metrics: dict[str, Any] = {}
    for kind in KINDS:
        steps[kind], metrics[kind] = contender(kind, device, args.width, tokens, labels)
    sync = torch.cuda.synchronize if cuda else None
    timings = interleaved(steps, rounds=max(5, args.steps // 10), inner=10, warmup=3, sync=sync)
    base = timings[BARE].median_s
    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "graphs": "each step captured whole in a CUDA graph" if cuda else "eager steps",
    }
    for kind in KINDS:
        result[f"step ms ({kind})"] = round(timings[kind].median_s * 1e3, 3)
    for kind in KINDS[1:]:
        result[f"overhead % ({kind})"] = round((timings[kind].median_s / base - 1) * 100, 2)
    if cuda:
        for kind in KINDS:
            result[f"host syncs per step ({kind})"] = count_syncs(steps[kind])
        # The in-graph metrics hold the same counts as eager ones fed the same batches.
        inside = metrics[IN_GRAPH].compute()
        after = metrics["torchtally (eager, after the step)"].compute()
        result["in-graph == eager metrics"] = all(
            torch.allclose(inside[name], after[name]) for name in inside
        )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
