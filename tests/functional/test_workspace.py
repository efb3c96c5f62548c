"""The per-thread scratch pools of `functional._workspace`: one pool per dtype, so that buffers
a caller holds of one dtype are never handed out for another, and a pool grows only when asked
for more."""

from __future__ import annotations

import torch

from torchtally.functional._workspace import scratch


def test_dtypes_get_their_own_buffers_and_keep_them() -> None:
    wide = scratch(torch.float64, 3, 100)
    narrow = scratch(torch.float32, 1, 5000)[0]
    pointers = {b.data_ptr() for b in wide}
    assert narrow.data_ptr() not in pointers and len(pointers) == 3
    # a larger ask of one dtype leaves the other dtype's buffers where they are
    grown = scratch(torch.float32, 1, 10_000)[0]
    assert grown.numel() >= 10_000
    again = scratch(torch.float64, 3, 100)
    assert [b.data_ptr() for b in again] == [b.data_ptr() for b in wide]
    # a smaller ask reuses what is there
    assert scratch(torch.float32, 1, 10)[0].data_ptr() == grown.data_ptr()
