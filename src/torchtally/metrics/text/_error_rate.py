"""`WordErrorRateMetric` and `CharErrorRateMetric`: edit-distance rates over strings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

import torch
from torch import Tensor

from torchtally._errors import tracing
from torchtally.functional.text._edit import error_counts
from torchtally.metrics._base import Metric

__all__ = ["CharErrorRateMetric", "WordErrorRateMetric"]


class _ErrorRate(Metric):
    unit = ""
    higher_is_better = False
    input_kind = "text"
    errors: Tensor
    total: Tensor
    _unit = "word"

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.register_state("errors", torch.zeros((), dtype=torch.float64))
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def update(self, preds: str | Sequence[str], target: str | Sequence[str]) -> None:
        """Add predicted and reference strings (host work: not inside a traced step)."""
        if tracing(self.errors):
            raise RuntimeError(
                f"`{type(self).__name__}.update` takes Python strings, which is host work: "
                "call it outside torch.compile / traced steps (e.g. after decoding the step's "
                "outputs)."
            )
        errors, total = error_counts(preds, target, self._unit)
        self.errors.add_(errors)
        self.total.add_(total)

    def compute(self) -> Tensor:
        return self.errors / self.total


@final
class WordErrorRateMetric(_ErrorRate):
    """Word error rate: word-level edit operations over reference words (TorchMetrics'
    `WordErrorRate`). String inputs are host work: `update` raises inside a traced step.
    NaN before any reference word.

    Example:
        >>> wer = WordErrorRateMetric()
        >>> wer(["this is the prediction", "there is an other sample"],
        ...     ["this is the reference", "there is another one"])
        tensor(0.5000, dtype=torch.float64)
    """

    _unit = "word"


@final
class CharErrorRateMetric(_ErrorRate):
    """Character error rate: character-level edit operations over reference characters
    (TorchMetrics' `CharErrorRate`). String inputs are host work: `update` raises inside a
    traced step. NaN before any reference character.

    Example:
        >>> CharErrorRateMetric()(["kitten"], ["sitting"])
        tensor(0.4286, dtype=torch.float64)
    """

    _unit = "char"
