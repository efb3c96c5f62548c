"""Class-score batches with their value checks folded into the statistic's own pass (issue 26).

On an accelerator an update costs about one launch per op, so counting invalid labels and
non-finite scores with ops of their own costs more than the statistic. Here every check rides
on an op the statistic needs anyway: each row gets *codes* from one `searchsorted` of a
two-column query `[label, row maximum]` (the row maximum is what the argmax computes), and one
scatter of those codes fills the statistic and its error bins at once:

- a label code places the label against the class boundaries: below 0, a class, or from
  `num_classes` on (labels compare as floats: exact for fewer than 2**24 classes, and monotone
  rounding keeps an out-of-range label out of range);
- a score code places the row maximum against `-max_finite` and `+inf`: `-inf` lands below
  every boundary, `+inf` and NaN (which every comparison of the binary search fails) past the
  last one, so a row holding a NaN or `+inf`, or only `-inf`, is told from a finite row.

Every code is a plain tensor op: traceable, no host read. The codes, constants and layouts
below are what the metrics' states hold (`metrics/classification`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from torchtally._errors import _fake_tensor_type

__all__ = [
    "PAIR_ROWS",
    "accuracy_codes",
    "class_score_rows",
    "device_constant",
    "fused_classes",
    "fuses",
    "pair_index",
    "pair_index_unchecked",
    "top_k_codes",
    "unit_constant",
]

#: Rows of the label axis of the pair layout: [unused, label < 0, classes..., label >= C,
#: unused] for the labels, [-inf, finite..., +inf or NaN] for the row maxima (see `pair_index`).
PAIR_ROWS = 4  # plus num_classes

#: Class numbers compare exactly as float32 below this many classes.
_EXACT_FLOAT32 = 1 << 24

_constants: dict[tuple[object, ...], Tensor] = {}


def fuses(predictions: Tensor) -> bool:
    """Whether an update takes the fused formulation: everywhere but on the CPU, where the
    dispatch of an op costs little against its work and the tuned CPU paths stay."""
    return not predictions.is_cpu


def device_constant(
    key: tuple[object, ...], like: Tensor, make: Callable[[torch.device], Tensor]
) -> Tensor:
    """The constant tensor `make(device)` for tensors like `like`, made once per device and
    key (made on every use, a tensor built on the host costs a copy to the accelerator, an
    op). Made afresh, and not kept, while compiling or for a fake tensor: a traced constant is
    not a tensor to keep, and a kept one is not a traced one. (Under `torch.func.vmap`
    `like` is a wrapper, not itself fake: an active fake mode is asked too.)"""
    device = like.device
    if (
        torch.compiler.is_compiling()
        or isinstance(like, _fake_tensor_type())
        or torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None
    ):
        return make(device)
    full = (*key, device)
    value = _constants.get(full)
    if value is None:
        value = _constants[full] = make(device)
    return value


def unit_constant(like: Tensor) -> Tensor:
    """A 0-d float64 one on `like`'s device, to expand into the ones a scatter adds."""
    return device_constant(("one",), like, lambda d: torch.ones((), dtype=torch.float64, device=d))


def _query_dtype(values: Tensor) -> torch.dtype:
    # float16 / bfloat16 cannot hold class numbers above 2048 / 256 exactly
    return values.dtype if values.dtype in (torch.float32, torch.float64) else torch.float32


def _first_column(like: Tensor) -> Tensor:
    return device_constant(
        ("first column",), like, lambda d: torch.tensor([[True, False]], device=d)
    )


def _query(labels: Tensor, values: Tensor) -> Tensor:
    """`(N, 2)` floats `[label, row maximum]`, in one op."""
    if values.dtype not in (torch.float32, torch.float64):
        values = values.float()
    return torch.where(_first_column(values), labels.unsqueeze(-1), values.unsqueeze(-1))


def fused_classes(num_classes: int) -> bool:
    """Whether a batch of this many classes can take the fused path (exact float compares)."""
    return num_classes < _EXACT_FLOAT32


