"""Saving results as JSON, CSV and text, and the postprocessors, against NeuroBench 2.3.0."""

from __future__ import annotations

import csv
import json

import pytest
import torch
from bench_helpers import argmax_last, make_loader

import torchtally.bench as tb

RESULTS = {
    "Footprint": 1616,
    "ConnectionSparsity": 0.25,
    "SynapticOperations": {"Effective_MACs": 354.32, "Effective_ACs": 0.0, "Dense": 384.0},
}


def test_json_round_trips(tmp_path) -> None:
    path = tb.save_results(RESULTS, tmp_path / "nested" / "run", "JSON")
    assert path == tmp_path / "nested" / "run.json"
    assert json.loads(path.read_text()) == RESULTS


def test_csv_has_a_header_row_and_a_value_row(tmp_path) -> None:
    path = tb.save_results(RESULTS, tmp_path / "run", "csv")
    header, values = list(csv.reader(path.open(newline="")))
    assert header == list(RESULTS)
    assert [int(values[0]), float(values[1]), json.loads(values[2])] == list(RESULTS.values())


def test_text_has_one_line_per_metric(tmp_path) -> None:
    path = tb.save_results(RESULTS, tmp_path / "run", "txt")
    assert path.read_text().splitlines() == [
        "Footprint: 1616",
        "ConnectionSparsity: 0.25",
        "SynapticOperations: {'Effective_MACs': 354.32, 'Effective_ACs': 0.0, 'Dense': 384.0}",
    ]


def test_unknown_format_is_named(tmp_path) -> None:
    with pytest.raises(
        ValueError,
        match=r"`file_format` must be one of 'json', 'csv', 'txt'. Received: file_format='xml'",
    ):
        tb.save_results(RESULTS, tmp_path / "run", "xml")


def test_benchmark_saves_its_last_run(tmp_path, mlp, class_data) -> None:
    metrics = [[tb.Footprint], [tb.ClassificationAccuracy, tb.SynapticOperations]]
    bench = tb.Benchmark(mlp, make_loader(*class_data), [], [argmax_last], metrics)
    with pytest.raises(RuntimeError, match="call run\\(\\) first"):
        bench.save_benchmark_results(tmp_path / "run")
    results = bench.run(quiet=True)
    assert json.loads(bench.save_benchmark_results(tmp_path / "run").read_text()) == results


@pytest.mark.parametrize("name", ["ChooseMaxCount", "Aggregate"])
def test_postprocessors_match_neurobench(name: str) -> None:
    from neurobench.processors import postprocessors

    spikes = torch.bernoulli(
        torch.full((6, 9, 5), 0.3), generator=torch.Generator().manual_seed(40)
    )
    assert torch.equal(getattr(tb, name)()(spikes), getattr(postprocessors, name)()(spikes))
