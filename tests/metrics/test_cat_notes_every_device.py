"""The `cat` fill note off the CPU (issue 26): on every device with storage an eager append is
one slice copy per state plus one add for all the fill counts, counted here on the meta device
(the branches a GPU takes), and every write the note did not see (a compiled update, a device
move) leaves it stale, never wrong. The values of the same code are checked against
scikit-learn on the CPU (test_cat_fill_note.py, test_auroc_in_place_append.py) and on CUDA
(test_curves_cuda.py)."""

from __future__ import annotations

import pytest
import torch
from benchmarks._op_count import count_ops, meta_reads_as_device_reads, without_value_checks

from torchtally.metrics import AUROCMetric, CatState, Metric
from torchtally.metrics.curves import AveragePrecisionMetric, PrecisionRecallCurveMetric

META = torch.device("meta")
CPU = torch.device("cpu")
N = 64


def _on_meta(make) -> Metric:  # built on the device: its fill notes are made there
    with META:
        return make()


CASES = {
    "auroc-binary": (lambda: AUROCMetric(capacity=1024), ("binary", "probs")),
    "auroc-multiclass": (lambda: AUROCMetric(10, capacity=1024), ("labels", "softmax")),
    "ap-binary-weighted": (
        lambda: AveragePrecisionMetric(capacity=1024),
        ("probs", "binary", "weights"),
    ),
    "pr-curve-multiclass": (
        lambda: PrecisionRecallCurveMetric("multiclass", 10, capacity=1024),
        ("softmax", "labels"),
    ),
    "auroc-binned-binary": (lambda: AUROCMetric(num_bins=200), ("binary", "probs")),
}


def _inputs(device: torch.device = CPU) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 10, (N,), generator=g)
    scores = torch.randn(N, 10, generator=g)
    x = {
        "labels": labels,
        "binary": labels % 2,
        "probs": torch.sigmoid(scores[:, 0]).contiguous(),
        "softmax": scores.softmax(-1),
        "weights": torch.rand(N, generator=g),
    }
    return {name: value.to(device) for name, value in x.items()}


@pytest.mark.parametrize("check_values", [True, False])
@pytest.mark.parametrize("case", CASES)
def test_an_update_off_the_cpu_is_at_most_four_kernels_and_the_update_count(
    case: str, check_values: bool
) -> None:
    make, names = CASES[case]
    metric = _on_meta(make)
    if not check_values:
        without_value_checks(metric)
    x = _inputs(META)
    args = tuple(x[n] for n in names)
    with meta_reads_as_device_reads():
        for _ in range(3):
            metric.update(*args)
        counted = count_ops(lambda: metric.update(*args))
    ops = counted.ops
    assert "index_copy_" not in ops and "arange" not in ops, ops  # no positions: in place
    # one copy (or fill) per stored state and one add for all the fill counts, or the
    # binned update's bucketize, label kind, add and index_add_; plus the update count's add_
    # (which the engine keeps on the host off the CPU from issue 26 on)
    assert len(ops) <= 5, ops
    assert counted.syncs == []


def test_the_note_lives_on_a_non_cpu_device_and_goes_stale_on_an_unseen_write() -> None:
    metric = _on_meta(lambda: AUROCMetric(capacity=100))
    x = _inputs(META)
    codes = metric.cat_state("codes")
    with meta_reads_as_device_reads():
        assert codes.known_fill() == 0
        metric.update(x["binary"][:10], x["probs"][:10])
        assert codes.known_fill() == 10
        metric.codes_count.add_(0)  # a write the note did not see (a compiled step's)
        assert codes.known_fill() is None
        metric.update(x["binary"][:10], x["probs"][:10])  # the general path: positions
        assert codes.known_fill() is None  # update never reads the count back
    # without the op counter's reads, meta tensors have no values: no note is used
    metric.reset()
    assert codes.known_fill() is None


def test_notes_carry_over_a_device_move_when_renoted() -> None:
    """`CatState.notes_of` / `renote`: what `Metric._apply` keeps of the notes across a move
    (the fill counts are copied with their values)."""
    metric = AUROCMetric(capacity=100)
    x = _inputs()
    metric.update(x["binary"][:7], x["probs"][:7])
    fills = CatState.notes_of(metric)
    assert fills == {"score_bits": 7, "codes": 7}
    metric.to(META)
    codes = metric.cat_state("codes")
    with meta_reads_as_device_reads():
        assert codes.known_fill() == 7  # the move renoted the copied counts
        metric._runtime.drop_caches()  # what a move did before it kept the notes
        assert codes.known_fill() is None
        CatState.renote(metric, fills)
        assert codes.known_fill() == 7
    stale = AUROCMetric(capacity=100)
    stale.codes_count.add_(0)
    assert CatState.notes_of(stale) == {"score_bits": 0}  # a stale note is not carried
