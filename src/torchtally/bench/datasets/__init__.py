"""NeuroBench's data sets with its interfaces: Mackey-Glass (generated locally) and WISDM
(from its file; nothing is downloaded)."""

from torchtally.bench.datasets._mackey_glass import MackeyGlass, mackey_glass_series
from torchtally.bench.datasets._wisdm import WISDM

__all__ = ["WISDM", "MackeyGlass", "mackey_glass_series"]
