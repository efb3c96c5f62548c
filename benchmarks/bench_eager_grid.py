"""Eager `update` grid (issue 16): torchtally against raw torch, TorchMetrics and torcheval.

Nine metric families x batch 64 / 1024 / 16384 / 262144 x classes 2 / 10 / 100 / 1000 (where
the metric has classes), every contender of a case interleaved round-robin in one process, medians,
value checks on. Per case it reports `torchtally / best peer` (best of TorchMetrics and
torcheval, the libraries a user would pick instead) and `torchtally / raw` (the shortest
hand-written eager torch that keeps the same statistic), then the geomean and worst case.

`cat`-state metrics (exact AUROC) keep every sample in a preallocated tensor while the peers
append a reference to a Python list and pay at compute, so for them the grid also times a whole
evaluation (100 updates then compute) per contender, and each update against one raw copy of the
batch into a buffer (the physical minimum for a state that lives in a tensor). Binned AUROC is
timed as a whole evaluation too (torcheval keeps its batches until compute). The summary gives
both the per-update geomean over every case and the issue's: per update for the other
families, whole evaluations for these.

Every case also times `torchtally (compile_update)`: the same metric with `compile_update()`
(its update through one cached `torch.compile`, default inductor backend), as its own column and
its own geomeans (`ttc`), with the first call's wall time (the compile) per case. The default
eager torchtally stays the headline. Compile caches (inductor's FX graph cache, AOTAutograd's)
are off unless `--compile-cache`, so every first call is a cold compile.

Last, exact-mode compute cost against capacity: 10k samples seen at capacity 2^16 / 2^20 / 2^23
(it should scale with samples seen, not with capacity).

    python -m benchmarks.bench_eager_grid [--quick] [--rounds R] [--only FAMILY ...] [--clock wall]
        [--no-compile-update] [--compile-cache]

Times are this thread's CPU time by default (`--clock cpu`, one intra-op thread): on a shared,
loaded machine wall time swings several-fold between samples, CPU time does not.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from benchmarks._timing import interleaved

FAMILIES = (
    "accuracy",
    "macro-F1",
    "confusion matrix",
    "top-5",
    "binary AUROC",
    "multiclass AUROC",
    "binned AUROC",
    "MSE",
    "R2",
    "mean",
)
CLASS_FAMILIES = {"accuracy", "macro-F1", "confusion matrix", "top-5", "multiclass AUROC"}
CAT_FAMILIES = {"binary AUROC", "multiclass AUROC"}
# Families whose peers defer the work to compute (torcheval's binned AUROC keeps the batches too):
# timed as whole evaluations as well, and judged on those in the summary.
EVAL_FAMILIES = CAT_FAMILIES | {"binned AUROC"}
# Largest batch x classes scored per case: 2^24 floats (64 MiB) keeps a full run inside memory
# and minutes on a laptop-class CPU; the exact AUROC evaluation keeps 100 batches, so less.
MAX_ELEMENTS = 1 << 24
MAX_EVAL_ELEMENTS = 1 << 23
EVAL_BATCHES = 100


COMPILED = "torchtally (compile_update)"
COMPILED_DYNAMIC = "torchtally (compile_update, dynamic=True)"


@dataclass
class Contender:
    update: Callable[[], object]
    reset: Callable[[], object]
    compute: Callable[[], object] | None = None
    metric: Any = None
    inputs: tuple[torch.Tensor, ...] = ()
    #: Run after each timed window's calls, inside it: torchtally applies the small batches it
    #: held back (`coalesce_updates`), so their update is paid for in the window that made them.
    finish: Callable[[], object] | None = None


def _library(metric: Any, *inputs: torch.Tensor) -> Contender:
    metric = metric.to(DEVICE)
    return Contender(lambda: metric.update(*inputs), metric.reset, metric.compute, metric, inputs)


def _ours(metric: Any, *inputs: torch.Tensor) -> Contender:
    contender = _library(metric, *inputs)
    contender.finish = metric.flush
    return contender


def with_compiled(group: dict[str, Contender]) -> dict[str, Contender]:
    """Add the `compile_update()` contender: a fresh copy of the torchtally metric, compiled
    (and with `--compare-dynamic` one compiled with `dynamic=True`, every size symbolic)."""
    ours = group["torchtally"]
    compiled = copy.deepcopy(ours.metric).compile_update(**COMPILE_KWARGS)
    group = {**group, COMPILED: _ours(compiled, *ours.inputs)}
    if COMPARE_DYNAMIC:
        dynamic = copy.deepcopy(ours.metric).compile_update(dynamic=True)
        group[COMPILED_DYNAMIC] = _ours(dynamic, *ours.inputs)
    return group


def first_call_s(contender: Contender) -> float:
    """Wall seconds of the first update (the compile, for the compiled contender); then reset."""
    start = time.perf_counter()
    contender.update()
    elapsed = time.perf_counter() - start
    contender.reset()
    return elapsed


def _raw_state(size: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.zeros(size, dtype=dtype, device=DEVICE)


def _raw(update: Callable[[], object], state: torch.Tensor) -> Contender:
    return Contender(update, state.zero_)


def _raw_copy(*inputs: torch.Tensor, capacity: int) -> Contender:
    """One slice copy of each input into a preallocated buffer: the floor for a tensor state."""
    buffers = [torch.empty(capacity, *x.shape[1:], dtype=x.dtype, device=x.device) for x in inputs]
    offset = [0]

    def update() -> None:
        n = inputs[0].shape[0]
        for buffer, x in zip(buffers, inputs, strict=True):
            buffer[offset[0] : offset[0] + n].copy_(x)
        offset[0] += n

    def reset() -> None:
        offset[0] = 0

    return Contender(update, reset)


def contenders(family: str, n: int, classes: int, capacity: int) -> dict[str, Contender]:
    """name -> contender for one case; inputs drawn once (the same tensors for everyone)."""
    import torcheval.metrics as te
    import torchmetrics.classification as tm
    import torchmetrics.regression as tmr
    from torchmetrics.aggregation import MeanMetric as TMMean

    import torchtally.metrics as tt

    g = torch.Generator().manual_seed(0)
    # Two labels at least: the binary families (classes=1) take labels % 2, and with a single
    # label every AUROC is undefined (the three libraries gave NaN, 0 and 0.5 for it).
    labels = torch.randint(0, max(classes, 2), (n,), generator=g).to(DEVICE)
    scores = torch.randn(n, max(classes, 2), generator=g).to(DEVICE)
    if family == "accuracy":
        acc = _raw_state(2)

        def raw_acc() -> None:
            acc[0] += (scores.argmax(-1) == labels).sum()
            acc[1] += n

        return {
            "raw torch": _raw(raw_acc, acc),
            "torchtally": _ours(tt.AccuracyMetric(), labels, scores),
            "TorchMetrics": _library(
                tm.MulticlassAccuracy(classes, average="micro"), scores, labels
            ),
            "torcheval": _library(te.MulticlassAccuracy(), scores, labels),
        }
    if family in ("macro-F1", "confusion matrix"):
        matrix = _raw_state(classes * classes, torch.int64)

        def raw_matrix() -> None:
            index = labels * classes + scores.argmax(-1)
            matrix.add_(torch.bincount(index, minlength=classes * classes))

        if family == "macro-F1":
            ours: Any = tt.F1ScoreMetric(classes, average_type="macro")
            theirs: Any = tm.MulticlassF1Score(classes, average="macro")
            eval_: Any = te.MulticlassF1Score(num_classes=classes, average="macro")
        else:
            ours = tt.ConfusionMatrixMetric(classes)
            theirs = tm.MulticlassConfusionMatrix(classes)
            eval_ = te.MulticlassConfusionMatrix(classes)
        return {
            "raw torch": _raw(raw_matrix, matrix),
            "torchtally": _ours(ours, labels, scores),
            "TorchMetrics": _library(theirs, scores, labels),
            "torcheval": _library(eval_, scores, labels),
        }
    if family == "top-5":
        hits = _raw_state(2)

        def raw_top5() -> None:
            top = scores.topk(5, dim=-1).indices
            hits[0] += (top == labels[:, None]).sum()
            hits[1] += n

        return {
            "raw torch": _raw(raw_top5, hits),
            "torchtally": _ours(tt.TopKAccuracyMetric(5), labels, scores),
            "TorchMetrics": _library(
                tm.MulticlassAccuracy(classes, top_k=5, average="micro"), scores, labels
            ),
            "torcheval": _library(te.MulticlassAccuracy(k=5), scores, labels),
        }
    if family == "binary AUROC":
        binary = (labels % 2).to(torch.int64)
        probs = torch.sigmoid(scores[:, 0])
        return {
            "raw copy": _raw_copy(probs, binary, capacity=capacity),
            "torchtally": _ours(tt.AUROCMetric(capacity=capacity), binary, probs),
            "TorchMetrics": _library(tm.BinaryAUROC(), probs, binary),
            "torcheval": _library(te.BinaryAUROC(), probs, binary),
        }
    if family == "multiclass AUROC":
        probs = scores.softmax(-1)
        return {
            "raw copy": _raw_copy(probs, labels, capacity=capacity),
            "torchtally": _ours(tt.AUROCMetric(classes, capacity=capacity), labels, probs),
            "TorchMetrics": _library(tm.MulticlassAUROC(classes), probs, labels),
            "torcheval": _library(te.MulticlassAUROC(num_classes=classes), probs, labels),
        }
    if family == "binned AUROC":
        binary = (labels % 2).to(torch.int64)
        probs = torch.sigmoid(scores[:, 0])
        histogram = _raw_state(2 * 200, torch.int64)

        def raw_binned() -> None:
            bins = (probs * 200).to(torch.int64).clamp_(0, 199)
            histogram.add_(torch.bincount(binary * 200 + bins, minlength=400))

        return {
            "raw torch": _raw(raw_binned, histogram),
            "torchtally": _ours(tt.AUROCMetric(num_bins=200), binary, probs),
            "TorchMetrics": _library(tm.BinaryAUROC(thresholds=200), probs, binary),
            # its thresholds tensor is no state: `.to()` leaves it behind, `device=` does not
            "torcheval": _library(
                te.BinaryBinnedAUROC(threshold=200, device=DEVICE), probs, binary
            ),
        }
    target, prediction = scores[:, 0].contiguous(), (scores[:, 0] + 0.1 * scores[:, 1])
    if family == "MSE":
        sq = _raw_state(2)

        def raw_mse() -> None:
            sq[0] += (prediction - target).square().sum()
            sq[1] += n

        return {
            "raw torch": _raw(raw_mse, sq),
            "torchtally": _ours(tt.MSEMetric(), target, prediction),
            "TorchMetrics": _library(tmr.MeanSquaredError(), prediction, target),
            "torcheval": _library(te.MeanSquaredError(), prediction, target),
        }
    if family == "R2":
        r2 = _raw_state(4)

        def raw_r2() -> None:
            r2[0] += target.sum()
            r2[1] += target.square().sum()
            r2[2] += (target - prediction).square().sum()
            r2[3] += n

        return {
            "raw torch": _raw(raw_r2, r2),
            "torchtally": _ours(tt.R2ScoreMetric(), target, prediction),
            "TorchMetrics": _library(tmr.R2Score(), prediction, target),
            "torcheval": _library(te.R2Score(), prediction, target),
        }
    if family == "mean":
        total = _raw_state(2)

        def raw_mean() -> None:
            total[0] += target.sum()
            total[1] += n

        return {
            "raw torch": _raw(raw_mean, total),
            "torchtally": _ours(tt.MeanMetric(), target),
            "TorchMetrics": _library(TMMean(), target),
            "torcheval": _library(te.Mean(), target),
        }
    raise ValueError(f"Argument `family` must be one of {FAMILIES}. Received: family={family!r}")


def cases(quick: bool, only: list[str] | None) -> list[tuple[str, int, int]]:
    batches = (64, 1024) if quick else (64, 1024, 16384, 262144)
    class_counts = (10, 100) if quick else (2, 10, 100, 1000)
    out = []
    for family in only or FAMILIES:
        counts: tuple[int, ...] = class_counts if family in CLASS_FAMILIES else (1,)
        for classes in counts:
            if family == "top-5" and classes < 10:
                continue  # top-5 of fewer than 6 classes always hits
            if family == "multiclass AUROC" and classes > 100:
                continue  # peers' per-class sort of 1000 classes dwarfs the update
            for n in batches:
                if n * max(classes, 2) <= MAX_ELEMENTS:
                    out.append((family, n, classes))
    return out


def _inner(n: int, classes: int) -> int:
    return max(1, min(50, 200_000 // (n * max(1, classes // 10))))


CLOCK: Callable[[], float] = time.thread_time
#: Where inputs, states and every contender's metric live (`--device`); on CUDA each timed
#: window ends with a device synchronize, and the clock is wall time.
DEVICE = torch.device("cpu")
SYNC: Callable[[], None] | None = None
#: Whether the grid times the `compile_update()` contender too (`--no-compile-update`: not).
COMPILE_UPDATE = True
#: `torch.compile` arguments of that contender (`--compile-mode reduce-overhead`: CUDA graphs).
COMPILE_KWARGS: dict[str, Any] = {}
#: Whether it also times `compile_update(dynamic=True)` (`--compare-dynamic`).
COMPARE_DYNAMIC = False


def measure_case(family: str, n: int, classes: int, rounds: int) -> dict[str, Any]:
    inner = _inner(n, classes)
    group = contenders(family, n, classes, capacity=n * inner)
    compile_s = dynamic_compile_s = 0.0
    if COMPILE_UPDATE:
        group = with_compiled(group)
        compile_s = first_call_s(group[COMPILED])
        if COMPILED_DYNAMIC in group:
            dynamic_compile_s = first_call_s(group[COMPILED_DYNAMIC])
    timings = interleaved(
        {name: c.update for name, c in group.items()},
        rounds=rounds,
        inner=inner,
        prepare={name: c.reset for name, c in group.items()},
        clock=CLOCK,
        sync=SYNC,
        finish={name: c.finish for name, c in group.items() if c.finish is not None},
    )
    us = {name: t.median_us for name, t in timings.items()}
    best_peer = min(us["TorchMetrics"], us["torcheval"])
    floor_name = "raw copy" if family in CAT_FAMILIES else "raw torch"
    row: dict[str, Any] = {"metric": family, "batch": n, "classes": classes}
    row.update({name: round(value, 1) for name, value in us.items()})
    row["tt / best peer"] = _ratio(us["torchtally"] / best_peer)
    row[f"tt / {floor_name}"] = _ratio(us["torchtally"] / us[floor_name])
    row["tt / raw"] = row[f"tt / {floor_name}"]
    if COMPILED in us:
        row["ttc / best peer"] = _ratio(us[COMPILED] / best_peer)
        row["ttc / tt"] = _ratio(us[COMPILED] / us["torchtally"])
        row["ttc first call s"] = round(compile_s, 2)
    if COMPILED_DYNAMIC in us:
        row["ttc dynamic=True / ttc"] = _ratio(us[COMPILED_DYNAMIC] / us[COMPILED])
        row["ttc dynamic=True first call s"] = round(dynamic_compile_s, 2)
    return row


def measure_eval(family: str, n: int, classes: int, rounds: int) -> dict[str, Any]:
    """A whole evaluation: EVAL_BATCHES updates then compute, per contender (cat state)."""
    group = contenders(family, n, classes, capacity=n * EVAL_BATCHES)
    group.pop("raw copy", None)
    group.pop("raw torch", None)
    if COMPILE_UPDATE:
        group = with_compiled(group)
        for name in (COMPILED, COMPILED_DYNAMIC):
            if name in group:
                first_call_s(group[name])  # the compile, outside the timed evaluations

    def evaluation(c: Contender) -> Callable[[], object]:
        def run() -> object:
            for _ in range(EVAL_BATCHES):
                c.update()
            assert c.compute is not None
            return c.compute()

        return run

    timings = interleaved(
        {name: evaluation(c) for name, c in group.items()},
        rounds=rounds,
        warmup=1,
        prepare={name: c.reset for name, c in group.items()},
        clock=CLOCK,
        sync=SYNC,
        finish={name: c.finish for name, c in group.items() if c.finish is not None},
    )
    ms = {name: t.median_s * 1e3 for name, t in timings.items()}
    best_peer = min(ms["TorchMetrics"], ms["torcheval"])
    row: dict[str, Any] = {"metric": f"{family} eval", "batch": n, "classes": classes}
    row.update({f"{name} ms": round(value, 2) for name, value in ms.items()})
    row["tt / best peer"] = _ratio(ms["torchtally"] / best_peer)
    if COMPILED in ms:
        row["ttc / best peer"] = _ratio(ms[COMPILED] / best_peer)
        row["ttc / tt"] = _ratio(ms[COMPILED] / ms["torchtally"])
    return row


def capacity_scaling(rounds: int, capacities: tuple[int, ...]) -> list[dict[str, Any]]:
    """Exact binary AUROC compute with 10k samples seen, at growing capacity."""
    from torchtally.metrics import AUROCMetric

    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 2, (10_000,), generator=g).to(DEVICE)
    probs = torch.rand(10_000, generator=g).to(DEVICE)
    metrics = {capacity: AUROCMetric(capacity=capacity).to(DEVICE) for capacity in capacities}

    def refill(metric: AUROCMetric) -> Callable[[], None]:
        def run() -> None:  # untimed: a fresh state (and no cached value) before each sample
            metric.reset()
            metric.update(labels, probs)
            metric.flush()  # a held batch is updated here, not in the timed compute

        return run

    timings = interleaved(
        {str(c): m.compute for c, m in metrics.items()},
        rounds=rounds,
        warmup=1,
        prepare={str(c): refill(m) for c, m in metrics.items()},
        clock=CLOCK,
        sync=SYNC,
    )
    rows = []
    for capacity in capacities:
        row = {
            "metric": "exact AUROC compute, 10k samples",
            "capacity": capacity,
            "compute ms": round(timings[str(capacity)].median_s * 1e3, 2),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _ratio(value: float) -> float:
    """A ratio to three significant digits (two decimals would round 0.004 to 0)."""
    return float(f"{value:.3g}")


def _geomean(values: list[float]) -> float | None:
    return _ratio(math.exp(sum(map(math.log, values)) / len(values))) if values else None


def summarize(
    rows: list[dict[str, Any]], eval_rows: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    eval_rows = eval_rows or []
    # The comparison: per update where the peers do the work in update, whole
    # evaluations where they defer it to compute; cat updates against one raw copy.
    judged = [r["tt / best peer"] for r in rows if r["metric"] not in EVAL_FAMILIES]
    judged += [r["tt / best peer"] for r in eval_rows]
    copies = [r["tt / raw copy"] for r in rows if "tt / raw copy" in r]
    ratios = [r["tt / best peer"] for r in rows]
    raw = [r["tt / raw"] for r in rows if r["batch"] >= 1024 and "tt / raw" in r]
    worst = max(rows, key=lambda r: r["tt / best peer"])
    return {
        "summary": "eager grid",
        "cases": len(rows),
        "geomean tt / best peer": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 2),
        "worst tt / best peer": worst["tt / best peer"],
        "worst case": f"{worst['metric']} n={worst['batch']} C={worst['classes']}",
        "cases > 1.2x best peer": sum(r > 1.2 for r in ratios),
        "geomean tt / raw (batch >= 1024)": (
            round(math.exp(sum(map(math.log, raw)) / len(raw)), 2) if raw else None
        ),
        "worst tt / raw (batch >= 1024)": max(raw) if raw else None,
        "cases > 1.2x raw (batch >= 1024)": sum(r > 1.2 for r in raw),
        "issue geomean tt / best peer (deferring families by whole eval)": _geomean(judged),
        "issue cases": len(judged),
        "issue cases > 1.2x best peer": sum(r > 1.2 for r in judged),
        "issue worst tt / best peer": max(judged) if judged else None,
        "geomean cat update / raw copy": _geomean(copies),
        "worst cat update / raw copy": max(copies) if copies else None,
        **compile_update_summary(rows, eval_rows),
    }


def compile_update_summary(
    rows: list[dict[str, Any]], eval_rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The `compile_update()` contender's geomeans (`ttc`), overall and per family, beside the
    eager torchtally's; empty when it was not timed."""
    timed = [r for r in rows if "ttc / best peer" in r]
    if not timed:
        return {}
    judged = [r["ttc / best peer"] for r in timed if r["metric"] not in EVAL_FAMILIES]
    judged += [r["ttc / best peer"] for r in eval_rows if "ttc / best peer" in r]
    families: dict[str, dict[str, Any]] = {}
    for family in dict.fromkeys(r["metric"] for r in timed):
        mine = [r for r in timed if r["metric"] == family]
        families[family] = {
            "tt / best peer": _geomean([r["tt / best peer"] for r in mine]),
            "ttc / best peer": _geomean([r["ttc / best peer"] for r in mine]),
            "ttc / tt": _geomean([r["ttc / tt"] for r in mine]),
            "ttc first call s (median)": round(
                statistics.median(r["ttc first call s"] for r in mine), 2
            ),
        }
    first_calls = sorted(r["ttc first call s"] for r in timed)
    dynamic = [r["ttc dynamic=True / ttc"] for r in timed if "ttc dynamic=True / ttc" in r]
    return {
        **({"geomean ttc dynamic=True / ttc": _geomean(dynamic)} if dynamic else {}),
        "geomean ttc / best peer": _geomean([r["ttc / best peer"] for r in timed]),
        "geomean ttc / tt": _geomean([r["ttc / tt"] for r in timed]),
        "cases ttc faster than tt": sum(r["ttc / tt"] < 1 for r in timed),
        "issue geomean ttc / best peer (deferring families by whole eval)": _geomean(judged),
        "ttc first call s (median, max)": (
            round(statistics.median(first_calls), 2),
            first_calls[-1],
        ),
        "per family geomean": families,
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="batch 64/1024, classes 10/100")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", nargs="+", choices=FAMILIES)
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    parser.add_argument(
        "--device", default="cpu", help="cpu or cuda (on cuda: wall clock, synchronized windows)"
    )
    parser.add_argument(
        "--no-compile-update", action="store_true", help="skip the compile_update() contender"
    )
    parser.add_argument(
        "--compile-cache", action="store_true", help="keep torch's compile caches on"
    )
    parser.add_argument(
        "--compile-mode",
        default=None,
        help="torch.compile mode of the compile_update() contender (e.g. reduce-overhead)",
    )
    parser.add_argument(
        "--compare-dynamic",
        action="store_true",
        help="also time compile_update(dynamic=True) against the default (batch dim dynamic)",
    )
    args = parser.parse_args(argv)
    global CLOCK, COMPILE_UPDATE, COMPARE_DYNAMIC, DEVICE, SYNC
    DEVICE = torch.device(args.device)
    if DEVICE.type == "cuda":
        # The GPU works after the host returns: only wall time to a synchronize counts it.
        args.clock = "wall"
        SYNC = torch.cuda.synchronize
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    COMPILE_UPDATE = not args.no_compile_update
    COMPARE_DYNAMIC = COMPILE_UPDATE and args.compare_dynamic
    if args.compile_mode:
        COMPILE_KWARGS["mode"] = args.compile_mode
    if COMPILE_UPDATE and not args.compile_cache:
        # Every first call a cold compile, as a user's first run (not a cache hit of the
        # same graph compiled for an earlier case).
        # Aliased: a plain `import torch._inductor.config` here would make `torch` a local
        # name of this function, unbound on the --no-compile-update path.
        import torch._functorch.config as functorch_config
        import torch._inductor.config as inductor_config

        inductor_config.fx_graph_cache = False
        functorch_config.enable_autograd_cache = False
    torch.set_num_threads(1)  # fair to every contender and stable on a shared machine
    rounds = args.rounds or (7 if args.quick else 15)
    rows = []
    for family, n, classes in cases(args.quick, args.only):
        row = measure_case(family, n, classes, rounds)
        rows.append(row)
        print(json.dumps(row), flush=True)
    eval_rows = []
    for family, n, classes in cases(args.quick, args.only):
        limit = MAX_EVAL_ELEMENTS // (8 if args.quick else 1)
        if family in EVAL_FAMILIES and n * classes * EVAL_BATCHES <= limit:
            row = measure_eval(family, n, classes, max(3, rounds // 3))
            eval_rows.append(row)
            print(json.dumps(row), flush=True)
    if not args.only or "binary AUROC" in args.only:
        capacities = (1 << 16, 1 << 20) if args.quick else (1 << 16, 1 << 20, 1 << 23)
        capacity_scaling(max(3, rounds // 2), capacities)
    if rows:
        device = torch.cuda.get_device_name(DEVICE) if DEVICE.type == "cuda" else "cpu"
        summary = {**summarize(rows, eval_rows), "clock": args.clock, "device": device}
        print(json.dumps(summary), flush=True)
    return rows


if __name__ == "__main__":
    main()
