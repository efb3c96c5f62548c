"""Utilities of the cstorch programming model: data loading and execution (`utils.data`),
TensorBoard summaries (`utils.tensorboard`, loaded on first use).

Example:
    >>> import torch
    >>> from torchtally import utils
    >>> def input_fn(batch_size):
    ...     data = torch.utils.data.TensorDataset(torch.arange(64.0))
    ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
    >>> dataloader = utils.data.DataLoader(input_fn, batch_size=32)
    >>> executor = utils.data.DataExecutor(dataloader, num_steps=2)
    >>> [batch[0].shape for batch in executor]
    [torch.Size([32]), torch.Size([32])]
"""

from torchtally.utils import data, nest, tracker
from torchtally.utils._cs_config import CSConfig

__all__ = ["CSConfig", "data", "nest", "tensorboard", "tracker"]


def __getattr__(name: str) -> object:
    # tensorboard is an optional dependency: its module loads on first access, as in cstorch.
    if name == "tensorboard":
        import importlib

        return importlib.import_module("torchtally.utils.tensorboard")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
