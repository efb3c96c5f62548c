"""NeuroBench's `PrimateReaching` (motor-cortex spikes to cursor velocity) over the local
MATLAB v7.3 files of the Zenodo record 583331."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

from torchtally.bench.datasets._files import missing_files_error, refuse_download

__all__ = ["PrimateReaching"]

# The recordings' spike-time resolution (4 ms), NeuroBench's SAMPLING_RATE.
SAMPLING_RATE = 4e-3
SOURCE = "https://zenodo.org/record/583331 (NeuroBench uses the six files in `FILES`)"
FILES = (
    "indy_20170131_02.mat",
    "indy_20160630_01.mat",
    "indy_20160622_01.mat",
    "loco_20170301_05.mat",
    "loco_20170215_02.mat",
    "loco_20170210_03.mat",
)


def _read_mat(path: str) -> tuple[Any, ...]:
    try:
        import h5py
    except ImportError as error:
        raise ImportError(
            "PrimateReaching reads the MATLAB v7.3 (HDF5) files with h5py: "
            "`pip install h5py` (or torchtally[checkpoint])."
        ) from error
    with h5py.File(path, "r") as mat:
        missing = [k for k in ("spikes", "cursor_pos", "target_pos", "t") if k not in mat]
        if missing:
            raise ValueError(
                f"PrimateReaching: {path!r} lacks the variable(s) {missing} of the Zenodo "
                "583331 files (spikes, cursor_pos, target_pos, t)"
            )
        refs = mat["spikes"][()]
        times = [
            np.ravel(ref if isinstance(ref, np.ndarray) else mat[ref][()]) for ref in refs.flat
        ]
        return (
            refs.shape,
            times,
            mat["cursor_pos"][()],
            mat["target_pos"][()],
            np.squeeze(mat["t"][()]),
        )


class PrimateReaching(Dataset[tuple[Tensor, Tensor]]):
    """NeuroBench's `PrimateReaching`: binned spike counts of one recording and the cursor
    velocity, with NeuroBench's arguments, attributes (`samples` `(channels, steps)`, `labels`
    `(2, steps)`, `ind_train` / `ind_val` / `ind_test`, `time_segments`, `input_feature_size`)
    and items: `dataset[t]` is `(samples[:, [t, t - r, ..., t - (num_steps - 1) r]].T,
    labels[:, t])` with `r = bin_width / 4 ms` (label series with `label_series=True`), `t` a time
    index, so splits are `Subset(dataset, dataset.ind_train)` as in NeuroBench.

    The file is one MATLAB v7.3 recording from https://zenodo.org/record/583331 (`spikes` cell
    array of spike-time vectors per channel and unit, `cursor_pos`, `target_pos`, `t`), read with
    h5py. Reaches (segments) start wherever `target_pos` changes; the first `train_ratio` of each
    of the `split_num` chunks of segments train, the rest split evenly into validation and test.

    Args:
        file_path: The folder holding the `.mat` files.
        filename: The recording, e.g. `"indy_20170131_02"` (`.mat` optional; `indy` recordings
            have 96 channels, `loco` 192).
        num_steps: Bins per sample (1 for real-time use).
        train_ratio: Fraction of each chunk's segments for training.
        label_series: Items carry the labels of every step, not just the last.
        biological_delay: Steps the labels lag the spikes.
        spike_sorting: One feature per (channel, unit) with any spike, instead of one per channel.
        stride: Seconds between sample times, a multiple of 4 ms.
        bin_width: Seconds summed per bin.
        max_segment_length: With `remove_segments_inactive`, segments of at least this many
            steps (inactivity) are dropped.
        split_num: Chunks the recording's segments are split into.
        remove_segments_inactive: Drop segments of `max_segment_length` steps or more.
        download: Must be False: torchtally never downloads (NeuroBench's default is True).

    Raises:
        FileNotFoundError: If the recording is missing, naming it.
    """

    def __init__(
        self,
        file_path: str | os.PathLike[str],
        filename: str,
        num_steps: int,
        train_ratio: float = 0.8,
        label_series: bool = False,
        biological_delay: int = 0,
        spike_sorting: bool = False,
        stride: float = 0.004,
        bin_width: float = 0.028,
        max_segment_length: int = 2000,
        split_num: int = 1,
        remove_segments_inactive: bool = False,
        download: bool = False,
    ) -> None:
        self.filename = filename if filename.endswith(".mat") else filename + ".mat"
        if "indy" in self.filename:
            self.input_feature_size = 96
        elif "loco" in self.filename:
            self.input_feature_size = 192
        else:
            raise ValueError(
                "Argument `filename` must name an `indy` or `loco` recording, e.g. "
                f"'indy_20170131_02'. Received: filename={filename!r}"
            )
        _check(
            num_steps, "num_steps", "an integer >= 1", isinstance(num_steps, int) and num_steps >= 1
        )
        _check(train_ratio, "train_ratio", "a number in [0, 1]", 0 <= train_ratio <= 1)
        _check(
            biological_delay,
            "biological_delay",
            "an integer >= 0",
            isinstance(biological_delay, int) and biological_delay >= 0,
        )
        steps = stride / SAMPLING_RATE
        _check(
            stride,
            "stride",
            "a multiple of 0.004 s (the recordings' resolution), >= 0.004",
            steps >= 1 - 1e-9 and abs(steps - round(steps)) < 1e-6,
        )
        _check(bin_width, "bin_width", "a number >= 0.004 (s)", bin_width >= SAMPLING_RATE)
        _check(max_segment_length, "max_segment_length", "an integer >= 0", max_segment_length >= 0)
        _check(
            split_num, "split_num", "an integer >= 1", isinstance(split_num, int) and split_num >= 1
        )
        self.file_path = os.path.join(os.fspath(file_path), self.filename)
        refuse_download("PrimateReaching", download, repr(self.file_path), SOURCE)
        if not os.path.isfile(self.file_path):
            raise missing_files_error("PrimateReaching", [self.file_path], SOURCE)

        self.spike_sorting = spike_sorting
        self.delay = biological_delay
        self.stride = stride
        self.bin_width = bin_width
        self.num_steps = num_steps
        self.train_ratio = train_ratio
        self.label_series = label_series
        self.ratio = int(np.round(bin_width / SAMPLING_RATE))
        self.max_segment_length = max_segment_length
        self.split_num = split_num
        self.ind_train: list[int] = []
        self.ind_val: list[int] = []
        self.ind_test: list[int] = []
        self.samples, self.labels = self._load()
        if self.delay > 0:
            self.samples = self.samples[:, : -self.delay]
            self.labels = self.labels[:, self.delay :]
        durations = self.time_segments[:, 1] - self.time_segments[:, 0]
        if remove_segments_inactive and max_segment_length > 0:
            self.valid_segments = np.flatnonzero(durations < max_segment_length)
        else:
            self.valid_segments = np.arange(len(self.time_segments))
        self._split(round(steps))

    def _load(self) -> tuple[Tensor, Tensor]:
        shape, spike_times, cursor_pos, target_pos, t = _read_mat(self.file_path)
        # Bin edges start one bin width early so the first full bin ends at t[0].
        edges = np.arange(t[0] - self.bin_width, t[-1], SAMPLING_RATE)
        trains = np.zeros((len(spike_times), len(edges)), dtype=np.int8)
        for row, times in enumerate(spike_times):
            counts, _ = np.histogram(times, bins=edges)
            # A spike marks the bin's upper edge (NeuroBench's convention).
            trains[row, np.flatnonzero(counts) + 1] = 1
        trains = trains.reshape(*shape, len(edges))  # (units, channels, time)
        if self.spike_sorting:
            per_unit = trains.transpose(1, 0, 2).reshape(-1, len(edges))
            spikes = per_unit[per_unit.any(axis=1)]
        else:
            spikes = np.bitwise_or.reduce(trains, axis=0)
        if self.ratio != 1:
            # Sum over each window of `ratio` steps that fits ("valid" convolution with ones).
            running = np.zeros((spikes.shape[0], spikes.shape[1] + 1))
            np.cumsum(spikes, axis=1, dtype=np.float64, out=running[:, 1:])
            spikes = running[:, self.ratio :] - running[:, : -self.ratio]
        samples = torch.from_numpy(np.ascontiguousarray(spikes)).float()
        position = torch.from_numpy(np.ascontiguousarray(cursor_pos)).float()

        steps = np.diff(target_pos, axis=1, append=target_pos[:, -1:])
        starts = np.flatnonzero(np.abs(steps).sum(axis=0))
        self.start_end_indices = starts
        bounds = np.concatenate([[0], starts, [target_pos.shape[1]]])
        self.time_segments = np.stack([bounds[:-1], bounds[1:]], axis=1)
        return samples, torch.gradient(position, dim=1)[0]

    def _split(self, stride: int) -> None:
        per_chunk = len(self.time_segments) // self.split_num
        train_len = math.floor(self.train_ratio * per_chunk)
        val_len = math.floor((per_chunk - train_len) / 2)
        valid = set(self.valid_segments.tolist())
        last = min(self.samples.shape[1], self.labels.shape[1])
        for chunk in range(self.split_num):
            for i in range(per_chunk):
                segment = chunk * per_chunk + i
                if segment not in valid:
                    continue
                start, end = self.time_segments[segment]
                # The delay shortens the data; NeuroBench keeps the lost times (reading them fails).
                times = range(int(start), min(int(end), last), stride)
                if i < train_len:
                    self.ind_train.extend(times)
                elif i < train_len + val_len:
                    self.ind_val.extend(times)
                else:
                    self.ind_test.extend(times)

    def __len__(self) -> int:
        return len(self.ind_train) + len(self.ind_val) + len(self.ind_test)

    def __getitem__(self, idx: int) -> tuple[Tensor, Tensor]:
        # Steps back from `idx`, latest first; before the recording's start they wrap, as in
        # NeuroBench.
        window = torch.as_tensor(idx - np.arange(self.num_steps) * self.ratio)
        samples = self.samples[:, window].transpose(0, 1)
        if self.label_series:
            return samples, self.labels[:, window].transpose(0, 1)
        return samples, self.labels[:, idx]


def _check(value: object, name: str, must: str, ok: bool) -> None:
    if not ok:
        raise ValueError(f"Argument `{name}` must be {must}. Received: {name}={value!r}")
