"""Benchmark API as NeuroBench 2.3.0 has it: progress output, exports, postprocessor errors."""

from __future__ import annotations

import importlib.util
import json

import pytest
import torch
from bench_helpers import argmax_last, make_loader
from torch import nn

import torchtally.bench as tb


def _bench(mlp: nn.Module, class_data, post=(argmax_last,)) -> tb.Benchmark:
    metrics = [[tb.ParameterCount], [tb.ClassificationAccuracy, tb.SynapticOperations]]
    return tb.Benchmark(mlp, make_loader(*class_data), [], list(post), metrics)


def test_progress_reporting_like_neurobench(mlp, class_data, capsys) -> None:
    bench = _bench(mlp, class_data)
    bench.run(verbose=True)
    out = capsys.readouterr().out
    assert out.startswith("Running benchmark\n")
    assert [line for line in out.splitlines() if line.startswith("Batch num")] == [
        f"Batch num {i}/4" for i in range(1, 5)
    ]
    bench.run()
    assert capsys.readouterr().out == "Running benchmark\n"
    bench.run(quiet=True)
    assert capsys.readouterr().out == ""


def test_saved_results_read_back(mlp, class_data, tmp_path) -> None:
    bench = _bench(mlp, class_data)
    results = bench.run(quiet=True)
    for fmt in ("json", "csv", "txt"):
        path = bench.save_benchmark_results(str(tmp_path / "out" / "mlp"), fmt)
        assert path.name == f"mlp.{fmt}" and path.stat().st_size > 0
    assert json.loads((tmp_path / "out" / "mlp.json").read_text()) == results
    with pytest.raises(ValueError, match="`file_format` must be one of"):
        bench.save_benchmark_results(str(tmp_path / "mlp"), "xml")


def test_choose_max_count_on_a_non_spiking_output_names_the_shape(mlp, class_data) -> None:
    bench = _bench(mlp, class_data, post=(tb.ChooseMaxCount(),))
    with pytest.raises(
        ValueError, match=r"ChooseMaxCount expects .*\(batch, time, classes\).*\(16, 4\)"
    ):
        bench.run(quiet=True)
    with pytest.raises(ValueError, match=r"Aggregate expects .*\(batch, time, \.\.\.\)"):
        tb.Aggregate()(torch.ones(3, 4))
    assert tb.ChooseMaxCount()(torch.eye(3).expand(2, 3, 3)).tolist() == [0, 0]


@pytest.mark.skipif(importlib.util.find_spec("onnx") is not None, reason="onnx is installed")
def test_to_onnx_without_onnx_is_a_clear_error(mlp, class_data) -> None:
    with pytest.raises(ImportError, match="to_onnx needs the `onnx` package"):
        _bench(mlp, class_data).to_onnx(torch.ones(1, 12), "model.onnx")


@pytest.mark.skipif(importlib.util.find_spec("nir") is not None, reason="nir is installed")
def test_to_nir_without_nir_is_a_clear_error(mlp, class_data) -> None:
    with pytest.raises(ImportError, match="to_nir needs the `nir` package"):
        _bench(mlp, class_data).to_nir(torch.ones(1, 12), "model.nir")


@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="needs onnx")
def test_to_onnx_writes_a_file(mlp, class_data, tmp_path) -> None:
    target = tmp_path / "mlp.onnx"
    _bench(mlp, class_data).to_onnx(torch.ones(1, 12), target)
    assert target.stat().st_size > 0 and mlp.training
