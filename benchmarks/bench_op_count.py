"""Kernel ops per steady-state eager update (issue 26): torchtally against torcheval,
TorchMetrics and a minimal raw-torch update, without a GPU.

Each contender runs 3 uncounted updates, then one counted update and the `compute()` after
it, under `benchmarks._op_count.OpCounter` on the meta device (the branches a CUDA tensor
takes: CPU fast paths and coalescing test `device.type == "cpu"`). The counting rule (views
and bare allocations not counted; syncs listed apart) is in `_op_count`'s docstring.

- torchtally: on meta, its host reads (error counts, `cat` overflow, a Python-float result)
  answered with zeros and counted as syncs; `check_values=False` is its own column.
- Peers: on meta where they run there; a peer that reads device data on the host (a sync) or
  has an op with no meta kernel is counted on the CPU instead, marked `cpu`, its syncs (which
  would make a GPU wait) given as `(+N sync)`. A CPU count may take a CPU-only branch.
- raw torch: the shortest hand-written update of the same statistic into preallocated state
  (the sample count kept on the host: the loop knows its batch sizes). Exact AUROC's floor
  is one copy of each input into a preallocated buffer.

Batch 1,024. Summary: geomean and worst of `torchtally / best peer` (fewest update ops of
torcheval and TorchMetrics) over the counting metrics, with checks on and off.

Then: every registry case of `tests/metrics` (batch 10, as the budget test counts them), and
the curve metrics' `compute()` at two capacities (exact) or bin counts (binned), with the
elements the ops touch, to show whether compute work follows capacity.

    python -m benchmarks.bench_op_count [--write-budget] [--no-files]

`--write-budget` rewrites `benchmarks/op_budget.json` from this run's registry counts (after a
change that adds ops on purpose; the test `tests/metrics/test_op_budget.py` reads it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from benchmarks._op_count import (
    OpCounter,
    SyncOnMeta,
    count_metric,
    count_ops,
    meta_reads_as_device_reads,
    without_value_checks,
)

RESULTS = Path(__file__).parent / "results"
BUDGET = Path(__file__).parent / "op_budget.json"
REGISTRY_DIR = Path(__file__).parent.parent / "tests" / "metrics"
BATCH = 1024
WARMUP = 3
#: Rows per registry batch: 4 updates stay within the registry's smallest `cat` capacity (64).
REGISTRY_BATCH = 10
COUNTING = ("accuracy", "macro-F1", "confusion matrix", "top-5", "MSE", "R2", "mean")
CASES = (
    "accuracy",
    "macro-F1",
    "confusion matrix",
    "top-5",
    "binary exact AUROC",
    "multiclass exact AUROC",
    "binned AUROC",
    "MSE",
    "R2",
    "mean",
)
TITLES = {
    "accuracy": "accuracy (C=10)",
    "macro-F1": "macro-F1 (C=10)",
    "confusion matrix": "confusion matrix (C=10)",
    "top-5": "top-5 (C=100)",
    "multiclass exact AUROC": "multiclass exact AUROC (C=10)",
    "binned AUROC": "binned AUROC (200 bins)",
}
CONTENDERS = ("torchtally", "check_values=False", "torcheval", "TorchMetrics", "raw torch")
EXACT_CAPACITY = 8 * BATCH

Build = Callable[[torch.device], tuple[Callable[[], object], Callable[[], object] | None]]


@dataclass
class Count:
    """One contender's counted update and compute."""

    update: OpCounter | None = None
    compute: OpCounter | None = None
    device: str = "meta"
    compute_device: str = "meta"
    error: str = ""
    notes: list[str] = field(default_factory=list)


def _inputs(case: str, device: torch.device) -> dict[str, Tensor]:
    classes = 100 if case == "top-5" else 10
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (BATCH,), generator=g)
    scores = torch.randn(BATCH, classes, generator=g)
    out = {"labels": labels, "scores": scores, "binary": labels % 2}
    out["probs"] = torch.sigmoid(scores[:, 0]).contiguous()
    out["softmax"] = scores.softmax(-1)
    out["target"] = scores[:, 0].contiguous()
    out["prediction"] = scores[:, 0] + 0.1 * scores[:, 1]
    return {k: v.to(device) for k, v in out.items()}


