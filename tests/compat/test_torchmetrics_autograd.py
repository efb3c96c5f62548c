"""Autograd through the TorchMetrics drop-in, against TorchMetrics 1.9 (the oracle): a class's
`forward` and a function keep the graph exactly where TorchMetrics' do (its tester asserts
`out.requires_grad == (is_differentiable and preds.requires_grad)`), and the differentiable
ones have TorchMetrics' gradient and pass `gradcheck` in float64."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
import torchmetrics.classification as tm_classes
import torchmetrics.functional.classification as tm_functions
from torch import Tensor

from torchtally.compat.torchmetrics import classification as our_classes
from torchtally.compat.torchmetrics.functional import classification as our_functions

N, C = 12, 4

#: The families whose values come from the scores themselves (curves, thresholds, bins,
#: margins, ranks) plus the count-based ones whose formats apply a sigmoid or softmax.
FAMILIES = (
    "AUROC",
    "AveragePrecision",
    "ROC",
    "PrecisionRecallCurve",
    "PrecisionAtFixedRecall",
    "RecallAtFixedPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
    "EER",
    "LogAUC",
    "CalibrationError",
    "HingeLoss",
    "CohenKappa",
    "MatthewsCorrCoef",
    "ExactMatch",
    "CoverageError",
    "RankingAveragePrecision",
    "RankingLoss",
)

#: Arguments the constructors and functions need, by parameter name.
ARGUMENTS: dict[str, Any] = {
    "num_classes": C,
    "num_labels": C,
    "min_recall": 0.5,
    "min_precision": 0.5,
    "min_specificity": 0.5,
    "min_sensitivity": 0.5,
}


def _inputs(task: str, logits: bool, extra_dim: bool) -> tuple[Tensor, Tensor]:
    generator = torch.Generator().manual_seed(7)
    extra = (3,) if extra_dim else ()
    if task == "binary":
        shape = (N, *extra)
        target = torch.randint(0, 2, shape, generator=generator)
    elif task == "multiclass":
        shape = (N, C, *extra)
        target = torch.randint(0, C, (N, *extra), generator=generator)
    else:
        shape = (N, C, *extra)
        target = torch.randint(0, 2, shape, generator=generator)
    preds = torch.randn(shape, generator=generator) * 3
    if not logits:
        preds = preds.softmax(1) if task == "multiclass" else preds.sigmoid()
    return preds, target


def _leaves(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return []


def _arguments(function: Any, extra: dict[str, Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    chosen = {k: v for k, v in ARGUMENTS.items() if k in parameters}
    chosen.update({k: v for k, v in extra.items() if k in parameters})
    return chosen


def _names(prefixes: tuple[str, ...], module: Any) -> list[str]:
    return [
        f"{prefix}{family}"
        for family in FAMILIES
        for prefix in prefixes
        if hasattr(module, f"{prefix}{family}")
    ]


VARIANTS = [{}, {"thresholds": 5}, {"ignore_index": -1}, {"average": "micro"}]


def _cases(names: list[str], module: Any) -> list[tuple[str, dict[str, Any]]]:
    """Each name with each variant its TorchMetrics signature takes (`average="micro"` only
    where TorchMetrics offers it: multilabel, but for the log AUC)."""
    cases = []
    for name in names:
        function = getattr(module, name)
        function = function.__init__ if inspect.isclass(function) else function
        parameters = inspect.signature(function).parameters
        for variant in VARIANTS:
            if not all(key in parameters for key in variant):
                continue
            micro = "multilabel" in name.lower() and "logauc" not in name.lower()
            if variant.get("average") == "micro" and not micro:
                continue
            cases.append((name, variant))
    return cases


CLASS_CASES = _cases(_names(("Binary", "Multiclass", "Multilabel"), tm_classes), tm_classes)


def _task(name: str) -> str:
    return next(t for t in ("binary", "multiclass", "multilabel") if name.lower().startswith(t))


def _requires_grad(value: Any) -> list[bool]:
    return [leaf.requires_grad for leaf in _leaves(value)]


@pytest.mark.parametrize(("name", "extra"), CLASS_CASES, ids=str)
def test_class_forward_keeps_the_graph_where_torchmetrics_does(
    name: str, extra: dict[str, Any]
) -> None:
    theirs, ours = getattr(tm_classes, name), getattr(our_classes, name)
    arguments = _arguments(theirs.__init__, extra)
    for logits in (False, True):
        for extra_dim in (False, True) if not extra else (False,):
            preds, target = _inputs(_task(name), logits, extra_dim)
            expected = _requires_grad(theirs(**arguments)(preds.requires_grad_(), target))
            metric = ours(**arguments)
            got = _requires_grad(metric(preds.detach().requires_grad_(), target))
            assert got == expected, (logits, extra_dim)
            assert all(g == metric.is_differentiable for g in got)
            # the accumulated value never carries a graph (TorchMetrics updates with grad off)
            assert not any(_requires_grad(metric.compute()))


FUNCTION_NAMES = [
    name
    for name in dir(tm_functions)
    if name.startswith(("binary_", "multiclass_", "multilabel_"))
    and any(
        name.endswith(suffix)
        for suffix in (
            "auroc",
            "average_precision",
            "roc",
            "precision_recall_curve",
            "at_fixed_recall",
            "at_fixed_precision",
            "at_specificity",
            "at_sensitivity",
            "eer",
            "logauc",
            "calibration_error",
            "hinge_loss",
            "cohen_kappa",
            "matthews_corrcoef",
            "exact_match",
            "coverage_error",
            "ranking_average_precision",
            "ranking_loss",
        )
    )
]


@pytest.mark.parametrize(("name", "extra"), _cases(FUNCTION_NAMES, tm_functions), ids=str)
def test_function_keeps_the_graph_where_torchmetrics_does(name: str, extra: dict[str, Any]) -> None:
    theirs, ours = getattr(tm_functions, name), getattr(our_functions, name)
    arguments = _arguments(theirs, extra)
    for logits in (False, True):
        preds, target = _inputs(_task(name), logits, False)
        expected = _requires_grad(theirs(preds.requires_grad_(), target, **arguments))
        got = _requires_grad(ours(preds.detach().requires_grad_(), target, **arguments))
        assert got == expected, logits


HINGE = [
    ("binary_hinge_loss", "binary", {}),
    ("binary_hinge_loss", "binary", {"squared": True}),
    ("multiclass_hinge_loss", "multiclass", {"num_classes": C}),
    ("multiclass_hinge_loss", "multiclass", {"num_classes": C, "squared": True}),
    ("multiclass_hinge_loss", "multiclass", {"num_classes": C, "multiclass_mode": "one-vs-all"}),
    (
        "multiclass_hinge_loss",
        "multiclass",
        {"num_classes": C, "multiclass_mode": "one-vs-all", "squared": True},
    ),
]


@pytest.mark.parametrize("logits", [False, True])
@pytest.mark.parametrize(("name", "task", "arguments"), HINGE)
def test_hinge_gradient_is_torchmetrics_and_passes_gradcheck(
    name: str, task: str, arguments: dict[str, Any], logits: bool
) -> None:
    preds, target = _inputs(task, logits, True)
    preds = preds.double()
    gradients = []
    for module in (tm_functions, our_functions):
        leaf = preds.clone().requires_grad_()
        value = getattr(module, name)(leaf, target, **arguments)
        assert value.dtype == torch.float64  # the scores' dtype, as TorchMetrics returns
        value.sum().backward()
        gradients.append(leaf.grad)
    torch.testing.assert_close(gradients[1], gradients[0])
    # TorchMetrics' tester: two samples of the first batch
    ours = getattr(our_functions, name)
    assert torch.autograd.gradcheck(
        lambda x: ours(x, target[:2], **arguments), (preds[:2].clone().requires_grad_(),)
    )


def test_hinge_class_value_is_in_the_metric_dtype() -> None:
    preds, target = _inputs("binary", False, False)
    for module in (tm_classes, our_classes):
        metric = module.BinaryHingeLoss()
        assert metric(preds.double(), target).dtype == torch.float32
        metric.set_dtype(torch.float64)
        assert metric(preds.double(), target).dtype == torch.float64
