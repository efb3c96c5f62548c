"""No registry metric dispatches more kernel ops per update or per compute than its budget
(issue 26: on a GPU each op is a kernel launch, and at small batches launches are the cost).

Counted on the meta device (the branches a GPU takes) by `benchmarks/_op_count.py`, one
steady-state update after three, with value checks on and off, and the compute after it;
the budget is `benchmarks/op_budget.json` (`python -m benchmarks.bench_op_count
--write-budget` rewrites it from the counts of the tree it runs on). A new registry case
needs an entry, and so does the op that a change adds: the message lists which ops changed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from benchmarks._op_count import (
    SyncOnMeta,
    budget_entry,
    count_ops,
    meta_reads_as_device_reads,
)
from cases import Case
from test_common import ALL_CASES, _ids

from torchtally import _errors

BUDGET_FILE = Path(__file__).parents[2] / "benchmarks" / "op_budget.json"
BUDGET: dict[str, Any] = json.loads(BUDGET_FILE.read_text())
REWRITE = "python -m benchmarks.bench_op_count --write-budget"


# ----------------------------------------------------------------------------- the counter


@pytest.mark.parametrize("device", ["meta", "cpu"])
def test_kernels_are_counted_and_views_are_not(device: str) -> None:
    x = torch.zeros(4, 3, device=device)

    def step() -> None:
        x.add_(1)
        x[1:].reshape(-1).sum()  # a slice and a reshape of contiguous rows: views
        x.t().unsqueeze(0).expand(2, 3, 4)

    counted = count_ops(step)
    assert counted.ops == ["add_", "sum"]
    assert counted.syncs == []
    assert set(counted.views) == {"slice", "view", "t", "unsqueeze", "expand"}


def test_a_copying_reshape_and_an_allocation_that_fills_are_counted() -> None:
    x = torch.zeros(4, 3, device="meta")
    counted = count_ops(lambda: (x.t().reshape(-1), torch.zeros(2, device="meta")))
    assert counted.ops == ["clone", "zeros"]  # the transposed tensor is copied to reshape
    assert count_ops(lambda: torch.empty(5, device="meta")).ops == []


def test_host_reads_are_syncs_and_data_dependent_shapes_are_kernels_and_syncs() -> None:
    x = torch.arange(4.0)
    item = count_ops(lambda: x.sum().item())
    assert (item.ops, item.syncs) == (["sum"], ["_local_scalar_dense"])
    masked = count_ops(lambda: x[x > 1])
    assert masked.ops == ["gt", "index"] and masked.syncs == ["index"]
    assert count_ops(x.nonzero).syncs == ["nonzero"]


def test_a_sync_on_meta_raises_or_reads_zero() -> None:
    x = torch.ones(3, device="meta")
    with pytest.raises(SyncOnMeta, match=r"_local_scalar_dense") as raised:
        count_ops(lambda: float(x.sum()))
    assert raised.value.counter is not None and raised.value.counter.ops == ["sum"]
    read: list[object] = []
    counted = count_ops(lambda: read.append((float(x.sum()), x.long().tolist())), "zero")
    assert read == [(0.0, [0, 0, 0])]
    assert counted.ops == ["sum", "_to_copy"]  # the dtype cast is a kernel, the copy out not
    assert counted.syncs == ["_local_scalar_dense", "_to_copy"]
    with pytest.raises(SyncOnMeta, match=r"nonzero"):
        count_ops(x.nonzero, "zero")  # no made-up shape would be the right one


def test_meta_reads_as_device_reads_is_undone() -> None:
    meta = torch.ones(1, device="meta")
    assert _errors.tracing(meta)
    with meta_reads_as_device_reads():
        assert not _errors.tracing(meta)
    assert _errors.tracing(meta)


# ---------------------------------------------------------------------------- the registry


def _diff(now: dict[str, int], budget: dict[str, int]) -> str:
    more, fewer = Counter(now) - Counter(budget), Counter(budget) - Counter(now)
    parts = [f"+{n} {op}" for op, n in sorted(more.items())]
    parts += [f"-{n} {op}" for op, n in sorted(fewer.items())]
    return ", ".join(parts) or "same ops"


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_ops_stay_within_the_budget(case: Case) -> None:
    budget = BUDGET["cases"].get(case.id)
    assert budget is not None, (
        f"registry case {case.id!r} has no entry in {BUDGET_FILE.name}: run `{REWRITE}` and "
        "commit the entry it adds"
    )
    positional, keyword = case.batch(torch.Generator().manual_seed(0), BUDGET["batch"])
    now = budget_entry(case.make, positional, keyword)
    over = []
    for count, ops in (
        ("update", "update_ops"),
        ("update_unchecked", "update_unchecked_ops"),
        ("compute", "compute_ops"),
    ):
        if now[count] > budget[count]:
            over.append(
                f"{count}: {now[count]} ops, budget {budget[count]} "
                f"({_diff(now[ops], budget[ops])}); now: {now[ops]}"
            )
    for count in ("update_syncs", "compute_syncs"):
        if now[count] > budget[count]:
            over.append(f"{count}: {now[count]}, budget {budget[count]}")
    assert not over, (
        f"{case.id}: over its op budget in {BUDGET_FILE.name}:\n  " + "\n  ".join(over) + "\n"
        f"Fuse the new ops, or, if they are needed, run `{REWRITE}` and say why in the commit."
    )


def test_every_budget_entry_is_a_registry_case() -> None:
    stale = sorted(set(BUDGET["cases"]) - {case.id for case in ALL_CASES})
    assert not stale, f"{BUDGET_FILE.name} has entries for no registry case: {stale}"


def test_no_registry_update_syncs() -> None:
    """The budget itself allows no sync in any update (the project's rule)."""
    syncing = sorted(k for k, v in BUDGET["cases"].items() if v["update_syncs"])
    assert not syncing, f"updates with a host sync in {BUDGET_FILE.name}: {syncing}"
