"""`torchtally.compat.torchmetrics.functional` against TorchMetrics 1.9's functional API (the
oracle): the same modules, names and signatures, the same values (samplewise, ignore_index,
top-k, binned and exact curves, regression, retrieval), TorchMetrics' errors and warnings, and
the same value as the compatible class on one batch."""

from __future__ import annotations

import importlib
import inspect
import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torchmetrics.functional as tmf
import torchmetrics.functional.classification as tmc
import torchmetrics.functional.regression as tmr
import torchmetrics.functional.retrieval as tmq
from torch import Tensor

from torchtally.compat.torchmetrics import classification as classes
from torchtally.compat.torchmetrics import functional as ours
from torchtally.compat.torchmetrics.functional import classification as occ
from torchtally.compat.torchmetrics.functional import regression as ocr
from torchtally.compat.torchmetrics.functional import retrieval as ocq

N, C = 16, 4

#: TorchMetrics names not offered yet (no compatible class to adapt): see the package docstrings.
#: TorchMetrics functions the drop-in does not have yet (none left).
NOT_YET: set[str] = set()


def _flat(value: Any) -> list[Tensor]:
    if isinstance(value, (tuple, list)):
        return [tensor for item in value for tensor in _flat(item)]
    return [value]


def assert_same(theirs: Any, mine: Any, atol: float = 1e-6) -> None:
    expected, got = _flat(theirs), _flat(mine)
    assert len(expected) == len(got)
    for a, b in zip(expected, got, strict=True):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype or a.is_floating_point() == b.is_floating_point(), (
            a.dtype,
            b.dtype,
        )
        torch.testing.assert_close(b.double(), a.double(), atol=atol, rtol=1e-5, equal_nan=True)


# ------------------------------------------------------------------------------- the API


@pytest.mark.parametrize(
    ("theirs", "mine"),
    [(tmc, occ), (tmr, ocr), (tmq, ocq)],
    ids=["classification", "regression", "retrieval"],
)
def test_every_name_with_torchmetrics_signature(theirs: Any, mine: Any) -> None:
    for name in theirs.__all__:
        if name in NOT_YET:
            assert not hasattr(mine, name)
            continue
        expected = inspect.signature(getattr(theirs, name)).parameters
        got = inspect.signature(getattr(mine, name)).parameters
        assert [(p.name, p.default, p.kind) for p in expected.values()] == [
            (p.name, p.default, p.kind) for p in got.values()
        ], name


def test_root_names_are_torchmetrics_ones() -> None:
    for name in ours.__all__:
        if name in ("classification", "image", "regression", "retrieval", "text"):
            continue
        assert name in tmf.__all__, name
        expected = inspect.signature(getattr(tmf, name)).parameters
        got = inspect.signature(getattr(ours, name)).parameters
        assert list(expected) == list(got), name


def test_submodules_import_as_in_torchmetrics() -> None:
    # every public function from the TorchMetrics submodule that defines it, e.g.
    # `from torchmetrics.functional.classification.accuracy import binary_accuracy`
    for package, theirs in (("classification", tmc), ("regression", tmr), ("retrieval", tmq)):
        for name in set(theirs.__all__) - NOT_YET:
            module = getattr(theirs, name).__module__.replace("torchmetrics.", "", 1)
            mine = importlib.import_module(f"torchtally.compat.torchmetrics.{module}")
            assert getattr(mine, name) is getattr(
                importlib.import_module(f"torchtally.compat.torchmetrics.functional.{package}"),
                name,
            ), (module, name)
    from torchtally.compat.torchmetrics.functional.classification.stat_scores import (
        _refine_preds_oh,
        binary_stat_scores,
    )
    from torchtally.compat.torchmetrics.functional.regression.spearman import _rank_data
    from torchtally.compat.torchmetrics.functional.retrieval.ndcg import (
        retrieval_normalized_dcg,
    )

    assert callable(_refine_preds_oh) and callable(binary_stat_scores)
    assert callable(_rank_data) and callable(retrieval_normalized_dcg)
    # the package attribute stays the function, as in TorchMetrics
    assert callable(occ.accuracy) and not inspect.ismodule(occ.accuracy)


