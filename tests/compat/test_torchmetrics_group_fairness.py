"""`torchmetrics.classification.group_fairness` and its functions against TorchMetrics 1.9 and
fairlearn (the oracles): the same keys and values over labels, probabilities and logits,
`ignore_index`, the three tasks and several batches; the update traces without host reads;
group identifiers are honoured where TorchMetrics renumbers the groups present in a batch."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
import torchmetrics.classification.group_fairness as tm_classes
import torchmetrics.functional.classification.group_fairness as tm_functions
from torch import Tensor

from torchtally._errors import MetricValueError
from torchtally.compat.torchmetrics.classification import group_fairness as our_classes
from torchtally.compat.torchmetrics.functional.classification import (
    group_fairness as our_functions,
)
from torchtally.testing import assert_traceable

N = 40


def _batch(seed: int, kind: str, groups: int, ignore_index: int | None) -> tuple[Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    if kind == "labels":
        preds = torch.randint(0, 2, (N,), generator=generator)
    elif kind == "probs":
        preds = torch.rand(N, generator=generator)
    else:
        preds = torch.randn(N, generator=generator) * 3
    target = torch.randint(0, 2, (N,), generator=generator)
    ids = torch.randint(0, groups, (N,), generator=generator)
    ids[:groups] = torch.arange(groups)  # every group in every batch: TorchMetrics' input
    if ignore_index == -1:
        target = torch.where(torch.rand(N, generator=generator) < 0.2, -1, target)
    return preds, target, ids


def assert_same(theirs: dict[str, Tensor], ours: dict[str, Tensor]) -> None:
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        assert ours[key].dtype == value.dtype, key
        torch.testing.assert_close(ours[key], value, equal_nan=True)


CASES = [
    (kind, groups, ignore_index)
    for kind in ("labels", "probs", "logits")
    for groups in (2, 3)
    for ignore_index in (None, 0, -1)
]


@pytest.mark.parametrize(("kind", "groups", "ignore_index"), CASES)
def test_functions_are_torchmetrics(kind: str, groups: int, ignore_index: int | None) -> None:
    preds, target, ids = _batch(1, kind, groups, ignore_index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for task in ("all", "demographic_parity", "equal_opportunity"):
            assert_same(
                tm_functions.binary_fairness(preds, target, ids, task, 0.5, ignore_index),
                our_functions.binary_fairness(preds, target, ids, task, 0.5, ignore_index),
            )
    assert_same(
        tm_functions.binary_groups_stat_rates(preds, target, ids, groups, 0.3, ignore_index),
        our_functions.binary_groups_stat_rates(preds, target, ids, groups, 0.3, ignore_index),
    )
    assert_same(
        tm_functions.demographic_parity(preds, ids, ignore_index=ignore_index),
        our_functions.demographic_parity(preds, ids, ignore_index=ignore_index),
    )
    assert_same(
        tm_functions.equal_opportunity(preds, target, ids, ignore_index=ignore_index),
        our_functions.equal_opportunity(preds, target, ids, ignore_index=ignore_index),
    )


@pytest.mark.parametrize("task", ["all", "demographic_parity", "equal_opportunity"])
@pytest.mark.parametrize(("kind", "groups", "ignore_index"), CASES[::2])
def test_classes_are_torchmetrics_over_batches(
    kind: str, groups: int, ignore_index: int | None, task: str
) -> None:
    arguments: dict[str, Any] = {"num_groups": groups, "ignore_index": ignore_index}
    pairs = [
        (
            tm_classes.BinaryFairness(task=task, **arguments),
            our_classes.BinaryFairness(task=task, **arguments),
        ),
        (
            tm_classes.BinaryGroupStatRates(**arguments),
            our_classes.BinaryGroupStatRates(**arguments),
        ),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(3):
            preds, target, ids = _batch(seed, kind, groups, ignore_index)
            for theirs, ours in pairs:
                assert_same(theirs(preds, target, ids), ours(preds, target, ids))
    for theirs, ours in pairs:
        assert_same(theirs.compute(), ours.compute())
        for name in ("tp", "fp", "tn", "fn"):
            assert torch.equal(getattr(ours, name), getattr(theirs, name)), name


def test_fairlearn_ratios() -> None:
    fairlearn = pytest.importorskip("fairlearn.metrics")
    preds, target, ids = _batch(5, "probs", 3, None)
    frame = fairlearn.MetricFrame(
        metrics={"dp": fairlearn.selection_rate, "eo": fairlearn.true_positive_rate},
        y_true=target.numpy(),
        y_pred=(preds > 0.5).long().numpy(),
        sensitive_features=ids.numpy(),
    )
    ratios, by_group = frame.ratio(), frame.by_group
    metric = our_classes.BinaryFairness(3)
    metric.update(preds[:20], target[:20], ids[:20])
    metric.update(preds[20:], target[20:], ids[20:])
    value = metric.compute()
    dp = f"DP_{by_group['dp'].astype(float).idxmin()}_{by_group['dp'].astype(float).idxmax()}"
    eo = f"EO_{by_group['eo'].astype(float).idxmin()}_{by_group['eo'].astype(float).idxmax()}"
    assert list(value) == [dp, eo]
    assert value[dp].item() == pytest.approx(ratios["dp"])
    assert value[eo].item() == pytest.approx(ratios["eo"])


def test_a_batch_without_some_group_counts_by_identifier() -> None:
    # TorchMetrics 1.9 adds a batch holding only group 1 to row 0; here it stays group 1.
    preds = torch.tensor([1, 1, 0, 0])
    target = torch.tensor([1, 0, 1, 0])
    metric = our_classes.BinaryGroupStatRates(2)
    metric.update(preds, target, torch.tensor([1, 1, 1, 1]))
    assert torch.equal(metric.tp, torch.tensor([0, 1]))
    assert torch.equal(metric.fn, torch.tensor([0, 1]))
    value = metric.compute()
    assert value["group_0"].isnan().all()
    torch.testing.assert_close(value["group_1"], torch.tensor([0.25, 0.25, 0.25, 0.25]))
    # the functions report the groups present, keyed by identifier
    assert list(
        our_functions.binary_groups_stat_rates(preds, target, torch.tensor([0, 0, 2, 2]), 3)
    ) == [
        "group_0",
        "group_2",
    ]


def test_update_traces_without_host_reads() -> None:
    preds, target, ids = _batch(2, "logits", 3, -1)
    for metric in (
        our_classes.BinaryFairness(3, ignore_index=-1),
        our_classes.BinaryGroupStatRates(3, ignore_index=-1),
    ):
        report = assert_traceable(metric, preds, target, ids, check_compute=False)
        assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked


def test_bad_groups_are_clear_errors() -> None:
    preds, target = torch.rand(4), torch.tensor([0, 1, 1, 0])
    metric = our_classes.BinaryFairness(2)
    metric.update(preds, target, torch.tensor([0, 1, 2, 1]))
    with pytest.raises(MetricValueError, match=r"group identifiers outside \[0, num_groups\)"):
        metric.compute()
    with pytest.raises(ValueError, match="Expected dtype of argument groups to be long"):
        our_classes.BinaryFairness(2).update(preds, target, torch.tensor([0, 1, 1, 0]).int())
    with pytest.raises(ValueError, match="one group identifier per sample"):
        our_classes.BinaryFairness(2).update(preds, target, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="Argument `num_groups` must be an integer >= 1"):
        our_classes.BinaryFairness(0)
    with pytest.raises(ValueError, match="Expected argument `task`"):
        our_classes.BinaryFairness(2, task="parity")
    with pytest.raises(ValueError, match="Argument `groups` must hold group identifiers"):
        our_functions.binary_groups_stat_rates(preds, target, torch.tensor([0, 1, 2, 1]), 2)
    with pytest.raises(ValueError, match="Argument `groups` must hold group identifiers"):
        our_functions.binary_fairness(preds, target, torch.tensor([0, -1, 1, 1]))


def test_demographic_parity_warns_of_a_target_as_torchmetrics() -> None:
    preds, target, ids = _batch(3, "probs", 2, None)
    for module in (tm_functions, our_functions):
        with pytest.warns(UserWarning, match="does not require a target"):
            module.binary_fairness(preds, target, ids, task="demographic_parity")
    for classes in (tm_classes, our_classes):
        with pytest.warns(UserWarning, match="does not require a target"):
            classes.BinaryFairness(2, task="demographic_parity").update(preds, target, ids)
