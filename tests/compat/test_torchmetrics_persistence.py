"""`state_dict()` as in TorchMetrics: metric states are left out unless `persistent(True)`, so a
model holding metrics saves and strictly loads a plain checkpoint; TorchMetrics 1.9 is the oracle
for the keys (default and persistent), inside an `nn.Module` and in a `MetricCollection`."""

from __future__ import annotations

import pytest
import torch
import torchmetrics as tm
from tm_cases import CASES, Case
from torch import nn

from torchtally.compat import torchmetrics as ttm

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_FIRST: dict[str, Case] = {}
for _case in CASES:
    _FIRST.setdefault(_case.name, _case)
PER_CLASS = list(_FIRST.values())

#: Classes whose states carry TorchMetrics' own names: their persistent keys must be equal.
#: (The stat-score family keeps one confusion matrix where TorchMetrics keeps tp/fp/tn/fn,
#: curves and retrieval keep preallocated buffers where TorchMetrics keeps lists: other names.)
SAME_NAMES = {
    "BinaryConfusionMatrix",
    "MulticlassConfusionMatrix",
    "MultilabelConfusionMatrix",
    "BinaryMatthewsCorrCoef",
    "MulticlassMatthewsCorrCoef",
    "BinaryJaccardIndex",
    "MulticlassJaccardIndex",
    "BinaryCohenKappa",
    "MulticlassExactMatch",
    "MultilabelExactMatch",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "SymmetricMeanAbsolutePercentageError",
    "ExplainedVariance",
    "KLDivergence",
    "MeanMetric",
    "SumMetric",
    "Perplexity",
    "MeanIoU",
    "StructuralSimilarityIndexMeasure",
    "WordErrorRate",
    "CharErrorRate",
    "BinaryAUROC",
    "BinaryAveragePrecision",
    "MeanSquaredLogError",
    "LogCoshError",
    "WeightedMeanAbsolutePercentageError",
    "RelativeSquaredError",
    "MinkowskiDistance",
    "TweedieDevianceScore",
    "CriticalSuccessIndex",
}
#: Bookkeeping saved with the states (so a resumed evaluation still raises earlier data errors).
BOOKKEEPING = {"_errors", "_num_updates"}


def _counts(metric: ttm.Metric) -> set[str]:
    return {name + "_count" for name, _, r in metric.states() if r == "cat"}


def _metric_keys(metric: ttm.Metric) -> set[str]:
    """Keys of `state_dict()` less our documented extras (bookkeeping, `cat` fill counts)."""
    return set(metric.state_dict()) - BOOKKEEPING - _counts(metric)


@pytest.mark.parametrize("case", PER_CLASS, ids=[c.name for c in PER_CLASS])
def test_state_dict_keys_match_torchmetrics(case: Case) -> None:
    ours, theirs = case.ours(), case.theirs()
    assert set(ours.state_dict()) == set(theirs.state_dict()) == set()

    ours.persistent(True)
    theirs.persistent(True)
    saved = set(ours.state_dict())
    assert set(ours.state_names()) <= saved  # every state, under its own name
    if case.name in SAME_NAMES:
        assert _metric_keys(ours) == set(theirs.state_dict())
    else:
        assert _metric_keys(ours) == set(ours.state_names()) - _counts(ours) != set()

    ours.persistent()  # TorchMetrics' default mode is False
    theirs.persistent()
    assert set(ours.state_dict()) == set(theirs.state_dict()) == set()


def _model(module: object, persistent: bool) -> nn.Module:
    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(4, 3)
            self.acc = module.Accuracy(task="multiclass", num_classes=3)  # type: ignore[attr-defined]
            self.mse = module.MeanSquaredError()  # type: ignore[attr-defined]
            if persistent:
                self.mse.persistent(True)

    return Model()


def test_a_model_holding_metrics_saves_what_torchmetrics_saves() -> None:
    ours, theirs = _model(ttm, False), _model(tm, False)
    assert set(ours.state_dict()) == set(theirs.state_dict()) == {"layer.weight", "layer.bias"}

    ours, theirs = _model(ttm, True), _model(tm, True)
    assert set(ours.state_dict()) - {"mse._errors", "mse._num_updates"} == set(theirs.state_dict())
    assert {"mse.sum_squared_error", "mse.total"} <= set(ours.state_dict())


def test_a_plain_checkpoint_loads_strictly_into_persistent_metrics() -> None:
    plain = _model(ttm, False).state_dict()
    for module in (ttm, tm):  # TorchMetrics tolerates the missing states: so do we
        model = _model(module, True)
        model.mse.update(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]))
        result = model.load_state_dict(plain, strict=True)
        assert result.missing_keys == [] and result.unexpected_keys == []
        assert float(model.mse.compute()) == 2.0  # the states kept their values
    with pytest.raises(RuntimeError, match="Missing key"):  # other modules stay strict
        _model(ttm, False).load_state_dict({"layer.weight": plain["layer.weight"]})


def test_a_persistent_checkpoint_resumes_the_evaluation() -> None:
    g = torch.Generator().manual_seed(0)
    preds, target = torch.randn(30, generator=g), torch.randn(30, generator=g)
    saved, oracle = _model(ttm, True), tm.MeanSquaredError()
    saved.mse.update(preds[:20], target[:20])
    oracle.update(preds, target)
    resumed = _model(ttm, True)
    resumed.load_state_dict(saved.state_dict())
    resumed.mse.update(preds[20:], target[20:])
    torch.testing.assert_close(resumed.mse.compute().double(), oracle.compute().double())


def test_collection_persistent_matches_torchmetrics() -> None:
    def build(module: object) -> nn.Module:
        return module.MetricCollection(  # type: ignore[attr-defined, no-any-return]
            [module.MeanSquaredError(), module.MeanAbsoluteError()]  # type: ignore[attr-defined]
        )

    ours, theirs = build(ttm), build(tm)
    assert set(ours.state_dict()) == set(theirs.state_dict()) == set()
    ours.persistent()  # a collection's default mode is True, as in TorchMetrics
    theirs.persistent()
    ours_states = {k.rsplit(".", 1)[1] for k in ours.state_dict()} - BOOKKEEPING
    theirs_states = {k.rsplit(".", 1)[1] for k in theirs.state_dict()}
    assert ours_states == theirs_states == {"sum_squared_error", "sum_abs_error", "total"}


def test_classwise_wrapper_saves_the_wrapped_states_as_torchmetrics() -> None:
    from torchmetrics.wrappers import ClasswiseWrapper as TheirClasswise

    ours = ttm.ClasswiseWrapper(ttm.MulticlassAccuracy(3, average=None))
    theirs = TheirClasswise(tm.classification.MulticlassAccuracy(3, average=None))
    assert set(ours.state_dict()) == set(theirs.state_dict()) == set()
    ours.persistent(True)
    theirs.persistent(True)
    assert {k.split(".")[0] for k in ours.state_dict()} == {"metric"}
    assert any(k.startswith("metric.") for k in theirs.state_dict())
    assert "metric.confmat" in ours.state_dict()


def test_running_window_is_saved_when_persistent() -> None:
    from torchtally.compat.torchmetrics.wrappers import Running

    window = Running(ttm.SumMetric(), window=2)
    assert set(window.state_dict()) == set()
    window.persistent(True)
    window.update(torch.tensor([1.0, 2.0]))
    resumed = Running(ttm.SumMetric(), window=2)
    resumed.persistent(True)
    resumed.load_state_dict(window.state_dict())
    resumed.update(torch.tensor([4.0]))
    assert float(resumed.compute()) == 7.0
