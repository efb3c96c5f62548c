"""What each gloo rank runs in `catalog/test_catalog_distributed.py` (importable by spawned
processes): the catalog metrics over an uneven shard of one global data set."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torchtally.metrics import MeanMetric, Metric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import AveragePrecisionMetric, ROCMetric
from torchtally.metrics.retrieval import RetrievalMAPMetric, RetrievalNDCGMetric
from torchtally.metrics.wrappers import BootStrapper

QUERIES, WIDTH = 60, 8


def data() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 4, (QUERIES,), generator=g)
    scores = torch.randn(QUERIES, 4, generator=g)
    scores[torch.arange(QUERIES), labels] += 1.0
    return {
        "preds": torch.rand(QUERIES, WIDTH, generator=g),
        "relevance": torch.randint(0, 3, (QUERIES, WIDTH), generator=g),
        "mask": torch.rand(QUERIES, WIDTH, generator=g) < 0.9,
        "labels": labels,
        "probabilities": torch.softmax(scores, 1),
    }


METRICS: dict[str, Callable[[], Metric]] = {
    "ndcg_grouped": lambda: RetrievalNDCGMetric(top_k=5),
    "map_flat": lambda: RetrievalMAPMetric(capacity=QUERIES * WIDTH),
    "ece": lambda: CalibrationErrorMetric(4, n_bins=6),
    "ap_exact": lambda: AveragePrecisionMetric("multiclass", 4, capacity=QUERIES, average="macro"),
    "ap_binned": lambda: AveragePrecisionMetric("multiclass", 4, thresholds=21),
    "roc_binned": lambda: ROCMetric("multiclass", 4, thresholds=11),
}


def feed(name: str, metric: Metric, d: dict[str, torch.Tensor], lo: int, hi: int) -> None:
    if name == "ndcg_grouped":
        metric.update(d["preds"][lo:hi], d["relevance"][lo:hi], mask=d["mask"][lo:hi])
    elif name == "map_flat":
        rows = torch.arange(lo, hi).repeat_interleave(WIDTH)
        binary = (d["relevance"][lo:hi] > 1).long()
        metric.update(d["preds"][lo:hi].reshape(-1), binary.reshape(-1), rows)
    else:
        metric.update(d["probabilities"][lo:hi], d["labels"][lo:hi])


def on_shard(rank: int, world: int) -> dict[str, Any]:
    """Shard sizes 3:0:1:2 (rank 1 empty); every metric computes the global value."""
    weights = [3, 0, 1, 2][:world]
    cuts = [0]
    for w in weights:
        cuts.append(cuts[-1] + QUERIES * w // sum(weights))
    cuts[-1] = QUERIES
    d = data()
    out = {}
    for name, make in METRICS.items():
        metric = make()
        feed(name, metric, d, cuts[rank], cuts[rank + 1])
        out[name] = metric.compute()
    # Bootstrap draws differ by rank (the rank is mixed into the seed), so the global value is
    # checked for agreement across ranks, not against one process.
    boot = BootStrapper(MeanMetric(), 16, raw=True, weight_arg="weight")
    correct = (d["probabilities"].argmax(1) == d["labels"]).double()
    boot.update(correct[cuts[rank] : cuts[rank + 1]])
    out["bootstrap"] = boot.compute()
    out["accuracy"] = float(correct.mean())
    return out
