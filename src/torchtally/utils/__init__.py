"""Utilities of the cstorch programming model: data loading and execution (`utils.data`).

Example:
    >>> dataloader = utils.data.DataLoader(input_fn, batch_size=32)
    >>> executor = utils.data.DataExecutor(dataloader, num_steps=100)
"""

from torchtally.utils import data
from torchtally.utils._cs_config import CSConfig

__all__ = ["CSConfig", "data"]
