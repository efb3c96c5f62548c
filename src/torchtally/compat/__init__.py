"""Drop-in APIs of other metric libraries on torchtally's core.

`from torchtally.compat import torchmetrics` gives TorchMetrics 1.9's classes, names and calling
conventions, with state that is preallocated, traceable and synced with one collective.
"""

from torchtally.compat import torchmetrics

__all__ = ["torchmetrics"]