def class_score_rows(labels: object, predictions: object) -> tuple[Tensor, Tensor] | None:
    """`(N,)` labels and `(N, C)` class scores of int64 labels of any shape and floating
    scores of that shape plus a class dimension, flattened (views of contiguous inputs); None
    for any other batch, which the ordinary path takes (and checks)."""
    if not (
        isinstance(labels, Tensor)
        and isinstance(predictions, Tensor)
        and labels.dtype == torch.int64
        and labels.dim() >= 1
        and predictions.is_floating_point()
        and predictions.dim() == labels.dim() + 1
        and predictions.shape[:-1] == labels.shape
        and fused_classes(predictions.shape[-1])
    ):
        return None
    if labels.dim() == 1:
        return labels, predictions
    return labels.reshape(-1), predictions.reshape(-1, predictions.shape[-1])


# ------------------------------------------------------------------------------ accuracy


def accuracy_codes(labels: Tensor, scores: Tensor) -> Tensor:
    """`(N, 2)` int64 codes of `(N,)` labels and `(N, C)` class scores, from four ops.

    Column 0 places the label against the row's own boundaries `[-max, 0, argmax, argmax + 1,
    C, +inf]`: 1 below 0, 2 a class before the argmax, 3 the argmax itself (a correct
    prediction), 4 a class after it, 5 from `C` on. Column 1 places the row maximum against the
    same boundaries: 0 for `-inf` (a row of masked classes only), 6 for `+inf` or NaN, 1 to 5
    when finite.
    """
    values, predicted = scores.max(dim=-1)
    query = _query(labels, values)
    dtype, classes = query.dtype, scores.shape[-1]

    def start(device: torch.device) -> Tensor:
        big = torch.finfo(dtype).max
        return torch.tensor([-big, 0.0, 0.0, 1.0, classes, torch.inf], dtype=dtype, device=device)

    def step(device: torch.device) -> Tensor:
        return torch.tensor([0.0, 0.0, 1.0, 1.0, 0.0, 0.0], dtype=dtype, device=device)

    edges = torch.addcmul(
        device_constant(("accuracy edges", dtype, classes), query, start),
        predicted.unsqueeze(-1),
        device_constant(("accuracy step", dtype), query, step),
    )
    return torch.searchsorted(edges, query, right=True)


# ------------------------------------------------------------------------------ pair counts


def _pair_edges(num_classes: int, dtype: torch.dtype, like: Tensor) -> Tensor:
    """`[-max, 0, 1, ..., C, +inf]`: a label's code is 1 below 0, `l + 2` for class `l`,
    `C + 2` from `C` on; a row maximum's is 0 for `-inf`, `C + 3` for `+inf` or NaN."""

    def make(device: torch.device) -> Tensor:
        inner = torch.arange(num_classes + 1, dtype=dtype, device=device)
        big = torch.finfo(dtype).max
        return torch.cat([inner.new_full((1,), -big), inner, inner.new_full((1,), torch.inf)])

    return device_constant(("pair edges", dtype, num_classes), like, make)


def pair_index(labels: Tensor, scores: Tensor) -> Tensor:
    """`(N, 2)` int64 positions of each row in the two halves of the pair layout, from four
    ops (`max`, `where`, `searchsorted`, `addcmul`).

    Each half has `C + 4` rows of `C` bins, the row picked by a code and the bin by the argmax.
    Half 0 (labels): row 1 for a label below 0, row `l + 2` for class `l`, row `C + 2` for a
    label from `C` on; rows 2 to `C + 1` are the confusion matrix. Half 1 (row maxima): row 0
    for `-inf`, row `C + 3` for `+inf` or NaN, rows 1 to `C + 2` for a finite maximum (counted
    nowhere). Nothing is lost: a row with a bad label and a NaN score is in both error counts.
    """
    classes = scores.shape[-1]
    values, predicted = scores.max(dim=-1)
    query = _query(labels, values)
    codes = torch.searchsorted(_pair_edges(classes, query.dtype, query), query, right=True)
    scale = device_constant(
        ("pair scale", classes), query, lambda d: torch.tensor([classes, classes], device=d)
    )
    return torch.addcmul(predicted.unsqueeze(-1), codes, scale)