# ----------------------------------------------------------------------- classification


def _inputs(seed: int) -> dict[str, tuple[Tensor, Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return {
        "binary": (torch.rand(N, 3, generator=g), torch.randint(0, 2, (N, 3), generator=g)),
        "binary_logits": (
            torch.randn(N, 3, generator=g) * 3,
            torch.randint(0, 2, (N, 3), generator=g),
        ),
        "multiclass": (torch.randn(N, C, 3, generator=g), torch.randint(0, C, (N, 3), generator=g)),
        "multiclass_labels": (
            torch.randint(0, C, (N, 3), generator=g),
            torch.randint(0, C, (N, 3), generator=g),
        ),
        "multilabel": (
            torch.rand(N, C, 3, generator=g),
            torch.randint(0, 2, (N, C, 3), generator=g),
        ),
    }


def _with_ignored(kind: str, target: Tensor, ignore_index: int | None) -> Tensor:
    if ignore_index is None:
        return target
    target = target.clone()
    target.view(-1)[:: 7 if kind != "multilabel" else 5] = ignore_index
    return target


STAT_KINDS = (
    "accuracy",
    "precision",
    "recall",
    "f1_score",
    "specificity",
    "hamming_distance",
    "negative_predictive_value",
    "stat_scores",
)


def _stat_cases() -> list[tuple[str, str, dict[str, Any]]]:
    cases = []
    for kind, ignore, multidim in itertools.product(STAT_KINDS, (None, -1, 0), MULTIDIM):
        common = {"ignore_index": ignore, "multidim_average": multidim}
        for inputs in ("binary", "binary_logits"):
            cases.append((f"binary_{kind}", inputs, dict(common)))
        for average, top_k in itertools.product(("micro", "macro", "weighted", "none"), (1, 2)):
            arguments = dict(common, num_classes=C, average=average, top_k=top_k)
            cases.append((f"multiclass_{kind}", "multiclass", arguments))
            if top_k == 1:
                cases.append((f"multiclass_{kind}", "multiclass_labels", dict(arguments)))
                cases.append(
                    (
                        f"multilabel_{kind}",
                        "multilabel",
                        dict(common, num_labels=C, average=average),
                    )
                )
    return cases


MULTIDIM = ("global", "samplewise")


@pytest.mark.parametrize(("name", "inputs", "arguments"), _stat_cases())
def test_stat_family_matches_torchmetrics(
    name: str, inputs: str, arguments: dict[str, Any]
) -> None:
    preds, target = _inputs(len(name) + len(str(arguments)))[inputs]
    target = _with_ignored(inputs, target, arguments["ignore_index"])
    assert_same(
        getattr(tmc, name)(preds, target, **arguments),
        getattr(occ, name)(preds, target, **arguments),
    )


def _confmat_cases() -> list[tuple[str, str, dict[str, Any]]]:
    cases: list[tuple[str, str, dict[str, Any]]] = []
    for ignore in (None, -1, 1):
        common: dict[str, Any] = {"ignore_index": ignore}
        for normalize in (None, "true", "pred", "all"):
            cases.append(("binary_confusion_matrix", "binary", dict(common, normalize=normalize)))
            cases.append(
                (
                    "multiclass_confusion_matrix",
                    "multiclass",
                    dict(common, num_classes=C, normalize=normalize),
                )
            )
            cases.append(
                (
                    "multilabel_confusion_matrix",
                    "multilabel",
                    dict(common, num_labels=C, normalize=normalize),
                )
            )
        for kind in ("matthews_corrcoef", "jaccard_index"):
            cases.append((f"binary_{kind}", "binary_logits", dict(common)))
            cases.append((f"multilabel_{kind}", "multilabel", dict(common, num_labels=C)))
            cases.append((f"multiclass_{kind}", "multiclass", dict(common, num_classes=C)))
        for average in ("micro", "macro", "weighted", "none"):
            cases.append(
                (
                    "multiclass_jaccard_index",
                    "multiclass_labels",
                    dict(common, num_classes=C, average=average),
                )
            )
            cases.append(
                (
                    "multilabel_jaccard_index",
                    "multilabel",
                    dict(common, num_labels=C, average=average),
                )
            )
        for weights in (None, "linear", "quadratic"):
            cases.append(("binary_cohen_kappa", "binary", dict(common, weights=weights)))
            cases.append(
                (
                    "multiclass_cohen_kappa",
                    "multiclass",
                    dict(common, num_classes=C, weights=weights),
                )
            )
        for multidim in MULTIDIM:
            cases.append(
                (
                    "multiclass_exact_match",
                    "multiclass",
                    dict(common, num_classes=C, multidim_average=multidim),
                )
            )
            cases.append(
                (
                    "multilabel_exact_match",
                    "multilabel",
                    dict(common, num_labels=C, multidim_average=multidim),
                )
            )
    return cases


@pytest.mark.parametrize(("name", "inputs", "arguments"), _confmat_cases())
def test_confusion_matrix_family_matches_torchmetrics(
    name: str, inputs: str, arguments: dict[str, Any]
) -> None:
    preds, target = _inputs(len(name) + len(str(arguments)))[inputs]
    target = _with_ignored(inputs, target, arguments["ignore_index"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the NaN-normalization warning, checked below
        expected = getattr(tmc, name)(preds, target, **arguments)
        got = getattr(occ, name)(preds, target, **arguments)
    assert_same(expected, got)


def _curve_cases() -> list[tuple[str, str, tuple[Any, ...], dict[str, Any]]]:
    cases: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = []
    for thresholds, ignore in itertools.product((None, 7, [0.1, 0.4, 0.8]), (None, -1)):
        common: dict[str, Any] = {"thresholds": thresholds, "ignore_index": ignore}
        for kind in ("roc", "precision_recall_curve", "auroc", "average_precision", "eer"):
            cases.append((f"binary_{kind}", "binary_logits", (), dict(common)))
            cases.append((f"multilabel_{kind}", "multilabel", (C,), dict(common)))
            cases.append((f"multiclass_{kind}", "multiclass", (C,), dict(common)))
        for average in ("macro", "weighted", "none"):
            for kind in ("auroc", "average_precision"):
                cases.append(
                    (f"multiclass_{kind}", "multiclass", (C,), dict(common, average=average))
                )
                cases.append(
                    (f"multilabel_{kind}", "multilabel", (C,), dict(common, average=average))
                )
        for average in ("micro", "macro"):
            cases.append(("multiclass_roc", "multiclass", (C,), dict(common, average=average)))
        cases.append(("binary_auroc", "binary", (), dict(common, max_fpr=0.3)))
        for kind in (
            "precision_at_fixed_recall",
            "recall_at_fixed_precision",
            "sensitivity_at_specificity",
            "specificity_at_sensitivity",
        ):
            cases.append((f"binary_{kind}", "binary", (0.4,), dict(common)))
            cases.append((f"multiclass_{kind}", "multiclass", (C, 0.4), dict(common)))
            cases.append((f"multilabel_{kind}", "multilabel", (C, 0.4), dict(common)))
    for ignore in (None, -1):
        cases.append(
            ("binary_calibration_error", "binary", (), {"ignore_index": ignore, "norm": "l2"})
        )
        cases.append(("multiclass_calibration_error", "multiclass", (C,), {"ignore_index": ignore}))
        cases.append(
            ("binary_hinge_loss", "binary_logits", (), {"ignore_index": ignore, "squared": True})
        )
        for mode in ("crammer-singer", "one-vs-all"):
            cases.append(
                (
                    "multiclass_hinge_loss",
                    "multiclass",
                    (C,),
                    {"ignore_index": ignore, "multiclass_mode": mode},
                )
            )
        for kind in ("coverage_error", "ranking_average_precision", "ranking_loss"):
            cases.append((f"multilabel_{kind}", "multilabel", (C,), {"ignore_index": ignore}))
        cases.append(("binary_logauc", "binary", (), {"ignore_index": ignore}))
    return cases


@pytest.mark.parametrize(("name", "inputs", "positional", "arguments"), _curve_cases())
def test_curve_family_matches_torchmetrics(
    name: str, inputs: str, positional: tuple[Any, ...], arguments: dict[str, Any]
) -> None:
    preds, target = _inputs(len(name) + len(str(arguments)))[inputs]
    if name.startswith("multiclass_calibration"):
        preds = preds.softmax(1)
    target = _with_ignored(inputs, target, arguments["ignore_index"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(tmc, name)(preds, target, *positional, **arguments)
        got = getattr(occ, name)(preds, target, *positional, **arguments)
    assert_same(expected, got, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("accuracy", {"task": "multiclass", "num_classes": C, "average": "macro", "top_k": 2}),
        ("precision", {"task": "binary"}),
        ("recall", {"task": "multilabel", "num_labels": C}),
        ("f1_score", {"task": "multiclass", "num_classes": C}),
        ("fbeta_score", {"task": "multiclass", "num_classes": C, "beta": 2.0}),
        ("specificity", {"task": "multiclass", "num_classes": C, "average": "weighted"}),
        ("hamming_distance", {"task": "multilabel", "num_labels": C, "average": "micro"}),
        ("negative_predictive_value", {"task": "binary"}),
        ("stat_scores", {"task": "multiclass", "num_classes": C, "average": None}),
        ("confusion_matrix", {"task": "multilabel", "num_labels": C}),
        ("jaccard_index", {"task": "multiclass", "num_classes": C}),
        ("matthews_corrcoef", {"task": "binary"}),
        ("cohen_kappa", {"task": "multiclass", "num_classes": C, "weights": "linear"}),
        ("exact_match", {"task": "multilabel", "num_labels": C}),
        ("auroc", {"task": "multiclass", "num_classes": C}),
        ("average_precision", {"task": "multilabel", "num_labels": C, "thresholds": 11}),
        ("roc", {"task": "binary"}),
        ("precision_recall_curve", {"task": "multiclass", "num_classes": C}),
        ("eer", {"task": "binary"}),
        ("logauc", {"task": "binary"}),
        ("calibration_error", {"task": "binary", "n_bins": 5}),
        ("hinge_loss", {"task": "binary"}),
        ("precision_at_fixed_recall", {"task": "binary", "min_recall": 0.5}),
        (
            "sensitivity_at_specificity",
            {"task": "multiclass", "num_classes": C, "min_specificity": 0.5},
        ),
    ],
)
def test_task_wrappers_match_torchmetrics(name: str, arguments: dict[str, Any]) -> None:
    task = arguments["task"]
    preds, target = _inputs(3)["binary" if task == "binary" else task]
    assert_same(
        getattr(tmc, name)(preds, target, **arguments),
        getattr(occ, name)(preds, target, **arguments),
    )
    if name in ours.__all__:
        assert getattr(ours, name) is getattr(occ, name)


def test_private_helpers_its_tests_use() -> None:
    from torchmetrics.functional.classification.jaccard import _jaccard_index_reduce as tm_jaccard
    from torchmetrics.functional.classification.matthews_corrcoef import (
        _matthews_corrcoef_reduce as tm_matthews,
    )
    from torchmetrics.functional.classification.stat_scores import _refine_preds_oh as tm_refine

    from torchtally.compat.torchmetrics.functional.classification.jaccard import (
        _jaccard_index_reduce,
    )
    from torchtally.compat.torchmetrics.functional.classification.matthews_corrcoef import (
        _matthews_corrcoef_reduce,
    )
    from torchtally.compat.torchmetrics.functional.classification.stat_scores import (
        _refine_preds_oh,
    )

    preds = torch.rand(6, 3, 2)
    target = torch.randint(0, 3, (6, 2))
    preds_oh = torch.zeros(6, 2, 3, dtype=torch.int32)
    for k in (1, 2, 3):
        assert torch.equal(
            _refine_preds_oh(preds, preds_oh, target, k), tm_refine(preds, preds_oh, target, k)
        )
    for confmat, average in (
        (torch.tensor([[4, 0], [0, 0]]), "binary"),
        (torch.tensor([[3, 1, 0], [2, 5, 1], [0, 0, 0]]), "macro"),
        (torch.tensor([[3, 1, 0], [2, 5, 1], [0, 0, 0]]), "micro"),
    ):
        for zero_division in (0.0, 1.0):
            assert_same(
                tm_jaccard(confmat, average, zero_division=zero_division),
                _jaccard_index_reduce(confmat, average, zero_division=zero_division),
            )
    for confmat in (
        torch.tensor([[0, 4], [0, 2]]),
        torch.tensor([[5, 0], [3, 0]]),
        torch.tensor([[3, 1], [2, 4]]),
    ):
        assert_same(tm_matthews(confmat), _matthews_corrcoef_reduce(confmat))


# ------------------------------------------------------------------ errors and warnings


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda f: f.accuracy(torch.rand(4), torch.ones(4).long(), task="bad"),
            ValueError,
            r"Invalid Classification: expected one of \['BINARY', 'MULTICLASS', 'MULTILABEL'\], but got bad\.",
        ),
        (
            lambda f: f.multiclass_stat_scores(
                torch.tensor([0, 1, 2, 6]), torch.tensor([0, 1, 2, 2]), num_classes=3
            ),
            RuntimeError,
            r"Detected more unique values in `preds` than expected. Expected only 3",
        ),
        (
            lambda f: f.binary_accuracy(torch.rand(4), torch.tensor([0, 1, 2, 1])),
            RuntimeError,
            r"Detected the following values in `target`",
        ),
        (
            lambda f: f.binary_precision(torch.rand(4), torch.ones(3).long()),
            RuntimeError,
            r"Predictions and targets are expected to have the same shape",
        ),
        (
            lambda f: f.multiclass_accuracy(
                torch.rand(4, 3), torch.ones(4).long(), num_classes=3, average="all"
            ),
            ValueError,
            r"Expected argument `average` to be one of",
        ),
        (
            lambda f: f.binary_f1_score(torch.rand(4), torch.ones(4).long(), threshold=2.0),
            ValueError,
            r"Expected argument `threshold` to be a float in the \[0,1\] range",
        ),
        (
            lambda f: f.binary_precision_recall_curve(torch.rand(4), torch.ones(4)),
            ValueError,
            r"Expected argument `target` to be an int or long tensor with ground",
        ),
        (
            lambda f: f.binary_roc(torch.ones(4).long(), torch.ones(4).long()),
            ValueError,
            r"Expected argument `preds` to be an floating tensor with probability",
        ),
        (
            lambda f: f.multiclass_auroc(torch.rand(4, 3), torch.rand(4), num_classes=3),
            ValueError,
            r"Expected argument `target` to be an int or long tensor, but got",
        ),
    ],
)
def test_errors_are_torchmetrics_ones(
    call: Callable[[Any], Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        call(tmc)
    with pytest.raises(error, match=message):
        call(occ)


def test_a_class_index_out_of_range_is_an_error_not_another_cell() -> None:
    # 4 distinct values pass TorchMetrics' unique-count check for num_classes=4; 7 is no class.
    preds, target = torch.tensor([0, 1, 2, 7]), torch.tensor([0, 1, 2, 3])
    with pytest.raises(RuntimeError, match=r"class indices in \[0, 3\]. Received 1 value"):
        occ.multiclass_accuracy(preds, target, num_classes=4)
    with pytest.raises(RuntimeError, match=r"invalid values"):
        occ.multiclass_auroc(torch.rand(4, 4), torch.tensor([0, 1, 2, 9]), num_classes=4)


def test_num_classes_none_only_where_the_class_count_does_not_matter() -> None:
    preds, target = torch.tensor([0, 2, 1, 2, 3]), torch.tensor([0, 1, 1, 2, 3])
    assert_same(
        tmc.multiclass_accuracy(preds, target, num_classes=None, average="micro"),
        occ.multiclass_accuracy(preds, target, num_classes=None, average="micro"),
    )
    with pytest.raises(ValueError, match=r"Argument `num_classes` must be an integer >= 2"):
        occ.multiclass_specificity(preds, target, num_classes=None, average="micro")  # type: ignore[arg-type]


def test_warnings_are_torchmetrics_ones() -> None:
    preds, target = torch.randint(3, (20,)), torch.randint(3, (20,))
    for library in (tmc, occ):
        with pytest.warns(
            UserWarning, match="NaN values found in confusion matrix have been replaced"
        ):
            library.multiclass_confusion_matrix(preds, target, num_classes=5, normalize="true")
        with pytest.warns(
            UserWarning, match="No positive samples found in target, recall is undefined"
        ):
            library.binary_average_precision(torch.rand(10), torch.zeros(10).long())
    for library in (tmf, ours):
        with pytest.warns(FutureWarning, match="from `torchmetrics.functional` was deprecated"):
            library.retrieval_reciprocal_rank(torch.rand(5), torch.tensor([0, 1, 0, 0, 1]))


def test_non_differentiable_values_do_not_require_grad() -> None:
    preds = torch.rand(10, requires_grad=True)
    target = torch.randint(0, 2, (10,))
    for name in ("binary_auroc", "binary_roc", "binary_average_precision", "binary_accuracy"):
        for value in _flat(getattr(occ, name)(preds, target)):
            assert not value.requires_grad, name
    assert ocr.mean_squared_error(preds, target.float()).requires_grad


# ------------------------------------------------------- one batch: function == class forward


@pytest.mark.parametrize(
    ("function", "cls", "arguments", "inputs"),
    [
        (
            "multiclass_f1_score",
            "MulticlassF1Score",
            {"num_classes": C, "average": "weighted"},
            "multiclass",
        ),
        ("multilabel_accuracy", "MultilabelAccuracy", {"num_labels": C}, "multilabel"),
        ("binary_specificity", "BinarySpecificity", {}, "binary_logits"),
        ("multiclass_auroc", "MulticlassAUROC", {"num_classes": C}, "multiclass"),
        (
            "multilabel_average_precision",
            "MultilabelAveragePrecision",
            {"num_labels": C, "thresholds": 9},
            "multilabel",
        ),
        ("multiclass_cohen_kappa", "MulticlassCohenKappa", {"num_classes": C}, "multiclass"),
    ],
)
def test_function_equals_the_class_on_one_batch(
    function: str, cls: str, arguments: dict[str, Any], inputs: str
) -> None:
    preds, target = _inputs(11)[inputs]
    metric = getattr(classes, cls)(**arguments)
    assert_same(metric(preds, target), getattr(occ, function)(preds, target, **arguments))


# ------------------------------------------------------------------------------ regression


@pytest.mark.parametrize(
    ("name", "arguments", "two_d"),
    [
        ("mean_squared_error", {}, False),
        ("mean_squared_error", {"squared": False, "num_outputs": 3}, True),
        ("mean_absolute_error", {"num_outputs": 3}, True),
        ("mean_absolute_percentage_error", {}, False),
        ("symmetric_mean_absolute_percentage_error", {}, False),
        ("weighted_mean_absolute_percentage_error", {}, False),
        ("mean_squared_log_error", {}, False),
        ("log_cosh_error", {}, True),
        ("r2_score", {"adjusted": 2}, False),
        ("r2_score", {"multioutput": "raw_values"}, True),
        ("explained_variance", {"multioutput": "variance_weighted"}, True),
        ("pearson_corrcoef", {}, True),
        ("concordance_corrcoef", {}, True),
        ("spearman_corrcoef", {}, False),
        ("relative_squared_error", {"squared": False}, True),
        ("cosine_similarity", {"reduction": "mean"}, True),
        ("kl_divergence", {"reduction": "sum"}, True),
        ("minkowski_distance", {"p": 3}, False),
        ("tweedie_deviance_score", {"power": 1.5}, False),
        ("critical_success_index", {"threshold": 0.5}, False),
        ("normalized_root_mean_squared_error", {"normalization": "std"}, False),
    ],
)
def test_regression_matches_torchmetrics(name: str, arguments: dict[str, Any], two_d: bool) -> None:
    g = torch.Generator().manual_seed(len(name))
    shape = (40, 3) if two_d else (40,)
    preds, target = torch.rand(shape, generator=g) + 0.1, torch.rand(shape, generator=g) + 0.1
    assert_same(
        getattr(tmr, name)(preds, target, **arguments),
        getattr(ocr, name)(preds, target, **arguments),
        1e-5,
    )


def test_regression_private_ranking() -> None:
    from torchmetrics.functional.regression.spearman import _rank_data as tm_rank

    from torchtally.compat.torchmetrics.functional.regression.spearman import _rank_data

    data = torch.tensor([3.0, 1.0, 2.0, 2.0, 5.0, 1.0])
    assert torch.equal(_rank_data(data), tm_rank(data))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda f: f.mean_squared_error(torch.rand(5), torch.rand(4)),
            RuntimeError,
            "Predictions and targets are expected to have the same shape",
        ),
        (
            lambda f: f.r2_score(torch.rand(2, 3, 4), torch.rand(2, 3, 4)),
            ValueError,
            "Expected both prediction and target to be 1D or 2D tensors",
        ),
        (lambda f: f.r2_score(torch.rand(1), torch.rand(1)), ValueError, "Needs at least two"),
        (
            lambda f: f.pearson_corrcoef(torch.rand(4, 2, 5), torch.rand(4, 2, 5)),
            ValueError,
            "Expected both predictions and target to be either 1- or 2-dimensional",
        ),
        (
            lambda f: f.cosine_similarity(torch.rand(5), torch.rand(5)),
            ValueError,
            "Expected input to cosine similarity to be 2D tensors",
        ),
        (
            lambda f: f.kl_divergence(torch.rand(3, 4, 2), torch.rand(3, 4, 2)),
            ValueError,
            "Expected both p and q distribution to be 2D but got 3 and 3 respectively",
        ),
        (
            lambda f: f.tweedie_deviance_score(torch.rand(4), torch.rand(4), power=0.5),
            ValueError,
            r"Deviance Score is not defined for power=0.5",
        ),
        (
            lambda f: f.tweedie_deviance_score(-torch.rand(4), torch.rand(4), power=2),
            ValueError,
            r"For power=2, both 'preds' and 'targets' have to be strictly positive",
        ),
        (
            lambda f: f.spearman_corrcoef(torch.ones(4).long(), torch.ones(4).long()),
            TypeError,
            "Expected `preds` and `target` both to be floating point tensors",
        ),
    ],
)
def test_regression_errors_are_torchmetrics_ones(
    call: Callable[[Any], Any], error: type, message: str
) -> None:
    for library in (tmr, ocr):
        with pytest.raises(error, match=message):
            call(library)


def test_regression_warnings_and_shapes_are_torchmetrics_ones() -> None:
    preds, target = torch.rand(10), torch.rand(10)
    for library in (tmr, ocr):
        with pytest.warns(UserWarning, match="More independent regressions than data points"):
            library.r2_score(preds, target, adjusted=10)
        with pytest.warns(UserWarning, match="Division by zero in adjusted r2 score"):
            library.r2_score(preds, target, adjusted=9)
    # TorchMetrics' function gives a (1,) concordance for 1-D inputs and reads a 2-D NRMSE
    # input as one output
    assert_same(tmr.concordance_corrcoef(preds, target), ocr.concordance_corrcoef(preds, target))
    two_d = (torch.rand(12, 3) + 0.1, torch.rand(12, 3) + 0.1)
    for normalization in ("mean", "range", "std", "l2"):
        assert_same(
            tmr.normalized_root_mean_squared_error(*two_d, normalization=normalization),
            ocr.normalized_root_mean_squared_error(*two_d, normalization=normalization),
            1e-5,
        )


# ------------------------------------------------------------------------------- retrieval


RETRIEVAL = (
    "retrieval_average_precision",
    "retrieval_reciprocal_rank",
    "retrieval_precision",
    "retrieval_recall",
    "retrieval_hit_rate",
    "retrieval_fall_out",
    "retrieval_normalized_dcg",
    "retrieval_auroc",
)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("top_k", [None, 1, 3, 20])
def test_retrieval_matches_torchmetrics(seed: int, top_k: int | None) -> None:
    g = torch.Generator().manual_seed(seed)
    size = int(torch.randint(1, 12, (), generator=g))
    preds = torch.rand(size, generator=g)
    if seed % 3 == 0:
        # TorchMetrics 1.9: a candidate scored <= 0 is never retrieved by MAP, MRR, precision
        # and recall (distinct scores: its tie order is its unstable sort's)
        preds[: size // 2] = -preds[: size // 2]
    target = torch.randint(0, 2, (size,), generator=g)
    for name in RETRIEVAL:
        assert_same(
            getattr(tmq, name)(preds, target, top_k=top_k),
            getattr(ocq, name)(preds, target, top_k=top_k),
        )
    assert_same(tmq.retrieval_r_precision(preds, target), ocq.retrieval_r_precision(preds, target))
    for max_k, adaptive in itertools.product((None, 2, 15), (False, True)):
        assert_same(
            tmq.retrieval_precision_recall_curve(preds, target, max_k=max_k, adaptive_k=adaptive),
            ocq.retrieval_precision_recall_curve(preds, target, max_k=max_k, adaptive_k=adaptive),
        )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda f: f.retrieval_precision(torch.rand(3), torch.ones(4).long()),
            "must be of the same shape",
        ),
        (lambda f: f.retrieval_recall(torch.rand(0), torch.ones(0).long()), "must be non-empty"),
        (
            lambda f: f.retrieval_hit_rate(torch.ones(3).bool(), torch.ones(3).long()),
            "must be a tensor of floats",
        ),
        (
            lambda f: f.retrieval_fall_out(torch.rand(3), torch.tensor([0, 2, 1])),
            "must contain `binary` values",
        ),
        (
            lambda f: f.retrieval_precision(torch.rand(3), torch.ones(3).long(), top_k=-1),
            "`top_k` has to be a positive",
        ),
        (
            lambda f: f.retrieval_precision(torch.rand(3), torch.ones(3).long(), adaptive_k=1),
            "`adaptive_k` has to be",
        ),
    ],
)
def test_retrieval_errors_are_torchmetrics_ones(call: Callable[[Any], Any], message: str) -> None:
    for library in (tmq, ocq):
        with pytest.raises(ValueError, match=message):
            call(library)


