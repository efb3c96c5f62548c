"""The Mackey-Glass task: the local solver against the equation, NeuroBench's data set
interface and split, and the example benchmark run end to end."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from torchtally.bench.datasets import MackeyGlass, mackey_glass_series

EXAMPLE = Path(__file__).parents[2] / "examples" / "neurobench_mackey_glass.py"


def test_first_delay_interval_matches_the_closed_form() -> None:
    # For 0 <= t <= tau the delayed term is the constant past, so the equation is linear:
    # y(t) = c/gamma + (y0 - c/gamma) exp(-gamma t), with c = beta y0 / (1 + y0**n).
    y0, beta, gamma, n = 0.7206597, 0.2, 0.1, 10
    c = beta * y0 / (1 + y0**n)
    times = np.linspace(0.0, 17.0, 41)
    expected = c / gamma + (y0 - c / gamma) * np.exp(-gamma * times)
    np.testing.assert_allclose(mackey_glass_series(times), expected, rtol=0, atol=1e-10)


def test_solver_converges() -> None:
    # Halving the step twice changes the series by far less than the task's tolerances over
    # the first Lyapunov time (197 time units) and its chaos stays in the known range.
    times = np.linspace(0.0, 197.0, 76)
    coarse = mackey_glass_series(times, steps_per_tau=340)
    fine = mackey_glass_series(times, steps_per_tau=1360)
    np.testing.assert_allclose(coarse, fine, rtol=0, atol=1e-9)
    long = mackey_glass_series(np.linspace(0.0, 3000.0, 2000))
    assert 0.2 < long.min() < 0.5 and 1.2 < long.max() < 1.45


def test_dataset_interface_and_split_as_neurobench() -> None:
    mg = MackeyGlass(traintime=2.0, testtime=1.0, bin_window=3)
    assert (mg.traintime_pts, mg.testtime_pts, mg.maxtime_pts) == (150, 75, 226)
    assert len(mg) == 226 + 2 - 1
    assert torch.equal(mg.ind_train, torch.arange(150))
    assert torch.equal(mg.ind_test, torch.arange(150, 225))
    sample, target = mg[0]
    assert sample.shape == (3, 1) and target.shape == (1,)
    assert sample[:2].eq(0).all()  # the lookback window is padded with zeros
    assert sample[2, 0].item() == pytest.approx(0.7206597)
    assert torch.equal(mg[5][1], mg[6][0][-1])  # the target is the next point
    batch, targets = mg[torch.tensor([0, 1, 2])]
    assert batch.shape == (3, 3, 1) and targets.shape == (3, 1)
    assert torch.equal(mg[[0, 1, 2]][0], batch)
    assert sample.dtype == torch.float64
    # NeuroBench samples maxtime_pts points evenly over [0, maxtime] (its linspace), so the
    # spacing is slightly more than lyaptime / pts_per_lyaptime.
    step = mg.maxtime / (mg.maxtime_pts - 1)
    assert mg.mackeyglass_soln[3, 0].item() == pytest.approx(
        mackey_glass_series(np.array([step]))[0]
    )


def test_series_file_is_loaded_and_a_missing_one_is_named(tmp_path: Path) -> None:
    series = np.linspace(0.0, 1.0, 400)
    path = tmp_path / "mg_17.npy"
    np.save(path, series)
    mg = MackeyGlass(file_path=str(path), traintime=2.0, testtime=1.0, start_offset=10)
    np.testing.assert_array_equal(mg.mackeyglass_soln[:, 0].numpy(), series[10:236])
    with pytest.raises(FileNotFoundError, match=r"missing\.npy.*does not exist"):
        MackeyGlass(file_path=str(tmp_path / "missing.npy"))
    with pytest.raises(ValueError, match="`bin_window` must be an integer >= 1"):
        MackeyGlass(bin_window=0)


def test_example_benchmarks_the_task(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("neurobench_mackey_glass", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    out = tmp_path / "mg"
    results = example.main(["--traintime", "4", "--testtime", "2", "--out", str(out)])
    assert results["R2"] > 0.95 and 0 < results["SMAPE"] < 5
    assert results["ParameterCount"] == 8 * 64 + 64 + 64 + 1
    assert results["SynapticOperations"]["Dense"] == 8 * 64 + 64
    assert math.isfinite(results["ActivationSparsity"])
    assert out.with_suffix(".json").exists()