def _library(metric: Any, *args: Tensor) -> tuple[Callable[[], object], Callable[[], object]]:
    return (lambda: metric.update(*args)), metric.compute


def _ours(case: str, check_values: bool) -> Build:
    def build(device: torch.device) -> tuple[Callable[[], object], Callable[[], object]]:
        import torchtally.metrics as tt

        x = _inputs(case, device)
        pairs: dict[str, tuple[Any, tuple[Tensor, ...]]] = {
            "accuracy": (tt.AccuracyMetric(), (x["labels"], x["scores"])),
            "macro-F1": (tt.F1ScoreMetric(10, average_type="macro"), (x["labels"], x["scores"])),
            "confusion matrix": (tt.ConfusionMatrixMetric(10), (x["labels"], x["scores"])),
            "top-5": (tt.TopKAccuracyMetric(5), (x["labels"], x["scores"])),
            "binary exact AUROC": (
                tt.AUROCMetric(capacity=EXACT_CAPACITY),
                (x["binary"], x["probs"]),
            ),
            "multiclass exact AUROC": (
                tt.AUROCMetric(10, capacity=EXACT_CAPACITY),
                (x["labels"], x["softmax"]),
            ),
            "binned AUROC": (tt.AUROCMetric(num_bins=200), (x["binary"], x["probs"])),
            "MSE": (tt.MSEMetric(), (x["target"], x["prediction"])),
            "R2": (tt.R2ScoreMetric(), (x["target"], x["prediction"])),
            "mean": (tt.MeanMetric(), (x["target"],)),
        }
        metric, args = pairs[case]
        if not check_values:
            without_value_checks(metric)
        metric = metric.to(device)

        def update() -> None:
            metric.update(*args)
            if device.type == "cpu":
                metric.flush()  # held batches (CPU only); not the host count, which compute adds

        return update, metric.compute

    return build


def _torcheval(case: str) -> Build:
    def build(device: torch.device) -> tuple[Callable[[], object], Callable[[], object]]:
        import torcheval.metrics as te

        x = _inputs(case, device)
        made: dict[str, Callable[[], tuple[Any, tuple[Tensor, ...]]]] = {
            "accuracy": lambda: (te.MulticlassAccuracy(), (x["scores"], x["labels"])),
            "macro-F1": lambda: (
                te.MulticlassF1Score(num_classes=10, average="macro"),
                (x["scores"], x["labels"]),
            ),
            "confusion matrix": lambda: (
                te.MulticlassConfusionMatrix(10),
                (x["scores"], x["labels"]),
            ),
            "top-5": lambda: (te.MulticlassAccuracy(k=5), (x["scores"], x["labels"])),
            "binary exact AUROC": lambda: (te.BinaryAUROC(), (x["probs"], x["binary"])),
            "multiclass exact AUROC": lambda: (
                te.MulticlassAUROC(num_classes=10),
                (x["softmax"], x["labels"]),
            ),
            # its thresholds tensor is no state: `.to()` leaves it behind, `device=` does not
            "binned AUROC": lambda: (
                te.BinaryBinnedAUROC(threshold=200, device=device),
                (x["probs"], x["binary"]),
            ),
            "MSE": lambda: (te.MeanSquaredError(), (x["prediction"], x["target"])),
            "R2": lambda: (te.R2Score(), (x["prediction"], x["target"])),
            "mean": lambda: (te.Mean(), (x["target"],)),
        }
        metric, args = made[case]()
        return _library(metric.to(device), *args)

    return build