def pair_index_unchecked(labels: Tensor, scores: Tensor) -> Tensor:
    """`(N,)` positions in half 0 of the pair layout, without the score codes (value checks
    off), from three ops: as `pair_index`, but a label outside the classes goes to row 0 or
    row `C + 3`, which count nowhere (unchecked, an invalid label is no error)."""
    classes = scores.shape[-1]
    predicted = scores.argmax(dim=-1)

    def make(device: torch.device) -> Tensor:
        # 0 twice and C twice: below 0 -> 0, class l -> l + 2, from C on -> C + 3
        inner = torch.arange(classes + 1, dtype=labels.dtype, device=device)
        return torch.cat([inner[:1], inner, inner[-1:]])

    edges = device_constant(("pair edges unchecked", labels.dtype, classes), labels, make)
    return torch.add(predicted, torch.bucketize(labels, edges, right=True), alpha=classes)


# ------------------------------------------------------------------------------ top-k

#: The tie-break unit of `top_k_codes`: far below any difference of two distinct scores.
_TIE_UNIT = 2.0**-1000


def top_k_codes(labels: Tensor, scores: Tensor, k: int, check_values: bool = True) -> Tensor:
    """`(2, N)` int64 codes of `(N,)` labels and `(N, C)` scores, ties broken as scikit-learn
    breaks them (among equal scores the higher class index ranks first).

    With `check_values` (ten ops with the scatter): row 0 is 1 for a label outside `[0, C)`;
    row 1 is 0 for a hit, 1 for a miss, 2 for an invalid label and 3 for a row holding a NaN
    or an infinite score. Without (eight): row 0 is 1 for an invalid label, row 1 for a miss
    or an invalid label.

    A class ranks ahead of the label when `score - label_score > (label - class + 0.5) * u`
    with `u = 2**-1000`: a difference of two distinct scores is at least the smallest
    subnormal, far above the right side, so its sign decides, and a difference of 0 (a tie)
    leaves the class numbers to decide. NaN ranks nowhere, as in a comparison. An invalid label
    gets `C` added to its rank (it names no class), so it is never a hit. The checks add
    `0 * score` to each comparison's 0/1, NaN for a NaN or infinite score, so such a row's
    rank is NaN: the row is counted (once, however many such scores it holds). (Where the
    label's score and another are the same infinity, their difference is NaN, not a tie: a
    row the checks report.)
    """
    rows, classes = scores.shape
    work = scores if scores.dtype in (torch.float32, torch.float64) else scores.float()
    dtype = work.dtype
    clamped = labels.clamp(0, classes - 1)
    label_scores = work.gather(1, clamped.unsqueeze(-1))

    def offsets(d: torch.device) -> Tensor:
        return (0.5 - torch.arange(classes, dtype=torch.float64, device=d)) * _TIE_UNIT

    bars = torch.addcmul(
        device_constant(("top-k ties", classes), work, offsets),
        clamped.unsqueeze(-1),
        device_constant(
            ("top-k unit",),
            work,
            lambda d: torch.full((1,), _TIE_UNIT, dtype=torch.float64, device=d),
        ),
    )
    ahead = torch.gt(work - label_scores, bars, out=work.new_empty((rows, classes)))
    query = work.new_empty((2, rows))
    torch.ne(clamped, labels, out=query[0])  # 1 for a label outside the classes
    if check_values:
        zero = device_constant(
            ("zero", dtype), work, lambda d: torch.zeros((), dtype=dtype, device=d)
        )
        ahead.addcmul_(work, zero)
    ones = device_constant(
        ("top-k ones", classes, dtype), work, lambda d: torch.ones(classes, dtype=dtype, device=d)
    )
    ranks = torch.addmv(query[0], ahead, ones, beta=classes, out=query[1])
    if not check_values:
        limits = device_constant(
            ("top-k limits", classes, k, dtype),
            work,
            lambda d: torch.tensor([[classes], [min(k, classes)]], dtype=dtype, device=d),
        )
        return torch.ge(ranks, limits, out=labels.new_empty((2, rows), dtype=torch.int64))
    edges = device_constant(
        ("top-k edges", classes, k, dtype),
        work,
        lambda d: torch.tensor(
            [[0.5, torch.inf, torch.inf], [min(k, classes), classes, torch.inf]],
            dtype=dtype,
            device=d,
        ),
    )
    return torch.searchsorted(edges, query, right=True)
