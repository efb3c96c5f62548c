"""The partial ROC area up to `max_fpr`, McClish-standardized (the one home of the binary
curves' and retrieval's `max_fpr`), against scikit-learn's `roc_auc_score(max_fpr=...)`."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score, roc_curve

from torchtally.functional.curves import mcclish_standardized, partial_roc_areas


@settings(max_examples=200, deadline=None)
@given(
    labels=st.lists(st.integers(0, 1), min_size=2, max_size=40),
    seed=st.integers(0, 2**16),
    tied=st.booleans(),
    max_fpr=st.sampled_from([0.05, 0.1, 0.25, 0.5, 0.8, 1.0]),
)
def test_partial_auc_matches_scikit_learn(
    labels: list[int], seed: int, tied: bool, max_fpr: float
) -> None:
    y = np.array(labels)
    assume(y.min() != y.max())  # scikit-learn refuses one class
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, y.size) / 4 if tied else rng.random(y.size)
    fpr, tpr, _ = roc_curve(y, scores, drop_intermediate=False)
    f, t = torch.from_numpy(fpr), torch.from_numpy(tpr)
    area = partial_roc_areas(f[:-1], f[1:], t[:-1], t[1:], max_fpr).sum()
    ours = area if max_fpr == 1.0 else mcclish_standardized(area, max_fpr)
    assert float(ours) == pytest.approx(roc_auc_score(y, scores, max_fpr=max_fpr), abs=1e-12)
