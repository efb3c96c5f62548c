"""Order-preserving integer keys for floating-point scores, and label codes, for exact AUROC.

On CPU PyTorch sorts 1-D integer tensors with a parallel radix sort, two to three times faster
than its float sort, so exact AUROC stores each score as the integer of the same width whose
order is the score's order, and sorts those. It stores the raw bits (`score_bits`) in `update`,
and maps them to keys in place (`bits_to_keys_`, its own inverse) only when it computes. Labels are stored as small codes in which 0 means
"no sample": rows of a preallocated buffer that were never written (or were zero-filled by a
distributed gather) then count as neither positive nor negative, whatever their key.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "EMPTY_CODE",
    "KEY_DTYPES",
    "bits_to_keys_",
    "checked_label_codes",
    "code_dtype",
    "label_codes",
    "score_bits",
    "score_keys",
]

#: Storage float dtype -> the integer dtype of its keys.
KEY_DTYPES = {torch.float32: torch.int32, torch.float64: torch.int64}

#: The label code of a row that holds no sample.
EMPTY_CODE = 0


def score_keys(scores: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Map scores to integers with the same order: `a < b` iff `key(a) < key(b)`.

    Scores are first converted to `dtype` (float32 or float64; float64 scores stored as
    float32 are rounded, so scores closer than float32's resolution become ties). `-0.0` and
    `0.0` get the same key, as they compare equal. NaNs get keys beyond those of the
    infinities (they are reported as non-finite values by the metrics).

    Args:
        scores: Real scores of any shape.
        dtype: `torch.float32` (int32 keys) or `torch.float64` (int64 keys).

    Returns:
        Integer keys shaped like `scores`.

    Example:
        >>> score_keys(torch.tensor([0.5, -2.0, 0.0, -0.0, 1.0])).argsort().tolist()
        [1, 2, 3, 0, 4]
    """
    return bits_to_keys_(score_bits(scores, dtype).clone())


def score_bits(scores: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """The scores' IEEE bit patterns, as integers of the same width (a view, no arithmetic).

    Exact AUROC stores these in `update` (one copy into its buffer, nothing else per score)
    and turns them into order keys with `bits_to_keys_` only when it computes.

    Args:
        scores: Real scores of any shape.
        dtype: `torch.float32` (int32 bits) or `torch.float64` (int64 bits).

    Returns:
        Integer bits shaped like `scores` (a view of them when no conversion was needed).
    """
    if scores.dtype != dtype:  # a `to` that changes nothing still costs a dispatch
        scores = scores.to(dtype)
    return scores.view(KEY_DTYPES[dtype])


def bits_to_keys_(bits: Tensor) -> Tensor:
    """In place: IEEE bit patterns to order-preserving keys (see `score_keys`), and back.

    The map is its own inverse: applied to keys it restores the bits (with -0.0 as 0.0), so a
    buffer of bits can be turned into keys, sorted and turned back without a copy.

    Args:
        bits: Integer bits (or keys) from `score_bits`, modified in place.

    Returns:
        `bits`, now holding keys (or bits).
    """
    width = torch.iinfo(bits.dtype)
    # IEEE floats order like sign-magnitude integers: non-negative floats already sort as
    # their bit patterns; for negative ones, flipping the magnitude bits reverses their order.
    bits.bitwise_xor_((bits >> (width.bits - 1)) & width.max)
    return bits.masked_fill_(bits == -1, 0)  # -1 is the key of -0.0, which equals 0.0


def code_dtype(num_classes: int | None) -> torch.dtype:
    """The smallest integer dtype holding the label codes 0 (empty) to num_classes."""
    if num_classes is None or num_classes < 255:
        return torch.uint8
    if num_classes < 2**15 - 1:
        return torch.int16
    return torch.int32


def label_codes(labels: Tensor, num_classes: int | None) -> Tensor:
    """Encode labels as codes: binary 1 (negative) / 2 (positive, label > 0); multiclass
    `label + 1`. Multiclass labels outside `[0, num_classes)` get the empty code 0, so they
    are ignored (the metrics report them as invalid labels).

    Args:
        labels: `(N,)` binary labels or class indices.
        num_classes: None for binary, else the number of classes.

    Returns:
        `(N,)` codes of dtype `code_dtype(num_classes)`.
    """
    dtype = code_dtype(num_classes)
    if num_classes is None:
        # bool and uint8 share their bytes: a view, not a conversion kernel, then uint8 + 1
        return (labels > 0).view(torch.uint8) + 1
    # a label is valid iff clamping to the classes leaves it unchanged (one compare less); a
    # bound past the labels' dtype (int16 labels, 40000 classes) would not convert to it
    high = num_classes - 1
    if labels.dtype != torch.bool:
        high = min(high, torch.iinfo(labels.dtype).max)
    valid = labels.clamp(0, high) == labels
    # Narrowed first, so that no temporary is 8 bytes a label: an invalid label may wrap in
    # the narrow dtype, but its code is then zeroed (EMPTY_CODE) by the mask.
    return labels.to(dtype).add_(1).mul_(valid)


def checked_label_codes(
    labels: Tensor, num_classes: int | None, out: Tensor | None = None
) -> Tensor:
    """Label codes that keep an invalid label apart from every valid one, so that it can be
    counted in the stored rows at compute instead of in `update`: a valid label gets its
    `label_codes` code; one below the valid range gets 0 (the empty code: a stored row with it
    is an error, a row past the fill none) and one above it `top + 1`, where `top` is the
    largest valid code (binary 2, multiclass `num_classes`). Two ops (one for bool labels),
    written into `out` when given (a buffer's next rows: the write converts to its dtype).

    Args:
        labels: `(N,)` integer or bool labels (binary: 0/1; multiclass: class indices); float
            binary labels need `label_codes` and a check of their own (0.5 has no code here).
        num_classes: None for binary, else the number of classes.
        out: `(N,)` codes of dtype `code_dtype(num_classes)` to write into.

    Returns:
        `(N,)` codes of dtype `code_dtype(num_classes)` (`out` itself when given).

    Example:
        >>> checked_label_codes(torch.tensor([0, 1, 2, -1]), None).tolist()
        [1, 2, 3, 0]
    """
    if out is None:
        out = torch.empty(labels.shape, dtype=code_dtype(num_classes), device=labels.device)
    if labels.dtype == torch.bool:
        return torch.add(labels, 1, out=out)  # the add converts: no bool label is invalid
    high = 2 if num_classes is None else num_classes  # the first invalid label above
    info = torch.iinfo(labels.dtype)
    if high >= info.max:
        # `label + 1` is taken in the labels' dtype: widen narrow labels so it cannot wrap
        labels = labels.to(torch.int32 if high < 2**31 - 2 else torch.int64)
        info = torch.iinfo(labels.dtype)
    # an unsigned dtype holds no label below 0 (a -1 bound would wrap to its maximum)
    clamped = labels.clamp(max=high) if info.min == 0 else labels.clamp(-1, high)
    return torch.add(clamped, 1, out=out)  # -1 + 1 is the empty code; the add converts
