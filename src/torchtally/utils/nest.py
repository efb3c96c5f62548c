"""`recurse_spec`: the leaf paths of a pytree spec, named as cstorch names them.

cstorch flattens state dicts with `torch.utils._pytree` and names each leaf by its path: dict
keys (by `str`), and positions for lists, tuples and named tuples. The same names key the
entries of a cstorch checkpoint ("model.fc1.weight", "optimizer.state.0.exp_avg").
"""

from __future__ import annotations

from collections.abc import Iterator
from inspect import isclass

import torch.utils._pytree as pytree

__all__ = ["recurse_spec"]


def recurse_spec(spec: pytree.TreeSpec, scope: list[str] | None = None) -> Iterator[list[str]]:
    """Yield the path of every leaf of `spec`, as a list of strings, in flattening order.

    Args:
        spec: A spec from `torch.utils._pytree.tree_flatten`.
        scope: A path prefix for every yielded path.

    Example:
        >>> _, spec = torch.utils._pytree.tree_flatten({"a": [1, 2], "b": {"c": 3}})
        >>> [".".join(p) for p in recurse_spec(spec)]
        ['a.0', 'a.1', 'b.c']
    """
    if spec.num_leaves == 0:
        return
    prefix = list(scope or [])
    children = spec.children()
    context = spec.context
    if context:
        if isclass(context) and issubclass(context, tuple) and hasattr(context, "_fields"):
            names: list[object] = list(range(len(context._fields)))  # a named tuple: positions
        else:
            names = list(context)
        for name, child in zip(names, children, strict=False):
            yield from recurse_spec(child, [*prefix, str(name)])
    elif not children:
        yield prefix
    else:
        for i, child in enumerate(children):
            yield from recurse_spec(child, [*prefix, str(i)])
