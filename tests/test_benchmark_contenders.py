"""The benchmarks' contenders compute the same statistic: a timing compares like with like only
when every library is given a case it can score, and scores it alike. (The binary-AUROC cases
once drew every label 0, so the three libraries timed an undefined AUROC, and returned NaN, 0
and 0.5 for it.)"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from benchmarks import bench_eager_grid as grid
from benchmarks import bench_whole_eval as whole

#: Binned AUROC: 200 bins against 200 thresholds, placed alike but not bin for bin.
_TOLERANCE = {"binned AUROC": 0.02}


def _value(contender: grid.Contender) -> torch.Tensor:
    assert contender.compute is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchMetrics' notes on its own inputs
        value = contender.compute()
    if isinstance(value, tuple):  # torcheval's binned AUROC: (AUROC, thresholds)
        value = value[0]
    return torch.as_tensor(value, dtype=torch.float64).cpu()


def _evaluate(group: dict[str, grid.Contender], updates: int) -> dict[str, torch.Tensor]:
    values = {}
    for name in ("torchtally", "TorchMetrics", "torcheval"):
        contender = group[name]
        contender.reset()
        for _ in range(updates):
            contender.update()
        values[name] = _value(contender)
    return values


@pytest.mark.parametrize("family", grid.FAMILIES)
def test_the_grid_contenders_agree_on_a_defined_value(family: str) -> None:
    classes = 10 if family in grid.CLASS_FAMILIES else 1
    values = _evaluate(grid.contenders(family, 256, classes, capacity=256 * 3), 3)
    ours = values["torchtally"]
    assert not ours.isnan().any(), f"{family}: the case has no defined value"
    for name in ("TorchMetrics", "torcheval"):
        theirs = values[name].reshape(ours.shape)
        torch.testing.assert_close(
            ours, theirs, rtol=1e-4, atol=_TOLERANCE.get(family, 1e-5), msg=f"{family}: {name}"
        )


@pytest.mark.parametrize(("family", "classes"), [("binary AUROC", 1), ("multiclass AUROC", 3)])
def test_distinct_batches_are_each_scored_once_per_evaluation(family: str, classes: int) -> None:
    from sklearn.metrics import roc_auc_score

    updates = 4
    group = whole.distinct_contenders(family, 32, classes, updates)
    values = _evaluate(group, updates)
    # the same batches again, drawn as the benchmark draws them, scored by scikit-learn
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, max(classes, 2), (updates, 32), generator=g).reshape(-1)
    scores = torch.randn(updates, 32, max(classes, 2), generator=g).reshape(-1, max(classes, 2))
    if family == "binary AUROC":
        expected = roc_auc_score((labels % 2).numpy(), torch.sigmoid(scores[:, 0]).numpy())
    else:
        expected = roc_auc_score(labels.numpy(), scores.softmax(-1).numpy(), multi_class="ovr")
    for name, value in values.items():
        assert math.isclose(float(value), expected, rel_tol=1e-5), name
    # a second evaluation goes through the same batches, not the next ones
    assert _evaluate(group, updates) == values


def test_distinct_batches_refuse_a_family_without_a_sort() -> None:
    with pytest.raises(ValueError, match="Argument `family` must be one of"):
        whole.distinct_contenders("accuracy", 8, 2, 2)


def test_the_whole_grid_sorts_distinct_scores_and_names_what_it_skips() -> None:
    planned, skipped = whole.plan(quick=False, only=None)
    # exact AUROC over distinct batches (a repeated batch favours comparison sorts), every
    # other family over its one batch
    assert {(family, distinct) for family, _, _, distinct in planned} == {
        (family, family in grid.CAT_FAMILIES) for family in grid.FAMILIES
    }
    ran = {(family, n, classes) for family, n, classes, _ in planned}
    assert not ran & set(whole.SKIPPED)
    assert len(skipped) == len(whole.SKIPPED) and all(": " in why for why in skipped)
    everything, none_skipped = whole.plan(quick=False, only=None, repeated=True, run_skipped=True)
    assert none_skipped == [] and not any(distinct for *_, distinct in everything)
    assert {(f, n, c) for f, n, c, _ in everything} == ran | set(whole.SKIPPED)
