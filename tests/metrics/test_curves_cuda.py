"""The curve families on CUDA (issue 26): exact AUROC and the exact curves append in place with
the host fill note off the CPU too, stay exact when eager updates, compiled updates and a CUDA
graph of the update are mixed, and binned binary AUROC's checked slots give the CPU's value
and messages. Against scikit-learn and the CPU metric.

CI has no GPU, so these are skipped there; on a GPU machine:
`python -m pytest tests/metrics/test_curves_cuda.py`.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score

from torchtally.metrics import AUROCMetric, MetricValueError
from torchtally.metrics.curves import AveragePrecisionMetric

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")


def _binary(seed: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 2, (n,), generator=g)
    scores = (torch.rand(n, generator=g) * 16).round() / 16  # ties
    return labels, scores


def _multiclass(seed: int, n: int, classes: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, classes, (n,), generator=g), torch.rand(
        n, classes, generator=g
    ).softmax(1)


def _on_cuda(make):  # built on the device: its fill notes are made there
    with torch.device(CUDA):
        return make()


@pytest.mark.parametrize("num_classes", [None, 4])
def test_eager_appends_write_in_place_without_a_sync_and_match_sklearn(
    num_classes: int | None,
) -> None:
    metric = _on_cuda(lambda: AUROCMetric(num_classes, capacity=500))
    batches = [_binary(s, 37) if num_classes is None else _multiclass(s, 37) for s in range(5)]
    metric.update(*(x.to(CUDA) for x in batches[0]))
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for labels, scores in batches[1:]:
            metric.update(labels.to(CUDA), scores.to(CUDA))
            assert metric.cat_state("codes").known_fill() is not None  # the in-place path
    finally:
        torch.cuda.set_sync_debug_mode("default")
    labels = torch.cat([b[0] for b in batches]).numpy()
    scores = torch.cat([b[1] for b in batches]).numpy()
    if num_classes is None:
        expected = roc_auc_score(labels, scores)
    else:
        expected = roc_auc_score(labels, scores, multi_class="ovr")
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
    assert metric.cat_state("score_bits").rows().shape[0] == 5 * 37  # the filled rows alone


@pytest.mark.parametrize("backend", ["inductor", "aot_eager"])
def test_mixing_eager_compiled_and_graphed_updates_on_cuda_is_exact(backend: str) -> None:
    batches = [_binary(s, 16) for s in range(9)]
    metric = _on_cuda(lambda: AUROCMetric(capacity=1000))
    for step, (labels, scores) in enumerate(batches[:6]):
        metric.compile_update(step % 2 == 1, backend=backend)
        metric.update(labels.to(CUDA), scores.to(CUDA))
    metric.compile_update(False)
    # a CUDA graph of the update (the eager updates above were its warm-up): capturing runs
    # nothing, and its replays write the fill count unseen by the host
    static = [x.to(CUDA).clone() for x in batches[6]]
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        metric.update(*static)
    for labels, scores in batches[7:]:
        static[0].copy_(labels.to(CUDA))
        static[1].copy_(scores.to(CUDA))
        graph.replay()
    metric.update(*(x.to(CUDA) for x in batches[7]))  # eager again, after the replays
    seen = batches[:6] + batches[7:] + batches[7:8]
    labels = torch.cat([b[0] for b in seen]).numpy()
    scores = torch.cat([b[1] for b in seen]).numpy()
    assert int(metric.cat_state("codes").count) == len(labels)
    assert float(metric.compute()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    # the count the graph writes is never noted again; each compute reads it
    assert metric.cat_state("codes").known_fill() is None


def test_binned_binary_on_cuda_folds_its_checks_into_the_bins() -> None:
    labels, scores = _binary(3, 200)
    scores = scores * 1.2 - 0.1  # some outside [0, 1]
    scores[::17] = math.nan
    scores[5::23] = math.inf
    labels[::29] = 2
    on_cpu, on_cuda = AUROCMetric(num_bins=20), _on_cuda(lambda: AUROCMetric(num_bins=20))
    on_cpu.update(labels, scores)
    on_cuda.update(labels.to(CUDA), scores.to(CUDA))
    assert float(on_cuda.histogram[0, :, :2].sum()) > 0  # -inf or below: bad-value slots
    assert float(on_cuda._errors.sum()) == 0  # counted in the slots, not in update
    assert torch.equal(on_cuda.binned_histogram().cpu(), on_cpu.binned_histogram())
    with pytest.raises(MetricValueError) as expected:
        on_cpu.compute()
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        on_cuda.compute()
    clean_cpu, clean_cuda = AUROCMetric(num_bins=20), _on_cuda(lambda: AUROCMetric(num_bins=20))
    good_labels, good_scores = _binary(4, 300)
    clean_cpu.update(good_labels, good_scores)
    clean_cuda.update(good_labels.to(CUDA), good_scores.to(CUDA))
    assert torch.equal(clean_cuda.compute().cpu(), clean_cpu.compute())


def test_average_precision_on_cuda_appends_in_place_and_matches_sklearn() -> None:
    metric = _on_cuda(lambda: AveragePrecisionMetric(capacity=500))
    batches = [_binary(s, 41) for s in range(4)]
    g = torch.Generator().manual_seed(9)
    weights = [torch.randint(1, 4, (41,), generator=g).double() for _ in batches]
    for (labels, scores), w in zip(batches, weights, strict=True):
        metric.update(scores.to(CUDA), labels.to(CUDA), w.to(CUDA))
        assert metric.cat_state("scores").known_fill() is not None
    y = torch.cat([b[0] for b in batches]).numpy()
    s = torch.cat([b[1] for b in batches]).numpy()
    w = torch.cat(weights).numpy()
    expected = average_precision_score(y, s, sample_weight=w)
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
    assert np.isfinite(expected)
