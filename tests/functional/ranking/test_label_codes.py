"""Multiclass label codes are narrowed before the offset (issue 16): labels that wrap in the
narrow code dtype (256, -1, 2**15 + 3, ...) must still get the empty code, every valid label
`label + 1`, against a plain Python encoding."""

from __future__ import annotations

import pytest
import torch

from torchtally.functional.ranking._keys import EMPTY_CODE, code_dtype, label_codes


@pytest.mark.parametrize("num_classes", [2, 10, 254, 255, 300, 2**15 - 2, 2**15 + 5])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_label_codes_match_python(num_classes: int, dtype: torch.dtype) -> None:
    info = torch.iinfo(dtype)
    candidates = [0, 1, num_classes - 1, num_classes, num_classes + 1, -1, -2, 255, 256, 257]
    candidates += [2**15 - 1, 2**15, 2**15 + 3, 2**16 - 1, 2**16, 2**16 + 1, 2**31 - 1, -(2**31)]
    values = sorted({v for v in candidates if info.min <= v <= info.max})
    labels = torch.tensor(values, dtype=dtype)
    codes = label_codes(labels, num_classes)
    assert codes.dtype == code_dtype(num_classes)
    expected = [v + 1 if 0 <= v < num_classes else EMPTY_CODE for v in values]
    assert codes.tolist() == expected
