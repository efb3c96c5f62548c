"""`binned_auroc_update(out=...)` adds into a given histogram in place (the metric's state,
issue 16): the same counts as a fresh histogram summed, and a clear error for a wrong `out`."""

from __future__ import annotations

import pytest
import torch
from sklearn.metrics import roc_auc_score

from torchtally.functional.ranking import binned_auroc_compute, binned_auroc_update


@pytest.mark.parametrize("num_classes", [None, 3])
def test_out_accumulates_like_fresh_histograms(num_classes: int | None) -> None:
    g = torch.Generator().manual_seed(0)
    classes = 1 if num_classes is None else num_classes
    out = torch.zeros(classes, 2, 16, dtype=torch.float64)
    fresh = torch.zeros_like(out)
    for _ in range(3):
        if num_classes is None:
            labels = torch.randint(0, 2, (50,), generator=g)
            scores = torch.rand(50, generator=g)
        else:
            labels = torch.randint(0, num_classes, (50,), generator=g)
            scores = torch.rand(50, num_classes, generator=g)
        returned = binned_auroc_update(labels, scores, 16, num_classes=num_classes, out=out)
        assert returned is out
        fresh += binned_auroc_update(labels, scores, 16, num_classes=num_classes)
    torch.testing.assert_close(out, fresh, rtol=0, atol=0)
    assert float(out.sum()) == 150 * classes


def test_out_matches_sklearn_on_bin_quantized_scores() -> None:
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 2, (400,), generator=g)
    scores = (torch.randint(0, 10, (400,), generator=g).double() + 0.5) / 10  # bin centres
    out = torch.zeros(1, 2, 10, dtype=torch.float64)
    binned_auroc_update(labels, scores, 10, out=out)
    expected = roc_auc_score(labels.numpy(), scores.numpy())
    assert float(binned_auroc_compute(out)) == pytest.approx(expected, abs=1e-12)


def test_wrong_out_is_a_clear_error() -> None:
    labels, scores = torch.tensor([0, 1]), torch.tensor([0.2, 0.7])
    with pytest.raises(ValueError, match="Argument `out` must be a contiguous float64"):
        binned_auroc_update(labels, scores, 4, out=torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"Received: dtype=torch.float64, shape=\(1, 2, 5\)"):
        binned_auroc_update(labels, scores, 4, out=torch.zeros(1, 2, 5, dtype=torch.float64))
