"""The value checks of exact AUROC's eager append (issue 16), against NumPy oracles: rows of
class scores whose maximum is not finite (NaN anywhere, +inf anywhere, or every score -inf;
a -inf score beside finite ones is a masked class, not an error), and class labels outside
`[0, num_classes)`."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.functional.ranking._inputs import (
    count_invalid_classes,
    count_nonfinite_score_rows,
)

SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 3.4e38, -3.4e38, 1e-45]


def _rows_oracle(scores: np.ndarray) -> int:
    # np.max propagates NaN; a row's maximum is non-finite iff the row is counted
    with np.errstate(invalid="ignore"):
        return int((~np.isfinite(scores.max(axis=1))).sum())


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 40),
    classes=st.integers(2, 40),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    seed=st.integers(0, 2**31 - 1),
    special=st.floats(0.0, 0.5),
)
def test_nonfinite_score_rows_match_numpy(
    rows: int, classes: int, dtype: torch.dtype, seed: int, special: float
) -> None:
    g = np.random.default_rng(seed)
    scores = g.normal(size=(rows, classes))
    picked = g.random(size=scores.shape) < special
    scores[picked] = g.choice(SPECIAL, size=int(picked.sum()))
    if rows > 1 and g.random() < 0.5:
        scores[0] = -np.inf  # a row of only -inf: its maximum is -inf, counted
    tensor = torch.from_numpy(scores).to(dtype)
    expected = _rows_oracle(tensor.double().numpy())
    counted = count_nonfinite_score_rows(tensor)
    assert counted is not None
    assert int(counted) == expected


def test_nonfinite_score_rows_named_cases() -> None:
    nan, inf = float("nan"), float("inf")
    scores = torch.tensor(
        [
            [0.1, nan, 0.3],  # NaN: counted
            [-inf, 0.0, 1.0],  # a masked class: not counted
            [-inf, -inf, -inf],  # only -inf: counted
            [inf, 0.0, -inf],  # +inf: counted
            [nan, nan, nan],  # counted once
            [0.5, 0.25, 0.25],
        ]
    )
    for dtype in (torch.float32, torch.float64):
        assert int(count_nonfinite_score_rows(scores.to(dtype))) == 4  # type: ignore[arg-type]
    # a non-contiguous batch and a wide one take the general count: the same numbers
    assert int(count_nonfinite_score_rows(scores.t().contiguous().t())) == 4  # type: ignore[arg-type]
    wide = torch.zeros(3, 40)
    wide[0, 39], wide[2, :] = nan, -inf
    assert int(count_nonfinite_score_rows(wide)) == 2  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(
    labels=st.lists(st.integers(-(2**40), 2**40) | st.integers(-3, 70), min_size=0, max_size=30),
    classes=st.sampled_from([2, 3, 4, 8, 10, 16, 64, 100]),
    dtype=st.sampled_from([torch.int64, torch.int32]),
)
def test_invalid_classes_match_numpy(labels: list[int], classes: int, dtype: torch.dtype) -> None:
    values = np.array(labels, dtype=np.int64)
    if dtype == torch.int32:
        values = values.clip(-(2**31), 2**31 - 1)
    expected = int(((values < 0) | (values >= classes)).sum())
    assert int(count_invalid_classes(torch.from_numpy(values).to(dtype), classes)) == expected


def test_invalid_classes_of_other_label_dtypes() -> None:
    # uint8, int16 and bool labels take the general count
    assert int(count_invalid_classes(torch.tensor([0, 3, 4, 255], dtype=torch.uint8), 4)) == 2
    assert int(count_invalid_classes(torch.tensor([-1, 3, 9], dtype=torch.int16), 4)) == 2
    assert int(count_invalid_classes(torch.tensor([True, False]), 2)) == 0
