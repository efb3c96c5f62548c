"""TorchMetrics' curve metrics (AUROC, AveragePrecision, ROC, PrecisionRecallCurve) for the
binary, multiclass and multilabel tasks, in TorchMetrics' two modes:

* **binned** (`thresholds` an int, a list or a tensor): the native binned curve state, a
  `(K, 2, T + 1)` histogram of negatives and positives by how many thresholds lie at or below
  the score (`torchtally.functional.curves.binned_curve_update`; the state keeps TorchMetrics'
  name, `confmat`), so memory is constant, the
  update is one scatter and the sync one collective; the curves, counts and average precision
  are the native `binned_roc`, `binned_pr_curve`, `binned_average_precision`, in the order the
  thresholds were given (TorchMetrics keeps a list's order);
* **exact** (`thresholds=None`, TorchMetrics' default): TorchMetrics keeps every score in a
  growing list; here the scores go into a buffer preallocated at construction, `capacity` rows
  of `K` columns (`K` = 1 binary, `num_classes`, `num_labels`), 10 bytes per cell: the default
  65,536 rows cost 640 KiB per column. The update stays traceable (an `index_copy_` at the fill
  count); `compute` reads the filled rows on the host (the curves have data-dependent lengths)
  and raises a clear error when more samples arrived than the capacity holds.

Both modes share the input handling: TorchMetrics' sigmoid (binary, multilabel) or softmax
(multiclass) of scores outside [0, 1], decided per batch with `torch.where` (no host sync), and
`ignore_index` positions left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import safe_divide
from torchtally.functional.curves import (
    binned_average_precision,
    binned_curve_update,
    binned_pr_curve,
    binned_roc,
    exact_pr_curve,
    exact_roc,
    mcclish_standardized,
    partial_roc_areas,
)

__all__ = [
    "BinaryAUROC",
    "BinaryAveragePrecision",
    "BinaryPrecisionRecallCurve",
    "BinaryROC",
    "MulticlassAUROC",
    "MulticlassAveragePrecision",
    "MulticlassPrecisionRecallCurve",
    "MulticlassROC",
    "MultilabelAUROC",
    "MultilabelAveragePrecision",
    "MultilabelPrecisionRecallCurve",
    "MultilabelROC",
]

#: TorchMetrics' `normalization` of binary scores outside [0, 1] (None: used as they are).
_NORMALIZATIONS = ("sigmoid", None)

#: Samples the exact mode (thresholds=None) stores unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16

Curve = tuple[Tensor, Tensor, Tensor]


def _thresholds(thresholds: Any) -> Tensor | None:
    if thresholds is None:
        return None
    if isinstance(thresholds, bool) or not isinstance(thresholds, (int, list, Tensor)):
        raise ValueError(
            "Argument `thresholds` must be None (exact mode), an int, a list of floats or a "
            f"tensor. Received: thresholds={thresholds!r}"
        )
    if isinstance(thresholds, int):
        if thresholds < 2:
            raise ValueError(
                f"Argument `thresholds` must be an integer >= 2. Received: thresholds={thresholds}"
            )
        return torch.linspace(0, 1, thresholds)
    values = torch.as_tensor(thresholds, dtype=torch.float32)
    if values.dim() != 1 or not bool(((values >= 0) & (values <= 1)).all()):
        raise ValueError(
            "Argument `thresholds` must be 1-D with values in [0, 1]. "
            f"Received: thresholds={thresholds!r}"
        )
    return values


def _default_dtype(curve: Curve) -> Curve:
    """TorchMetrics returns its exact curves in float32 (the default dtype) for float32 scores,
    the common case; ours are computed in float64 and handed back in the default dtype."""
    dtype = torch.get_default_dtype()
    return curve[0].to(dtype), curve[1].to(dtype), curve[2].to(dtype)


def _check_index(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError(
            f"Argument `{name}` must be None or an integer. Received: {name}={value!r}"
        )


def _reduce(per_class: Tensor, support: Tensor, average: str | None) -> Tensor:
    """TorchMetrics' reduction: NaN classes left out of macro/weighted, weights = positives."""
    if average is None or average == "none":
        return per_class
    valid = ~per_class.isnan()
    kept = torch.where(valid, per_class, 0.0)
    if average == "macro":
        return kept.sum() / valid.sum()
    weights = torch.where(valid, support.to(kept.dtype), 0.0)
    return (kept * safe_divide(weights, weights.sum())).sum()


