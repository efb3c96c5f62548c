"""Which modules the benchmark hooks: activation layers and connection layers.

The defaults are NeuroBench's: ReLU and Sigmoid are activation layers (models add more, e.g.
spiking neurons); Linear, Conv1d/2d/3d and the recurrent layers and cells are connection layers.
A search stops at the first matching module on each branch, as NeuroBench's does, so a matched
module's own children are not hooked again; unlike NeuroBench's, it also considers the network
itself and keeps each module once even when it is reachable under several names.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import nn

__all__ = [
    "CONNECTION_LAYERS",
    "CONV_LAYERS",
    "DEFAULT_ACTIVATIONS",
    "RECURRENT_CELLS",
    "RECURRENT_LAYERS",
    "find_layers",
]

DEFAULT_ACTIVATIONS: tuple[type[nn.Module], ...] = (nn.ReLU, nn.Sigmoid)
CONV_LAYERS: tuple[type[nn.Module], ...] = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
RECURRENT_LAYERS: tuple[type[nn.Module], ...] = (nn.RNNBase,)
RECURRENT_CELLS: tuple[type[nn.Module], ...] = (nn.RNNCellBase,)
CONNECTION_LAYERS: tuple[type[nn.Module], ...] = (
    nn.Linear,
    *CONV_LAYERS,
    *RECURRENT_LAYERS,
    *RECURRENT_CELLS,
)


def find_layers(net: nn.Module, types: Sequence[type]) -> list[tuple[str, nn.Module]]:
    """Find the modules of `net` that are instances of `types`, outermost first.

    Args:
        net: The network to search (itself included).
        types: The module classes to look for.

    Returns:
        `(qualified_name, module)` pairs in definition order; the network itself, when it
        matches, is named ``""``.

    Example:
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        >>> [name for name, _ in find_layers(net, [nn.ReLU])]
        ['1']
    """
    wanted = tuple(types)
    found: list[tuple[str, nn.Module]] = []
    seen: set[int] = set()

    def visit(prefix: str, module: nn.Module) -> None:
        if id(module) in seen:
            return
        seen.add(id(module))
        if isinstance(module, wanted):
            found.append((prefix, module))
            return
        for child_name, child in module.named_children():
            visit(f"{prefix}.{child_name}" if prefix else child_name, child)

    visit("", net)
    return found
