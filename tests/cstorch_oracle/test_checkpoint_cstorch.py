"""Checkpoints cross the Cerebras boundary both ways: the real cstorch 2.10 H5 writer and reader.

Oracle: `cerebras.pytorch.save` / `load` from the cerebras_pytorch 2.10.0 wheel, run as written
(see `_storage_oracle`). Files it writes must load in torchtally bit for bit, and files
`torchtally.save(format="cstorch")` writes must load in it bit for bit.
"""

from __future__ import annotations

import json
import types
from collections import OrderedDict
from pathlib import Path
from typing import Any

import _oracle
import h5py
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchtally as cstorch
from torchtally.runtime import CheckpointError

# The real cstorch code walks tree specs with an accessor torch 2.13 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

_DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.uint8,
    torch.bool,
]


@pytest.fixture(scope="module")
def real() -> types.ModuleType:
    try:
        import _storage_oracle
    except ImportError as exc:  # pragma: no cover - environment
        pytest.skip(f"checkpoint oracle unavailable: {exc}")
    try:
        _storage_oracle._storage()
    except _oracle.OracleUnavailable as exc:  # pragma: no cover - network
        pytest.skip(f"cerebras_pytorch {_oracle.VERSION} wheel unavailable: {exc}")
    return _storage_oracle


def _random_tensor(
    gen: torch.Generator, dtype: torch.dtype, shape: tuple[int, ...]
) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=gen) * 100).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(
        max(info.min, -(2**31)), min(info.max, 2**31 - 1), shape, generator=gen, dtype=torch.int64
    ).to(dtype)


def _state(seed: int) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Linear(4, 3))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    model(torch.randn(2, 5, generator=gen)).sum().backward()
    opt.step()
    shared = torch.randn(3, 2, generator=gen)
    tensors = {
        str(dtype).removeprefix("torch."): _random_tensor(gen, dtype, (2, 3)) for dtype in _DTYPES
    }
    return {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "tensors": tensors,
        "scalar_tensor": torch.tensor(7.5),
        "scalar_bf16": torch.tensor(-1.25, dtype=torch.bfloat16),
        "numpy_scalar": np.array(3.5),
        "empty": torch.zeros(0, 4),
        "embedding": shared,
        "lm_head": shared,  # tied: the same tensor object twice
        "step": 12 + seed,
        "lr": 0.25,
        "flag": True,
        "name": f"run-{seed}",
        "nothing": None,
        "history": [1.5, -2, "x", None, [3, 4]],
        "pair": (seed, "y"),
        "ordered": OrderedDict([("b", torch.ones(2)), ("a", 3)]),
        "numpy": np.arange(6, dtype=np.int32).reshape(2, 3),
    }


def _assert_same(expected: Any, actual: Any, where: str = "root") -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), where
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, where
        a, e = actual.detach().contiguous(), expected.detach().contiguous()
        if e.dtype == torch.bool:
            assert torch.equal(a, e), where
        else:  # bit patterns, so NaN and -0.0 count too
            bits = {2: torch.int16, 4: torch.int32, 8: torch.int64, 1: torch.uint8}[
                e.element_size()
            ]
            assert torch.equal(a.view(bits), e.view(bits)), where
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray) and actual.dtype == expected.dtype, where
        assert np.array_equal(actual, expected), where
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), where
        assert list(actual) == list(expected), where
        for key in expected:
            _assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected), where
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _assert_same(e, a, f"{where}[{i}]")
    else:
        assert type(actual) is type(expected) and actual == expected, where


@pytest.mark.parametrize("seed", range(4))
def test_torchtally_loads_what_cerebras_saves(
    real: types.ModuleType, tmp_path: Path, seed: int
) -> None:
    state = _state(seed)
    path = tmp_path / "cerebras.mdl"
    real.save(state, path)
    loaded = cstorch.load(path)
    _assert_same(state, loaded)
    assert loaded["lm_head"] is loaded["embedding"]  # ties survive


