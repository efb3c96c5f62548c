"""The benchmark loop reads nothing from the device: torchtally.bench's own host reads
(`.item()`, `.tolist()`, `bool(t)`, `float(t)`, `int(t)`) are the same in number for one batch as
for many, so they all happen once, after the last batch."""

from __future__ import annotations

import sys
from collections import Counter

import pytest
import torch
from bench_helpers import argmax_last, make_loader
from torch import nn

import torchtally.bench as tb

READS = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__")


class ConvLstm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1)
        self.relu = nn.ReLU()
        self.lstm = nn.GRU(4, 5, batch_first=True)
        self.cell = nn.LSTMCell(5, 5)
        self.head = nn.Linear(5, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.relu(self.conv(x)).transpose(1, 2)
        hidden = self.lstm(features)[0][:, -1]
        return self.head(self.cell(hidden)[0])


def _count_reads(monkeypatch: pytest.MonkeyPatch, batch_size: int) -> Counter[str]:
    reads: Counter[str] = Counter()
    for name in READS:
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _original=original, _name=name):
            if "torchtally/bench" in sys._getframe(1).f_code.co_filename.replace("\\", "/"):
                reads[_name] += 1
            return _original(self, *args)

        monkeypatch.setattr(torch.Tensor, name, counted)
    torch.manual_seed(50)
    inputs, labels = torch.randn(16, 3, 6), torch.randint(0, 4, (16,))
    metrics = [
        [],
        [
            tb.ClassificationAccuracy,
            tb.ActivationSparsity,
            tb.ActivationSparsityByLayer,
            tb.SynapticOperations,
        ],
    ]
    bench = tb.Benchmark(
        ConvLstm(), make_loader(inputs, labels, batch_size), [], [argmax_last], metrics
    )
    bench.run(quiet=True)
    monkeypatch.undo()
    return reads


def test_host_reads_do_not_grow_with_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    one_batch = _count_reads(monkeypatch, batch_size=16)
    four_batches = _count_reads(monkeypatch, batch_size=4)
    assert four_batches == one_batch
    assert sum(one_batch.values()) > 0  # the final reads are seen, so the counter works