# --------------------------------------------------------------------------- text, image


def test_text_and_image_match_torchmetrics() -> None:
    import torchmetrics.functional.image as tmi
    import torchmetrics.functional.text as tmt

    from torchtally.compat.torchmetrics.functional import image, text

    for name in (
        "char_error_rate",
        "word_error_rate",
        "match_error_rate",
        "word_information_lost",
        "word_information_preserved",
    ):
        preds, target = (
            ["hello duck", "a b c", "the cat sat"],
            ["hello world", "a c", "the cat sat"],
        )
        assert_same(getattr(tmt, name)(preds, target), getattr(text, name)(preds, target))
    g = torch.Generator().manual_seed(0)
    logits, tokens = torch.randn(2, 5, 7, generator=g), torch.randint(0, 7, (2, 5), generator=g)
    tokens[0, 0] = -100
    assert_same(
        tmt.perplexity(logits, tokens, ignore_index=-100),
        text.perplexity(logits, tokens, ignore_index=-100),
        1e-5,
    )
    x = torch.rand(2, 1, 16, 16, generator=g)
    y = (x * 0.8 + 0.1 * torch.rand(2, 1, 16, 16, generator=g)).clamp(0, 1)
    assert_same(
        tmi.peak_signal_noise_ratio(x, y, 1.0), image.peak_signal_noise_ratio(x, y, 1.0), 1e-5
    )
    assert_same(
        tmi.structural_similarity_index_measure(x, y, data_range=1.0),
        image.structural_similarity_index_measure(x, y, data_range=1.0),
        1e-5,
    )
    for library in (tmf, ours):
        with pytest.warns(FutureWarning, match="Import `word_error_rate` from `torchmetrics.text`"):
            library.word_error_rate(["a b"], ["a c"])
        with pytest.warns(FutureWarning, match="Import `peak_signal_noise_ratio` from"):
            value = library.peak_signal_noise_ratio(x, y)  # data_range 3.0 at the root
        assert_same(tmi.peak_signal_noise_ratio(x, y, 3.0), value, 1e-5)
