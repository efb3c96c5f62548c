"""Every registry case's functional twin gives the class's value, on the same batches.

The metric classes delegate to `torchtally.functional`, so the maths exists once; this checks the
two entry points agree: `functional(batch) == Metric().update(batch).compute()` for one batch,
and `functional(concatenation) == Metric()` updated batch by batch (the functionals take a whole
dataset). Each case of the registry used by `test_common.py` names its twin in `TWINS` or says
in `NO_TWIN` why it has none, so a new case cannot silently lack the check.

The comparison allows round-off only: a few units in the last place of the class result's dtype
(the class sums batch by batch, the functional in one go). The classes return cstorch's result
types (float32 tensors or Python floats) where the functionals return float64: the functional
value is cast to the class's type first, as the class casts its own float64 value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from cases import Args, Case
from test_common import ALL_CASES, _slice
from torch import Tensor

from torchtally import functional as F
from torchtally.metrics import Metric

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Twin:
    """How to call a case's functional twin.

    Attributes:
        fn: Takes the case's `update` arguments (positional and keyword) and returns the value.
        drop: Keyword arguments of the case's batches that the functional does not take; the
            class is then run without them too, so both see the same data.
    """

    fn: Fn
    drop: tuple[str, ...] = ()


def _no_retrieval_weights(fn: Fn, **options: Any) -> Twin:
    return Twin(lambda p, t, mask=None: fn(p, t, mask=mask, **options), drop=("weights",))


TWINS: dict[str, Twin] = {
    "accuracy-scores": Twin(F.accuracy),
    "accuracy-weighted": Twin(F.accuracy),
    # `num_classes` only bounds the labels the class accepts; the value is the same
    "accuracy-multiclass-num-classes": Twin(F.accuracy),
    "accuracy-binary-logits-ignore-index": Twin(
        lambda y, p: F.accuracy(y, p, ignore_index=-100, score_kind="logits")
    ),
    "mean": Twin(F.mean),
    "perplexity": Twin(F.perplexity),
    "mse": Twin(F.mean_squared_error),
    "mae": Twin(F.mean_absolute_error),
    "smape": Twin(F.smape),
    "r2": Twin(F.r2_score),
    "r2-multioutput": Twin(lambda y, p: F.r2_score(y, p, multioutput="variance_weighted")),
    "precision-binary-scores": Twin(F.precision),
    "recall-binary-indices": Twin(lambda y, p, **kw: F.recall(y, p, threshold=0.3, **kw)),
    "f1-binary-scores": Twin(lambda y, p: F.f1_score(y, p, average_type="none")),
    "precision-multiclass-macro-scores": Twin(lambda y, p: F.precision(y, p, 5, "macro")),
    "recall-multiclass-weighted-indices": Twin(
        lambda y, p, **kw: F.recall(y, p, 4, "weighted", ignore_labels=[3], **kw)
    ),
    "fbeta-multiclass-none-scores": Twin(
        lambda y, p: F.fbeta_score(y, p, 4, beta=0.5, average_type="none")
    ),
    "fbeta-multiclass-micro-ignore": Twin(
        lambda y, p, **kw: F.fbeta_score(y, p, 5, 2.0, "micro", ignore_labels=[0], **kw)
    ),
    "f1-multiclass-macro": Twin(lambda y, p: F.f1_score(y, p, 3, "macro")),
    "f1-multilabel-macro-scores": Twin(
        lambda y, p, **kw: F.f1_score(y, p, 3, "macro", multilabel=True, **kw)
    ),
    "precision-multilabel-weighted-indices": Twin(
        lambda y, p, **kw: F.precision(y, p, 3, "weighted", multilabel=True, **kw)
    ),
    "recall-multilabel-micro-ignore": Twin(
        lambda y, p, **kw: F.recall(
            y, p, 3, "micro", ignore_labels=[1], multilabel=True, threshold=0.7, **kw
        )
    ),
    "mean-per-class-accuracy": Twin(lambda y, p, **kw: F.mean_per_class_accuracy(y, p, 4, **kw)),
    "mean-iou-segmentation-scores": Twin(lambda y, p: F.mean_iou(y, p, 3, ignore_classes=[0])),
    "dice-segmentation-masked": Twin(lambda y, p, **kw: F.dice_coefficient(y, p, 4, **kw)),
    "confusion-matrix-scores": Twin(lambda y, p: F.confusion_matrix(y, p, 4)),
    "confusion-matrix-normalized-weighted": Twin(
        lambda y, p, **kw: F.confusion_matrix(y, p, 3, normalize="true", **kw)
    ),
    "top-2-accuracy": Twin(lambda y, p: F.top_k_accuracy(y, p, 2)),
    "top-3-accuracy-ties-weighted": Twin(lambda y, p, **kw: F.top_k_accuracy(y, p, 3, **kw)),
    "auroc-exact-binary": Twin(F.auroc),
    "auroc-exact-multiclass": Twin(lambda y, p: F.auroc(y, p, 4)),
    "auroc-exact-multiclass-none-f64": Twin(lambda y, p: F.auroc(y, p, 3, average="none")),
    "auroc-binned-binary": Twin(lambda y, p: F.binned_auroc(y, p, 16)),
    "auroc-binned-multiclass": Twin(
        lambda y, p: F.binned_auroc(y, p, 8, score_range=(-4.0, 4.0), num_classes=3)
    ),
    "auc-roc-weighted": Twin(F.auc),
    "auc-pr-interpolation": Twin(lambda y, p: F.auc(y, p, num_thresholds=50, curve="PR")),
    "auc-pr-majoring-thresholds": Twin(
        lambda y, p, **kw: F.auc(
            y, p, curve="PR", summation_method="majoring", thresholds=[0.25, 0.5, 0.75], **kw
        )
    ),
    "auc-roc-minoring": Twin(
        lambda y, p: F.auc(y, p, num_thresholds=7, summation_method="minoring")
    ),
    "precision-at-k": Twin(lambda y, p, **kw: F.precision_at_k(y, p, 2, **kw)),
    "recall-at-k": Twin(lambda y, p, **kw: F.recall_at_k(y, p, 3, **kw)),
    "retrieval-ndcg-at-3": _no_retrieval_weights(F.retrieval_ndcg, top_k=3),
    "retrieval-mrr-skip": _no_retrieval_weights(F.retrieval_mrr, empty_target_action="skip"),
    "retrieval-map-error": _no_retrieval_weights(
        F.retrieval_map, top_k=4, empty_target_action="error"
    ),
    "retrieval-hit-rate-at-2": _no_retrieval_weights(F.retrieval_hit_rate, top_k=2),
    "retrieval-r-precision": _no_retrieval_weights(F.retrieval_r_precision),
    "calibration-ece-binary": Twin(lambda p, t, **kw: F.calibration_error(p, t, n_bins=10, **kw)),
    "calibration-mce-multiclass-logits": Twin(
        lambda p, t: F.calibration_error(p, t, 4, n_bins=8, norm="max", from_logits=True)
    ),
    "ap-exact-binary-weighted": Twin(F.average_precision),
    "ap-binned-binary": Twin(lambda p, t, **kw: F.average_precision(p, t, thresholds=11, **kw)),
    "ap-exact-multiclass-weighted": Twin(
        lambda p, t: F.average_precision(p, t, "multiclass", 3, average="weighted")
    ),
    "ap-binned-multilabel-none": Twin(
        lambda p, t: F.average_precision(p, t, "multilabel", 3, average="none", thresholds=9)
    ),
    "ap-exact-multilabel-micro": Twin(
        lambda p, t: F.average_precision(p, t, "multilabel", 3, average="micro")
    ),
    "pr-curve-binned-binary": Twin(
        lambda p, t, **kw: F.precision_recall_curve(p, t, thresholds=7, **kw)
    ),
    "roc-binned-multiclass": Twin(lambda p, t: F.roc_curve(p, t, "multiclass", 3, thresholds=7)),
    "psnr-range": Twin(lambda p, t: F.psnr(p, t, 1.0)),
    "psnr-range-from-targets": Twin(lambda p, t: F.psnr(p, t, base=2.0)),
    "ssim": Twin(lambda p, t: F.ssim(p, t, 1.0)),
    "hamming-score": Twin(F.hamming_score, drop=("weights",)),
}

#: Case id -> why it has no functional twin.
NO_TWIN: dict[str, str] = {
    "learning-rate": "a last-value metric of an optimizer's rate: no data to compute from",
    "bootstrap-mean": "a stateful wrapper: resamples with its own generator per update",
    "bootstrap-calibration": "a stateful wrapper: resamples with its own generator per update",
    "running-calibration": "a stateful wrapper: a window over the last updates",
    "running-mean": "a stateful wrapper: a window over the last updates",
    "quantile-histogram": "a sketch state (fixed-bin histogram); no functional quantile",
    "f1-binary-logits": "functional f1_score takes no score_kind (logits)",
    "f1-multilabel-logits": "functional f1_score takes no score_kind (logits)",
    "retrieval-precision-at-4-pos-max": "functional retrieval takes no `aggregation`",
    "retrieval-recall-min": "functional retrieval takes no `aggregation`",
    "retrieval-ndcg-flat": "functional retrieval takes no flat `indexes` form",
    "retrieval-map-flat": "functional retrieval takes no flat `indexes` form",
    "calibration-rms-multiclass-ignore": "functional calibration_error takes no ignore_index",
    "roc-binned-multilabel-micro": "functional roc_curve takes no `average`",
}

CASES_WITH_TWINS = [case for case in ALL_CASES if case.id in TWINS]
N = 40
BOUNDS = (0, 7, 8, 25, 40)  # unequal batches, one of a single sample


def test_every_case_names_its_twin_or_why_it_has_none() -> None:
    ids = [case.id for case in ALL_CASES]
    assert len(ids) == len(set(ids))
    unaccounted = sorted(set(ids) - set(TWINS) - set(NO_TWIN))
    assert unaccounted == [], "add each to TWINS, or to NO_TWIN with the reason"
    stale = sorted((set(TWINS) | set(NO_TWIN)) - set(ids))
    assert stale == [], "entries for cases that no longer exist"
    assert set(TWINS).isdisjoint(NO_TWIN)


def _without(args: Args, drop: tuple[str, ...]) -> Args:
    positional, keyword = args
    return positional, {k: v for k, v in keyword.items() if k not in drop}


def _class_value(case: Case, batches: list[Args]) -> Any:
    metric: Metric = case.make()
    for positional, keyword in batches:
        metric.update(*positional, **keyword)
    return metric.compute()


def _ulps(value: Any) -> float:
    """A few units in the last place of the value's floating dtype (float64 for integers)."""
    tensors = [value] if isinstance(value, Tensor) else list(_flatten(value))
    dtypes = [t.dtype for t in tensors if t.is_floating_point()]
    eps = max((torch.finfo(d).eps for d in dtypes), default=torch.finfo(torch.float64).eps)
    return 8 * eps