def _torchmetrics(case: str) -> Build:
    def build(device: torch.device) -> tuple[Callable[[], object], Callable[[], object]]:
        import torchmetrics.classification as tm
        import torchmetrics.regression as tmr
        from torchmetrics.aggregation import MeanMetric

        x = _inputs(case, device)
        made: dict[str, Callable[[], tuple[Any, tuple[Tensor, ...]]]] = {
            "accuracy": lambda: (
                tm.MulticlassAccuracy(10, average="micro"),
                (x["scores"], x["labels"]),
            ),
            "macro-F1": lambda: (
                tm.MulticlassF1Score(10, average="macro"),
                (x["scores"], x["labels"]),
            ),
            "confusion matrix": lambda: (
                tm.MulticlassConfusionMatrix(10),
                (x["scores"], x["labels"]),
            ),
            "top-5": lambda: (
                tm.MulticlassAccuracy(100, top_k=5, average="micro"),
                (x["scores"], x["labels"]),
            ),
            "binary exact AUROC": lambda: (tm.BinaryAUROC(), (x["probs"], x["binary"])),
            "multiclass exact AUROC": lambda: (
                tm.MulticlassAUROC(10),
                (x["softmax"], x["labels"]),
            ),
            "binned AUROC": lambda: (
                tm.BinaryAUROC(thresholds=200),
                (x["probs"], x["binary"]),
            ),
            "MSE": lambda: (tmr.MeanSquaredError(), (x["prediction"], x["target"])),
            "R2": lambda: (tmr.R2Score(), (x["prediction"], x["target"])),
            "mean": lambda: (MeanMetric(), (x["target"],)),
        }
        metric, args = made[case]()
        return _library(metric.to(device), *args)

    return build


def _raw(case: str) -> Build:
    """The shortest eager update of the same statistic into preallocated state; the sample
    count stays on the host (a Python int), as a hand-written loop keeps it."""

    def build(device: torch.device) -> tuple[Callable[[], object], Callable[[], object] | None]:
        x = _inputs(case, device)
        labels, scores = x["labels"], x["scores"]
        ones = torch.ones(BATCH, dtype=torch.int64, device=device)
        seen = [0]
        if case in ("accuracy", "top-5"):
            hits = torch.zeros((), dtype=torch.int64, device=device)

            def update() -> None:
                if case == "accuracy":
                    hits.add_((scores.argmax(-1) == labels).sum())
                else:
                    hits.add_((scores.topk(5, dim=-1).indices == labels[:, None]).sum())
                seen[0] += BATCH

            return update, lambda: hits / seen[0]
        if case in ("macro-F1", "confusion matrix"):
            matrix = torch.zeros(10, 10, dtype=torch.int64, device=device)
            flat = matrix.view(-1)

            def update() -> None:
                flat.index_add_(0, torch.add(scores.argmax(-1), labels, alpha=10), ones)

            def f1() -> Tensor:
                diagonal = matrix.diagonal()
                return (2 * diagonal / (matrix.sum(0) + matrix.sum(1))).nan_to_num_().mean()

            return update, (matrix.clone if case == "confusion matrix" else f1)
        if case in ("binary exact AUROC", "multiclass exact AUROC"):
            data = (
                (x["probs"], x["binary"])
                if case == "binary exact AUROC"
                else (x["softmax"], x["labels"])
            )
            buffers = [
                torch.empty(EXACT_CAPACITY, *t.shape[1:], dtype=t.dtype, device=device)
                for t in data
            ]

            def update() -> None:
                for buffer, t in zip(buffers, data, strict=True):
                    buffer[seen[0] : seen[0] + BATCH].copy_(t)
                seen[0] += BATCH

            return update, None
        if case == "binned AUROC":
            histogram = torch.zeros(2 * 200, dtype=torch.int64, device=device)
            binary, probs = x["binary"], x["probs"]

            def update() -> None:
                bins = (probs * 200).to(torch.int64).clamp_(0, 199)
                histogram.index_add_(0, torch.add(bins, binary, alpha=200), ones)

            return update, None
        target, prediction = x["target"], x["prediction"]
        if case == "MSE":
            total = torch.zeros((), device=device)

            def update() -> None:
                total.add_((prediction - target).square().sum())
                seen[0] += BATCH

            return update, lambda: total / seen[0]
        if case == "R2":
            sums = torch.zeros(3, device=device)
            first, second, residual = sums.unbind()

            def update() -> None:
                first.add_(target.sum())
                second.add_(target.square().sum())
                residual.add_((target - prediction).square().sum())
                seen[0] += BATCH

            def r2() -> Tensor:
                variance = second - first.square() / seen[0]
                return 1 - residual / variance

            return update, r2
        if case == "mean":
            total = torch.zeros((), device=device)

            def update() -> None:
                total.add_(target.sum())
                seen[0] += BATCH

            return update, lambda: total / seen[0]
        raise ValueError(f"Argument `case` must be one of {CASES}. Received: case={case!r}")

    return build


