"""The per-thread scratch pools of `functional._workspace`: one pool per dtype and role, so
that buffers a caller holds under one role are never handed out under another."""

from __future__ import annotations

import torch

from torchtally.functional._workspace import scratch


def test_roles_of_one_dtype_get_their_own_buffers_and_keep_them() -> None:
    masks = scratch(torch.float32, 3, 100, "test masks")
    ranks = scratch(torch.float32, 1, 5000, "test ranks")[0]
    pointers = {b.data_ptr() for b in masks}
    assert ranks.data_ptr() not in pointers and len(pointers) == 3
    # a larger ask under one role leaves the other role's buffers where they are
    grown = scratch(torch.float32, 1, 10_000, "test ranks")[0]
    assert grown.numel() >= 10_000
    again = scratch(torch.float32, 3, 100, "test masks")
    assert [b.data_ptr() for b in again] == [b.data_ptr() for b in masks]
    # a smaller ask reuses what is there
    assert scratch(torch.float32, 1, 10, "test ranks")[0].data_ptr() == grown.data_ptr()
