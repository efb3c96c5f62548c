"""Pre- and postprocessors: the steps around the model call.

A preprocessor maps a batch `(inputs, labels, ...)` to the same form before the model runs; a
postprocessor maps the model's output to what the metrics compare with the labels. Any
callable with those signatures works; the two base classes only name the contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, final

from torch import Tensor

__all__ = [
    "Aggregate",
    "ChooseMaxCount",
    "PostProcessor",
    "PreProcessor",
    "check_processors",
]


class PreProcessor(ABC):
    """Transforms a batch before the model runs.

    Example:
        >>> class Scale(PreProcessor):
        ...     def __call__(self, data):
        ...         return (data[0] / 255, *data[1:])
    """

    @abstractmethod
    def __call__(self, data: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        """Transform one batch.

        Args:
            data: `(inputs, labels, ...)`.

        Returns:
            The transformed batch, in the same form.
        """


class PostProcessor(ABC):
    """Transforms the model's output into predictions the metrics compare with the labels.

    Example:
        >>> class Argmax(PostProcessor):
        ...     def __call__(self, output):
        ...         return output.argmax(-1)
    """

    @abstractmethod
    def __call__(self, output: Any) -> Any:
        """Transform one batch of model output.

        Args:
            output: The model's output (or the previous postprocessor's).

        Returns:
            The transformed output.
        """


@final
class ChooseMaxCount(PostProcessor):
    """The class with the most spikes over time: `(batch, time, classes)` to `(batch,)`.

    Example:
        >>> spikes = torch.tensor([[[0, 1], [0, 1], [1, 0]]])
        >>> ChooseMaxCount()(spikes).tolist()
        [1]
    """

    def __call__(self, output: Tensor) -> Tensor:
        _check_spikes("ChooseMaxCount", output, "(batch, time, classes)", exact=True)
        return output.sum(1).argmax(1)


@final
class Aggregate(PostProcessor):
    """Spike counts over time: `(batch, time, ...)` to `(batch, ...)`.

    Example:
        >>> Aggregate()(torch.ones(2, 5, 3)).tolist()[0]
        [5.0, 5.0, 5.0]
    """

    def __call__(self, output: Tensor) -> Tensor:
        _check_spikes("Aggregate", output, "(batch, time, ...)", exact=False)
        return output.sum(1)


def _check_spikes(name: str, output: Any, expected: str, exact: bool) -> None:
    dims = output.dim() if isinstance(output, Tensor) else None
    if dims is None or dims < 3 or (exact and dims != 3):
        shape = tuple(output.shape) if isinstance(output, Tensor) else type(output).__name__
        raise ValueError(
            f"{name} expects the model's output to be spikes of shape {expected} (an "
            f"SNNTorchModel's output). Received: {shape}. For an (N, C) output use an argmax "
            "postprocessor instead."
        )


def check_processors(name: str, processors: Sequence[Callable[..., Any]] | None) -> list[Any]:
    """Validate a list of processors and return it as a new list (None gives an empty one).

    Args:
        name: The argument's name, for the error message.
        processors: Callables, or None.

    Returns:
        The processors.

    Raises:
        TypeError: If `processors` is not a list or tuple of callables.

    Example:
        >>> check_processors("postprocessors", [ChooseMaxCount()])[0].__class__.__name__
        'ChooseMaxCount'
    """
    if processors is None:
        return []
    if not isinstance(processors, (list, tuple)):
        raise TypeError(
            f"Argument `{name}` must be a list of callables or None. "
            f"Received: {name}={processors!r}"
        )
    for index, processor in enumerate(processors):
        if not callable(processor):
            raise TypeError(
                f"Argument `{name}` must hold only callables. "
                f"Received: {name}[{index}]={processor!r}"
            )
    return list(processors)
