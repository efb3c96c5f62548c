"""Model wrappers: the network, how to run it on a batch, and the hooks metrics read.

`Benchmark` accepts a plain `nn.Module` (wrapped in `TorchModel`) or any `BenchModel`. The
method names are NeuroBench's (`__net__`, `add_activation_module`, `activation_hooks`, ...), so
custom metrics written for NeuroBench work against these wrappers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, final

from torch import nn

from torchtally.bench._harness.hooks import ActivationHook, ConnectionHook
from torchtally.bench._ops.layers import CONNECTION_LAYERS, DEFAULT_ACTIVATIONS, find_layers

__all__ = ["BenchModel", "TorchModel", "as_bench_model"]


class BenchModel(ABC):
    """A network under benchmark: runs batches and carries the hooks metrics read.

    Subclasses define `__call__` (a batch of inputs to predictions) and `__net__` (the
    underlying `nn.Module`, searched for layers to hook).

    Example:
        >>> class Doubled(BenchModel):
        ...     def __init__(self, net):
        ...         super().__init__()
        ...         self.net = net
        ...     def __call__(self, batch):
        ...         return 2 * self.net(batch)
        ...     def __net__(self):
        ...         return self.net
    """

    def __init__(self) -> None:
        self.activation_modules: list[type] = list(DEFAULT_ACTIVATIONS)
        self.activation_hooks: list[ActivationHook] = []
        self.connection_hooks: list[ConnectionHook] = []

    @abstractmethod
    def __call__(self, batch: Any) -> Any:
        """Run the model on a batch of (preprocessed) inputs.

        Args:
            batch: The inputs.

        Returns:
            The predictions, before postprocessing.
        """

    @abstractmethod
    def __net__(self) -> nn.Module:
        """The underlying network.

        Returns:
            The `nn.Module` whose layers are hooked.
        """

    def add_activation_module(self, module_type: type) -> None:
        """Treat instances of `module_type` as activation layers (hooked for sparsity).

        Args:
            module_type: A module class, e.g. `nn.Tanh` or a custom neuron.

        Raises:
            TypeError: If `module_type` is not a class.
        """
        if not isinstance(module_type, type):
            raise TypeError(
                "Argument `module_type` must be a module class. "
                f"Received: module_type={module_type!r}"
            )
        if module_type not in self.activation_modules:
            self.activation_modules.append(module_type)

    def activation_layers(self) -> list[tuple[str, nn.Module]]:
        """The activation layers of the network.

        Returns:
            `(qualified_name, module)` pairs.
        """
        return find_layers(self.__net__(), self.activation_modules)

    def connection_layers(self) -> list[tuple[str, nn.Module]]:
        """The connection layers (Linear, Conv1d/2d/3d, RNN/LSTM/GRU and cells) of the network.

        Returns:
            `(qualified_name, module)` pairs.
        """
        return find_layers(self.__net__(), CONNECTION_LAYERS)

    def register_hooks(self) -> None:
        """Hook every activation and connection layer (replacing hooks from earlier calls)."""
        self.cleanup_hooks()
        self.activation_hooks = [ActivationHook(m, n) for n, m in self.activation_layers()]
        self.connection_hooks = [ConnectionHook(m, n) for n, m in self.connection_layers()]

    def reset_hooks(self) -> None:
        """Forget what the hooks recorded; called after every batch."""
        for hook in self._hooks():
            hook.reset()

    def close_hooks(self) -> None:
        """Remove the hooks from the layers but keep the hook objects."""
        for hook in self._hooks():
            hook.close()

    def _hooks(self) -> list[ActivationHook | ConnectionHook]:
        return [*self.activation_hooks, *self.connection_hooks]

    def cleanup_hooks(self) -> None:
        """Remove the hooks and drop them."""
        self.reset_hooks()
        self.close_hooks()
        self.activation_hooks = []
        self.connection_hooks = []


@final
class TorchModel(BenchModel):
    """Wraps an `nn.Module` whose forward maps a batch of inputs to predictions.

    The network is put in eval mode, as NeuroBench does.

    Args:
        net: The network.

    Example:
        >>> model = TorchModel(nn.Linear(3, 2))
        >>> model(torch.zeros(4, 3)).shape
        torch.Size([4, 2])
    """

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        if not isinstance(net, nn.Module):
            raise TypeError(
                f"Argument `net` must be a torch.nn.Module. Received: net={type(net).__name__}"
            )
        self.net = net
        self.net.eval()

    def __call__(self, batch: Any) -> Any:
        return self.net(batch)

    def __net__(self) -> nn.Module:
        return self.net


def as_bench_model(model: BenchModel | nn.Module) -> BenchModel:
    """Return `model` itself if it is a `BenchModel`, else wrap an `nn.Module` in `TorchModel`.

    Args:
        model: A `BenchModel` or an `nn.Module`.

    Returns:
        A `BenchModel`.

    Raises:
        TypeError: For anything else.

    Example:
        >>> type(as_bench_model(nn.ReLU())).__name__
        'TorchModel'
    """
    if isinstance(model, BenchModel):
        return model
    if isinstance(model, nn.Module):
        return TorchModel(model)
    raise TypeError(
        "Argument `model` must be a BenchModel or a torch.nn.Module. "
        f"Received: model={type(model).__name__}"
    )
