"""Optional snnTorch support: recognising spiking-neuron layers without importing snnTorch.

A module can only be an snnTorch neuron if snnTorch is already imported, so these checks look
in `sys.modules` instead of importing it (an import that costs about a second).
"""

from __future__ import annotations

import sys

from torch import nn

__all__ = ["is_spiking_neuron", "spiking_neuron_type"]


def spiking_neuron_type() -> type[nn.Module] | None:
    """snnTorch's `SpikingNeuron` base class, or None when snnTorch has not been imported.

    Returns:
        The class, or None.

    Example:
        >>> spiking_neuron_type() is None or issubclass(spiking_neuron_type(), nn.Module)
        True
    """
    snntorch = sys.modules.get("snntorch")
    return getattr(snntorch, "SpikingNeuron", None) if snntorch is not None else None


def is_spiking_neuron(module: nn.Module) -> bool:
    """Whether `module` is an snnTorch spiking-neuron layer.

    Args:
        module: Any module.

    Returns:
        True for instances of `snntorch.SpikingNeuron`.

    Example:
        >>> is_spiking_neuron(nn.ReLU())
        False
    """
    neuron = spiking_neuron_type()
    return neuron is not None and isinstance(module, neuron)