@pytest.mark.parametrize("seed", range(4))
def test_cerebras_loads_what_torchtally_saves(
    real: types.ModuleType, tmp_path: Path, seed: int
) -> None:
    state = _state(seed)
    path = tmp_path / "torchtally.mdl"
    cstorch.save(state, path, format="cstorch")
    loaded = real.load(path)
    _assert_same(state, loaded)
    # And our own reader agrees with the oracle on our file.
    _assert_same(state, cstorch.load(path))


def test_round_trip_through_both(real: types.ModuleType, tmp_path: Path) -> None:
    state = _state(9)
    cstorch.save(state, tmp_path / "a.mdl", format="cstorch")
    real.save(real.load(tmp_path / "a.mdl"), tmp_path / "b.mdl")
    _assert_same(state, cstorch.load(tmp_path / "b.mdl"))


def test_model_with_cerebras_checkpoint_loads_strict(
    real: types.ModuleType, tmp_path: Path
) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    real.save({"model": model.state_dict()}, tmp_path / "m.mdl")
    other = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    other.load_state_dict(cstorch.load(tmp_path / "m.mdl")["model"], strict=True)
    x = torch.randn(4, 3)
    assert torch.equal(model(x), other(x))


class _Payload:
    """A dill-pickled object: Cerebras' fallback serializer for anything it does not know."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Payload) and other.value == self.value


def test_pickled_entries_need_explicit_opt_in(real: types.ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "pickled.mdl"
    real.save({"w": torch.ones(2), "obj": _Payload(3)}, path)
    with pytest.raises(CheckpointError, match="unsafe_unpickle=True"):
        cstorch.load(path)
    loaded = cstorch.load(path, unsafe_unpickle=True)
    assert loaded["obj"] == _Payload(3)
    assert torch.equal(loaded["w"], torch.ones(2))
    with pytest.raises(TypeError, match="unsafe_unpickle"):
        cstorch.load(path, unsafe_unpickle="yes")  # type: ignore[arg-type]


def test_legacy_layout_is_refused(real: types.ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "legacy.mdl"
    real.save({"w": torch.ones(2)}, path)
    with h5py.File(path, "a") as f:
        f.attrs["__version__"] = 0.4
    for opt_in in (False, True):
        with pytest.raises(CheckpointError, match="legacy cstorch checkpoint"):
            cstorch.load(path, unsafe_unpickle=opt_in)


def test_incomplete_cerebras_file_is_refused(real: types.ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "partial.mdl"
    real.save({"w": torch.ones(2)}, path)
    with h5py.File(path, "a") as f:
        f.attrs["__SUCCESS__"] = False
    with pytest.raises(CheckpointError, match="incomplete"):
        cstorch.load(path)


def _hostile(real: types.ModuleType, tmp_path: Path, how: str) -> Path:
    path = tmp_path / f"{how}.mdl"
    real.save({"w": torch.arange(4.0)}, path)
    with h5py.File(path, "a") as f:
        if how == "external_link":
            other = tmp_path / "other.h5"
            with h5py.File(other, "w") as g:
                g["w"] = np.arange(4.0, dtype=np.float32)
            del f["w"]
            f["w"] = h5py.ExternalLink(str(other), "w")
        elif how == "unknown_filter":
            del f["w"]
            f.create_dataset("w", data=np.arange(4.0, dtype=np.float32), chunks=(2,), scaleoffset=0)
        elif how == "shape_mismatch":
            del f["w"]
            f.create_dataset("w", data=np.arange(5.0, dtype=np.float32))
        elif how == "wrong_dtype":
            del f["w"]
            f.create_dataset("w", data=np.arange(4, dtype=np.int64))
        elif how == "deferred":
            meta = json.loads(f.attrs["w.__metadata__"])
            meta["w.__metadata__"]["__TYPE__"] = "DeferredH5Tensor"
            f.attrs["w.__metadata__"] = json.dumps(meta)
        elif how == "unknown_serializer":
            meta = json.loads(f.attrs["w.__metadata__"])
            meta["w.__metadata__"]["__TYPE__"] = "os.system"
            f.attrs["w.__metadata__"] = json.dumps(meta)
        elif how == "bad_spec":
            f.attrs["__spec__"] = json.dumps([None, '[1, {"type": "os.system"}]'])
        elif how == "bad_link":
            meta = json.loads(f.attrs["w.__metadata__"])
            meta["w.__metadata__"] = {
                "key": "nowhere",
                "__LINKED__": True,
                "__TYPE__": "LinkedObject",
            }
            f.attrs["w.__metadata__"] = json.dumps(meta)
    return path


@pytest.mark.parametrize(
    "how",
    [
        "external_link",
        "unknown_filter",
        "shape_mismatch",
        "wrong_dtype",
        "deferred",
        "unknown_serializer",
        "bad_spec",
        "bad_link",
    ],
)
def test_hostile_cerebras_files_are_refused(
    real: types.ModuleType, tmp_path: Path, how: str
) -> None:
    with pytest.raises(CheckpointError):
        cstorch.load(_hostile(real, tmp_path, how))


def test_cstorch_format_refuses_what_it_cannot_store(tmp_path: Path) -> None:
    path = tmp_path / "x.mdl"
    with pytest.raises(TypeError, match="complex"):
        cstorch.save({"z": 1 + 2j}, path, format="cstorch")
    with pytest.raises(TypeError, match="int8"):
        cstorch.save({"t": torch.zeros(2, dtype=torch.int8)}, path, format="cstorch")
    with pytest.raises(ValueError, match="both flatten"):
        cstorch.save({"a.b": 1, "a": {"b": 2}}, path, format="cstorch")
    with pytest.raises(TypeError, match="must be a dict"):
        cstorch.save([torch.ones(1)], path, format="cstorch")
    with pytest.raises(ValueError, match="format"):
        cstorch.save({"a": 1}, path, format="pickle")  # type: ignore[arg-type]
    assert not path.exists()  # nothing half-written


def test_cstorch_format_map_location(real: types.ModuleType, tmp_path: Path) -> None:
    real.save({"w": torch.ones(2)}, tmp_path / "c.mdl")
    loaded = cstorch.load(tmp_path / "c.mdl", map_location="meta")
    assert loaded["w"].device.type == "meta"


def test_map_location_cache_means_none(real: types.ModuleType, tmp_path: Path) -> None:
    real.save({"w": torch.arange(3.0)}, tmp_path / "c.mdl")
    loaded = cstorch.load(tmp_path / "c.mdl", map_location="cache")
    assert torch.equal(loaded["w"], real.load(tmp_path / "c.mdl")["w"])


_key = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=6).filter(
    lambda k: not k.startswith("__")
)


@st.composite
def _tensors(draw: st.DrawFn) -> torch.Tensor:
    dtype = draw(st.sampled_from(_DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    return _random_tensor(torch.Generator().manual_seed(draw(st.integers(0, 2**16))), dtype, shape)


_leaves = st.one_of(
    _tensors(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, width=64),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
)
_trees = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(_key, inner, max_size=3),
    ),
    max_leaves=12,
)


@pytest.mark.slow  # 40 random trees, each written and read four times through HDF5
@settings(max_examples=40, deadline=None)
@given(tree=st.dictionaries(_key, _trees, min_size=1, max_size=4))
def test_random_trees_cross_both_ways(
    real: types.ModuleType, tmp_path_factory: pytest.TempPathFactory, tree: dict[str, Any]
) -> None:
    base = tmp_path_factory.mktemp("trees")
    real.save(tree, base / "theirs.mdl")
    _assert_same(tree, cstorch.load(base / "theirs.mdl"))
    cstorch.save(tree, base / "ours.mdl", format="cstorch")
    _assert_same(tree, real.load(base / "ours.mdl"))


def test_cstorch_format_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torchtally.runtime._checkpoint.checkpoint as ckpt_module

    path = tmp_path / "ckpt.mdl"
    cstorch.save({"w": torch.zeros(3)}, path, format="cstorch")

    def crash(stage: str, temp: str) -> None:
        if stage == "written":
            raise KeyboardInterrupt  # killed after the new file is complete, before the rename

    monkeypatch.setattr(ckpt_module, "_pause_hook", crash)
    with pytest.raises(KeyboardInterrupt):
        cstorch.save({"w": torch.ones(3)}, path, format="cstorch")
    assert torch.equal(cstorch.load(path)["w"], torch.zeros(3))  # the old checkpoint survives
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.mdl"]  # no temporary file left behind
