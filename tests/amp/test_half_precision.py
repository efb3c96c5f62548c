"""`use_bfloat16` chooses the autocast dtype, for `autocast` and mixed-precision backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from torchtally.amp import autocast, get_half_dtype, use_bfloat16
from torchtally.runtime import backend, compile


@pytest.fixture(autouse=True)
def _restore_float16() -> Iterator[None]:
    yield
    use_bfloat16(False)


def test_float16_by_default_and_bfloat16_on_request() -> None:
    assert get_half_dtype() == torch.float16
    use_bfloat16(True)
    assert get_half_dtype() == torch.bfloat16
    with autocast(device_type="cpu"):
        assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16
    use_bfloat16(False)
    with autocast(device_type="cpu"):
        assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.float16
    with autocast(enabled=False, device_type="cpu"):
        assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.float32
    with pytest.raises(TypeError, match="Argument `use` must be a bool"):
        use_bfloat16("yes")  # type: ignore[arg-type]


def test_a_mixed_precision_backend_runs_the_forward_pass_in_the_half_dtype() -> None:
    use_bfloat16(True)
    cpu = backend("CPU", mixed_precision=True)
    model = torch.nn.Linear(4, 2)
    out = compile(model, cpu)(torch.ones(3, 4))
    assert out.dtype == torch.bfloat16
    plain = compile(torch.nn.Linear(4, 2), backend("CPU"))(torch.ones(3, 4))
    assert plain.dtype == torch.float32
