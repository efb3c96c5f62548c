"""NeuroBench's data sets with its interfaces: the Mackey-Glass task, generated locally."""

from torchtally.bench.datasets._mackey_glass import MackeyGlass, mackey_glass_series

__all__ = ["MackeyGlass", "mackey_glass_series"]
