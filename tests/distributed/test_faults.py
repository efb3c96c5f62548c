"""Distributed faults on 2 loopback gloo ranks: misconfigured ranks, a rank that never syncs,
a rank that dies, an overflow seen on one rank, and two threads syncing per rank.

Each becomes a clear error on every surviving rank, within the sync timeout, never a silent
value, a backend abort or a hang.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each scenario group spawns 2 fresh ranks (~10-25 s)

sys.path.insert(0, str(Path(__file__).parent))

import _fault_workers as workers  # noqa: E402

from torchtally.distributed import set_sync_timeout, sync_timeout  # noqa: E402


@pytest.fixture(scope="module")
def mismatch_results() -> list[dict]:
    results = workers.run_ranks(workers.mismatched_configurations, 2, timeout=150)
    assert all(isinstance(r, dict) for r in results), results  # a crash shows its traceback
    return results


@pytest.mark.parametrize(
    ("scenario", "names"),
    [
        ("mse_vs_mae", ("MSEMetric", "MAEMetric")),
        ("collection_order", ("MSEMetric", "MAEMetric")),
        ("mean_iou_3_vs_4", ("num_classes=3", "num_classes=4")),
        ("auroc_capacity", ("[101]", "[201]")),
        ("f1_macro_vs_micro", ("'macro'", "'micro'")),
    ],
)
def test_mismatched_configurations_raise_on_every_rank(
    mismatch_results: list[dict], scenario: str, names: tuple[str, str]
) -> None:
    for rank, result in enumerate(mismatch_results):
        kind, message = result[scenario]
        assert kind == "SyncConfigurationError", (rank, kind, message)
        assert "configurations differ across ranks" in message
        for name in names:
            assert name in message, (rank, message)


def test_the_group_still_works_after_a_refused_sync(mismatch_results: list[dict]) -> None:
    values = [r["same_afterwards"] for r in mismatch_results]
    assert values[0][0] == "value" and values[0] == values[1]


def test_a_rank_that_never_computes_makes_the_other_raise_within_the_timeout() -> None:
    results = workers.run_ranks(workers.one_rank_skips_compute, 2, timeout=60)
    kind, message, elapsed = results[0]
    assert kind == "SyncTimeoutError", (kind, message)
    assert "configuration check (all_reduce int64[2])" in message
    assert "did not complete within 2 s" in message
    assert elapsed < 10.0


def test_a_rank_that_dies_makes_the_survivor_raise() -> None:
    results = workers.run_ranks(workers.one_rank_dies, 2, timeout=60)
    assert results[1] is None  # the dead rank wrote nothing
    kind, message, elapsed = results[0]
    assert kind == "SyncTimeoutError", (kind, message)
    assert "all_reduce" in message
    assert elapsed < 15.0


def test_an_overflow_on_one_rank_is_reported_with_the_rows_seen(
    mismatch_results: list[dict],
) -> None:
    for kind, message in (r["overflow"] for r in mismatch_results):
        assert kind == "MetricValueError", message
        assert "received 160 rows over 2 ranks" in message  # 150 + 10, not 250
        assert "of capacity 100 per rank; rank(s) [0] saw more (up to 150 rows)" in message
        assert "50 rows were dropped" in message
        assert "capacity of at least 150" in message


def test_two_threads_per_rank_never_mix_their_collectives(mismatch_results: list[dict]) -> None:
    for rank_result in (r["threads"] for r in mismatch_results):
        # a process group per thread: both exact
        assert rank_result["group_per_thread"] == [("value", "0.5"), ("value", "1.5")]
        # one shared group: each thread gets its exact value or a clear error, never a mix
        for (kind, message), want in zip(rank_result["shared_group"], ("0.5", "1.5")):
            assert (kind, message) == ("value", want) or kind == "SyncConfigurationError", (
                kind,
                message,
            )


def test_the_sync_timeout_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sync_timeout() == 60.0
    monkeypatch.setenv("TORCHTALLY_SYNC_TIMEOUT", "7.5")
    assert sync_timeout() == 7.5
    set_sync_timeout(3)
    try:
        assert sync_timeout() == 3.0
    finally:
        set_sync_timeout(None)
    with pytest.raises(ValueError, match=r"Argument `seconds` must be a positive number"):
        set_sync_timeout(0)
    monkeypatch.setenv("TORCHTALLY_SYNC_TIMEOUT", "soon")
    with pytest.raises(ValueError, match=r"`TORCHTALLY_SYNC_TIMEOUT` must be a positive"):
        sync_timeout()


@pytest.mark.parametrize("world", [3, 4])
def test_one_odd_rank_of_three_or_four_makes_every_rank_raise(world: int) -> None:
    results = workers.run_ranks(workers.one_rank_of_three_differs, world, timeout=120)
    assert len(results) == world
    for rank, (kind, message) in enumerate(results):
        assert kind == "SyncConfigurationError", (rank, kind, message)
        assert "MAEMetric" in message and "MSEMetric" in message


def test_every_survivor_of_three_ranks_raises_when_one_dies() -> None:
    results = workers.run_ranks(workers.one_rank_of_three_dies, 3, timeout=90)
    assert results[2] is None  # the dead rank wrote nothing
    for rank, (kind, message, elapsed) in enumerate(results[:2]):
        assert kind == "SyncTimeoutError", (rank, kind, message)
        assert "configuration check (all_reduce int64[2])" in message, (rank, message)
        assert elapsed < 15.0, (rank, elapsed)


def test_a_rank_that_crashes_mid_sync_makes_every_survivor_raise_naming_the_collective() -> None:
    results = workers.run_ranks(workers.one_rank_crashes_mid_sync, 3, timeout=90)
    assert results[2] is None  # it died after the configuration check, inside the sync
    for rank, (kind, message, elapsed) in enumerate(results[:2]):
        assert kind == "SyncTimeoutError", (rank, kind, message)
        # the first packed all_reduce after the check (bookkeeping and states, by dtype)
        assert re.search(r"the state sync \(all_reduce sum \w+\[\d+\]\) collective", message), (
            rank,
            message,
        )
        assert "did not complete within 5 s" in message, (rank, message)
        assert elapsed < 15.0, (rank, elapsed)
