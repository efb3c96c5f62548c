"""Exact AUROC's eager work (issue 16) against oracles: the append's value checks (NumPy: rows
of class scores whose maximum is not finite, i.e. NaN anywhere, +inf anywhere, or every score
-inf, where a -inf beside finite scores is a masked class and no error; class labels outside
`[0, num_classes)`), and compute on each of its paths (scikit-learn)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from torchtally.functional.ranking import exact_auroc_compute, exact_auroc_update
from torchtally.functional.ranking._auroc import _keys_to_bits_
from torchtally.functional.ranking._inputs import (
    count_invalid_classes,
    count_nonfinite_score_rows,
)
from torchtally.functional.ranking._keys import bits_to_keys_

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


@pytest.mark.parametrize("classes", [2, 10, 16])
def test_nonfinite_score_rows_of_a_batch_pooled_in_blocks(classes: int) -> None:
    """Batches over one pooling block (2**17 scores): rows with a special value at each
    block's first and last row, and in between, are each counted once."""
    rows = 3 * (1 << 17) // classes + 5
    scores = torch.rand(rows, classes, generator=torch.Generator().manual_seed(classes))
    block_rows = (1 << 17) // classes
    edges = [0, block_rows - 1, block_rows, 2 * block_rows - 1, 2 * block_rows, rows - 1, 777]
    for row, value in zip(edges, [float("nan"), float("inf"), -float("inf")] * 3, strict=False):
        scores[row, row % classes] = value
    scores[block_rows + 1] = -float("inf")  # a whole row of -inf
    expected = _rows_oracle(scores.double().numpy())
    assert expected == 6  # a -inf beside finite scores (rows block_rows, rows - 1) is no error
    for dtype in (torch.float32, torch.float64):
        counted = count_nonfinite_score_rows(scores.to(dtype))
        assert counted is not None and int(counted) == expected


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


# --- exact compute: the paths chosen by row count, against scikit-learn -----------------------


@pytest.mark.parametrize("rows", [7, 20_000, 46_340, 46_341, 65_536, 65_537, 70_001])
@pytest.mark.parametrize(("in_place", "filled"), [(False, False), (True, False), (True, True)])
def test_binary_compute_matches_sklearn_around_its_row_thresholds(
    rows: int, in_place: bool, filled: bool
) -> None:
    # int32 sums below 46,341 rows (rows^2 < 2^31), a sorted copy up to 65,536 private rows,
    # comparison sorts (stable or not) below 32,768 rows
    g = np.random.default_rng(rows)
    labels = g.integers(0, 2, rows)
    labels[:2] = [0, 1]
    scores = g.integers(0, 300, rows) / 299 - 0.25  # ties, and -0.0 beside 0.0
    scores[:3] = [-0.0, 0.0, -0.0]
    bits, codes = exact_auroc_update(torch.from_numpy(labels), torch.from_numpy(scores))
    stored = bits.clone()
    got = exact_auroc_compute(bits, codes, in_place=in_place, filled=filled)
    assert float(got) == pytest.approx(roc_auc_score(labels, scores.astype(np.float32)), abs=1e-12)
    if not in_place:
        assert torch.equal(bits, stored)  # a private copy was sorted
    else:  # the same rows, reordered, with -0.0 stored as 0.0
        pairs = sorted(zip(bits.tolist(), codes.tolist(), strict=True))
        stored[stored == torch.iinfo(torch.int32).min] = 0
        assert pairs == sorted(
            zip(
                stored.tolist(),
                exact_auroc_update(torch.from_numpy(labels), torch.from_numpy(scores))[1].tolist(),
                strict=True,
            )
        )


@settings(max_examples=100, deadline=None)
@given(patterns=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=50))
def test_keys_turn_back_into_the_bits(patterns: list[int]) -> None:
    bits = torch.tensor(patterns, dtype=torch.int32)
    expected = [0 if b == -(2**31) else b for b in patterns]  # -0.0 comes back as 0.0
    assert _keys_to_bits_(bits_to_keys_(bits.clone())).tolist() == expected
    wide = torch.tensor(patterns, dtype=torch.int64) << 32
    expected_wide = [0 if b == -(2**63) else b for b in wide.tolist()]
    assert _keys_to_bits_(bits_to_keys_(wide.clone())).tolist() == expected_wide


@pytest.mark.parametrize(
    ("rows", "classes"), [(3000, 2), (3000, 3), (3000, 10), (3072, 8), (4095, 8), (4096, 8)]
)
def test_grouped_multiclass_compute_matches_sklearn(rows: int, classes: int) -> None:
    # one sort of rows x classes keys: by comparison, padded to 32,768 keys from 24,576, or
    # 32,768 and more (a radix sort either way)
    g = np.random.default_rng(classes)
    labels = g.integers(0, classes, rows)
    scores = g.integers(0, 40, (rows, classes)) / 39  # many ties per class
    bits, codes = exact_auroc_update(torch.from_numpy(labels), torch.from_numpy(scores), classes)
    got = exact_auroc_compute(bits, codes, classes, "none")
    rounded = scores.astype(np.float32)
    for c in range(classes):
        expected = roc_auc_score(labels == c, rounded[:, c])
        assert float(got[c]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_compute_paths_compile_to_one_graph() -> None:
    # compute runs inside compiled steps too: each path, traced whole, gives the eager value
    g = torch.Generator().manual_seed(8)
    for rows, classes in ((3000, 10), (500, 3), (20_000, None)):
        labels = torch.randint(0, classes or 2, (rows,), generator=g)
        scores = (
            torch.rand(rows, classes, generator=g) if classes else torch.rand(rows, generator=g)
        )
        bits, codes = exact_auroc_update(labels, scores, classes)
        for in_place in (False, True) if classes is None else (False,):
            compiled = torch.compile(
                lambda b, c, n=classes, p=in_place: exact_auroc_compute(
                    b, c, n, "none", in_place=p
                ),
                fullgraph=True,
            )
            expected = exact_auroc_compute(bits.clone(), codes.clone(), classes, "none")
            assert torch.equal(compiled(bits.clone(), codes.clone()), expected)
