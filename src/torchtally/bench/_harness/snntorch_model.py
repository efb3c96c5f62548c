"""`SNNTorchModel`: runs an snnTorch network step by step over the time axis of a batch."""

from __future__ import annotations

import importlib
from typing import Any, cast, final

import torch
from torch import Tensor, nn

from torchtally.bench._harness.model import BenchModel

__all__ = ["SNNTorchModel"]


@final
class SNNTorchModel(BenchModel):
    """Wraps an snnTorch network; its spiking neurons count as activation layers.

    By default each call resets the network's neuron states (its own `reset()` if it has one,
    else every neuron's `reset_mem()`), feeds `data[:, t]` for every
    time step `t` (the network returns `(spikes, membrane)`), and stacks the output spikes to
    `(batch, time, ...)`. With `custom_forward=True` the network takes the whole batch and
    returns `(time, batch, ...)`, which is transposed to `(batch, time, ...)`.

    Args:
        net: The snnTorch network.
        custom_forward: Whether the network runs the time loop itself.

    Raises:
        ImportError: If snnTorch is not installed.

    Example:
        >>> import snntorch as snn
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(3, 2)
        ...         self.lif = snn.Leaky(beta=0.9, init_hidden=True, output=True)
        ...     def forward(self, x):
        ...         return self.lif(self.fc(x))
        >>> SNNTorchModel(Net())(torch.ones(4, 5, 3)).shape
        torch.Size([4, 5, 2])
    """

    def __init__(self, net: nn.Module, custom_forward: bool = False) -> None:
        super().__init__()
        snntorch = importlib.import_module("snntorch")  # ImportError names the package
        self._snntorch_utils = importlib.import_module("snntorch.utils")
        self.net = net
        self.net.eval()
        self.custom_forward = bool(custom_forward)
        self._neuron_type: type[nn.Module] = snntorch.SpikingNeuron
        self.add_activation_module(snntorch.SpikingNeuron)

    def __call__(self, data: Tensor) -> Any:
        if self.custom_forward:
            return self.net(data).transpose(0, 1)
        self._reset_states()
        spikes = [self._step(data[:, step, ...]) for step in range(data.shape[1])]
        return torch.stack(spikes).transpose(0, 1)

    def _reset_states(self) -> None:
        own_reset = getattr(self.net, "reset", None)
        if callable(own_reset):
            own_reset()  # the network knows its states best
            return
        # snntorch.utils.reset (NeuroBench's choice) resets the neurons its classes registered
        # at construction, and only classes found among the network's direct children: the
        # neurons of a deep copy, or nested in a submodule, keep their state from the last
        # batch. Each neuron's own `reset_mem` has neither gap.
        neurons = [m for m in self.net.modules() if isinstance(m, self._neuron_type)]
        resets = [getattr(n, "reset_mem", None) for n in neurons]
        if all(callable(reset) for reset in resets):
            for reset in resets:
                reset()  # type: ignore[misc]
        else:  # snnTorch releases before `reset_mem`
            self._snntorch_utils.reset(self.net)

    def _step(self, inputs: Tensor) -> Tensor:
        output = self.net(inputs)
        if not (isinstance(output, tuple) and len(output) == 2):
            raise TypeError(
                "SNNTorchModel: the network must return `(spikes, membrane)` for each time "
                "step, or be wrapped with custom_forward=True. "
                f"Received: {type(output).__name__}"
            )
        return cast(Tensor, output[0])

    def __net__(self) -> nn.Module:
        return self.net
