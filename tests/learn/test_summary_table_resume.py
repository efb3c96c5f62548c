"""After `fit(resume=True)` the SummaryTable covers the whole run: its rows equal those of an
uninterrupted run (oracle: the uninterrupted run's own table and records)."""

from __future__ import annotations

from pathlib import Path

import torch

from torchtally.learn import FileLogger, Learner, SummaryTable
from torchtally.metrics import AccuracyMetric, MeanMetric
from torchtally.optim import SGD


def _fit(logdir: Path, epochs: int, table: SummaryTable, resume: bool) -> Learner:
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(48, 4, generator=gen)
    data = torch.utils.data.TensorDataset(x, (x[:, 0] > 0).long())
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    learner = Learner(
        model,
        SGD(model.parameters(), lr=0.1),
        metrics={"train": [MeanMetric("loss"), AccuracyMetric()], "valid": [MeanMetric("loss")]},
        num_epochs=epochs,
        logdir=logdir,
        observers=[table, FileLogger(logdir)],
        log_every=4,
    )
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    learner.fit(loader, loader, resume=resume)
    return learner


def test_a_resumed_runs_summary_covers_the_whole_run(tmp_path: Path) -> None:
    whole = SummaryTable(print_table=False)
    _fit(tmp_path / "whole", 4, whole, False)
    _fit(tmp_path / "run", 2, SummaryTable(print_table=False), False)
    resumed = SummaryTable(print_table=False)
    _fit(tmp_path / "run", 4, resumed, True)
    expected = {(r.split, r.name): r for r in whole.rows()}
    got = {(r.split, r.name): r for r in resumed.rows()}
    assert set(got) == set(expected)
    for key, row in expected.items():
        assert (got[key].count, got[key].min_epoch, got[key].max_epoch) == (
            row.count,
            row.min_epoch,
            row.max_epoch,
        ), key
        assert (got[key].min, got[key].last, got[key].max) == (row.min, row.last, row.max), key
    assert expected[("train", "loss")].count == 4  # epochs 1-4, not just the resumed 3-4
