"""The runtime helpers model-zoo flows call behave as the real cstorch 2.10 ones do on CPU.

Oracle: `cerebras.pytorch.utils.tensor`, `utils.data.utils` and `utils.data.dataset` from the
cerebras_pytorch 2.10.0 wheel, run as written (`_storage_oracle`): their `use_cs()` is False,
which is the branch a CPU/GPU run takes.
"""

from __future__ import annotations

import itertools
import types

import _oracle
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchtally as cstorch

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _real(name: str) -> types.ModuleType:
    try:
        import _storage_oracle

        return _storage_oracle.module(name)
    except _oracle.OracleUnavailable as exc:  # pragma: no cover - network
        pytest.skip(f"cerebras_pytorch {_oracle.VERSION} wheel unavailable: {exc}")


@pytest.fixture(scope="module")
def real_tensor() -> types.ModuleType:
    return _real("utils.tensor")


@pytest.fixture(scope="module")
def real_data() -> types.ModuleType:
    return _real("utils.data.utils")


@pytest.fixture(scope="module")
def real_dataset() -> types.ModuleType:
    return _real("utils.data.dataset")


def _same(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [None, torch.float16, torch.int32, torch.bfloat16, torch.bool])
def test_tensor_factories_match(real_tensor: types.ModuleType, dtype: torch.dtype | None) -> None:
    other = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    for name in ("zeros", "ones"):
        _same(
            getattr(cstorch, name)((2, 3), dtype=dtype),
            getattr(real_tensor, name)((2, 3), dtype=dtype),
        )
        _same(
            getattr(cstorch, f"{name}_like")(other, dtype=dtype),
            getattr(real_tensor, f"{name}_like")(other, dtype=dtype),
        )
    _same(cstorch.full((4,), 3, dtype=dtype), real_tensor.full((4,), 3, dtype=dtype))
    _same(cstorch.full_like(other, 2, dtype=dtype), real_tensor.full_like(other, 2, dtype=dtype))


def test_numpy_conversions_match(real_data: types.ModuleType) -> None:
    for dtype in (
        torch.float32,
        torch.float64,
        torch.int64,
        torch.bfloat16,
        torch.bool,
        torch.uint8,
    ):
        t = (torch.randn(3, 2) * 10).to(dtype)
        ours, theirs = cstorch.to_numpy(t), real_data.to_numpy(t)
        assert ours.dtype.str == theirs.dtype.str and ours.tobytes() == theirs.tobytes()
        back = cstorch.from_numpy(theirs.view(np.int16) if dtype == torch.bfloat16 else theirs)
        if dtype == torch.bfloat16:
            back = back.view(torch.bfloat16)
        _same(back, real_data.from_numpy(theirs))
    frozen = np.arange(3)
    frozen.flags.writeable = False
    _same(cstorch.from_numpy(frozen), real_data.from_numpy(frozen))


def test_use_cs_and_make_constant() -> None:
    assert cstorch.use_cs() is False
    t = torch.ones(2)
    assert cstorch.make_constant(t) is t
    with pytest.raises(TypeError, match="tensor"):
        cstorch.make_constant([1.0])  # type: ignore[arg-type]


_steps = st.one_of(st.none(), st.integers(1, 40))


@settings(max_examples=150, deadline=None)
@given(
    length=st.one_of(st.none(), st.integers(0, 30)),
    initial_step=st.integers(0, 30),
    num_steps=_steps,
    max_steps=_steps,
    num_epochs=_steps,
    steps_per_epoch=_steps,
    grad_accum_steps=st.integers(1, 6),
)
def test_compute_num_steps_matches(
    real_data: types.ModuleType,
    length: int | None,
    initial_step: int,
    num_steps: int | None,
    max_steps: int | None,
    num_epochs: int | None,
    steps_per_epoch: int | None,
    grad_accum_steps: int,
) -> None:
    loader: object = range(length) if length is not None else iter(())
    kwargs = dict(
        initial_step=initial_step,
        num_steps=num_steps,
        max_steps=max_steps,
        num_epochs=num_epochs,
        steps_per_epoch=steps_per_epoch,
        grad_accum_steps=grad_accum_steps,
    )
    try:
        expected: object = real_data.compute_num_steps(loader, **kwargs)
    except (ValueError, RuntimeError, AssertionError) as err:
        expected = type(err)
    try:
        got: object = cstorch.utils.data.compute_num_steps(loader, **kwargs)
    except (ValueError, RuntimeError) as err:
        got = type(err)
    if expected is AssertionError:  # cstorch asserts on an empty loader; we raise ValueError
        assert got is ValueError
    else:
        assert got == expected


def test_synthetic_dataset_matches(real_dataset: types.ModuleType) -> None:
    spec = {
        "x": torch.arange(3.0),
        "pair": (torch.zeros(2, dtype=torch.int64), lambda i: torch.tensor(i * 2)),
    }
    ours = list(cstorch.utils.data.SyntheticDataset(spec, num_samples=4))
    theirs = list(real_dataset.SyntheticDataset(spec, num_samples=4))
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs, strict=True):
        _same(a["x"], b["x"])
        _same(a["pair"][0], b["pair"][0])
        _same(a["pair"][1], b["pair"][1])
    assert len(cstorch.utils.data.SyntheticDataset(spec, 4)) == len(
        real_dataset.SyntheticDataset(spec, 4)
    )
    endless = cstorch.utils.data.SyntheticDataset(spec)
    assert len(list(itertools.islice(endless, 7))) == 7
    with pytest.raises(TypeError):
        len(endless)
    for bad in ({}, {"a": 3}):
        with pytest.raises(ValueError):
            real_dataset.SyntheticDataset(bad)
        with pytest.raises(ValueError, match="sample_spec"):
            cstorch.utils.data.SyntheticDataset(bad)
    with pytest.raises(ValueError, match="num_samples"):
        cstorch.utils.data.SyntheticDataset(spec, num_samples=0)


