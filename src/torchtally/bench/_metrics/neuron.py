"""Spiking-neuron metrics (snnTorch): membrane updates and neuron operations per sample.

They read the membrane potentials the activation hooks record before and after each call of
an snnTorch neuron; non-spiking activation layers have none and are skipped.
"""

from __future__ import annotations

from typing import Any, final

from torch import Tensor

from torchtally.bench._harness.hooks import ActivationHook
from torchtally.bench._harness.model import BenchModel
from torchtally.bench._metrics.metric_types import DeviceAccumulatedMetric

__all__ = ["NEURON_RESET_OPERATIONS", "MembraneUpdates", "NeuronOperations"]

#: Operations per membrane update, by neuron class and reset mechanism (NeuroBench's table).
NEURON_RESET_OPERATIONS: dict[str, dict[str, int]] = {
    "Leaky": {"subtract": 4, "zero": 4},
    "Synaptic": {"subtract": 6, "zero": 8},
    "Lapicque": {"subtract": 11, "zero": 11},
    "Alpha": {"subtract": 18, "zero": 24},
}


def _spiking_hooks(model: BenchModel) -> list[ActivationHook]:
    return [hook for hook in model.activation_hooks if hook.spiking]


def _read(value: Tensor | int) -> int:
    return int(value.item()) if isinstance(value, Tensor) else int(value)


@final
class MembraneUpdates(DeviceAccumulatedMetric):
    """Membrane-potential updates per sample, over all spiking-neuron layers.

    Example:
        >>> import snntorch as snn
        >>> from torch import nn
        >>> from torchtally.bench import Benchmark, SNNTorchModel
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(3, 2)
        ...         self.lif = snn.Leaky(beta=0.9, init_hidden=True, output=True)
        ...     def forward(self, x):
        ...         return self.lif(self.fc(x))
        >>> _ = torch.manual_seed(0)
        >>> loader = [(torch.rand(4, 5, 3), torch.zeros(4, dtype=torch.long))]  # 5 time steps
        >>> Benchmark(SNNTorchModel(Net()), loader, [], [], [[], [MembraneUpdates]]).run(quiet=True)
        {'MembraneUpdates': 10.0}
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=True)
        self.reset()

    def reset(self) -> None:
        self._updates: Tensor | int = 0
        self._samples = 0

    def accumulate(self, model: BenchModel, preds: Any, data: tuple[Tensor, ...]) -> None:
        for hook in _spiking_hooks(model):
            self._updates = hook.membrane_updates() + self._updates
        self._samples += data[0].size(0)

    def compute(self) -> float:
        if self._samples == 0:
            raise ValueError("MembraneUpdates: no batch was seen since the last reset")
        return _read(self._updates) / self._samples


@final
class NeuronOperations(DeviceAccumulatedMetric):
    """Neuron operations per sample: membrane updates times the neuron type's cost.

    "Effective Neuron Ops" weights the updates that happened; "Neuron Dense Ops" every neuron
    at every call. Costs come from `NEURON_RESET_OPERATIONS`; other neuron types raise.

    Returns (from `compute`):
        `{"Effective Neuron Ops": ..., "Neuron Dense Ops": ...}`, each per sample.

    Example:
        >>> import snntorch as snn
        >>> from torch import nn
        >>> from torchtally.bench import Benchmark, SNNTorchModel
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(3, 2)
        ...         self.lif = snn.Leaky(beta=0.9, init_hidden=True, output=True)
        ...     def forward(self, x):
        ...         return self.lif(self.fc(x))
        >>> _ = torch.manual_seed(0)
        >>> loader = [(torch.rand(4, 5, 3), torch.zeros(4, dtype=torch.long))]
        >>> Benchmark(SNNTorchModel(Net()), loader, [], [], [[], [NeuronOperations]]).run(quiet=True)
        {'NeuronOperations': {'Effective Neuron Ops': 40.0, 'Neuron Dense Ops': 40.0}}
    """

    def __init__(self) -> None:
        super().__init__(requires_hooks=True)
        self.reset()

    def reset(self) -> None:
        self._effective: Tensor | int = 0
        self._dense = 0
        self._samples = 0

    def accumulate(self, model: BenchModel, preds: Any, data: tuple[Tensor, ...]) -> None:
        for hook in _spiking_hooks(model):
            after = hook.post_fire_mem_potential
            if not after:
                continue  # the layer did not run in this batch
            cost = _operation_cost(hook)
            self._effective = hook.membrane_updates() * cost + self._effective
            self._dense += after[0].numel() * len(after) * cost
        self._samples += data[0].size(0)

    def compute(self) -> dict[str, float]:
        if self._samples == 0:
            raise ValueError("NeuronOperations: no batch was seen since the last reset")
        return {
            "Effective Neuron Ops": _read(self._effective) / self._samples,
            "Neuron Dense Ops": self._dense / self._samples,
        }


def _operation_cost(hook: ActivationHook) -> int:
    kind = type(hook.layer).__name__
    mechanism = getattr(hook.layer, "reset_mechanism", None)
    costs = NEURON_RESET_OPERATIONS.get(kind, {})
    if mechanism not in costs:
        raise ValueError(
            f"NeuronOperations: no operation cost for neuron `{hook.name}` of type {kind} with "
            f"reset_mechanism={mechanism!r}; known: "
            + ", ".join(f"{k} {sorted(v)}" for k, v in NEURON_RESET_OPERATIONS.items())
        )
    return costs[mechanism]