def builders(case: str) -> dict[str, Build]:
    return {
        "torchtally": _ours(case, True),
        "check_values=False": _ours(case, False),
        "torcheval": _torcheval(case),
        "TorchMetrics": _torchmetrics(case),
        "raw torch": _raw(case),
    }


def _counted(build: Build, device: str, part: str, lenient: bool) -> OpCounter:
    update, compute = build(torch.device(device))
    with meta_reads_as_device_reads():
        for _ in range(WARMUP):
            update()
        mode = "zero" if lenient else "raise"
        if part == "update":
            return count_ops(update, mode)
        if compute is None:
            raise LookupError("no compute")
        update()
        return count_ops(compute, mode)


def measure(name: str, build: Build) -> Count:
    """Count on meta; a peer that cannot run there is counted on the CPU."""
    ours = name in ("torchtally", "check_values=False")
    result = Count()
    for part in ("update", "compute"):
        try:
            counter = _counted(build, "meta", part, lenient=ours)
            where = "meta"
        except LookupError:
            continue
        except Exception as error:  # a peer's sync or an op with no meta kernel
            if ours:
                result.error = f"{part}: {type(error).__name__}: {error}"
                continue
            # a TorchScript error wraps the error raised in it, after the script's source
            lines = str(error).splitlines() or [""]
            wrapped = [ln for ln in lines if re.match(r"(\w+(Error|Exception): )+\S", ln)]
            reason = wrapped[-1] if wrapped else f"{type(error).__name__}: {lines[0]}"
            result.notes.append(f"{part} on meta: {reason[:160]}")
            counter = _counted(build, "cpu", part, lenient=False)
            where = "cpu"
        if part == "update":
            result.update, result.device = counter, where
        else:
            result.compute, result.compute_device = counter, where
    return result


def _cell(counter: OpCounter | None, where: str) -> str:
    if counter is None:
        return "-"
    text = str(len(counter.ops))
    if counter.syncs:
        text += f" (+{len(counter.syncs)} sync{'s' if len(counter.syncs) > 1 else ''})"
    if where != "meta":
        text += f" {where}"
    return text


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ops_list(counter: OpCounter | None) -> str:
    return "-" if counter is None else " ".join(counter.ops) or "(none)"


