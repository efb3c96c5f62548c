"""Deferred closure calls and the first-in, first-out queue that runs them.

A call is queued with its raw arguments, *materialised* (host copies of its tensors started)
when its step ends, and *run* once those copies have landed. Calls run in the order they were
made. A checkpoint closure reads live state (the model's weights), so it cannot wait for a
later step: a queue that holds one runs everything up to it at once, blocking if need be.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, final

from torchtally.runtime._materialize import Materialized, materialize

__all__ = ["ClosureQueue", "PendingCall"]


@final
class PendingCall:
    """One deferred call of a step or checkpoint closure.

    Args:
        fn: The user's function.
        args: Its positional arguments, as passed.
        kwargs: Its keyword arguments, as passed.
        checkpoint: Whether it came from a checkpoint closure (reads live state).

    Example:
        >>> call = PendingCall(print, (torch.ones(1),), {}, checkpoint=False)
        >>> call.materialize(); call.run()
        tensor([1.])
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        checkpoint: bool,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.checkpoint = checkpoint
        self._copies: Materialized | None = None

    @property
    def materialized(self) -> bool:
        """Whether the host copies of the arguments have been started."""
        return self._copies is not None

    def materialize(self) -> None:
        """Start the host copies of the arguments (their values as of now)."""
        if self._copies is None:
            self._copies = materialize(self.args, self.kwargs)
            self.args, self.kwargs = (), {}  # drop the device tensors early

    def ready(self) -> bool:
        """Whether the call can run without waiting for the device.

        Returns:
            True once the arguments' host copies have landed.
        """
        return self._copies is not None and self._copies.ready()

    def run(self) -> None:
        """Wait for the host copies, then call the function with them."""
        self.materialize()
        assert self._copies is not None
        self._copies.wait()
        self.fn(*self._copies.args, **self._copies.kwargs)


@final
class ClosureQueue:
    """Calls waiting for their step to end and their arguments to reach the host.

    Example:
        >>> queue = ClosureQueue()
        >>> queue.add(PendingCall(print, ("done",), {}, checkpoint=False))
        >>> queue.run(block=True)
        done
    """

    def __init__(self) -> None:
        self._calls: deque[PendingCall] = deque()

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, call: PendingCall) -> None:
        """Queue a call after all the calls already queued."""
        self._calls.append(call)

    def materialize(self) -> None:
        """Start the host copies of every call whose copies have not been started."""
        for call in self._calls:
            call.materialize()

    def run(self, *, block: bool) -> None:
        """Run queued calls in order.

        Args:
            block: Run every call, waiting for copies in flight. Otherwise run calls while
                their copies are ready, except that every call up to the last checkpoint
                closure runs now (it must see this step's weights).
        """
        self.materialize()
        forced = len(self._calls) if block else self._through_last_checkpoint()
        while self._calls and (forced > 0 or self._calls[0].ready()):
            call = self._calls.popleft()
            forced -= 1
            call.run()

    def clear(self) -> None:
        """Drop every queued call without running it (the step that queued them failed)."""
        self._calls.clear()

    def _through_last_checkpoint(self) -> int:
        count = 0
        for index, call in enumerate(self._calls):
            if call.checkpoint:
                count = index + 1
        return count
