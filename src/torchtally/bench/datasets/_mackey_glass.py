"""The Mackey-Glass chaotic time-series prediction task (NeuroBench's `MackeyGlass`).

The series solves the delay differential equation

    dy/dt = beta * y(t - tau) / (1 + y(t - tau) ** n) - gamma * y(t),

with `y(t) = constant_past` for `t <= 0`. NeuroBench generates it with `jitcdde` (and, since
that varies by platform, distributes a generated file). Here it is integrated locally with
the classical fourth-order Runge-Kutta method on a grid of `steps_per_tau` steps per delay, so
the delayed value at every full step is a grid value and at every half step the cubic Hermite
interpolant of the neighbouring grid values and slopes; samples between grid points are read
the same way. The error against the exact solution is far below the task's tolerances over a
Lyapunov time, but a chaotic series diverges from any other solver's over the full run: pass
`file_path` (an `.npy` such as NeuroBench's `mg_17.npy`) to use NeuroBench's exact numbers.

The data set's interface, sample times, train/test split and lookback padding are
NeuroBench 2.3.0's: sample `i` is the `bin_window` points ending at point `i` and its target
is point `i + 1`; `ind_train` are the first `traintime_pts` indices, `ind_test` the next
`testtime_pts`.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

__all__ = ["MackeyGlass", "mackey_glass_series"]


def mackey_glass_series(
    times: np.ndarray,
    tau: float = 17.0,
    constant_past: float = 0.7206597,
    nmg: float = 10.0,
    beta: float = 0.2,
    gamma: float = 0.1,
    steps_per_tau: int = 340,
) -> np.ndarray:
    """Solve the Mackey-Glass equation from a constant past and sample it at `times`.

    Args:
        times: Non-decreasing sample times `>= 0`.
        tau: The delay (> 0).
        constant_past: `y(t)` for `t <= 0`.
        nmg: The exponent `n`.
        beta: The production rate.
        gamma: The decay rate.
        steps_per_tau: Runge-Kutta steps per delay (the step is `tau / steps_per_tau`).

    Returns:
        `y` at `times`, float64.

    Raises:
        ValueError: For a non-positive delay or step count, or negative times.

    Example:
        >>> float(mackey_glass_series(np.array([0.0]))[0])
        0.7206597
    """
    if not tau > 0:
        raise ValueError(f"Argument `tau` must be > 0. Received: tau={tau!r}")
    if not (isinstance(steps_per_tau, int) and steps_per_tau >= 4):
        raise ValueError(
            f"Argument `steps_per_tau` must be an integer >= 4. Received: {steps_per_tau!r}"
        )
    times = np.asarray(times, dtype=np.float64)
    if times.size and times.min() < 0:
        raise ValueError("Argument `times` must be >= 0. Received a negative time")
    h = tau / steps_per_tau
    lag = steps_per_tau
    n_steps = math.ceil((times.max() if times.size else 0.0) / h) + 1

    def rate(y: float, delayed: float) -> float:
        return float(beta * delayed / (1.0 + delayed**nmg) - gamma * y)

    # Grid values and slopes; index k holds t = k*h, the constant past occupies k < 0.
    ys = [constant_past] * (n_steps + 1)
    slopes = [0.0] * (n_steps + 1)

    def past(k: int) -> tuple[float, float]:
        return (ys[k], slopes[k]) if k >= 0 else (constant_past, 0.0)

    slopes[0] = rate(constant_past, constant_past)
    for k in range(n_steps):
        y = ys[k]
        d0, s0 = past(k - lag)
        d1, s1 = past(k - lag + 1)
        if k < lag:
            s1 = 0.0  # the segment ends at t = 0 from the left: the constant past's slope
        # Cubic Hermite midpoint of the delayed segment.
        d_half = 0.5 * (d0 + d1) + h * (s0 - s1) / 8.0
        k1 = rate(y, d0)
        k2 = rate(y + 0.5 * h * k1, d_half)
        k3 = rate(y + 0.5 * h * k2, d_half)
        k4 = rate(y + h * k3, d1)
        ys[k + 1] = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
        slopes[k + 1] = rate(ys[k + 1], past(k + 1 - lag)[0])
    grid, grad = np.asarray(ys), np.asarray(slopes)
    index = np.minimum((times / h).astype(np.int64), n_steps - 1)
    s = times / h - index
    y0, y1 = grid[index], grid[index + 1]
    m0, m1 = grad[index] * h, grad[index + 1] * h
    s2, s3 = s * s, s * s * s
    values: np.ndarray = (
        (2 * s3 - 3 * s2 + 1) * y0
        + (s3 - 2 * s2 + s) * m0
        + (-2 * s3 + 3 * s2) * y1
        + (s3 - s2) * m1
    )
    return values


class MackeyGlass(Dataset[tuple[Tensor, Tensor]]):
    """NeuroBench's Mackey-Glass data set: one-step-ahead prediction of the series.

    Args:
        file_path: An `.npy` file holding the series (NeuroBench's `mg_17.npy`, say); then the
            equation's parameters are ignored. None generates the series locally.
        tau: The equation's delay.
        lyaptime: The series' Lyapunov time, in time units.
        constant_past: The initial condition `y(t <= 0)`.
        nmg: The equation's exponent.
        beta: The equation's production rate.
        gamma: The equation's decay rate.
        pts_per_lyaptime: Sample points per Lyapunov time.
        traintime: Lyapunov times of training data.
        testtime: Lyapunov times of test data.
        start_offset: Points to shift the series forward by.
        seed_id: Accepted for NeuroBench compatibility (the local solver is deterministic).
        bin_window: Points in each sample's lookback window (padded with zeros at the start).
        download: Accepted for compatibility; nothing is downloaded, so a `file_path` that does
            not exist is an error.

    Raises:
        FileNotFoundError: If `file_path` is given and does not exist.
        ValueError: For malformed arguments.

    Example:
        >>> mg = MackeyGlass(traintime=2.0, testtime=1.0)
        >>> len(mg.ind_train), len(mg.ind_test), mg[0][0].shape, mg[0][1].shape
        (150, 75, torch.Size([1, 1]), torch.Size([1]))
    """

    def __init__(
        self,
        file_path: str | os.PathLike[str] | None = None,
        tau: float = 17,
        lyaptime: float = 197,
        constant_past: float = 0.7206597,
        nmg: float = 10,
        beta: float = 0.2,
        gamma: float = 0.1,
        pts_per_lyaptime: int = 75,
        traintime: float = 10.0,
        testtime: float = 10.0,
        start_offset: float = 0.0,
        seed_id: int = 0,
        bin_window: int = 1,
        download: bool = True,
    ) -> None:
        for name, value in (("bin_window", bin_window), ("pts_per_lyaptime", pts_per_lyaptime)):
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"Argument `{name}` must be an integer >= 1. Received: {value!r}")
        self.tau, self.lyaptime, self.constant_past = tau, lyaptime, constant_past
        self.nmg, self.beta, self.gamma = nmg, beta, gamma
        self.pts_per_lyaptime = pts_per_lyaptime
        self.traintime = traintime * lyaptime
        self.testtime = testtime * lyaptime
        self.start_offset, self.seed_id, self.bin_window = start_offset, seed_id, bin_window
        self.maxtime = self.traintime + self.testtime + lyaptime / pts_per_lyaptime
        self.traintime_pts = round(traintime * pts_per_lyaptime)
        self.testtime_pts = round(testtime * pts_per_lyaptime)
        self.maxtime_pts = self.traintime_pts + self.testtime_pts + 1
        self.file_path = file_path
        if file_path is not None:
            if not os.path.exists(file_path):
                raise FileNotFoundError(
                    f"MackeyGlass: the series file {os.fspath(file_path)!r} does not exist "
                    "(torchtally downloads nothing: fetch NeuroBench's mg_17.npy from "
                    "huggingface.co/datasets/NeuroBench/mackey_glass, or pass file_path=None "
                    "to generate the series locally)"
                )
            start = int(start_offset)
            series = np.load(file_path)[start : start + self.maxtime_pts]
        else:
            step = lyaptime / pts_per_lyaptime
            offset = start_offset * step
            times = np.linspace(offset, offset + self.maxtime, self.maxtime_pts)
            series = mackey_glass_series(times, tau, constant_past, nmg, beta, gamma)
        solution = torch.as_tensor(np.asarray(series), dtype=torch.float64).reshape(-1, 1)
        self.total_var = torch.var(solution[:, 0], correction=1)
        padding = torch.zeros(bin_window - 1, 1, dtype=torch.float64)
        self.mackeyglass_soln = torch.cat((padding, solution))
        self.split_data()

    def split_data(self) -> None:
        """Set `ind_train` and `ind_test`, NeuroBench's train/test index split."""
        self.ind_train = torch.arange(0, self.traintime_pts)
        self.ind_test = torch.arange(self.traintime_pts, self.maxtime_pts - 1)

    def __len__(self) -> int:
        return len(self.mackeyglass_soln) - 1

    def __getitem__(self, idx: Any) -> tuple[Tensor, Tensor]:
        """Sample `(bin_window, 1)` and its target, the next point `(1,)`; a list or 1-D
        tensor of indices gives a batch `(len, bin_window, 1)` (NeuroBench's convention)."""
        window = self.bin_window
        if isinstance(idx, list):
            idx = torch.as_tensor(idx)  # NeuroBench fails on a list (list + int)
        if isinstance(idx, Tensor) and idx.ndim > 0:
            sample = torch.stack([self.mackeyglass_soln[i : i + window, :] for i in idx])
        else:
            sample = self.mackeyglass_soln[idx : idx + window, :]
        return sample, self.mackeyglass_soln[idx + window, :]