def peer_table() -> tuple[list[str], dict[str, Any]]:
    counts = {
        case: {name: measure(name, b) for name, b in builders(case).items()} for case in CASES
    }
    lines = [
        "| metric | " + " | ".join(CONTENDERS) + " |",
        "|---|" + "---|" * len(CONTENDERS),
    ]
    for case, row in counts.items():
        cells = [_cell(row[c].update, row[c].device) for c in CONTENDERS]
        lines.append(f"| {TITLES.get(case, case)} | " + " | ".join(cells) + " |")
    lines += ["", "`compute()` after 4 updates:", ""]
    lines += [lines[0], lines[1]]
    for case, row in counts.items():
        cells = [_cell(row[c].compute, row[c].compute_device) for c in CONTENDERS]
        lines.append(f"| {TITLES.get(case, case)} | " + " | ".join(cells) + " |")

    summary: dict[str, Any] = {}
    for ours in ("torchtally", "check_values=False"):
        ratios, over_raw = {}, {}
        for case in COUNTING:
            row = counts[case]
            peers = [len(row[p].update.ops) for p in ("torcheval", "TorchMetrics") if row[p].update]
            ours_ops = len(row[ours].update.ops)
            ratios[case] = ours_ops / max(1, min(peers))
            over_raw[case] = ours_ops / max(1, len(row["raw torch"].update.ops))
        worst = max(ratios, key=lambda c: ratios[c])
        summary[ours] = {
            "geomean / best peer": round(_geomean(list(ratios.values())), 3),
            "worst": worst,
            "worst ratio": round(ratios[worst], 3),
            "geomean / raw torch": round(_geomean(list(over_raw.values())), 3),
            "ratios": {c: round(r, 3) for c, r in ratios.items()},
        }
    lines += [
        "",
        "Update ops over the best peer's (fewest of torcheval and TorchMetrics, syncs not "
        "counted as ops), over the counting metrics (" + ", ".join(COUNTING) + "):",
        "",
        "| | geomean / best peer | worst / best peer | geomean / raw torch |",
        "|---|---|---|---|",
    ]
    for ours, s in summary.items():
        lines.append(
            f"| {ours} | {s['geomean / best peer']} | {s['worst']}: {s['worst ratio']} "
            f"| {s['geomean / raw torch']} |"
        )
    lines += ["", "### Ops of one torchtally update (checks on, then `check_values=False`)", ""]
    for case in CASES:
        row = counts[case]
        lines.append(
            f"- **{TITLES.get(case, case)}** ({len(row['torchtally'].update.ops)}): "
            f"{_ops_list(row['torchtally'].update)}"
        )
        lines.append(
            f"  - unchecked ({len(row['check_values=False'].update.ops)}): "
            f"{_ops_list(row['check_values=False'].update)}"
        )
        for peer in ("torcheval", "TorchMetrics", "raw torch"):
            counter = row[peer].update
            syncs = f"; syncs: {' '.join(counter.syncs)}" if counter and counter.syncs else ""
            lines.append(f"  - {peer}: {_ops_list(counter)}{syncs}")
    lines += ["", "### Ops of torchtally's `compute()`", ""]
    for case in CASES:
        counter = counts[case]["torchtally"].compute
        syncs = f"; syncs: {' '.join(counter.syncs)}" if counter and counter.syncs else ""
        lines.append(
            f"- **{TITLES.get(case, case)}** ({len(counter.ops) if counter else '-'}): {_ops_list(counter)}{syncs}"
        )
    notes = [
        f"- {case} / {name}: {n}"
        for case, row in counts.items()
        for name, c in row.items()
        for n in c.notes + ([c.error] if c.error else [])
    ]
    if notes:
        lines += ["", "### Why a contender was counted on the CPU", "", *notes]

    data = {
        case: {
            name: {
                "update_ops": c.update.ops if c.update else None,
                "update_syncs": c.update.syncs if c.update else None,
                "update_device": c.device,
                "compute_ops": c.compute.ops if c.compute else None,
                "compute_syncs": c.compute.syncs if c.compute else None,
                "compute_device": c.compute_device,
                "notes": c.notes,
                "error": c.error,
            }
            for name, c in row.items()
        }
        for case, row in counts.items()
    }
    rows = [
        {
            "metric": TITLES.get(case, case),
            **{c: _cell(row[c].update, row[c].device) for c in CONTENDERS},
            "torchtally compute": _cell(row["torchtally"].compute, "meta"),
        }
        for case, row in counts.items()
    ]
    return lines, {"cases": data, "summary": summary, "rows": rows}


def registry_cases() -> list[Any]:
    """`tests/metrics/test_common.py`'s ALL_CASES: every built-in metric configuration."""
    if str(REGISTRY_DIR) not in sys.path:
        sys.path.insert(0, str(REGISTRY_DIR))
    from test_common import ALL_CASES

    return list(ALL_CASES)


def registry_counts() -> dict[str, dict[str, Any]]:
    from benchmarks._op_count import budget_entry

    out = {}
    for case in registry_cases():
        args, kwargs = case.batch(torch.Generator().manual_seed(0), REGISTRY_BATCH)
        out[case.id] = budget_entry(case.make, args, kwargs)
    return out


