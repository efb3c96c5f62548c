"""TorchMetrics 1.9 is the oracle: every compat class × configuration × input kind must give
TorchMetrics' values, batch by batch (`forward`) and over all batches (`compute`)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torchmetrics
from tm_cases import CASES, Case

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _same(ours: Any, theirs: Any, case: Case, where: str) -> None:
    if isinstance(theirs, (tuple, list)):  # curves: (x, y, thresholds)
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{case.id} {where}"
        for i, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            _same(mine, other, case, f"{where} [{i}]")
        return
    theirs = torch.as_tensor(theirs)
    ours = torch.as_tensor(ours)
    assert ours.shape == theirs.shape, f"{case.id} {where}: shape {ours.shape} vs {theirs.shape}"
    if ours.is_floating_point() or theirs.is_floating_point():
        # TorchMetrics' Matthews returns an int64 1/-1/0 in its degenerate cases; ours stays
        # float (README: intentional differences). Values must still agree.
        ours, theirs = ours.double(), theirs.double()
    torch.testing.assert_close(
        ours, theirs, equal_nan=True, msg=lambda m: f"{case.id} {where}: {m}", **case.tolerance
    )


def test_torchmetrics_is_1_9() -> None:
    assert torchmetrics.__version__.startswith("1.9")


def test_registry_size() -> None:
    classes = {case.name for case in CASES}
    print(f"\ncompat oracle: {len(classes)} classes, {len(CASES)} class x configuration cases")
    assert len(classes) >= 37 and len(CASES) >= 900


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_torchmetrics(case: Case) -> None:
    batches = case.batches(torch.Generator().manual_seed(hash(case.id) % 2**31))
    ours, theirs = case.ours(), case.theirs()
    for step, batch in enumerate(batches):
        _same(ours(*batch), theirs(*batch), case, f"forward {step}")
    _same(ours.compute(), theirs.compute(), case, "compute")
    ours.reset()
    theirs.reset()
    for batch in batches[:1]:
        ours.update(*batch)
        theirs.update(*batch)
    _same(ours.compute(), theirs.compute(), case, "compute after reset")
