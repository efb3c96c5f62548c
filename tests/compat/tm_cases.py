"""The registry of compat-vs-TorchMetrics cases: every class × configuration × input kind.

Each case builds our metric and TorchMetrics 1.9's with the same constructor arguments and
yields the same randomized batches (logits, probabilities, labels, NCHW, ignore_index padding),
so the oracle test can demand equal forward and compute values.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torchmetrics.classification as tmc
from torch import Tensor

from torchtally.compat.torchmetrics import classification as ours

Batch = tuple[Tensor, ...]
N, C, L = 24, 5, 4


@dataclass
class Case:
    id: str
    name: str
    kwargs: dict[str, Any]
    batches: Callable[[torch.Generator], list[Batch]]
    ours_module: Any = ours
    theirs_module: Any = tmc
    tolerance: dict[str, float] = field(default_factory=lambda: {"rtol": 1e-5, "atol": 1e-6})

    def ours(self) -> Any:
        return getattr(self.ours_module, self.name)(**self.kwargs)

    def theirs(self) -> Any:
        return getattr(self.theirs_module, self.name)(**self.kwargs)


def _pad(target: Tensor, ignore: int | None, g: torch.Generator) -> Tensor:
    if ignore is None:
        return target
    mask = torch.rand(target.shape, generator=g) < 0.15
    return torch.where(mask, torch.full_like(target, ignore), target)


def _binary_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    shape = (N, 3, 2) if kind == "multidim" else (N,)
    target = torch.randint(0, 2, shape, generator=g)
    if kind == "labels":
        preds: Tensor = torch.randint(0, 2, shape, generator=g)
    elif kind == "logits":
        preds = torch.randn(shape, generator=g) * 2
    else:
        preds = torch.rand(shape, generator=g)
    return preds, _pad(target, ignore, g)


def _multiclass_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    if kind == "nchw":
        target = torch.randint(0, C, (4, 3, 2), generator=g)
        preds: Tensor = torch.randn(4, C, 3, 2, generator=g)
    elif kind == "labels":
        target = torch.randint(0, C, (N,), generator=g)
        preds = torch.randint(0, C, (N,), generator=g)
    elif kind == "sparse":  # class C-1 never occurs; class C-2 is only ever predicted
        target = torch.randint(0, C - 2, (N,), generator=g)
        preds = torch.randint(0, C - 1, (N,), generator=g)
    else:
        target = torch.randint(0, C, (N,), generator=g)
        preds = torch.randn(N, C, generator=g) * 2
        if kind == "probs":
            preds = preds.softmax(-1)
    return preds, _pad(target, ignore, g)


def _multilabel_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    shape = (N // 2, L, 3) if kind == "multidim" else (N, L)
    target = torch.randint(0, 2, shape, generator=g)
    if kind == "labels":
        preds: Tensor = torch.randint(0, 2, shape, generator=g)
    elif kind == "logits":
        preds = torch.randn(shape, generator=g) * 2
    else:
        preds = torch.rand(shape, generator=g)
    return preds, _pad(target, ignore, g)


_MAKERS = {
    "binary": _binary_batch,
    "multiclass": _multiclass_batch,
    "multilabel": _multilabel_batch,
}
KINDS = {
    "binary": ("probs", "logits", "labels", "multidim"),
    "multiclass": ("probs", "logits", "labels", "nchw", "sparse"),
    "multilabel": ("probs", "logits", "labels", "multidim"),
}
IGNORES = {"binary": (None, -1), "multiclass": (None, 0, -100), "multilabel": (None, -1)}
FLOAT_KINDS = ("probs", "logits", "nchw")


def _batches(task: str, kind: str, ignore: int | None) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        return [_MAKERS[task](kind, ignore, g) for _ in range(3)]

    return make


STAT_METRICS = (
    "Accuracy",
    "Precision",
    "Recall",
    "F1Score",
    "FBetaScore",
    "Specificity",
    "HammingDistance",
    "StatScores",
)
ZERO_DIVISION = ("Precision", "Recall", "F1Score", "FBetaScore")


def _case(name: str, task: str, kind: str, **kwargs: Any) -> Case:
    ignore = kwargs.get("ignore_index")
    config = ",".join(
        f"{k}={v}" for k, v in kwargs.items() if k not in ("num_classes", "num_labels")
    )
    return Case(
        f"{task.capitalize()}{name}[{kind}|{config}]",
        task.capitalize() + name,
        kwargs,
        _batches(task, kind, ignore),
    )


def classification_cases() -> list[Case]:
    cases: list[Case] = []
    for metric in STAT_METRICS:
        extra: dict[str, Any] = {"beta": 0.5} if metric == "FBetaScore" else {}
        for kind, ignore in itertools.product(KINDS["binary"], IGNORES["binary"]):
            cases.append(_case(metric, "binary", kind, **extra, ignore_index=ignore))
        if metric in ZERO_DIVISION:
            cases.append(_case(metric, "binary", "labels", **extra, zero_division=1))
        for kind, ignore, average in itertools.product(
            KINDS["multiclass"], IGNORES["multiclass"], ("micro", "macro", "weighted", "none")
        ):
            for top_k in (1, 2) if kind in FLOAT_KINDS else (1,):
                cases.append(
                    _case(
                        metric,
                        "multiclass",
                        kind,
                        **extra,
                        num_classes=C,
                        average=average,
                        top_k=top_k,
                        ignore_index=ignore,
                    )
                )
            if metric in ZERO_DIVISION and ignore is None:
                cases.append(
                    _case(
                        metric,
                        "multiclass",
                        kind,
                        **extra,
                        num_classes=C,
                        average=average,
                        zero_division=1,
                    )
                )
        for kind, ignore, average in itertools.product(
            KINDS["multilabel"], IGNORES["multilabel"], ("micro", "macro", "weighted", "none")
        ):
            cases.append(
                _case(
                    metric,
                    "multilabel",
                    kind,
                    **extra,
                    num_labels=L,
                    average=average,
                    ignore_index=ignore,
                )
            )
    for task in ("binary", "multiclass", "multilabel"):
        size = {"binary": {}, "multiclass": {"num_classes": C}, "multilabel": {"num_labels": L}}[
            task
        ]
        for kind, ignore in itertools.product(KINDS[task], IGNORES[task]):
            for normalize in (None, "true", "pred", "all"):
                cases.append(
                    _case(
                        "ConfusionMatrix",
                        task,
                        kind,
                        **size,
                        ignore_index=ignore,
                        normalize=normalize,
                    )
                )
            cases.append(_case("MatthewsCorrCoef", task, kind, **size, ignore_index=ignore))
            averages = (None,) if task == "binary" else ("micro", "macro", "weighted", "none")
            for average in averages:
                extra = {} if average is None else {"average": average}
                cases.append(
                    _case("JaccardIndex", task, kind, **size, **extra, ignore_index=ignore)
                )
            if task != "binary":
                cases.append(_case("ExactMatch", task, kind, **size, ignore_index=ignore))
            if task != "multilabel":
                for weights in (None, "linear", "quadratic"):
                    cases.append(
                        _case(
                            "CohenKappa", task, kind, **size, ignore_index=ignore, weights=weights
                        )
                    )
    return cases


#: Degenerate binary inputs (all one class, all right, all wrong) that hit TorchMetrics'
#: special cases (Matthews' zero denominators, zero_division).
def degenerate_cases() -> list[Case]:
    patterns = {
        "all_right_pos": ([1, 1, 1, 1], [1, 1, 1, 1]),
        "all_right_neg": ([0, 0, 0, 0], [0, 0, 0, 0]),
        "all_wrong": ([1, 0, 1, 0], [0, 1, 0, 1]),
        "no_pos_pred": ([0, 0, 0, 0], [1, 0, 1, 0]),
        "no_neg_pred": ([1, 1, 1, 1], [1, 0, 0, 0]),
        "no_pos_target": ([1, 0, 1, 0], [0, 0, 0, 0]),
        "one_tp": ([1, 0, 0, 0], [1, 1, 0, 0]),
    }
    cases = []
    for label, (preds, target) in patterns.items():
        batch = (torch.tensor(preds), torch.tensor(target))
        for name in (
            "MatthewsCorrCoef",
            "Precision",
            "Recall",
            "F1Score",
            "JaccardIndex",
            "CohenKappa",
            "Specificity",
        ):
            kwargs: dict[str, Any] = {}
            for zero_division in (0, 1) if name in ("Precision", "Recall", "F1Score") else (None,):
                if zero_division is not None:
                    kwargs = {"zero_division": zero_division}
                cases.append(
                    Case(
                        f"Binary{name}[{label}|{kwargs}]",
                        f"Binary{name}",
                        dict(kwargs),
                        lambda g, b=batch: [b],
                    )
                )
    return cases


CASES = classification_cases() + degenerate_cases()