@pytest.fixture(scope="module")
def real_sampler() -> types.ModuleType:
    try:
        import _storage_oracle

        _storage_oracle._storage()
    except _oracle.OracleUnavailable as exc:  # pragma: no cover - network
        pytest.skip(f"cerebras_pytorch {_oracle.VERSION} wheel unavailable: {exc}")
    cs = _oracle.load()
    # Off a Cerebras system no process is a data streamer, so batches are not split.
    cs.distributed = types.SimpleNamespace(is_streamer=lambda: False)
    return _storage_oracle.module("utils.data.sampler")


def _epochs(sampler: object, count: int, real_pad: object = None) -> list[object]:
    out = []
    for _ in range(count):
        epoch = list(sampler)  # type: ignore[call-overload]
        out.append(
            (
                len(sampler),  # type: ignore[arg-type]
                [
                    ["pad" if i is real_pad or i is cstorch.utils.data.pad_index else i for i in b]
                    if isinstance(b, list)
                    else b
                    for b in epoch
                ],
            )
        )
    return out


@settings(max_examples=120, deadline=None)
@given(
    length=st.integers(1, 23),
    shuffle=st.booleans(),
    seed=st.integers(0, 1000),
    start_index=st.integers(0, 60),
    batch_size=st.one_of(st.none(), st.integers(1, 9)),
    drop_last=st.booleans(),
    num_samples=st.one_of(st.none(), st.integers(1, 40)),
    pad_last=st.booleans(),
)
def test_distributed_sampler_matches(
    real_sampler: types.ModuleType,
    length: int,
    shuffle: bool,
    seed: int,
    start_index: int,
    batch_size: int | None,
    drop_last: bool,
    num_samples: int | None,
    pad_last: bool,
) -> None:
    kwargs = dict(
        shuffle=shuffle,
        seed=seed,
        start_index=start_index,
        batch_size=batch_size,
        drop_last=drop_last,
        num_samples=num_samples,
        pad_last=pad_last,
    )
    data = list(range(length))
    theirs = real_sampler.DistributedSampler(data, **kwargs)
    ours = cstorch.utils.data.DistributedSampler(data, **kwargs)
    assert _epochs(ours, 3) == _epochs(theirs, 3, real_sampler.pad_index)
    if num_samples is None and not pad_last:  # cstorch's set_state forgets these two
        theirs.set_state(start_index + 5)
        ours.set_state(start_index + 5)
        assert _epochs(ours, 2) == _epochs(theirs, 2, real_sampler.pad_index)


@settings(max_examples=60, deadline=None)
@given(
    smooth=st.one_of(st.none(), st.floats(0.0, 1.0)),
    events=st.lists(
        st.tuples(
            st.sampled_from(["add", "rate", "global", "elapsed", "reset_time"]), st.integers(0, 50)
        ),
        max_size=30,
    ),
)
def test_rate_tracker_matches(smooth: float | None, events: list[tuple[str, int]]) -> None:
    real = _real("utils.tracker")
    now = [10**9]
    fake_time = types.SimpleNamespace(perf_counter_ns=lambda: now[0])
    original = real.time
    real.time = fake_time  # the real tracker reads time.perf_counter_ns
    try:
        theirs = real.RateTracker(smooth)
        ours = cstorch.utils.tracker.RateTracker(smooth, clock_ns=lambda: now[0])
        for kind, amount in events:
            now[0] += amount * 37_000_000
            if kind == "add":
                theirs.add(amount)
                ours.add(amount)
            elif kind == "rate":
                assert ours.rate() == pytest.approx(theirs.rate(), rel=1e-12, abs=1e-12)
            elif kind == "global":
                assert ours.global_rate() == pytest.approx(
                    theirs.global_rate(), rel=1e-12, abs=1e-12
                )
            elif kind == "elapsed":
                assert ours.elapsed_seconds() == pytest.approx(theirs.elapsed_seconds(), rel=1e-12)
            else:
                theirs.reset_time(amount / 10)
                ours.reset_time(amount / 10)
            assert ours.total_count == theirs.total_count
    finally:
        real.time = original


def test_recurse_spec_matches() -> None:
    import collections

    real = _real("utils.nest")
    point = collections.namedtuple("point", ["x", "y"])
    trees = [
        {"model": {"w": 1, "b": 2}, "opt": {"state": {0: {"m": 3}}, "groups": [{"lr": 4}]}},
        [1, (2, 3), {"k": [4]}],
        {"p": point(1, [2, 3]), "empty": [], "none": None},
        collections.OrderedDict([("z", 1), ("a", (2,))]),
        7,
    ]
    for tree in trees:
        _, spec = torch.utils._pytree.tree_flatten(tree)
        ours = [".".join(p) for p in cstorch.utils.nest.recurse_spec(spec)]
        theirs = [".".join(p) for p in real.recurse_spec(spec)]
        assert ours == theirs
