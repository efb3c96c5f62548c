"""`configure_param_groups`: a model's parameters split into optimizer groups as cstorch's
model-zoo flows split them (tags, weight decay, muP learning-rate factors)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from typing import Any

from torch import nn

__all__ = ["DEFAULT_LR_ADJUSTMENT_GROUPS", "configure_param_groups"]

#: The model-zoo's learning-rate adjustment groups for a model that declares none (muP's
#: embedding and decoder kernels), as glob patterns over parameter names.
DEFAULT_LR_ADJUSTMENT_GROUPS: dict[str, list[str]] = {
    "embedding": ["*embedding*weight"],
    "decoder_kernel": ["*decoder*dense*weight", "*decoder*linear*weight"],
}

_NORMS: tuple[type[nn.Module], ...] = (
    nn.LayerNorm,
    nn.BatchNorm1d,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nn.InstanceNorm1d,
    nn.InstanceNorm2d,
    nn.InstanceNorm3d,
    nn.GroupNorm,
    nn.SyncBatchNorm,
    nn.RMSNorm,
)

Named = list[tuple[str, nn.Parameter]]


def _globs(value: Any, what: str) -> list[str]:
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        raise ValueError(
            f"Argument `{what}` must be a glob string or a list of them. Received: {value!r}"
        )
    return list(patterns)


def _is_norm(module: nn.Module) -> bool:
    # The model zoo's own RMSNorm is not torch's class; its name identifies it.
    return isinstance(module, _NORMS) or type(module).__name__ == "RMSNorm"


def _decays(model: nn.Module, name: str) -> bool:
    """No decay for biases and for parameters of normalization layers. As the model zoo
    decides: a layer owns every parameter whose name contains the layer's name."""
    if "bias" in name:
        return False
    return not any(layer in name and _is_norm(m) for layer, m in model.named_modules())


def _split_by_tags(named: Named, filters: Any) -> list[dict[str, Any]]:
    if isinstance(filters, Mapping):
        filters = [filters]
    if not isinstance(filters, (list, tuple)):
        raise ValueError(
            "Argument `optimizer_params['params']` must be a list of {'params': globs, 'tag': "
            f"tag}} dicts. Received: {filters!r}"
        )
    tags: dict[int, list[Any]] = {id(p): [] for _, p in named}
    for index, entry in enumerate(filters):
        if not isinstance(entry, Mapping) or "params" not in entry or "tag" not in entry:
            raise ValueError(
                f"Argument `optimizer_params['params'][{index}]` must be a dict with keys "
                f"'params' and 'tag'. Received: {entry!r}"
            )
        patterns = _globs(entry["params"], f"optimizer_params['params'][{index}]['params']")
        regexes = [re.compile(fnmatch.translate(p)) for p in patterns]
        matched = [p for n, p in named if any(r.search(n) for r in regexes)]
        if not matched:
            raise ValueError(
                f"Argument `optimizer_params['params'][{index}]` (tag {entry['tag']!r}) must "
                f"match a trainable parameter's name. Received patterns: {patterns}"
            )
        for p in matched:
            tags[id(p)].append(entry["tag"])
    groups: dict[frozenset[Any], Named] = {}
    for name, p in named:
        groups.setdefault(frozenset(tags[id(p)]), []).append((name, p))
    return [
        {"params": members, "tags": set(key)} if key else {"params": members}
        for key, members in groups.items()
    ]


def _adjustment_filters(
    model: nn.Module, overrides: Any
) -> list[tuple[float, list[Callable[[str], bool]]]]:
    """(scale, name filters) for each scale other than 1, in the model's group order, groups
    of equal scale merged (the model zoo's order, which checkpoints depend on)."""
    declared = getattr(model, "lr_adjustment_groups", DEFAULT_LR_ADJUSTMENT_GROUPS)
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, Mapping):
        raise ValueError(
            "Argument `optimizer_params['adjust_learning_rate']` must be a dict of group name "
            f"to scale. Received: {overrides!r}"
        )
    unknown = sorted(set(overrides) - set(declared))
    if unknown:
        raise ValueError(
            f"Argument `optimizer_params['adjust_learning_rate']` names groups {unknown} the "
            f"model does not declare. Declared: {sorted(declared)}"
        )
    merged: list[tuple[float, list[Callable[[str], bool]]]] = []
    for name, group in declared.items():
        patterns = getattr(group, "param_filter_patterns", group)
        scale = float(overrides.get(name, getattr(group, "scale", 1.0)))
        if scale == 1.0:
            continue
        regexes = [
            re.compile(fnmatch.translate(p))
            for p in _globs(patterns, f"lr_adjustment_groups[{name!r}]")
        ]
        test = _fullmatch_any(regexes)
        for known, tests in merged:
            if known == scale:
                tests.append(test)
                break
        else:
            merged.append((scale, [test]))
    return merged


