"""Automatic mixed precision the cstorch way: loss scaling without host reads.

`GradScaler` scales the loss (statically or dynamically), `optimizer_step` runs the whole
scale / backward / unscale / clip / step recipe, and `use_bfloat16` picks the half dtype that
`autocast` (and backends built with `mixed_precision=True`) compute in.

Example:
    >>> import torch
    >>> from torchtally.optim import SGD
    >>> model = torch.nn.Linear(2, 1)
    >>> optimizer = SGD(model.parameters(), lr=0.1)
    >>> grad_scaler = GradScaler(loss_scale="dynamic")
    >>> loss = model(torch.ones(4, 2)).pow(2).mean()
    >>> optimizer_step(loss, optimizer, grad_scaler, max_gradient_norm=1.0)
    >>> grad_scaler.get_scale()  # the dynamic scale starts at 2**15
    tensor(32768.)
"""

from torchtally.amp._grad_scaler import GradScaler
from torchtally.amp._optimizer_step import optimizer_step
from torchtally.amp._precision import (
    autocast,
    enable_mixed_precision,
    get_floating_point_dtype,
    get_floating_point_dtype_str,
    get_half_dtype,
    get_half_dtype_str,
    is_cbfloat16_tensor,
    mixed_precision,
    set_half_dtype,
    use_bfloat16,
)

__all__ = [
    "GradScaler",
    "autocast",
    "enable_mixed_precision",
    "get_floating_point_dtype",
    "get_floating_point_dtype_str",
    "get_half_dtype",
    "get_half_dtype_str",
    "is_cbfloat16_tensor",
    "mixed_precision",
    "optimizer_step",
    "set_half_dtype",
    "use_bfloat16",
]
