"""The guards Dynamo builds for metric updates traced into a compiled step stay within a
budget (issue 26).

Inside a compiled training step every guard is checked on every call, with the caches cold
from the backward pass: for the five metrics below that was 85 µs of a 5 ms MLP step, over a
third of what they added to it (docs: Performance, the compiled-step section). The
count does not depend on timing, so it can be a budget: a change that makes the traced update
read more Python objects fails here, and one that reads fewer should lower `GUARDS`.
"""

from __future__ import annotations

import torch

from torchtally.metrics import (
    AccuracyMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    Metric,
    TopKAccuracyMetric,
)

CLASSES = 10
#: Guard entries Dynamo builds (what `guard_filter_fn` is handed, torch 2.13) for one function
#: updating the five separate metrics of `benchmarks/bench_step_overhead.py`.
GUARDS = 414


def _five() -> list[Metric]:
    return [
        AccuracyMetric(),
        F1ScoreMetric(CLASSES, average_type="macro"),
        TopKAccuracyMetric(3),
        AUROCMetric(CLASSES, num_bins=128),
        ConfusionMatrixMetric(CLASSES),
    ]


def test_five_metrics_traced_into_one_graph_build_no_more_guards_than_budgeted() -> None:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, CLASSES, (64,), generator=g)
    scores = torch.rand(64, CLASSES, generator=g).softmax(-1)
    compiled_metrics, eager_metrics = _five(), _five()
    built: list[int] = []

    def keep_every_guard(entries: list[object]) -> list[bool]:
        built.append(len(entries))
        return [True] * len(entries)

    def update(labels: torch.Tensor, scores: torch.Tensor) -> None:
        for metric in compiled_metrics:
            metric.update(labels, scores)

    compiled = torch.compile(
        update, backend="eager", fullgraph=True, options={"guard_filter_fn": keep_every_guard}
    )
    for _ in range(2):
        compiled(labels, scores)
        for metric in eager_metrics:
            metric.update(labels, scores)
    assert len(built) == 1, f"expected one compile, got {len(built)}"
    assert built[0] <= GUARDS, (
        f"the five metrics' compiled update builds {built[0]} guards, over the budget of "
        f"{GUARDS}: the traced update reads more Python objects than before"
    )
    # the graph that these guards protect counts what the eager updates count
    for ours, eager in zip(compiled_metrics, eager_metrics, strict=True):
        assert torch.equal(ours.compute(), eager.compute()), type(ours).__name__
