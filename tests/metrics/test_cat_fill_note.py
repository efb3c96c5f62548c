"""The eager `cat` append's host-side fill note (issue 16): a single slice copy per append in
eager mode, while the fill-count tensor stays the single source of truth. Every sequence that
writes the count some other way (compiled steps, merges, checkpoint loads, copies, inference
mode, overflow) must stay exact against scikit-learn."""

from __future__ import annotations

import copy

import pytest
import torch
from sklearn.metrics import roc_auc_score

from torchtally.metrics import AUROCMetric, MetricValueError


def _batches(count: int, n: int = 37, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        labels = torch.randint(0, 2, (n,), generator=g)
        # few distinct scores, so that ties (and so the stored order of rows) matter
        scores = torch.randint(0, 9, (n,), generator=g).float() / 8
        out.append((labels, scores))
    return out


def _sklearn(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    labels = torch.cat([b[0] for b in batches]).numpy()
    scores = torch.cat([b[1] for b in batches]).numpy()
    return float(roc_auc_score(labels, scores))


def _fill_is_known(metric: AUROCMetric) -> bool:
    return metric.cat_state("score_bits").known_fill() is not None


def test_eager_appends_use_the_note_and_are_exact() -> None:
    batches = _batches(5)
    metric = AUROCMetric(capacity=1000)
    assert _fill_is_known(metric)
    for labels, scores in batches:
        metric.update(labels, scores)
    assert _fill_is_known(metric)
    assert float(metric.compute()) == pytest.approx(_sklearn(batches), abs=1e-12)
    # the in-place sort of compute reorders the filled rows only; appends go on exactly
    more = _batches(3, seed=1)
    for labels, scores in more:
        metric.update(labels, scores)
    assert float(metric.compute()) == pytest.approx(_sklearn(batches + more), abs=1e-12)


@pytest.mark.slow
def test_mixing_eager_and_compiled_appends_stays_exact() -> None:
    batches = _batches(6)
    metric = AUROCMetric(capacity=1000)
    compiled = torch.compile(metric.update, fullgraph=True)
    for step, (labels, scores) in enumerate(batches):
        (compiled if step % 2 else metric.update)(labels, scores)
    assert int(metric.score_bits_count) == sum(b[0].numel() for b in batches)
    assert float(metric.compute()) == pytest.approx(_sklearn(batches), abs=1e-12)
    metric.reset()
    assert _fill_is_known(metric)
    for labels, scores in batches[:2]:
        metric.update(labels, scores)
    assert float(metric.compute()) == pytest.approx(_sklearn(batches[:2]), abs=1e-12)


def test_merge_load_and_copy_make_the_note_stale_not_wrong() -> None:
    batches = _batches(6)
    a, b = AUROCMetric(capacity=1000), AUROCMetric(capacity=1000)
    a.update(*batches[0])
    b.update(*batches[1])
    a.merge_state(b)
    a.update(*batches[2])
    assert float(a.compute()) == pytest.approx(_sklearn(batches[:3]), abs=1e-12)

    saved = a.persistent(True).state_dict()
    c = AUROCMetric(capacity=1000).persistent(True)
    c.update(*batches[5])  # overwritten by the load
    c.load_state_dict(saved)
    c.update(*batches[3])
    assert float(c.compute()) == pytest.approx(_sklearn(batches[:4]), abs=1e-12)

    d = copy.deepcopy(c)
    d.update(*batches[4])
    c.update(*batches[5])
    assert float(d.compute()) == pytest.approx(_sklearn(batches[:5]), abs=1e-12)
    assert float(c.compute()) == pytest.approx(_sklearn(batches[:4] + batches[5:]), abs=1e-12)


def test_direct_writes_to_the_count_are_seen() -> None:
    batches = _batches(3)
    metric = AUROCMetric(capacity=1000)
    metric.update(*batches[0])
    metric.score_bits_count.zero_()  # a user (or a restore) rewinding the state by hand
    metric.codes_count.zero_()
    metric.update(*batches[1])
    assert float(metric.compute()) == pytest.approx(_sklearn(batches[1:2]), abs=1e-12)


def test_inference_mode_and_overflow_stay_exact() -> None:
    batches = _batches(3, n=40)
    metric = AUROCMetric(capacity=100)
    with torch.inference_mode():
        metric.update(*batches[0])
    metric.update(*batches[1])
    assert float(metric.compute()) == pytest.approx(_sklearn(batches[:2]), abs=1e-12)
    metric.update(*batches[2])  # 120 rows into capacity 100
    with pytest.raises(MetricValueError, match="20 samples were dropped"):
        metric.compute()


def test_multiclass_compute_reads_only_the_filled_rows_and_is_exact() -> None:
    g = torch.Generator().manual_seed(3)
    labels = torch.randint(0, 4, (300,), generator=g)
    scores = torch.rand(300, 4, generator=g).softmax(-1).double()
    metric = AUROCMetric(4, capacity=1 << 16)
    metric.update(labels[:100], scores[:100])
    metric.update(labels[100:], scores[100:])
    rows, _ = metric.cat_state("score_bits").values()
    assert rows.shape[0] == 300
    expected = roc_auc_score(labels.numpy(), scores.numpy(), multi_class="ovr")
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_eager_appends_between_compiled_calls_do_not_recompile() -> None:
    graphs = []

    def counting_backend(gm: torch.fx.GraphModule, example_inputs: list) -> object:
        graphs.append(gm)
        return gm.forward

    batches = _batches(12)
    metric = AUROCMetric(capacity=1000)
    compiled = torch.compile(metric.update, backend=counting_backend, fullgraph=True)
    for step, (labels, scores) in enumerate(batches):
        if step == 6:
            metric.reset()  # an eager reset renews the note
        metric.update(labels, scores)
        compiled(labels, scores)
    assert len(graphs) == 1
    seen = [b for pair in zip(batches[6:], batches[6:], strict=True) for b in pair]
    assert float(metric.compute()) == pytest.approx(_sklearn(seen), abs=1e-12)
