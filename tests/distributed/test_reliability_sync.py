"""`compute()` every step on 2 gloo ranks while one rank has stopped updating (issue 25,
class 2): every rank returns the global value at every step, and no rank waits for the sync
timeout. A value cached on one rank must never stand in for a sync the other ranks enter.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _fault_workers import run_ranks
from _reliability_workers import (
    NUM_CLASSES,
    STEPS,
    SYNC_TIMEOUT,
    classification,
    compute_every_step,
    updates,
    values,
)

pytestmark = pytest.mark.slow  # each scenario spawns 2 fresh ranks (~10 s)

WORLD = 2


def _expected(scenario: str, step: int) -> float:
    """The global value after `step`, from the batches every rank fed so far (float64 NumPy)."""
    fed = [(r, s) for s in range(step + 1) for r in range(WORLD) if updates(r, s)]
    if scenario == "mean":
        return float(np.concatenate([values(r, s).numpy() for r, s in fed]).mean())
    labels = np.concatenate([classification(r, s)[0].numpy() for r, s in fed])
    scores = np.concatenate([classification(r, s)[1].numpy() for r, s in fed])
    assert scores.shape[1] == NUM_CLASSES
    return float((scores.argmax(-1) == labels).mean())


@pytest.mark.parametrize("scenario", ["mean", "accuracy"])
def test_compute_every_step_gives_every_rank_the_global_value(scenario: str) -> None:
    # run_ranks, not run_local_ranks: a rank left in a timed-out collective must not turn the
    # launcher's closing barrier into a 60 s hang; each rank's record comes back regardless.
    records = run_ranks(functools.partial(compute_every_step, scenario=scenario), WORLD, 60)
    for rank, record in enumerate(records):
        assert isinstance(record, list), (rank, record)  # a crash shows its traceback
        for step, outcome in enumerate(record):
            assert outcome[0] == "value", (rank, step, outcome)
            assert outcome[1] == pytest.approx(_expected(scenario, step), rel=1e-6), (
                rank,
                step,
            )
            # nothing waited for a peer that never came
            assert outcome[-1] < SYNC_TIMEOUT, (rank, step, outcome)
        assert len(record) == STEPS, (rank, record)


def test_the_oracle_changes_after_rank_1_stops() -> None:
    """Guard on the scenario: rank 0's later updates move the global value."""
    for scenario in ("mean", "accuracy"):
        later = [_expected(scenario, s) for s in range(1, STEPS)]
        assert len(set(later)) > 1, scenario