def registry_table(counts: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"Every registry case (`tests/metrics/cases_*.py`), batch {REGISTRY_BATCH}, on meta:",
        "",
        "| case | update | check_values=False | update syncs | compute | compute syncs |",
        "|---|---|---|---|---|---|",
    ]
    for case_id, c in counts.items():
        lines.append(
            f"| {case_id} | {c['update']} | {c['update_unchecked']} | {c['update_syncs']} "
            f"| {c['compute']} | {c['compute_syncs']} |"
        )
    return lines


def _curve_metrics(size: int) -> dict[str, tuple[Any, str]]:
    """name -> (metric at `size` capacity or bins, input kind)."""
    import torchtally.metrics as tt

    return {
        "AUROC exact binary": (tt.AUROCMetric(capacity=size), "auroc-binary"),
        "AUROC exact multiclass (C=10)": (tt.AUROCMetric(10, capacity=size), "auroc-multiclass"),
        "AP exact binary": (tt.AveragePrecisionMetric(capacity=size), "curve-binary"),
        "AP exact multiclass (C=10)": (
            tt.AveragePrecisionMetric("multiclass", 10, capacity=size),
            "curve-multiclass",
        ),
        "PR curve exact binary": (tt.PrecisionRecallCurveMetric(capacity=size), "curve-binary"),
        "ROC exact binary": (tt.ROCMetric(capacity=size), "curve-binary"),
    }


def _binned_metrics(size: int) -> dict[str, tuple[Any, str]]:
    import torchtally.metrics as tt

    return {
        "AUROC binned binary": (tt.AUROCMetric(num_bins=size), "auroc-binary"),
        "AUROC binned multiclass (C=10)": (
            tt.AUROCMetric(10, num_bins=size),
            "auroc-multiclass",
        ),
        "AP binned binary": (tt.AveragePrecisionMetric(thresholds=size), "curve-binary"),
        "PR curve binned binary": (tt.PrecisionRecallCurveMetric(thresholds=size), "curve-binary"),
        "ROC binned binary": (tt.ROCMetric(thresholds=size), "curve-binary"),
    }


def _curve_args(kind: str) -> tuple[Tensor, ...]:
    x = _inputs("curves", torch.device("cpu"))
    return {
        "auroc-binary": (x["binary"], x["probs"]),
        "auroc-multiclass": (x["labels"], x["softmax"]),
        "curve-binary": (x["probs"], x["binary"]),
        "curve-multiclass": (x["softmax"], x["labels"]),
    }[kind]


class _Partial:
    """A count that stopped in `compute`: the update's count is lost with it."""

    def __init__(self, compute: OpCounter) -> None:
        self.update = None
        self.compute = compute


def _pair(a: OpCounter | None, b: OpCounter | None, value: Callable[[OpCounter], int]) -> str:
    return " / ".join("-" if c is None else str(value(c)) for c in (a, b))


