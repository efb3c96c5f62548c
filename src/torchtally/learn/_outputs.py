"""What a step returns: one output object per batch, from which every metric takes its input.

A train or eval step returns one of these (or any object for which adaptors are registered);
the learner backpropagates `loss` and feeds each metric through its adaptor (see `_adaptor`),
so one output serves every metric, as Burn's `ClassificationOutput` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

import torch
from torch import Tensor

__all__ = [
    "ClassificationOutput",
    "MultiLabelClassificationOutput",
    "RegressionOutput",
    "SequenceOutput",
]


@final
@dataclass(frozen=True)
class ClassificationOutput:
    """A classification step's result.

    Attributes:
        loss: The 0-d loss (mean over the batch) that the train step backpropagates.
        output: `(N, C)` class logits or scores (or `(N,)` scores of the positive class for a
            binary task).
        targets: `(N,)` integer class indices.

    Example:
        >>> logits, labels = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 0])
        >>> loss = torch.nn.functional.cross_entropy(logits, labels)
        >>> ClassificationOutput(loss, logits, labels).loss
        tensor(0.7201)
    """

    loss: Tensor
    output: Tensor
    targets: Tensor


@final
@dataclass(frozen=True)
class MultiLabelClassificationOutput:
    """A multilabel step's result; metrics see `sigmoid(output)` as the per-label scores.

    Attributes:
        loss: The 0-d loss (e.g. `binary_cross_entropy_with_logits`).
        output: `(N, C)` per-label logits.
        targets: `(N, C)` 0/1 label indicators.

    Example:
        >>> logits, y = torch.tensor([[3.0, -3.0]]), torch.tensor([[1.0, 0.0]])
        >>> loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
        >>> MultiLabelClassificationOutput(loss, logits, y).targets
        tensor([[1., 0.]])
    """

    loss: Tensor
    output: Tensor
    targets: Tensor


@final
@dataclass(frozen=True)
class RegressionOutput:
    """A regression step's result.

    Attributes:
        loss: The 0-d loss (e.g. mean squared error).
        output: Predictions: shaped like `targets`, or with the same number of elements
            (`(N, 1)` for `(N,)` targets).
        targets: The true values.

    Example:
        >>> pred, y = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0])
        >>> RegressionOutput(torch.nn.functional.mse_loss(pred, y), pred, y).loss
        tensor(2.)
    """

    loss: Tensor
    output: Tensor
    targets: Tensor


@final
@dataclass(frozen=True)
class SequenceOutput:
    """A token-prediction step's result (language modelling, tagging).

    Metrics see the tokens flattened: `(N*T, V)` logits and `(N*T,)` targets; positions whose
    target is `pad_id` get weight 0 (and are left out of perplexity and of the loss mean).

    Attributes:
        loss: The 0-d loss: the mean token loss over the non-pad positions.
        output: `(N, T, V)` logits.
        targets: `(N, T)` target token ids.
        pad_id: The padding token id, or None when every position counts.

    Example:
        >>> tokens = torch.tensor([[5, 3, 2, 0]])  # one sequence, padded with 0
        >>> logits = torch.zeros(1, 3, 6)  # the model's output for tokens[:, :-1]
        >>> loss = torch.nn.functional.cross_entropy(
        ...     logits.flatten(0, 1), tokens[:, 1:].flatten(), ignore_index=0
        ... )
        >>> SequenceOutput(loss, logits, tokens[:, 1:], pad_id=0).num_tokens()
        tensor(2)
    """

    loss: Tensor
    output: Tensor
    targets: Tensor
    pad_id: int | None = None

    def flat(self) -> tuple[Tensor, Tensor, Tensor | None]:
        """The tokens flattened, with pad positions masked out.

        Returns:
            `(targets (N*T,), logits (N*T, V), weights (N*T,) or None)`. Pad targets are
            replaced by 0 (a valid class) and weighted 0, so no metric counts them as errors.

        Example:
            >>> output = SequenceOutput(torch.tensor(1.0), torch.zeros(1, 3, 6), torch.tensor([[3, 2, 0]]), 0)
            >>> targets, logits, weights = output.flat()
            >>> targets, logits.shape, weights
            (tensor([3, 2, 0]), torch.Size([3, 6]), tensor([1., 1., 0.]))
        """
        logits = self.output.reshape(-1, self.output.shape[-1])
        targets = self.targets.reshape(-1)
        if self.pad_id is None:
            return targets, logits, None
        keep = targets != self.pad_id
        return torch.where(keep, targets, torch.zeros_like(targets)), logits, keep.to(logits.dtype)

    def num_tokens(self) -> Tensor | int:
        """The number of positions the loss averages over.

        Returns:
            `N*T` without a pad id, else a 0-d tensor counting the non-pad targets (no host
            read).
        """
        if self.pad_id is None:
            return self.targets.numel()
        return (self.targets != self.pad_id).sum()