def _fullmatch_any(regexes: list[re.Pattern[str]]) -> Callable[[str], bool]:
    return lambda name: any(r.fullmatch(name) for r in regexes)


def _split_by_scale(
    model: nn.Module, groups: list[dict[str, Any]], scales: list[tuple[float, list[Any]]]
) -> list[dict[str, Any]]:
    if not scales:
        return groups
    # A parameter is scaled when its name contains the name of a matching model parameter
    # (the model zoo's test; for distinct names, the same as matching it).
    layers = [
        [n for n, _ in model.named_parameters() if any(t(n) for t in tests)] for _, tests in scales
    ]
    result = []
    for group in groups:
        extra = {k: v for k, v in group.items() if k != "params"}
        parts: list[Named] = [[] for _ in range(len(scales) + 1)]
        for name, p in group["params"]:
            index = next(
                (i for i, names in enumerate(layers) if any(n in name for n in names)),
                len(scales),
            )
            parts[index].append((name, p))
        for (scale, _), members in zip([*scales, (1.0, [])], parts):
            if members:
                result.append({"params": members, **extra, "adjust_learning_rate": scale})
    return result


def configure_param_groups(
    model: nn.Module, optimizer_params: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Split a model's trainable parameters into non-overlapping optimizer groups, as the
    Cerebras model zoo's `configure_param_groups` does before `configure_optimizer`.

    Three splits, in order:

    1. Tags: each entry of `optimizer_params["params"]` (`{"params": glob or globs, "tag":
       tag}`) tags the parameters whose names match; parameters with the same set of tags form
       a group with `"tags"` (untagged ones a group without). A filter matching nothing is an
       error.
    2. Weight decay: each group becomes one with `weight_decay = optimizer_params
       ["weight_decay"]` (default 0.0) and one with 0.0 holding the biases and the parameters
       of normalization layers. Empty groups are dropped when tags are in use (kept
       otherwise, as the model zoo does, so the group order is fixed).
    3. muP factors: the model's `lr_adjustment_groups` (name to glob patterns, or objects with
       `param_filter_patterns` and `scale`; default `DEFAULT_LR_ADJUSTMENT_GROUPS`) with scales
       from `optimizer_params["adjust_learning_rate"]` (name to scale) split each group again,
       one per scale other than 1 plus the rest, each with `adjust_learning_rate` (which
       `ScalePerParamLR` applies).

    Args:
        model: The model.
        optimizer_params: The `optimizer:` section of a config.

    Returns:
        The parameter groups (dicts with `params` and the keys above).

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))
        >>> groups = configure_param_groups(model, {"weight_decay": 0.1})
        >>> [(len(g["params"]), g["weight_decay"]) for g in groups]
        [(1, 0.1), (3, 0.0)]
    """
    if not isinstance(model, nn.Module):
        raise ValueError(
            f"Argument `model` must be a torch.nn.Module. Received: {type(model).__name__}"
        )
    if not isinstance(optimizer_params, Mapping):
        raise ValueError(
            "Argument `optimizer_params` must be a dict (a config's optimizer section). "
            f"Received: {optimizer_params!r}"
        )
    named: Named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = _split_by_tags(named, optimizer_params.get("params", []))
    weight_decay = optimizer_params.get("weight_decay", 0.0)
    halves: list[dict[str, Any]] = []
    for group in groups:
        extra = {"tags": group["tags"]} if group.get("tags") else {}
        decay = [(n, p) for n, p in group["params"] if _decays(model, n)]
        plain = [(n, p) for n, p in group["params"] if not _decays(model, n)]
        halves.append({"params": decay, "weight_decay": weight_decay, **extra})
        halves.append({"params": plain, "weight_decay": 0.0, **extra})
    if any("tags" in group for group in halves):
        halves = [group for group in halves if group["params"]]
    scales = _adjustment_filters(model, optimizer_params.get("adjust_learning_rate"))
    final = _split_by_scale(model, halves, scales)
    return [{**group, "params": [p for _, p in group["params"]]} for group in final]