def capacity_table() -> tuple[list[str], list[dict[str, Any]]]:
    from torchtally.metrics.ranking._auroc import DEFAULT_CAPACITY

    rows = []
    sizes = {"exact": (DEFAULT_CAPACITY, 4 * DEFAULT_CAPACITY), "binned": (200, 800)}
    for mode, table in (("exact", _curve_metrics), ("binned", _binned_metrics)):
        small, large = sizes[mode]
        for name in table(small):
            counted, stopped = {}, ""
            for size in (small, large):
                metric, kind = table(size)[name]
                try:
                    counted[size] = count_metric(metric, _curve_args(kind))
                except SyncOnMeta as error:
                    # A curve's length depends on the data: counted up to that op.
                    assert error.counter is not None
                    counted[size] = _Partial(error.counter)
                    stopped = f" (to a data-dependent shape: {error.counter.syncs[-1]})"
            a, b = counted[small], counted[large]
            rows.append(
                {
                    "metric": name,
                    "sizes": f"{small} / {large}",
                    "update ops": _pair(a.update, b.update, lambda c: len(c.ops)),
                    "update elements": _pair(a.update, b.update, lambda c: c.elements),
                    "compute ops": f"{len(a.compute.ops)} / {len(b.compute.ops)}{stopped}",
                    "compute syncs": f"{len(a.compute.syncs)} / {len(b.compute.syncs)}",
                    "compute elements": f"{a.compute.elements} / {b.compute.elements}",
                    "compute elements ratio": round(
                        b.compute.elements / max(1, a.compute.elements), 2
                    ),
                }
            )
    columns = list(rows[0])
    lines = [
        f"Curve metrics, {4 * BATCH} samples seen (4 updates of {BATCH}): exact mode at capacity "
        f"{sizes['exact'][0]} and 4x, binned at {sizes['binned'][0]} and 4x bins. Elements: "
        "of the tensors each counted op reads and writes (a rough measure of the memory traffic).",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return lines, rows


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    found = {}
    for name in ("torch", "torcheval", "torchmetrics"):
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _budget_json(budget: dict[str, Any]) -> str:
    """One line per count and per op list of a case: a change shows as a short diff."""
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in budget.items() if k != "cases"]
    lines.append('  "cases": {')
    for i, (case_id, entry) in enumerate(budget["cases"].items()):
        counts = ", ".join(
            f"{json.dumps(k)}: {v}" for k, v in entry.items() if not isinstance(v, dict)
        )
        body = [f"      {counts}"]
        body += [
            f"      {json.dumps(k)}: {json.dumps(v)}"
            for k, v in entry.items()
            if isinstance(v, dict)
        ]
        comma = "," if i < len(budget["cases"]) - 1 else ""
        lines += [f"    {json.dumps(case_id)}: {{", ",\n".join(body), f"    }}{comma}"]
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write-budget", action="store_true", help="rewrite op_budget.json")
    parser.add_argument("--no-files", action="store_true", help="print only, write no results")
    args = parser.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore")  # peers warn about meta tensors and missing inputs
    now = dt.datetime.now(dt.timezone.utc)
    peers, peer_data = peer_table()
    registry = registry_counts()
    capacity, capacity_rows = capacity_table()
    versions = _versions()
    report = [
        f"# Kernel ops per eager update, {now:%Y-%m-%d %H:%M} UTC (issue 26)",
        "",
        "torch "
        + versions["torch"]
        + ", torcheval "
        + versions["torcheval"]
        + ", TorchMetrics "
        + versions["torchmetrics"]
        + ". `python -m benchmarks.bench_op_count`;"
        " the counting rule is in `benchmarks/_op_count.py`: aten ops on the meta device, views"
        " and bare allocations not counted, syncs apart. One steady-state update (after 3) at"
        f" batch {BATCH}; `cpu`: counted on the CPU (the peer cannot run on meta).",
        "",
        *peers,
        "",
        "## Curve compute against capacity",
        "",
        *capacity,
        "",
        "## Registry",
        "",
        *registry_table(registry),
        "",
    ]
    text = "\n".join(report)
    print(text)
    # The rows `python -m benchmarks run` collects (the issue's table).
    for row in peer_data["rows"]:
        print(json.dumps(row))
    if not args.no_files:
        RESULTS.mkdir(exist_ok=True)
        stem = RESULTS / f"op-count-{now:%Y%m%d}"
        stem.with_suffix(".md").write_text(text)
        data = {
            "date": f"{now:%Y-%m-%d %H:%M} UTC",
            "versions": versions,
            "batch": BATCH,
            "peers": peer_data,
            "capacity": capacity_rows,
            "registry_batch": REGISTRY_BATCH,
            "registry": registry,
        }
        stem.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {stem}.md and .json", file=sys.stderr)
    if args.write_budget:
        budget = {
            "about": (
                "Most ops per steady-state update (value checks on and off) and per compute of "
                "every registry case, counted on the meta device at batch "
                f"{REGISTRY_BATCH} by benchmarks/_op_count.py; syncs: update (checks on and "
                "off together) and compute. Checked by tests/metrics/test_op_budget.py. "
                "Rewrite with `python -m benchmarks.bench_op_count --write-budget` after a "
                "change that lowers a count, or that raises one on purpose (say why in the "
                "commit)."
            ),
            "batch": REGISTRY_BATCH,
            "cases": registry,
        }
        BUDGET.write_text(_budget_json(budget))
        print(f"wrote {BUDGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
