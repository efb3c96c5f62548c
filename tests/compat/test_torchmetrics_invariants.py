"""torchtally's common invariants over the compat registry: traceable (no host sync, one graph),
merge_state equals one metric over all data, reset restores, state_dict round-trips."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
from tm_cases import CASES, Case

from torchtally.testing import assert_traceable

# One case per class (its first configuration) for the invariants; the oracle covers the rest.
_FIRST: dict[str, Case] = {}
for _case in CASES:
    _FIRST.setdefault(_case.name, _case)
PER_CLASS = list(_FIRST.values())
FAST = {
    "MulticlassF1Score",
    "BinaryMatthewsCorrCoef",
    "MultilabelJaccardIndex",
    "MulticlassExactMatch",
    "MulticlassCohenKappa",
    "R2Score",
    "PearsonCorrCoef",
    "MeanMetric",
    "RunningMean",
    "MaxMetric",
    "BinaryAUROC",
    "Perplexity",
}
#: String inputs are host work: these raise inside a traced step (tested below).
HOST_ONLY = {
    "WordErrorRate",
    "CharErrorRate",
    "MatchErrorRate",
    "WordInfoLost",
    "WordInfoPreserved",
}
TRACE = [
    pytest.param(c, id=c.name, marks=() if c.name in FAST else pytest.mark.slow)
    for c in PER_CLASS
    if c.name not in HOST_ONLY
]


def _batches(case: Case) -> list[tuple[Any, ...]]:
    return case.batches(torch.Generator().manual_seed(7))


def _close(a: Any, b: Any) -> None:
    if isinstance(a, (tuple, list)):  # curves: a tuple of tensors, or of per-class lists
        for x, y in zip(a, b, strict=True):
            _close(x, y)
        return
    torch.testing.assert_close(torch.as_tensor(a), torch.as_tensor(b), equal_nan=True)


@pytest.mark.parametrize("case", TRACE)
def test_traceable(case: Case) -> None:
    # Exact curves (thresholds=None) read their fill count at compute: the update must trace.
    exact = "thresholds" in case.kwargs and case.kwargs["thresholds"] is None
    report = assert_traceable(case.ours(), *_batches(case)[0], check_compute=not exact)
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked


@pytest.mark.parametrize("case", PER_CLASS, ids=[c.name for c in PER_CLASS])
def test_merge_reset_state_dict(case: Case) -> None:
    batches = _batches(case)
    whole = case.ours()
    for batch in batches:
        whole.update(*batch)
    expected = whole.compute()

    if case.ours().full_state_update is not False:
        # TorchMetrics' rule for a metric whose forward needs (or may need: None) its whole
        # state: no merge.
        with pytest.raises(RuntimeError, match=r"merge_state.*full_state_update=True"):
            case.ours().merge_state(case.ours())
    elif case.name not in ("RunningMean", "RunningSum"):  # a window has no order-free merge
        left, right = case.ours(), case.ours()
        for i, batch in enumerate(batches):
            (left if i % 2 else right).update(*batch)
        _close(left.merge_state(right).compute(), expected)

    # States are left out of state_dict() unless persistent, as in TorchMetrics.
    assert not any(key in whole.state_dict() for key in whole.state_names())
    whole.persistent(True)
    loaded = case.ours()
    loaded.persistent(True)
    loaded.load_state_dict(whole.state_dict())
    _close(loaded.compute(), expected)

    twin = whole.clone()
    whole.reset()
    fresh = case.ours()
    for metric in (whole, fresh):
        metric.update(*batches[0])
    _close(whole.compute(), fresh.compute())
    _close(twin.compute(), expected)  # the clone kept its own state


def test_forward_does_not_update_twice() -> None:
    from torchtally.compat.torchmetrics import MulticlassAccuracy

    metric = MulticlassAccuracy(3)
    preds, target = torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2])
    assert float(metric(preds, target)) == pytest.approx(5 / 6)
    assert int(metric.num_updates) == 1
    assert int(metric.confmat.sum()) == 4
    copy.deepcopy(metric)  # metrics stay deep-copyable (clone, MetricCollection.clone)


def test_string_metrics_refuse_a_traced_step() -> None:
    from torchtally.compat.torchmetrics import WordErrorRate

    metric = WordErrorRate()

    @torch.compile(fullgraph=True, backend="eager")
    def step(x: torch.Tensor) -> torch.Tensor:
        metric.update(["a b"], ["a c"])
        return x + 1

    with pytest.raises(Exception, match="host work"):
        step(torch.zeros(1))
    metric.update(["a b"], ["a c"])
    assert float(metric.compute()) == 0.5
