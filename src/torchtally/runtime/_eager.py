"""Call sites that a `torch.compile`d step runs eagerly instead of tracing.

Queuing a closure or a summary is Python bookkeeping: it appends to the step's list or the
executor's queue and reads the executor's step number. Traced by Dynamo, that bookkeeping would
be replayed as side effects and the objects it touches guarded on; as a graph break it simply
runs in Python, with real tensors, exactly as in an eager step. So those calls go through an
`EagerOnly` hook, which becomes a `torch.compiler.disable`d call once any step is compiled
(uncompiled programs keep calling the plain function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, final

import torch

__all__ = ["EagerOnly"]


@final
class EagerOnly:
    """Call `fn`, eagerly even inside a compiled step once `break_graphs` was called.

    Args:
        fn: The function to call.

    Example:
        >>> queue_call = EagerOnly(print)
        >>> queue_call("runs in Python")
        runs in Python
    """

    _hooks: ClassVar[list[EagerOnly]] = []

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self._target = fn
        EagerOnly._hooks.append(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target(*args, **kwargs)

    @classmethod
    def break_graphs(cls) -> None:
        """Make every hook a graph break for `torch.compile` (done before the first compile)."""
        for hook in cls._hooks:
            if hook._target is hook.fn:
                hook._target = torch.compiler.disable(hook.fn)