class _Curve(Metric):
    """State and update shared by every curve class; subclasses set the task in `_format`."""

    is_differentiable = False
    cat_overflow_terms = ("samples", "pass thresholds=... for the binned constant-memory mode")

    def _setup(
        self,
        columns: int,
        thresholds: Any,
        ignore_index: int | None,
        validate_args: bool,
        capacity: int | None,
        kwargs: dict[str, Any],
    ) -> None:
        grid = _thresholds(thresholds)
        _check_index("ignore_index", ignore_index)
        if capacity is not None and (
            not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1
        ):
            raise ValueError(
                f"Argument `capacity` must be None or an integer >= 1. Received: capacity={capacity!r}"
            )
        if capacity is not None and grid is not None:
            raise ValueError(
                "Argument `capacity` sizes the exact mode's buffer and needs thresholds=None. "
                f"Received: capacity={capacity!r}, thresholds={thresholds!r}"
            )
        super().__init__(**kwargs)
        self.ignore_index, self.validate_args = ignore_index, validate_args
        if grid is None:
            self.capacity: int | None = DEFAULT_CAPACITY if capacity is None else capacity
            self.register_buffer("thresholds", None, persistent=False)
            self.register_buffer("sorted_thresholds", None, persistent=False)
            self.register_buffer("grid_rank", None, persistent=False)
            cap = self.capacity
            self.register_state(
                "scores", torch.zeros(cap, columns, dtype=torch.float64), False, "cat"
            )
            self.register_state("labels", torch.zeros(cap, columns, dtype=torch.int8), False, "cat")
            self.register_state("valid", torch.zeros(cap, columns, dtype=torch.bool), False, "cat")
        else:
            self.capacity = None
            # The grid is configuration, not state: buffers so they move with the metric. The
            # histogram buckets by the ascending grid; `grid_rank` (None when the thresholds
            # come ascending) reports the curves in the order given.
            self.register_buffer("thresholds", grid, persistent=False)
            ordered, order = grid.sort(stable=True)
            rank = torch.empty_like(order).scatter_(0, order, torch.arange(order.numel()))
            ascending = bool((order == torch.arange(order.numel())).all())
            self.register_buffer("sorted_thresholds", ordered, persistent=False)
            self.register_buffer("grid_rank", None if ascending else rank, persistent=False)
            # TorchMetrics' name for its binned state (checkpoint keys match); here the
            # native histogram.
            self.register_state(
                "confmat",
                torch.zeros(columns, 2, grid.numel() + 1, dtype=torch.float64),
                False,
                "sum",
            )

    @property
    def binned(self) -> bool:
        return self.thresholds is not None

    def _format(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """`(scores (M, K), labels (M, K) 0/1 long, counted (M, K) bool, invalid count)`."""
        raise NotImplementedError

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        scores, labels, counted, invalid = self._format(preds, target)
        batch: dict[str, Any]
        if self.thresholds is None:
            batch = {"scores": scores.double(), "labels": labels.to(torch.int8), "valid": counted}
        else:
            grid = self.sorted_thresholds.to(device=scores.device, dtype=scores.dtype)
            batch = {"confmat": binned_curve_update(scores, labels, grid, counted.double())}
        if self.validate_args:
            batch["_errors"] = {"invalid_targets": invalid}
        return batch

    # ---------------------------------------------------------------- curve values

    def _exact_columns(self, state: Mapping[str, Tensor], micro: bool = False) -> list[Curve]:
        """Per column (or all cells pooled when `micro`): `(scores, labels, weights)` rows."""
        scores, labels, valid = state["scores"], state["labels"].double(), state["valid"].double()
        if micro:
            return [(scores.reshape(-1, 1), labels.reshape(-1, 1), valid.reshape(-1))]
        return [
            (scores[:, k : k + 1], labels[:, k : k + 1], valid[:, k])
            for k in range(scores.shape[1])
        ]

    def _pr_curves(self, state: Mapping[str, Tensor], micro: bool = False) -> list[Curve]:
        """TorchMetrics' exact PR curve per column (scikit-learn's points; recall 1 without
        positives)."""
        return [
            _default_dtype(exact_pr_curve(*column)[0])
            for column in self._exact_columns(state, micro)
        ]

    def _roc_curves(self, state: Mapping[str, Tensor], micro: bool = False) -> list[Curve]:
        """TorchMetrics' exact ROC per column: first threshold 1 (not +inf) and a rate
        without positives (negatives) 0 (not NaN)."""
        curves = []
        for column in self._exact_columns(state, micro):
            fpr, tpr, thresholds = exact_roc(*column)[0]
            thresholds = thresholds.clone()
            thresholds[:1] = 1.0
            curves.append(_default_dtype((fpr.nan_to_num(0.0), tpr.nan_to_num(0.0), thresholds)))
        return curves

    def _binned_roc(self, hist: Tensor) -> Curve:
        """`(fpr (K, T), tpr (K, T), thresholds)` by decreasing threshold (in TorchMetrics'
        float32)."""
        assert self.thresholds is not None
        fpr, tpr, thresholds = binned_roc(hist, self.thresholds, self.grid_rank)
        return fpr.float(), tpr.float(), thresholds

    def _binned_pr(self, hist: Tensor) -> Curve:
        """`(precision (K, T+1), recall (K, T+1), thresholds)`, last point (1, 0)."""
        assert self.thresholds is not None
        precision, recall, thresholds = binned_pr_curve(hist, self.thresholds, self.grid_rank)
        return precision.float(), recall.float(), thresholds.clone()

    def _support(self, state: Mapping[str, Tensor]) -> Tensor:
        """Positives per column."""
        if self.thresholds is not None:
            return state["confmat"][:, 1].sum(-1)
        return (state["labels"].bool() & state["valid"]).sum(0)

    def _auroc(self, state: Mapping[str, Tensor], average: str | None, micro: bool) -> Tensor:
        if self.thresholds is not None:
            hist = state["confmat"].sum(0, keepdim=True) if micro else state["confmat"]
            fpr, tpr, _ = self._binned_roc(hist)
            per_class = torch.trapezoid(tpr, fpr, dim=1)
        else:
            per_class = torch.stack(
                [torch.trapezoid(t, f) for f, t, _ in self._roc_curves(state, micro)]
            )
        if micro:
            return per_class[0]
        return _reduce(per_class, self._support(state), average)

    def _average_precision(
        self, state: Mapping[str, Tensor], average: str | None, micro: bool
    ) -> Tensor:
        if self.thresholds is not None:
            hist = state["confmat"].sum(0, keepdim=True) if micro else state["confmat"]
            per_class = binned_average_precision(
                hist, self.thresholds, "none", self.grid_rank
            ).float()
        else:
            per_class = torch.stack(
                [-((r[1:] - r[:-1]) * p[:-1]).sum() for p, r, _ in self._pr_curves(state, micro)]
            )
        if micro:
            return per_class[0]
        return _reduce(per_class, self._support(state), average)

    def _curve_lists(self, state: Mapping[str, Tensor], kind: str) -> Any:
        """Multiclass/multilabel curves: `(K, ...)` tensors binned, per-class lists exact."""
        if self.thresholds is not None:
            hist = state["confmat"]
            return self._binned_roc(hist) if kind == "roc" else self._binned_pr(hist)
        curves = self._roc_curves(state) if kind == "roc" else self._pr_curves(state)
        return tuple(list(part) for part in zip(*curves, strict=True))


# ------------------------------------------------------------------------------- binary


class _BinaryCurve(_Curve):
    error_kinds = ErrorKinds(invalid_targets="targets that are neither 0/1 nor ignore_index")

    def __init__(
        self,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        normalization: str | None = "sigmoid",
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if normalization not in _NORMALIZATIONS:
            # "softmax" over one score per sample is undefined: TorchMetrics 1.9 accepts it and
            # then fails inside torch on the first batch of logits (softmax over dim 1 of 1-D).
            raise ValueError(
                f"Argument `normalization` must be one of {_NORMALIZATIONS} for binary scores "
                f"(a softmax needs a class dimension). Received: normalization={normalization!r}"
            )
        self._setup(1, thresholds, ignore_index, validate_args, capacity, kwargs)
        self.normalization = normalization

    def _format(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        if not isinstance(preds, Tensor) or not preds.is_floating_point():
            raise ValueError(
                "Argument `preds` must be a float tensor of scores or logits (order: "
                f"update(preds, target)). Received: {getattr(preds, 'dtype', type(preds).__name__)}"
            )
        if not isinstance(target, Tensor) or target.shape != preds.shape:
            raise ValueError(
                "Arguments `preds` and `target` must have the same shape. Received: preds "
                f"{tuple(preds.shape)}, target {tuple(getattr(target, 'shape', ()))}"
            )
        p, t = preds.reshape(-1, 1), target.reshape(-1, 1)
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        counted = binary & ~ignored
        # TorchMetrics decides logits over the counted scores only (after removing ignored ones).
        inside = (((p >= 0) & (p <= 1)) | ~counted).all()
        if self.normalization == "sigmoid":
            p = torch.where(inside, p, p.sigmoid())
        return p, t.long().clamp(0, 1), counted, (~binary & ~ignored).sum()


class BinaryROC(_BinaryCurve):
    """TorchMetrics' `BinaryROC`: `(fpr, tpr, thresholds)`, thresholds descending (binned, or
    exact with `thresholds=None` and a preallocated `capacity`)."""

    def _value(self, state: Mapping[str, Tensor]) -> Curve:
        if self.thresholds is None:
            return self._roc_curves(state)[0]
        fpr, tpr, thresholds = self._binned_roc(state["confmat"])
        return fpr[0], tpr[0], thresholds


class BinaryPrecisionRecallCurve(_BinaryCurve):
    """TorchMetrics' `BinaryPrecisionRecallCurve`: `(precision, recall, thresholds)` (binned,
    or exact with `thresholds=None` and a preallocated `capacity`)."""

    def _value(self, state: Mapping[str, Tensor]) -> Curve:
        if self.thresholds is None:
            return self._pr_curves(state)[0]
        precision, recall, thresholds = self._binned_pr(state["confmat"])
        return precision[0], recall[0], thresholds


class BinaryAUROC(_BinaryCurve):
    """TorchMetrics' `BinaryAUROC`: the trapezoidal area under the (binned or exact) ROC."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def __init__(
        self,
        max_fpr: float | None = None,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if max_fpr is not None and (
            isinstance(max_fpr, bool)
            or not isinstance(max_fpr, (int, float))
            or not 0 < max_fpr <= 1
        ):
            raise ValueError(
                f"Argument `max_fpr` must be None or a float in (0, 1]. Received: max_fpr={max_fpr!r}"
            )
        super().__init__(thresholds, ignore_index, validate_args, capacity=capacity, **kwargs)
        self.max_fpr = max_fpr

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        full = self._auroc(state, None, micro=True)
        if self.max_fpr is None or self.max_fpr == 1:
            return full
        fpr, tpr, _ = BinaryROC._value(self, state)  # type: ignore[arg-type]
        return torch.where(
            (fpr.sum() == 0) | (tpr.sum() == 0), full, _mcclish_partial_auc(fpr, tpr, self.max_fpr)
        ).to(full.dtype)


def _mcclish_partial_auc(fpr: Tensor, tpr: Tensor, max_fpr: float) -> Tensor:
    """TorchMetrics' partial AUC up to `max_fpr` (tpr interpolated there), McClish-standardized
    to 0.5 for a non-discriminant and 1 for a perfect classifier (the native
    `partial_roc_areas` and `mcclish_standardized`: a binned compute still traces). As in
    TorchMetrics, a curve whose first point already lies past `max_fpr` has partial area 0."""
    fpr, tpr = fpr.double(), tpr.double()
    area = partial_roc_areas(fpr[:-1], fpr[1:], tpr[:-1], tpr[1:], max_fpr).sum()
    return mcclish_standardized(area, max_fpr)


class BinaryAveragePrecision(_BinaryCurve):
    """TorchMetrics' `BinaryAveragePrecision`: the step sum over the (binned or exact) PR curve."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._average_precision(state, None, micro=True)


# --------------------------------------------------------------------------- multiclass


class _MulticlassCurve(_Curve):
    error_kinds = ErrorKinds(
        invalid_targets="targets that are neither a class index nor ignore_index"
    )
    _averages: tuple[str | None, ...] = ("macro", "weighted", "none", None)

    def __init__(
        self,
        num_classes: int,
        average: str | None = "macro",
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise ValueError(
                f"Argument `num_classes` must be an integer >= 2. Received: num_classes={num_classes!r}"
            )
        if average not in self._averages:
            raise ValueError(
                f"Argument `average` must be one of {self._averages}. Received: average={average!r}"
            )
        self._setup(num_classes, thresholds, ignore_index, validate_args, capacity, kwargs)
        self.num_classes, self.average = num_classes, average

    def _format(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        classes = self.num_classes
        if (
            not isinstance(preds, Tensor)
            or not isinstance(target, Tensor)
            or not preds.is_floating_point()
            or preds.dim() != target.dim() + 1
            or preds.shape[1] != classes
        ):
            raise ValueError(
                f"Argument `preds` must be float scores of shape (N, {classes}, ...) for target "
                f"(N, ...) (order: update(preds, target)). Received: preds "
                f"{tuple(getattr(preds, 'shape', ()))}, target {tuple(getattr(target, 'shape', ()))}"
            )
        scores = preds.movedim(1, -1).reshape(-1, classes)
        t = target.reshape(-1).long()
        in_range = (t >= 0) & (t < classes)
        ignored = (
            torch.zeros_like(in_range) if self.ignore_index is None else t == self.ignore_index
        )
        counted = in_range & ~ignored
        inside = (((scores >= 0) & (scores <= 1)) | ~counted.unsqueeze(-1)).all()
        scores = torch.where(inside, scores, scores.softmax(-1))
        labels = torch.nn.functional.one_hot(t.clamp(0, classes - 1), classes)
        return scores, labels, counted.unsqueeze(-1).expand_as(labels), (~in_range & ~ignored).sum()

    def _pr_curves(self, state: Mapping[str, Tensor], micro: bool = False) -> list[Curve]:
        # TorchMetrics' one-vs-rest exact PR curve sets recall to 1 for a class without
        # positives only when every target is the literal label 0; otherwise recall is NaN
        # (and the class drops out of macro/weighted averages); the appended end point stays 0.
        curves = super()._pr_curves(state, micro)
        valid, labels = state["valid"][:, 0], state["labels"]
        all_zero = bool((labels[:, 0].bool() | ~valid).all())
        positives = (labels.bool() & valid.unsqueeze(1)).sum(0)
        return [
            (p, r if all_zero or int(positives[k]) else r.where(r == 0, float("nan")), t)
            for k, (p, r, t) in enumerate(curves)
        ]


class MulticlassAUROC(_MulticlassCurve):
    """TorchMetrics' `MulticlassAUROC` (one-vs-rest), averaged macro/weighted/none; binned or
    exact (`thresholds=None`, preallocated `capacity`)."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._auroc(state, self.average, micro=False)


class MulticlassAveragePrecision(_MulticlassCurve):
    """TorchMetrics' `MulticlassAveragePrecision` (one-vs-rest), macro/weighted/none; binned
    or exact (`thresholds=None`, preallocated `capacity`)."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._average_precision(state, self.average, micro=False)


class _MulticlassCurveList(_MulticlassCurve):
    _averages = (None,)

    def __init__(
        self,
        num_classes: int,
        thresholds: int | list[float] | Tensor | None = None,
        average: str | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if average not in (None, "micro", "macro"):
            raise ValueError(
                "Argument `average` must be None (per-class curves), 'micro' or 'macro'. "
                f"Received: average={average!r}"
            )
        super().__init__(
            num_classes, None, thresholds, ignore_index, validate_args, capacity, **kwargs
        )
        self.curve_average = average

    def _micro_curve(self, state: Mapping[str, Tensor], kind: str) -> Curve:
        """One curve over every (sample, class) cell: scores against the one-hot target."""
        if self.thresholds is not None:
            pooled = state["confmat"].sum(0, keepdim=True)
            x, y, thresholds = (
                self._binned_roc(pooled) if kind == "roc" else self._binned_pr(pooled)
            )
            return x[0], y[0], thresholds
        if kind == "roc":
            return self._roc_curves(state, micro=True)[0]
        return _Curve._pr_curves(self, state, micro=True)[0]

    def _averaged_curves(self, state: Mapping[str, Tensor], kind: str) -> Any:
        if self.curve_average == "micro":
            return self._micro_curve(state, kind)
        curves = self._curve_lists(state, kind)
        if self.curve_average is None:
            return curves
        first, second, thresholds = curves
        return _macro_curve(first, second, thresholds, descending=kind == "roc")


def _interpolate(x: Tensor, xp: Tensor, fp: Tensor) -> Tensor:
    """TorchMetrics' linear interpolation for its macro curves: the segment of the last `xp`
    at or below `x` (clamped to the first and last segments), a 0/0 slope taken as 0."""
    run, rise = xp[1:] - xp[:-1], fp[1:] - fp[:-1]
    slope = torch.where(run != 0, rise / torch.where(run != 0, run, 1.0), 0.0)
    intercept = fp[:-1] - slope * xp[:-1]
    segment = ((x.unsqueeze(1) >= xp.unsqueeze(0)).sum(1) - 1).clamp(0, slope.numel() - 1)
    return slope[segment] * x + intercept[segment]


def _macro_curve(first: Any, second: Any, thresholds: Any, descending: bool) -> Curve:
    """TorchMetrics' macro curve: the classes' first coordinates pooled and sorted, the second
    interpolated on them per class and averaged; the pooled thresholds sorted (descending for
    the ROC)."""
    firsts = list(first)
    classes = len(firsts)
    if isinstance(thresholds, Tensor):
        pooled_thresholds = thresholds.repeat(classes)
    else:
        pooled_thresholds = torch.cat(list(thresholds))
    pooled_thresholds = pooled_thresholds.sort(descending=descending).values
    grid = torch.cat([f.reshape(-1) for f in firsts]).sort().values
    mean = torch.zeros_like(grid)
    for xs, ys in zip(firsts, list(second), strict=True):
        mean = mean + _interpolate(grid, xs, ys)
    return grid, mean / classes, pooled_thresholds


class MulticlassROC(_MulticlassCurveList):
    """TorchMetrics' `MulticlassROC` (one-vs-rest): `(fpr, tpr, thresholds)`, `(C, T)` tensors
    binned, per-class lists exact; `average="micro"` one curve over every (sample, class) cell,
    `"macro"` the classes' tpr interpolated on their pooled fpr and averaged."""

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._averaged_curves(state, "roc")


class MulticlassPrecisionRecallCurve(_MulticlassCurveList):
    """TorchMetrics' `MulticlassPrecisionRecallCurve` (one-vs-rest): `(precision, recall,
    thresholds)`, `(C, T + 1)` tensors binned, per-class lists exact; `average="micro"` one
    curve over every (sample, class) cell, `"macro"` the classes' recall interpolated on their
    pooled precision and averaged."""

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._averaged_curves(state, "pr")


# --------------------------------------------------------------------------- multilabel


class _MultilabelCurve(_Curve):
    error_kinds = ErrorKinds(invalid_targets="targets that are neither 0/1 nor ignore_index")
    _averages: tuple[str | None, ...] = ("micro", "macro", "weighted", "none", None)

    def __init__(
        self,
        num_labels: int,
        average: str | None = "macro",
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 1:
            raise ValueError(
                f"Argument `num_labels` must be an integer >= 1. Received: num_labels={num_labels!r}"
            )
        if average not in self._averages:
            raise ValueError(
                f"Argument `average` must be one of {self._averages}. Received: average={average!r}"
            )
        self._setup(num_labels, thresholds, ignore_index, validate_args, capacity, kwargs)
        self.num_labels, self.average = num_labels, average

    def _format(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        labels = self.num_labels
        if (
            not isinstance(preds, Tensor)
            or not isinstance(target, Tensor)
            or not preds.is_floating_point()
            or preds.shape != target.shape
            or preds.dim() < 2
            or preds.shape[1] != labels
        ):
            raise ValueError(
                f"Argument `preds` must be float scores of shape (N, {labels}, ...) like target "
                f"(order: update(preds, target)). Received: preds "
                f"{tuple(getattr(preds, 'shape', ()))}, target {tuple(getattr(target, 'shape', ()))}"
            )
        # TorchMetrics decides logits over every score, ignored positions included.
        scores = preds.movedim(1, -1).reshape(-1, labels)
        scores = torch.where(((scores >= 0) & (scores <= 1)).all(), scores, scores.sigmoid())
        t = target.movedim(1, -1).reshape(-1, labels).long()
        binary = (t == 0) | (t == 1)
        ignored = torch.zeros_like(binary) if self.ignore_index is None else t == self.ignore_index
        return scores, t.clamp(0, 1), binary & ~ignored, (~binary & ~ignored).sum()


class MultilabelAUROC(_MultilabelCurve):
    """TorchMetrics' `MultilabelAUROC`, averaged micro/macro/weighted/none; binned or exact
    (`thresholds=None`, preallocated `capacity`)."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._auroc(state, self.average, micro=self.average == "micro")


class MultilabelAveragePrecision(_MultilabelCurve):
    """TorchMetrics' `MultilabelAveragePrecision`, averaged micro/macro/weighted/none; binned
    or exact (`thresholds=None`, preallocated `capacity`)."""

    higher_is_better = True
    plot_lower_bound, plot_upper_bound = 0.0, 1.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._average_precision(state, self.average, micro=self.average == "micro")


class _MultilabelCurveList(_MultilabelCurve):
    _averages = (None,)

    def __init__(
        self,
        num_labels: int,
        thresholds: int | list[float] | Tensor | None = None,
        ignore_index: int | None = None,
        validate_args: bool = True,
        capacity: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            num_labels, None, thresholds, ignore_index, validate_args, capacity, **kwargs
        )


class MultilabelROC(_MultilabelCurveList):
    """TorchMetrics' `MultilabelROC`: `(fpr, tpr, thresholds)`, `(L, T)` tensors binned,
    per-label lists exact."""

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._curve_lists(state, "roc")


class MultilabelPrecisionRecallCurve(_MultilabelCurveList):
    """TorchMetrics' `MultilabelPrecisionRecallCurve`: `(precision, recall, thresholds)`,
    `(L, T + 1)` tensors binned, per-label lists exact."""

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        return self._curve_lists(state, "pr")
