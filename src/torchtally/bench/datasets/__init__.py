"""NeuroBench's data sets with its interfaces, over local files (nothing is ever downloaded; a
missing file is an error naming it): Mackey-Glass (generated locally), WISDM, SpeechCommands,
PrimateReaching, MSWC (few-shot keyword spotting) and ThorEEGMI. Gen4DetectionDataLoader
checks its files, then says why it is not reimplemented (it needs Prophesee's SDK).

They read and build numpy arrays: this package needs the `numpy` extra."""

# ruff: noqa: E402  (the numpy check runs before the submodules that import numpy)

from torchtally._optional import import_numpy

import_numpy("`torchtally.bench.datasets`")  # one clear error before any submodule's import


from torchtally.bench.datasets._eeg import ThorEEGMI
from torchtally.bench.datasets._gen4 import Gen4DetectionDataLoader
from torchtally.bench.datasets._mackey_glass import MackeyGlass, mackey_glass_series
from torchtally.bench.datasets._mswc import (
    FSCIL_KEYWORDS,
    MSWC,
    IncrementalFewShot,
    MSWC_query,
)
from torchtally.bench.datasets._primate_reaching import PrimateReaching
from torchtally.bench.datasets._speech_commands import SpeechCommands
from torchtally.bench.datasets._wisdm import WISDM

__all__ = [
    "FSCIL_KEYWORDS",
    "MSWC",
    "WISDM",
    "Gen4DetectionDataLoader",
    "IncrementalFewShot",
    "MSWC_query",
    "MackeyGlass",
    "PrimateReaching",
    "SpeechCommands",
    "ThorEEGMI",
    "mackey_glass_series",
]
