"""Floor of the eager top-5 accuracy update on CPU (issue 16), interleaved in one process.

torchtally ranks as scikit-learn's `top_k_accuracy_score` does (among equal scores the higher
class index ranks first) and counts non-finite scores with value checks on by default;
torcheval ranks by one strict comparison (a tie goes to the label) and checks nothing. This
times, per case, the shortest hand-written eager formulations of each next to torchtally's
update and the peers', so that the gap to torcheval splits into what the tie rule and the
check cost (the floor) and what torchtally adds on top of it (its own overhead):

- `torcheval rule`: torcheval's arithmetic by hand (gather the label's score, one bool
  comparison of every score, a sum per row, the hits);
- `sklearn rule`: the scikit-learn rank with float masks into reused buffers (a strict
  comparison, a tie comparison and a class-index comparison combined by `addcmul_`, rows summed
  by one matrix-vector product; short rows compare against the label score spread by an outer
  product with ones, and take the classes above each label from a cached table): the least
  eager torch found for that rule;
- `+ non-finite count`: that plus `0·x` added to the masks before the row sum (a row with a NaN
  or infinite score gets a NaN rank) and a count of the NaN ranks, the cheapest exact count of
  such rows found (`1 + 0·x` and a NaN-skipping sum, two passes, before 2026-11-29);
- `+ label check`: that plus what labels outside `[0, num_classes)` need (clamped before the
  gather, compared with the clamped copy into a 0/1 float mask, counted, and kept out of the
  hits by adding k times the mask to their ranks): the floor of value checks on;
- `torchtally`, `torchtally unchecked` (`check_values=False`), `torchtally direct` (coalescing
  off: every call an update of that size), torcheval and TorchMetrics.

Ratios are to torcheval (the best peer in every case of the eager grid). Where `+ label
check` is itself above 1.2×, the issue's per-case bound conflicts with keeping scikit-learn's
tie rule and the value checks; where torchtally is well above that floor, the difference is
torchtally's own overhead (per-op dispatch around the rank, the metric's bookkeeping).

`python -m benchmarks.bench_topk_floor [--rounds R] [--cases NxC ...]`; thread CPU time, one
intra-op thread, medians in µs per update; one JSON line per case.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable

import torch

from benchmarks._timing import interleaved

K = 5
#: The grid's top-5 cases (batch x classes), from dispatch-bound to bandwidth-bound.
CASES = ("64x1000", "1024x100", "1024x1000", "16384x10", "16384x100", "262144x10")
#: Rows shorter than this compare against a contiguous (N, C) copy of the label score (as
#: torchtally does: broadcast comparisons over short rows are slow on CPU).
SHORT_ROWS = 16


def _group(n: int, classes: int) -> tuple[dict[str, Callable[[], object]], dict[str, Callable]]:
    import torcheval.metrics as te
    import torchmetrics.classification as tm

    import torchtally.metrics as tt
    from torchtally.functional import top_k_accuracy

    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, classes, (n,), generator=g)
    scores = torch.randn(n, classes, generator=g)
    column = labels.view(-1, 1)
    ahead, ties, above, spread = torch.empty(4, n, classes).unbind()
    class_numbers = torch.arange(classes, dtype=torch.float32)
    above_table = (class_numbers.view(1, -1) > class_numbers.view(-1, 1)).float()
    ones = torch.ones(classes)
    ones_row = ones.view(1, -1)
    outside_mask = torch.empty(n, 1)

    def torcheval_rule() -> torch.Tensor:
        label_score = scores.gather(1, column)
        return (torch.gt(scores, label_score).sum(-1) < K).sum()

    def sklearn_rule(count: bool, check_labels: bool = False) -> tuple[torch.Tensor, ...]:
        index = column.clamp(0, classes - 1) if check_labels else column
        label_score = scores.gather(1, index)
        if classes < SHORT_ROWS:
            label_score = torch.mm(label_score, ones_row, out=spread)
            torch.index_select(above_table, 0, index.view(-1), out=above)
        else:
            torch.gt(class_numbers, index, out=above)
        torch.gt(scores, label_score, out=ahead)
        torch.eq(scores, label_score, out=ties)
        ahead.addcmul_(ties, above)
        if count:
            ahead.add_(scores, alpha=0.0)  # NaN in the rank of a row with a non-finite score
        if check_labels:
            outside = torch.ne(index, column, out=outside_mask).view(-1)
            ranks = torch.addmv(outside, ahead, ones, beta=K)
        else:
            ranks = torch.mv(ahead, ones)
        nonfinite = torch.count_nonzero(ranks * 0.0) if count else None
        hits = ranks.lt_(K).sum()
        if nonfinite is None:
            return (hits,)
        if not check_labels:
            return hits, nonfinite
        return hits, nonfinite, torch.count_nonzero(outside)

    # The hand-written ranks count what torchtally counts (random scores have no ties, so the
    # torcheval rule agrees too): a floor of other arithmetic would measure nothing.
    expected = round(float(top_k_accuracy(labels, scores, K)) * n)
    for rule in (torcheval_rule(), *(sklearn_rule(True, check)[0] for check in (False, True))):
        if int(rule) != int(expected):
            raise AssertionError(f"hand-written hits {int(rule)} != torchtally's {int(expected)}")
    ours = tt.TopKAccuracyMetric(K)
    unchecked = tt.TopKAccuracyMetric(K, check_values=False)
    direct = tt.TopKAccuracyMetric(K).coalesce_updates(False)
    torcheval = te.MulticlassAccuracy(k=K)
    torchmetrics = tm.MulticlassAccuracy(classes, top_k=K, average="micro")
    group: dict[str, Callable[[], object]] = {
        "torcheval rule": torcheval_rule,
        "sklearn rule": functools.partial(sklearn_rule, False),
        "+ non-finite count": functools.partial(sklearn_rule, True),
        "+ label check": functools.partial(sklearn_rule, True, True),
        "torchtally": lambda: ours.update(labels, scores),
        "torchtally unchecked": lambda: unchecked.update(labels, scores),
        "torchtally direct": lambda: direct.update(labels, scores),
        "torcheval": lambda: torcheval.update(scores, labels),
        "TorchMetrics": lambda: torchmetrics.update(scores, labels),
    }
    # held batches are applied inside each timed window (as the eager grid does)
    return group, {"torchtally": ours.flush, "torchtally unchecked": unchecked.flush}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", nargs="+", default=list(CASES), metavar="NxC")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for case in args.cases:
        n, classes = (int(part) for part in case.split("x"))
        group, finish = _group(n, classes)
        # the grid's calls per timed window
        inner = max(1, min(50, 200_000 // (n * max(1, classes // 10))))
        timings = interleaved(
            group, rounds=args.rounds, inner=inner, clock=time.thread_time, finish=finish
        )
        us = {name: round(t.median_us, 1) for name, t in timings.items()}
        ratios = {f"{name} / torcheval": round(v / us["torcheval"], 2) for name, v in us.items()}
        print(json.dumps({"batch": n, "classes": classes, **us, **ratios}), flush=True)


if __name__ == "__main__":
    main()
