"""Forward hooks that record what activation and connection layers see during one batch.

They keep references, not copies: recording costs nothing on the device, and the metrics read
the tensors after the batch. The attribute names are NeuroBench's, so metrics written against
NeuroBench's hooks (`activation_outputs`, `pre_fire_mem_potential`, `inputs`, ...) run unchanged.
"""

from __future__ import annotations

from typing import Any, final

import torch
from torch import Tensor, nn
from torch.utils.hooks import RemovableHandle

from torchtally.bench._ops.counting import count_true
from torchtally.bench._ops.spiking import is_spiking_neuron

__all__ = ["ActivationHook", "ConnectionHook"]


@final
class ActivationHook:
    """Records the inputs, outputs and (for spiking neurons) membrane potentials of a layer.

    For an snnTorch neuron the recorded output is the spike tensor: the first element when the
    layer returns `(spikes, membrane)`, the whole output when it returns spikes alone.
    (NeuroBench indexed element 0 of a bare spike tensor too, which is the first sample of the
    batch, issue #258; 2.3.0 still does unless the layer has `init_hidden=True, output=False`.)

    Args:
        layer: The activation layer to hook.
        name: Its qualified name in the network.

    Example:
        >>> relu = nn.ReLU()
        >>> hook = ActivationHook(relu, "relu")
        >>> _ = relu(torch.tensor([-1.0, 2.0]))
        >>> hook.activation_outputs[0].tolist()
        [0.0, 2.0]
        >>> hook.close()
    """

    def __init__(self, layer: nn.Module, name: str) -> None:
        self.layer = layer
        self.name = name
        self.spiking = is_spiking_neuron(layer)
        self.activation_inputs: list[tuple[Any, ...]] = []
        self.activation_outputs: list[Any] = []
        self.pre_fire_mem_potential: list[Any] = []
        self.post_fire_mem_potential: list[Any] = []
        self._membrane_updates: Tensor | int | None = None
        self.hook_pre: RemovableHandle | None = layer.register_forward_pre_hook(self._before)
        self.hook: RemovableHandle | None = layer.register_forward_hook(self._after)

    def _before(self, layer: nn.Module, args: tuple[Any, ...]) -> None:
        self.activation_inputs.append(args)
        if self.spiking and hasattr(layer, "mem"):
            self.pre_fire_mem_potential.append(layer.mem)

    def _after(self, layer: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        if self.spiking:
            self.activation_outputs.append(output[0] if isinstance(output, tuple) else output)
            if hasattr(layer, "mem"):
                self.post_fire_mem_potential.append(layer.mem)
        else:
            self.activation_outputs.append(output)

    def membrane_updates(self) -> Tensor | int:
        """Membrane-potential updates in the calls recorded since the last `reset`, counted as
        NeuroBench does: the first call updates every neuron, each later one the neurons whose
        potential changed during the call. Computed once per batch for all metrics using it.

        Returns:
            The count (a 0-d int64 tensor, or 0 when nothing was recorded).
        """
        if self._membrane_updates is None:
            before, after = self.pre_fire_mem_potential, self.post_fire_mem_potential
            updates: Tensor | int = after[0].numel() if after else 0
            if len(before) > 1:
                changed = torch.stack(before[1:]) != torch.stack(after[1:])
                updates = count_true(changed) + updates
            self._membrane_updates = updates
        return self._membrane_updates

    def reset(self) -> None:
        """Forget what the last batch recorded (the hooks stay registered)."""
        self.activation_inputs.clear()
        self.activation_outputs.clear()
        self.pre_fire_mem_potential.clear()
        self.post_fire_mem_potential.clear()
        self._membrane_updates = None

    def close(self) -> None:
        """Remove the hooks from the layer."""
        for handle in (self.hook, self.hook_pre):
            if handle is not None:
                handle.remove()
        self.hook = self.hook_pre = None


@final
class ConnectionHook:
    """Records the arguments of every call of a connection layer (Linear, Conv, RNN, ...).

    Each call appends one tuple of arguments; keyword arguments (an LSTM's `hx=`) are appended
    after the positional ones, so `inputs[k]` is always `(input, state...)`.

    Args:
        layer: The connection layer to hook.
        name: Its qualified name in the network.

    Example:
        >>> linear = nn.Linear(2, 1)
        >>> hook = ConnectionHook(linear, "fc")
        >>> _ = linear(torch.ones(3, 2))
        >>> hook.inputs[0][0].shape
        torch.Size([3, 2])
        >>> hook.close()
    """

    def __init__(self, layer: nn.Module, name: str) -> None:
        self.layer = layer
        self.name = name
        self.inputs: list[tuple[Any, ...]] = []
        self.hook: RemovableHandle | None = None
        self.register_hook()

    def _before(self, layer: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.inputs.append(args + tuple(kwargs.values()) if kwargs else args)

    def register_hook(self) -> None:
        """(Re-)register the hook on the layer."""
        if self.hook is None:
            self.hook = self.layer.register_forward_pre_hook(self._before, with_kwargs=True)

    def reset(self) -> None:
        """Forget what the last batch recorded (the hook stays registered)."""
        self.inputs.clear()

    def close(self) -> None:
        """Remove the hook from the layer."""
        if self.hook is not None:
            self.hook.remove()
            self.hook = None
