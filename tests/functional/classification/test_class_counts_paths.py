"""Per-class counts on both update paths (a (C, C) matrix for few classes, three scatters for
many) against scikit-learn's per-class confusion matrices, weighted and unweighted, with
invalid labels left out."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import multilabel_confusion_matrix

from torchtally.functional.classification import class_counts_update


@pytest.mark.parametrize(("n", "classes"), [(64, 3), (64, 40), (5000, 10), (300, 30)])
@pytest.mark.parametrize("weighted", [False, True])
def test_class_counts_match_sklearn(n: int, classes: int, weighted: bool) -> None:
    g = torch.Generator().manual_seed(n + classes)
    labels = torch.randint(-1, classes + 1, (n,), generator=g)  # some outside [0, C)
    scores = torch.randn(n, classes, generator=g)
    weights = torch.rand(n, generator=g, dtype=torch.float64) if weighted else None
    out = torch.zeros(3, classes, dtype=torch.float64)
    class_counts_update(labels, scores, classes, weights=weights, out=out)
    class_counts_update(labels, scores, classes, weights=weights, out=out)  # accumulates
    keep = ((labels >= 0) & (labels < classes)).numpy()
    y, p = labels.numpy()[keep], scores.argmax(-1).numpy()[keep]
    w = None if weights is None else weights.numpy()[keep]
    mcm = multilabel_confusion_matrix(y, p, labels=list(range(classes)), sample_weight=w)
    tp, fp, fn = mcm[:, 1, 1], mcm[:, 0, 1], mcm[:, 1, 0]
    expected = 2 * np.stack([tp, tp + fp, tp + fn]).astype(np.float64)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-9)