def _flatten(value: Any) -> Any:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _flatten(item)


def _as_class_result(functional: Any, metric: Any) -> Any:
    """The functional value in the type the class returns: the classes give cstorch's result
    types (float32 tensors, or Python floats), the functionals float64 tensors."""
    if isinstance(metric, float):
        return float(functional)
    if (
        isinstance(metric, Tensor)
        and isinstance(functional, Tensor)
        and metric.is_floating_point()
        and functional.is_floating_point()
    ):
        return functional.to(metric.dtype)
    if isinstance(metric, (list, tuple)) and isinstance(functional, (list, tuple)):
        return type(functional)(_as_class_result(f, m) for f, m in zip(functional, metric))
    return functional


def _assert_same(functional: Any, metric: Any) -> None:
    if isinstance(metric, float):
        metric = torch.tensor(metric, dtype=torch.float64)
        functional = torch.tensor(_as_class_result(functional, 0.0), dtype=torch.float64)
    else:
        functional = _as_class_result(functional, metric)
    tolerance = _ulps(metric)
    torch.testing.assert_close(
        functional, metric, rtol=tolerance, atol=tolerance, equal_nan=True, check_dtype=True
    )


# The perplexity case feeds a summed loss without declaring it; its warning is not the point here
@pytest.mark.filterwarnings("ignore:PerplexityMetric `perplexity` reads the one-number")
@pytest.mark.parametrize("case", CASES_WITH_TWINS, ids=[c.id for c in CASES_WITH_TWINS])
def test_the_functional_twin_gives_the_class_value(case: Case) -> None:
    twin = TWINS[case.id]
    whole = _without(case.batch(torch.Generator().manual_seed(5), N), twin.drop)
    parts = [_slice(whole, N, a, b) for a, b in itertools.pairwise(BOUNDS)]
    one = parts[2]
    _assert_same(twin.fn(*one[0], **one[1]), _class_value(case, [one]))
    _assert_same(twin.fn(*whole[0], **whole[1]), _class_value(case, parts))
