"""NeuroBench's data sets with its interfaces, over local files (nothing is ever downloaded; a
missing file is an error naming it): Mackey-Glass (generated locally), WISDM, SpeechCommands."""

from torchtally.bench.datasets._mackey_glass import MackeyGlass, mackey_glass_series
from torchtally.bench.datasets._speech_commands import SpeechCommands
from torchtally.bench.datasets._wisdm import WISDM

__all__ = [
    "WISDM",
    "MackeyGlass",
    "SpeechCommands",
    "mackey_glass_series",
]
