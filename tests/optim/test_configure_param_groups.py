"""`configure_param_groups` splits parameters as the Cerebras model zoo documents: tags from
glob filters, no weight decay for biases and normalization layers, muP learning-rate factors.
Expected groups are written out by hand from that behaviour."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from torchtally import optim


class RMSNorm(nn.Module):
    """Stands for the model zoo's own RMSNorm class (not torch's), found by its name."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(4))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(5, 4)
        self.dense = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.decoder = nn.ModuleDict({"linear": nn.Linear(4, 3)})
        self.rms = RMSNorm()
        self.frozen = nn.Parameter(torch.zeros(2), requires_grad=False)


def _names(model: nn.Module, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups with parameter names instead of tensors, for readable comparisons."""
    by_id = {id(p): n for n, p in model.named_parameters()}
    return [{**g, "params": [by_id[id(p)] for p in g["params"]]} for g in groups]


DECAY = ["embedding.weight", "dense.weight", "decoder.linear.weight"]
PLAIN = ["dense.bias", "norm.weight", "norm.bias", "decoder.linear.bias", "rms.weight"]


def test_weight_decay_spares_biases_and_norms_and_frozen_params_are_left_out() -> None:
    model = Model()
    groups = optim.configure_param_groups(model, {"weight_decay": 0.01})
    assert _names(model, groups) == [
        {"params": DECAY, "weight_decay": 0.01},
        {"params": PLAIN, "weight_decay": 0.0},
    ]


def test_without_weight_decay_the_split_and_its_empty_group_remain() -> None:
    # Kept even when empty (no tags in use), so the group order never depends on the model.
    model = nn.Linear(2, 2, bias=False)
    groups = optim.configure_param_groups(model, {})
    assert _names(model, groups) == [
        {"params": ["weight"], "weight_decay": 0.0},
        {"params": [], "weight_decay": 0.0},
    ]


def test_mup_factors_split_each_group_by_the_default_adjustment_groups() -> None:
    model = Model()
    params = {
        "weight_decay": 0.1,
        "adjust_learning_rate": {"embedding": 0.5, "decoder_kernel": 0.25},
    }
    assert _names(model, optim.configure_param_groups(model, params)) == [
        {"params": ["embedding.weight"], "weight_decay": 0.1, "adjust_learning_rate": 0.5},
        {"params": ["decoder.linear.weight"], "weight_decay": 0.1, "adjust_learning_rate": 0.25},
        {"params": ["dense.weight"], "weight_decay": 0.1, "adjust_learning_rate": 1.0},
        {"params": PLAIN, "weight_decay": 0.0, "adjust_learning_rate": 1.0},
    ]


def test_adjustment_groups_with_equal_scales_are_merged_in_model_order() -> None:
    model = Model()
    params = {
        "weight_decay": 0.1,
        "adjust_learning_rate": {"embedding": 0.5, "decoder_kernel": 0.5},
    }
    assert _names(model, optim.configure_param_groups(model, params)) == [
        {
            "params": ["embedding.weight", "decoder.linear.weight"],
            "weight_decay": 0.1,
            "adjust_learning_rate": 0.5,
        },
        {"params": ["dense.weight"], "weight_decay": 0.1, "adjust_learning_rate": 1.0},
        {"params": PLAIN, "weight_decay": 0.0, "adjust_learning_rate": 1.0},
    ]


def test_a_model_declares_its_own_adjustment_groups() -> None:
    model = Model()
    model.lr_adjustment_groups = {"heads": "*dense.weight", "other": ["norm.*"]}  # type: ignore[assignment]
    params = {"adjust_learning_rate": {"heads": 2.0}}
    assert _names(model, optim.configure_param_groups(model, params)) == [
        {"params": ["dense.weight"], "weight_decay": 0.0, "adjust_learning_rate": 2.0},
        {
            "params": ["embedding.weight", "decoder.linear.weight"],
            "weight_decay": 0.0,
            "adjust_learning_rate": 1.0,
        },
        {"params": PLAIN, "weight_decay": 0.0, "adjust_learning_rate": 1.0},
    ]


def test_tags_from_glob_filters_make_groups_and_drop_empty_ones() -> None:
    model = Model()
    params = {
        "weight_decay": 0.1,
        "params": [
            {"params": "*dense*", "tag": "d"},
            {"params": ["norm.*", "*dense.bias"], "tag": "n"},
        ],
    }
    assert _names(model, optim.configure_param_groups(model, params)) == [
        {"params": ["embedding.weight", "decoder.linear.weight"], "weight_decay": 0.1},
        {"params": ["decoder.linear.bias", "rms.weight"], "weight_decay": 0.0},
        {"params": ["dense.weight"], "weight_decay": 0.1, "tags": {"d"}},
        {"params": ["dense.bias"], "weight_decay": 0.0, "tags": {"d", "n"}},
        {"params": ["norm.weight", "norm.bias"], "weight_decay": 0.0, "tags": {"n"}},
    ]


@pytest.mark.parametrize(
    ("model", "params", "message"),
    [
        (Model(), {"params": [{"params": "*nothing*", "tag": "x"}]}, r"must match a trainable"),
        (Model(), {"params": [{"tag": "x"}]}, r"must be a dict with keys 'params' and 'tag'"),
        (Model(), {"adjust_learning_rate": {"head": 2.0}}, r"names groups \['head'\] the model"),
        (Model(), {"adjust_learning_rate": 2.0}, r"must be a dict of group name to scale"),
        ([torch.zeros(1)], {}, r"Argument `model` must be a torch.nn.Module. Received: list"),
        (Model(), [("weight_decay", 0.1)], r"Argument `optimizer_params` must be a dict"),
    ],
)
def test_errors_name_the_argument(model: Any, params: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        optim.configure_param_groups(model, params)


def test_configure_optimizer_groups_a_model_and_scale_per_param_applies_the_factors() -> None:
    model = Model()
    opt = optim.configure_optimizer(
        "AdamW",
        model,
        learning_rate="1e-2",
        weight_decay=0.1,
        adjust_learning_rate={"embedding": 0.5},
    )
    assert [(g["weight_decay"], g["adjust_learning_rate"]) for g in opt.param_groups] == [
        (0.1, 0.5),
        (0.1, 1.0),
        (0.0, 1.0),
    ]
    assert "adjust_learning_rate" not in opt.defaults
    scheduler = optim.lr_scheduler.ScalePerParamLR(opt, optim.lr_scheduler.ConstantLR(opt, 0.01))
    rates = [float(r) for r in scheduler.get_last_lr()]
    assert rates == pytest.approx([0.005, 0.01, 0.01])
    # The groups hold every trainable parameter once.
    held = [p for g in opt.param_groups for p in g["params"]]
    assert len(held) == len({id(p) for p in held}) == 8
