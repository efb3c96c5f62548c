"""torchtally.runtime checkpoints: round trips, ties, atomic kill-and-resume, hostile files,
retention.

Oracles: round trips compare bit patterns and exact types against the saved objects; the file
layout is checked by reading the HDF5 file with h5py directly and by loading a file built by hand
from the documented layout; hostile files are built by hand with h5py, json and pickle.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
import types
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchtally.runtime._checkpoint.checkpoint as ckpt_module
import torchtally.runtime._checkpoint.retention as retention
from torchtally.runtime._checkpoint.checkpoint import CheckpointError, load, save
from torchtally.runtime._checkpoint.retention import RECORD_NAME

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _ckpt_train as trainer  # noqa: E402

# ----------------------------------------------------------------------------- the oracle


def _float_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _tensor_bytes(t: torch.Tensor) -> bytes:
    flat = t.detach().resolve_conj().resolve_neg().cpu().contiguous().reshape(-1)
    return bytes(flat.view(torch.uint8).numpy().tobytes())


def assert_identical(expected: Any, actual: Any, where: str = "root") -> None:
    """Same types all the way down, and the same bits for every number and tensor element."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype, where
        assert actual.shape == expected.shape, where
        assert actual.stride() == expected.stride(), where
        assert actual.storage_offset() == expected.storage_offset(), where
        assert actual.device == expected.device, where
        assert actual.requires_grad == expected.requires_grad, where
        assert actual.is_conj() == expected.is_conj(), where
        assert _tensor_bytes(actual) == _tensor_bytes(expected), where
    elif isinstance(expected, np.ndarray | np.generic):
        assert actual.dtype.str == expected.dtype.str, where
        assert np.shape(actual) == np.shape(expected), where
        assert actual.tobytes() == expected.tobytes(), where
    elif isinstance(expected, float):
        assert _float_bits(actual) == _float_bits(expected), where
    elif isinstance(expected, complex):
        assert _float_bits(actual.real) == _float_bits(expected.real), where
        assert _float_bits(actual.imag) == _float_bits(expected.imag), where
    elif isinstance(expected, dict):
        assert [(type(k), k) for k in actual] == [(type(k), k) for k in expected], where
        for key in expected:
            assert_identical(expected[key], actual[key], f"{where}[{key!r}]")
        if hasattr(expected, "_metadata"):
            assert_identical(expected._metadata, actual._metadata, f"{where}._metadata")
    elif isinstance(expected, list | tuple):
        assert len(actual) == len(expected), where
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_identical(e, a, f"{where}[{i}]")
    else:
        assert actual == expected, where


def _roundtrip(tmp_path: Path, obj: Any, **load_kwargs: Any) -> Any:
    path = tmp_path / "ckpt.h5"
    save(obj, path, max_checkpoints=None)
    return load(path, **load_kwargs)


# ----------------------------------------------------------------------------- round trips


def _random_tensor(dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Random (3, 4) tensor of `dtype`; bit-level dtypes get random bits (NaNs and all)."""
    if dtype == torch.bool:
        return torch.rand(3, 4, generator=gen) > 0.5
    if dtype.is_floating_point and dtype.itemsize >= 2 and dtype != torch.bfloat16:
        return torch.randn(3, 4, generator=gen, dtype=torch.float64).to(dtype)
    if dtype.is_complex and dtype != torch.complex32:
        return torch.randn(3, 4, generator=gen, dtype=torch.complex128).to(dtype)
    bits = torch.randint(0, 256, (3, 4 * dtype.itemsize), generator=gen, dtype=torch.uint8)
    return bits.view(dtype)


_ALL_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex32,
    torch.complex64,
    torch.complex128,
    *[
        getattr(torch, name)
        for name in (
            "float8_e4m3fn",
            "float8_e4m3fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
        )
        if hasattr(torch, name)
    ],
]


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("dtype", _ALL_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_every_dtype_roundtrips_bit_exact(tmp_path: Path, dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(7)
    value = {"t": _random_tensor(dtype, gen), "zero_d": _random_tensor(dtype, gen)[1, 2]}
    value["empty"] = value["t"][:0]
    assert_identical(value, _roundtrip(tmp_path, value))


def test_bfloat16_every_bit_pattern_exact_and_stored_as_uint16(tmp_path: Path) -> None:
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)  # all 65536 patterns
    value = bits.view(torch.bfloat16)
    loaded = _roundtrip(tmp_path, {"w": value})["w"]
    assert loaded.dtype == torch.bfloat16
    assert torch.equal(loaded.view(torch.int16), bits)  # NaN payloads, -0, subnormals intact
    with h5py.File(tmp_path / "ckpt.h5", "r") as f:
        dataset = f["storages/0"]
        assert dataset.dtype == np.uint16
        assert dataset.attrs["dtype"] == b"bfloat16"
        assert np.array_equal(dataset[()], bits.numpy().view(np.uint16))


def _layouts() -> dict[str, Any]:
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    return {
        "transposed": base.t(),
        "strided_slice": base[1:, ::2],
        "offset_row": base[2],
        "expanded": torch.arange(3.0).expand(4, 3),
        "channels_last": torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
        "empty_2d": torch.empty(2, 0, 3),
        "scalar": torch.tensor(2.5),
        "conj_view": torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj(),
        "requires_grad": torch.ones(2, requires_grad=True),
        "parameter": torch.nn.Parameter(torch.randn(3)),
        "frozen_parameter": torch.nn.Parameter(torch.randn(3), requires_grad=False),
        "int_parameter": torch.nn.Parameter(torch.arange(3), requires_grad=False),
    }


@pytest.mark.parametrize("name", list(_layouts()))
def test_tensor_layouts_and_flags_roundtrip(tmp_path: Path, name: str) -> None:
    value = _layouts()[name]
    assert_identical({name: value}, _roundtrip(tmp_path, {name: value}))


_SCALARS: dict[str, Any] = {
    "none": None,
    "true": True,
    "false": False,
    "zero": 0,
    "int64_max": 2**63 - 1,
    "int64_min": -(2**63),
    "big_int": 2**200 + 1,
    "big_negative": -(3**300),
    "float": 1.5,
    "negative_zero": -0.0,
    "nan": math.nan,
    "inf": -math.inf,
    "subnormal": 5e-324,
    "complex": complex(1.25, -2.5),
    "empty_str": "",
    "unicode": "héllo ☃ 𝄞",
    "lone_surrogate": "\udc80",
    "bytes": b"\x00\xff abc",
    "empty_bytes": b"",
    "dtype": torch.bfloat16,
    "device": torch.device("cuda", 1),
    "size": torch.Size([2, 0, 3]),
    "np_float32": np.float32(1.5),
    "np_int64": np.int64(-3),
    "np_bool": np.bool_(True),
    "np_complex": np.complex128(1 - 1j),
    "np_array": np.arange(12, dtype=np.int32).reshape(3, 4),
    "np_big_endian": np.arange(5, dtype=">f4"),
    "np_bool_array": np.array([True, False, True]),
    "np_zero_d": np.array(3.25),
    "np_empty": np.zeros((0, 2), dtype=np.uint16),
    "np_fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
}


@pytest.mark.parametrize("name", list(_SCALARS))
def test_python_and_numpy_values_roundtrip(tmp_path: Path, name: str) -> None:
    value = {"v": _SCALARS[name], "in_list": [_SCALARS[name]], "in_tuple": (_SCALARS[name],)}
    assert_identical(value, _roundtrip(tmp_path, value))


def test_containers_and_key_types_roundtrip(tmp_path: Path) -> None:
    metadata_dict: OrderedDict[str, Any] = OrderedDict(w=torch.ones(2))
    versions = {"": {"version": 1}, "layer": {"version": 2}}
    metadata_dict._metadata = versions  # type: ignore[attr-defined]
    value = {
        "empty_dict": {},
        "empty_list": [],
        "empty_tuple": (),
        "int_keys": {0: "a", 1: "b", -5: "c"},
        "mixed_keys": {None: 1, True: 2, 1.5: 3, "s": 4, ("a", 1, (None,)): 5},
        "nested": [({"x": [1, (2, [3.0])]},), []],
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
        "with_metadata": metadata_dict,
    }
    assert_identical(value, _roundtrip(tmp_path, value))


def _trained_optimizer(kind: str) -> tuple[torch.nn.Module, torch.optim.Optimizer, Any]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    params = [
        {"params": model[0].parameters(), "lr": 0.1},
        {"params": model[2].parameters(), "weight_decay": 0.01},
    ]
    if kind == "sgd":
        opt: torch.optim.Optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    elif kind == "adam":
        opt = torch.optim.Adam(params, lr=1e-3, amsgrad=True)
    else:
        opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.8, 0.95))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.2, 0.1], total_steps=10)
    for _ in range(3):
        model(torch.randn(5, 4)).square().sum().backward()
        opt.step()
        sched.step()
        opt.zero_grad()
    return model, opt, sched


@pytest.mark.parametrize("kind", ["sgd", "adam", "adamw"])
def test_optimizer_and_scheduler_state_dicts_roundtrip_and_reload(tmp_path: Path, kind: str):
    model, opt, sched = _trained_optimizer(kind)
    value = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "sched": sched.state_dict(),
    }
    loaded = _roundtrip(tmp_path, value)
    assert_identical(value, loaded)  # int keys of optimizer state, param_groups, betas tuples
    assert all(type(k) is int for k in loaded["optimizer"]["state"])
    model2, opt2, sched2 = _trained_optimizer(kind)
    model2.load_state_dict(loaded["model"])
    opt2.load_state_dict(loaded["optimizer"])
    sched2.load_state_dict(loaded["sched"])
    assert_identical(opt.state_dict(), opt2.state_dict())


_leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
_keys = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)


@settings(max_examples=25, deadline=None)
@given(
    st.recursive(
        _leaves,
        lambda kids: (
            st.lists(kids, max_size=3)
            | st.tuples(kids, kids)
            | st.dictionaries(_keys, kids, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_random_nested_trees_roundtrip(tmp_path_factory: pytest.TempPathFactory, value: Any):
    assert_identical(value, _roundtrip(tmp_path_factory.mktemp("tree"), value))


# ----------------------------------------------------------------------------- tied tensors


def test_tied_views_share_one_storage_after_load(tmp_path: Path) -> None:
    weight = torch.randn(4, 6)
    value = {
        "emb": weight,
        "head": weight.detach(),  # what Module.state_dict() gives for tied parameters
        "transposed": weight.t(),
        "row": weight[1],
        "as_int": weight.view(torch.int32),  # a view with another dtype
        "other": torch.randn(3),
    }
    loaded = _roundtrip(tmp_path, value)
    assert_identical(value, loaded)
    with h5py.File(tmp_path / "ckpt.h5", "r") as f:
        assert len(f["storages"]) == 2  # the tied group once, `other` once
    pointers = {loaded[k].untyped_storage().data_ptr() for k in value if k != "other"}
    assert len(pointers) == 1
    loaded["emb"][1, 2] = 42.0  # writes through to every view
    assert loaded["head"][1, 2] == 42.0
    assert loaded["transposed"][2, 1] == 42.0
    assert loaded["row"][2] == 42.0
    assert loaded["as_int"][1, 2] == torch.tensor(42.0).view(torch.int32)
    assert loaded["other"].untyped_storage().data_ptr() not in pointers


def test_tied_module_weights_and_same_object_identity(tmp_path: Path) -> None:
    model = trainer.TinyLM()
    state = model.state_dict()
    loaded = _roundtrip(
        tmp_path, {"model": state, "p": model.emb.weight, "again": model.emb.weight}
    )
    assert loaded["model"]["emb.weight"].data_ptr() == loaded["model"]["head.weight"].data_ptr()
    assert loaded["again"] is loaded["p"]  # the same object saved twice is one object
    assert type(loaded["p"]) is torch.nn.Parameter and loaded["p"].requires_grad
    fresh = trainer.TinyLM()
    fresh.load_state_dict(loaded["model"])
    assert fresh.head.weight is fresh.emb.weight
    assert torch.equal(fresh.emb.weight, model.emb.weight)


# ----------------------------------------------------------------------------- format by hand


def _write_by_hand(path: Path, manifest: Any, storages: list[tuple[np.ndarray, str]], **kw):
    """Write a file straight from the documented layout, with no torchtally code."""
    text = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
    with h5py.File(path, "w", libver="latest") as f:
        f.attrs["format"] = np.bytes_(b"torchtally.checkpoint")  # fixed-length ASCII strings
        f.attrs["version"] = np.int64(kw.get("version", 1))
        group = f.create_group("storages")
        for i, (array, label) in enumerate(storages):
            group.create_dataset(str(i), data=array).attrs["dtype"] = np.bytes_(label.encode())
        f.create_dataset("manifest", data=np.frombuffer(text, dtype=np.uint8))
        digest = hashlib.sha256(text).digest()
        f.attrs["manifest_sha256"] = np.frombuffer(digest, dtype=np.uint8)
        for name, attr in kw.get("extra_attrs", {}).items():
            f.attrs[name] = attr
        if kw.get("complete", True):
            f.attrs["complete"] = np.int64(1)


def _storage(array: np.ndarray, dtype: str, device: str = "cpu") -> dict[str, Any]:
    digest = hashlib.sha256(array.tobytes()).hexdigest()
    return {
        "kind": "torch",
        "dtype": dtype,
        "device": device,
        "numel": array.size,
        "sha256": digest,
    }


def _tensor_node(s: int, dtype: str, offset: int, size: list[int], stride: list[int]) -> dict:
    return {
        "t": "tensor",
        "s": s,
        "dtype": dtype,
        "offset": offset,
        "size": size,
        "stride": stride,
        "conj": False,
        "param": False,
        "grad": False,
    }


def test_loads_a_file_written_by_hand_from_the_documented_layout(tmp_path: Path) -> None:
    data = np.arange(6, dtype=np.float32)
    bf16_bits = np.array([0x3F80, 0xC000], dtype=np.uint16)  # 1.0, -2.0
    manifest = {
        "storages": [_storage(data, "float32"), _storage(bf16_bits, "bfloat16")],
        "root": {
            "t": "dict",
            "ordered": False,
            "items": [
                [{"t": "str", "v": "w"}, _tensor_node(0, "float32", 1, [2, 2], [1, 2])],
                [{"t": "int", "v": 7}, _tensor_node(1, "bfloat16", 0, [2], [1])],
                [{"t": "str", "v": "lr"}, {"t": "float", "bits": _float_bits(0.1)}],
            ],
        },
    }
    path = tmp_path / "hand.h5"
    _write_by_hand(path, manifest, [(data, "float32"), (bf16_bits, "bfloat16")])
    loaded = load(path)
    assert list(loaded) == ["w", 7, "lr"]
    assert torch.equal(loaded["w"], torch.tensor([[1.0, 3.0], [2.0, 4.0]]))
    assert torch.equal(loaded[7], torch.tensor([1.0, -2.0], dtype=torch.bfloat16))
    assert loaded["lr"] == 0.1


# ----------------------------------------------------------------------------- map_location


def _rewrite_manifest(path: Path, edit: Any) -> None:
    """Edit a saved file's manifest and re-sign it, as an attacker or a hand tool could."""
    with h5py.File(path, "r+") as f:
        manifest = json.loads(bytes(f["manifest"][()]))
        text = json.dumps(edit(manifest) or manifest).encode()
        del f["manifest"]
        f.create_dataset("manifest", data=np.frombuffer(text, dtype=np.uint8))
        f.attrs["manifest_sha256"] = np.frombuffer(hashlib.sha256(text).digest(), np.uint8)


def _set_device(manifest: dict[str, Any], device: str) -> None:
    for record in manifest["storages"]:
        record["device"] = device


@pytest.mark.parametrize(
    "map_location", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"}, {"cuda:0": torch.device("cpu")}]
)
def test_map_location_moves_tensors_saved_on_another_device(tmp_path: Path, map_location: Any):
    path = tmp_path / "ckpt.h5"
    value = {"w": torch.randn(3), "b": torch.arange(2)}
    save(value, path)
    _rewrite_manifest(path, lambda m: _set_device(m, "cuda:0"))  # as if saved on a GPU
    loaded = load(path, map_location=map_location)
    assert_identical(value, loaded)


def test_tensors_from_an_unavailable_device_need_map_location(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.h5"
    save({"w": torch.randn(3)}, path)
    _rewrite_manifest(path, lambda m: _set_device(m, "cuda:99"))  # no such GPU here
    with pytest.raises(CheckpointError, match="map_location='cpu'"):
        load(path)
    with pytest.raises(CheckpointError, match="map_location='cpu'"):
        load(path, map_location={"cuda:1": "cpu"})  # the mapping does not cover cuda:99
    assert load(path, map_location={"cuda:99": "cpu"})["w"].device == torch.device("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_roundtrip_tied_and_map_to_cpu(tmp_path: Path) -> None:
    weight = torch.randn(4, 6, device="cuda")
    value = {"w": weight, "t": weight.t(), "bf": torch.randn(3, device="cuda").bfloat16()}
    loaded = _roundtrip(tmp_path, value)
    assert_identical(value, loaded)
    assert loaded["w"].data_ptr() == loaded["t"].data_ptr()
    on_cpu = load(tmp_path / "ckpt.h5", map_location="cpu")
    assert_identical({k: v.cpu() for k, v in value.items()}, {k: on_cpu[k] for k in value})
    assert on_cpu["w"].data_ptr() == on_cpu["t"].data_ptr()  # still tied after moving
    back = load(tmp_path / "ckpt.h5", map_location={"cuda:0": "cuda"})
    assert back["w"].device.type == "cuda"


def test_map_location_argument_errors(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.h5"
    save({"w": torch.ones(1)}, path)
    with pytest.raises(ValueError, match="map_location"):
        load(path, map_location="not-a-device")
    with pytest.raises(TypeError, match="map_location"):
        load(path, map_location=3)
    with pytest.raises(TypeError, match="map_location"):
        load(path, map_location={0: "cpu"})
    assert torch.equal(load(path, map_location=None)["w"], torch.ones(1))


# ----------------------------------------------------------------------------- kill and resume


def _same_state(expected: dict[str, Any], actual: dict[str, Any]) -> None:
    """Equal state dicts: tensors with torch.equal, everything else with ==, same types."""
    assert type(actual) is type(expected)
    assert list(actual) == list(expected)
    for key, value in expected.items():
        other = actual[key]
        if isinstance(value, dict):
            _same_state(value, other)
        elif isinstance(value, torch.Tensor):
            assert torch.equal(other, value), key
        else:
            assert other == value, key


@pytest.mark.parametrize("stage", ["partial", "written"])
def test_kill_during_save_keeps_previous_checkpoint_and_resume_is_exact(
    tmp_path: Path, stage: str
) -> None:
    steps, every, pause_step = 12, 4, 8
    run_dir, ready = tmp_path / "run", tmp_path / "ready"
    run_dir.mkdir()
    src = Path(ckpt_module.__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    command = [
        sys.executable,
        str(HERE / "_ckpt_train.py"),
        "--dir",
        str(run_dir),
        "--steps",
        str(steps),
        "--every",
        str(every),
        "--pause-step",
        str(pause_step),
        "--stage",
        stage,
        "--ready",
        str(ready),
    ]
    log = tmp_path / "trainer.log"
    with log.open("wb") as sink:  # a file, not a pipe: a chatty child can never block
        child = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while not ready.exists():
                if child.poll() is not None:
                    pytest.fail(f"trainer exited early:\n{log.read_text()}")
                assert time.monotonic() < deadline, "trainer never reached the save"
                time.sleep(0.02)
            os.kill(child.pid, signal.SIGKILL)  # mid-save, deterministically
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert child.returncode == -signal.SIGKILL

    temp = Path(ready.read_text())
    assert temp.parent == run_dir and temp.exists()  # the killed write was really under way
    visible = sorted(p.name for p in run_dir.iterdir() if not p.name.startswith("."))
    assert visible == ["step_4.h5"]  # nothing (half-written or not) at step_8.h5
    if stage == "partial":
        with pytest.raises(CheckpointError):
            load(temp)  # a half-written file is never mistaken for a checkpoint

    # The uninterrupted reference run, with the state at step 4 captured in memory.
    data = trainer.make_data(steps)
    reference = trainer.make_run()
    snapshots: dict[int, dict[str, Any]] = {}

    def capture(done: int, run: trainer.Run) -> None:
        if done == every:
            snapshots[done] = copy.deepcopy(trainer.state_of(run, done))

    trainer.train(reference, data, 0, steps, on_step=capture)

    previous = load(run_dir / "step_4.h5")
    _same_state(snapshots[every], previous)  # intact: exactly the state at step 4
    resumed = trainer.resume(run_dir / "step_4.h5", data, steps)
    for (name, want), (_, got) in zip(
        reference[0].named_parameters(), resumed[0].named_parameters()
    ):
        assert torch.equal(got, want), name
    _same_state(reference[1].state_dict(), resumed[1].state_dict())


# ----------------------------------------------------------------------------- damaged files


@pytest.fixture
def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "good.h5"
    gen = torch.Generator().manual_seed(3)
    save(
        {
            "w": torch.randn(64, 32, generator=gen),
            "b": torch.randn(32, generator=gen).to(torch.bfloat16),
            "meta": {"step": 10, "name": "run"},
        },
        path,
    )
    return path


def test_truncated_files_fail_clearly(tmp_path: Path, good_file: Path) -> None:
    data = good_file.read_bytes()
    for keep in (0, 7, 8, 100, 512, len(data) // 2, len(data) - 100, len(data) - 1):
        cut = tmp_path / f"cut_{keep}.h5"
        cut.write_bytes(data[:keep])
        with pytest.raises(CheckpointError, match=str(cut.name)):
            load(cut)


def test_truncation_at_150_offsets_always_fails_clearly(tmp_path: Path, good_file: Path):
    data = good_file.read_bytes()
    offsets = sorted({*range(0, len(data), max(1, len(data) // 150)), len(data) - 1})
    assert len(offsets) >= 150
    cut = tmp_path / "cut.h5"
    for keep in offsets:
        cut.write_bytes(data[:keep])
        with pytest.raises(CheckpointError, match=r"cut\.h5"):
            load(cut)


def _flip(source: Path, target: Path, offset: int) -> None:
    data = bytearray(source.read_bytes())
    data[offset] ^= 0x5A
    target.write_bytes(bytes(data))


def test_flipped_bytes_in_data_or_manifest_fail_clearly(tmp_path: Path, good_file: Path):
    with h5py.File(good_file, "r") as f:
        tensor_at = f["storages/0"].id.get_offset() + 1000
        manifest_at = f["manifest"].id.get_offset() + 20
    for name, offset in (("tensor", tensor_at), ("manifest", manifest_at)):
        bad = tmp_path / f"{name}.h5"
        _flip(good_file, bad, offset)
        with pytest.raises(CheckpointError, match="SHA-256"):
            load(bad)


def test_flipped_bytes_anywhere_never_give_a_wrong_result(tmp_path: Path, good_file: Path):
    original = load(good_file)
    size = good_file.stat().st_size
    errors = 0
    # Dense over the metadata at the start (a flip in HDF5's unchecksummed global heap once
    # hung HDF5, hence fixed-length string attributes), sparse over the data after it.
    for offset in [*range(0, 2048, 7), *range(2048, size, 101)]:
        bad = tmp_path / "flipped.h5"
        _flip(good_file, bad, offset)
        try:
            loaded = load(bad)
        except CheckpointError:
            errors += 1
            continue
        assert_identical(original, loaded, f"byte {offset}")  # unused bytes may be harmless
    assert errors > 200


@pytest.mark.parametrize(
    "content", [b"", b"just some notes\n", b"\x89HDF\r\n", bytes(range(256)) * 4]
)
def test_files_that_are_not_checkpoints_fail_clearly(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=r"notes\.txt"):
        load(path)


def test_missing_file_and_bad_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="path"):
        load(tmp_path / "nope.h5")
    with pytest.raises(FileNotFoundError, match="path"):
        load(tmp_path)
    with pytest.raises(TypeError, match="path"):
        load(3)  # type: ignore[arg-type]


def test_missing_completion_marker_is_incomplete(tmp_path: Path, good_file: Path) -> None:
    with h5py.File(good_file, "r+") as f:
        del f.attrs["complete"]
    with pytest.raises(CheckpointError, match="incomplete"):
        load(good_file)
    with h5py.File(good_file, "r+") as f:
        f.attrs["complete"] = np.int64(0)
    with pytest.raises(CheckpointError, match="incomplete"):
        load(good_file)


def test_newer_or_foreign_format_fails_clearly(tmp_path: Path, good_file: Path) -> None:
    with h5py.File(good_file, "r+") as f:
        f.attrs["version"] = np.int64(2)
    with pytest.raises(CheckpointError, match="newer"):
        load(good_file)
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["model.weight"] = np.ones(3)
    with pytest.raises(CheckpointError, match="not a torchtally checkpoint"):
        load(foreign)


# ----------------------------------------------------------------------------- hostile files


def _valid_parts() -> tuple[dict[str, Any], list[tuple[np.ndarray, str]]]:
    data = np.arange(4, dtype=np.float32)
    manifest = {
        "storages": [_storage(data, "float32")],
        "root": _tensor_node(0, "float32", 0, [4], [1]),
    }
    return manifest, [(data, "float32")]


def test_the_hand_made_baseline_loads(tmp_path: Path) -> None:
    manifest, storages = _valid_parts()
    _write_by_hand(tmp_path / "ok.h5", manifest, storages)
    assert torch.equal(load(tmp_path / "ok.h5"), torch.arange(4.0))


_MARKER = "torchtally-was-pwned"


def _deep(levels: int) -> bytes:
    """A manifest (for `_valid_parts()`'s storages) whose root is `levels` nested lists."""
    storages = json.dumps(_valid_parts()[0]["storages"]).encode()
    nest = b'{"t":"list","items":[' * levels + b'{"t":"none"}' + b"]}" * levels
    return b'{"storages":' + storages + b',"root":' + nest + b"}"


def _hostile_manifests(marker: str) -> dict[str, Any]:
    manifest, _ = _valid_parts()
    node = manifest["root"]
    call = {"t": "object", "module": "os", "name": "system", "args": [f"touch {marker}"]}
    return {
        "names_a_callable": {**manifest, "root": call},
        "reduce_field": {**manifest, "root": {**node, "__reduce__": ["os.system", marker]}},
        "dtype_is_a_function": {**manifest, "root": {**node, "dtype": "load"}},
        "dtype_is_dunder": {**manifest, "root": {**node, "dtype": "__class__"}},
        "view_out_of_bounds": {**manifest, "root": {**node, "offset": 2}},
        "huge_stride": {**manifest, "root": {**node, "size": [2, 4], "stride": [2**61, 1]}},
        "storage_index_missing": {**manifest, "root": {**node, "s": 5}},
        "offset_is_a_bool": {**manifest, "root": {**node, "offset": True}},
        "unknown_storage_kind": {**manifest, "storages": [{"kind": "pickle", "data": "gASV"}]},
        "forward_tensor_ref": {**manifest, "root": {"t": "same", "i": 0}},
        "duplicate_dict_key": {
            **manifest,
            "root": {
                "t": "dict",
                "ordered": False,
                "items": [
                    [{"t": "int", "v": 1}, {"t": "none"}],
                    [{"t": "int", "v": 1}, {"t": "none"}],
                ],
            },
        },
        "nested_past_limit": _deep(300),
        "nested_past_json_limit": _deep(100_000),
        "numpy_object_dtype": {**manifest, "root": {"t": "npscalar", "dtype": "|O", "hex": "00"}},
        "gigantic_shape": {**manifest, "root": {**node, "size": [2**40, 2**20], "stride": [0, 0]}},
        "gigantic_storage": {
            **manifest,
            "storages": [{**manifest["storages"][0], "numel": 2**50}],
        },
    }


# What each hostile manifest must be refused for (so no case passes for an unrelated reason).
_MANIFEST_REASONS = {
    "names_a_callable": "unknown node kind 'object'",
    "reduce_field": "has fields .*__reduce__",
    "dtype_is_a_function": "unsupported tensor dtype 'load'",
    "dtype_is_dunder": "unsupported tensor dtype '__class__'",
    "view_out_of_bounds": "runs past the end",
    "huge_stride": "runs past the end",
    "storage_index_missing": "storage #5 is not a tensor storage",
    "offset_is_a_bool": "field 'offset' must be an integer",
    "unknown_storage_kind": "kind 'torch' or 'numpy'",
    "forward_tensor_ref": "has not appeared yet",
    "duplicate_dict_key": "duplicate dict key 1",
    "nested_past_limit": "nested more than 200 levels",
    "nested_past_json_limit": "not valid JSON",
    "numpy_object_dtype": "unsupported numpy dtype '|O'",
    "gigantic_shape": r"spans 4611686018427387904 bytes over a 16-byte storage; refused",
    "gigantic_storage": r"must have shape \(1125899906842624,\), found \(4,\)",
}


def test_every_hostile_manifest_has_a_reason() -> None:
    assert set(_MANIFEST_REASONS) == set(_hostile_manifests("m"))


@pytest.mark.parametrize("name", list(_hostile_manifests("m")))
def test_hostile_manifests_fail_and_run_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / _MARKER
    _, storages = _valid_parts()
    path = tmp_path / "evil.h5"
    manifest = _hostile_manifests(str(marker))[name]
    _write_by_hand(path, manifest, storages)
    with pytest.raises(CheckpointError, match=r"evil\.h5.*" + _MANIFEST_REASONS[name]):
        load(path)
    assert not marker.exists()


def test_duplicate_json_fields_and_nan_constants_fail(tmp_path: Path) -> None:
    for i, text in enumerate(
        (
            b'{"storages":[],"storages":[],"root":{"t":"none"}}',
            b'{"storages":[],"root":{"t":"float","bits":NaN}}',
            b"\xff\xfe not json",
        )
    ):
        path = tmp_path / f"json_{i}.h5"
        _write_by_hand(path, text, [])
        with pytest.raises(CheckpointError, match="manifest"):
            load(path)


def test_attributes_naming_python_classes_are_refused(tmp_path: Path) -> None:
    manifest, storages = _valid_parts()
    path = tmp_path / "evil.h5"
    extra = {"python_class": "subprocess.Popen", "__reduce__": "os.system"}
    _write_by_hand(path, manifest, storages, extra_attrs=extra)
    with pytest.raises(CheckpointError, match="Unexpected root attributes"):
        load(path)


def _swap(f: h5py.File, make: Any) -> None:
    """Replace /storages/0 with what `make(group)` creates, keeping its dtype attribute."""
    del f["storages/0"]
    make(f["storages"])
    if isinstance(f["storages"].get("0", getlink=True), h5py.HardLink):
        f["storages/0"].attrs["dtype"] = np.bytes_(b"float32")


def _virtual(group: h5py.Group, other: Path) -> None:
    layout = h5py.VirtualLayout(shape=(4,), dtype="<f4")
    layout[:] = h5py.VirtualSource(str(other), "storages/0", shape=(4,))
    group.create_virtual_dataset("0", layout)


def _container_edits(secret: Path, other: Path) -> dict[str, Any]:
    """Ways to make the HDF5 container itself hostile while the manifest stays valid."""
    data = np.arange(4, dtype=np.float32)
    pairs = np.zeros(4, dtype=[("a", "<f2"), ("b", "<f2")])
    strings = np.array(["a", "b", "c", "d"], dtype=h5py.string_dtype())

    def dataset(**kwargs: Any) -> Any:
        return lambda f: _swap(f, lambda g: g.create_dataset("0", **kwargs))

    return {
        "soft_link": lambda f: _swap(f, lambda g: g.__setitem__("0", h5py.SoftLink("/manifest"))),
        "external_link": lambda f: _swap(
            f, lambda g: g.__setitem__("0", h5py.ExternalLink(str(other), "/storages/0"))
        ),
        "group_not_dataset": lambda f: _swap(f, lambda g: g.create_group("0")),
        "extra_member": lambda f: f.__setitem__("payload", np.ones(2)),
        "committed_datatype": lambda f: f.__setitem__("dtype", np.dtype("f4")),
        "reference_dtype": dataset(shape=(4,), dtype=h5py.ref_dtype),
        "compound_dtype": dataset(data=pairs),
        "vlen_strings": dataset(data=strings),
        "chunked_gzip": dataset(data=data, chunks=(2,), compression="gzip"),
        "external_raw_file": dataset(shape=(4,), dtype="<f4", external=[(str(secret), 0, 16)]),
        "virtual_dataset": lambda f: _swap(f, lambda g: _virtual(g, other)),
        "claims_unstored_bytes": dataset(shape=(4,), dtype="<f4"),
        "wrong_shape": dataset(data=data.reshape(2, 2)),
        "wrong_attr": lambda f: f["storages/0"].attrs.__setitem__("dtype", np.bytes_(b"float64")),
        "extra_dataset_attr": lambda f: f["storages/0"].attrs.__setitem__("class", "os.system"),
    }


_CONTAINER_REASONS = {
    "soft_link": "is a SoftLink; only hard links",
    "external_link": "is a ExternalLink; only hard links",
    "group_not_dataset": "must be an HDF5 Dataset, found Group",
    "extra_member": r"extra members \['payload'\]",
    "committed_datatype": r"extra members \['dtype'\]",
    "reference_dtype": "must hold float32 data, found object",
    "compound_dtype": "must hold float32 data, found",
    "vlen_strings": "must hold float32 data, found object",
    "chunked_gzip": "chunked, filtered, external or virtual",
    "external_raw_file": "chunked, filtered, external or virtual",
    "virtual_dataset": "chunked, filtered, external or virtual",
    "claims_unstored_bytes": "claims 16 bytes but only 0 are stored",
    "wrong_shape": r"must have shape \(4,\)",
    "wrong_attr": "must carry exactly the attribute dtype='float32'",
    "extra_dataset_attr": "must carry exactly the attribute dtype='float32'",
}


def test_every_container_edit_has_a_reason() -> None:
    assert set(_CONTAINER_REASONS) == set(_container_edits(Path("s"), Path("o")))


@pytest.mark.parametrize("name", list(_container_edits(Path("s"), Path("o"))))
def test_hostile_hdf5_containers_fail_clearly(tmp_path: Path, name: str) -> None:
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(4, dtype=np.float32).tobytes())  # would pass the digest
    other = tmp_path / "other.h5"
    manifest, storages = _valid_parts()
    _write_by_hand(other, manifest, storages)
    path = tmp_path / "evil.h5"
    _write_by_hand(path, manifest, storages)
    with h5py.File(path, "r+") as f:
        _container_edits(secret, other)[name](f)
    with pytest.raises(CheckpointError, match=r"evil\.h5.*" + _CONTAINER_REASONS[name]):
        load(path)


class _TouchOnUnpickle:
    """A pickle payload: unpickling it calls Path.touch(marker)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("flavour", ["torch_zip", "torch_legacy", "raw_pickle"])
def test_malicious_pickles_fail_and_run_nothing(tmp_path: Path, flavour: str) -> None:
    marker = tmp_path / "pwned"
    payload = {"w": torch.ones(2), "evil": _TouchOnUnpickle(marker)}
    path = tmp_path / "evil.pt"
    if flavour == "raw_pickle":
        path.write_bytes(pickle.dumps(payload, protocol=2))
    else:
        torch.save(payload, path, _use_new_zipfile_serialization=flavour == "torch_zip")
    with pytest.raises(CheckpointError, match="weights_only"):
        load(path)
    assert not marker.exists()
    # Control: an unrestricted unpickle of the same file does run the payload.
    if flavour == "raw_pickle":
        pickle.loads(path.read_bytes())
    else:
        torch.load(path, weights_only=False)
    assert marker.exists()


def test_plain_torch_save_files_load_with_map_location(tmp_path: Path) -> None:
    path = tmp_path / "plain.pt"
    value = {"model": {"w": torch.randn(3)}, "step": 5}
    torch.save(value, path)
    loaded = load(path, map_location="cpu")
    assert torch.equal(loaded["model"]["w"], value["model"]["w"]) and loaded["step"] == 5


# ----------------------------------------------------------------------------- saving errors


class _Opaque:
    pass


def _quantized() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized dtypes are deprecated, still creatable
        return torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: {"a": [1, _Opaque()]}, TypeError, r"state_dict\['a'\]\[1\].*_Opaque"),
        (lambda: {"s": {1, 2}}, TypeError, "set"),
        (lambda: {"f": lambda: 0}, TypeError, "function"),
        (lambda: {"q": _quantized()}, TypeError, "qint8"),
        (lambda: {"u4": torch.zeros(4, dtype=torch.uint8).view(torch.uint4)}, TypeError, "uint4"),
        (lambda: {"sp": torch.eye(2).to_sparse()}, TypeError, "to_dense"),
        (lambda: {"m": torch.empty(2, device="meta")}, TypeError, "meta"),
        (lambda: {object(): 1}, TypeError, "key"),
        (lambda: {"o": np.array([object()])}, TypeError, "numpy array"),
        (lambda: {"u": np.array(["text"])}, TypeError, "numpy array"),
    ],
    ids=[
        "object",
        "set",
        "lambda",
        "quantized",
        "sub_byte",
        "sparse",
        "meta",
        "key",
        "np_object",
        "np_str",
    ],
)
def test_unsupported_values_are_refused_before_writing(
    tmp_path: Path, make: Any, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        save(make(), tmp_path / "x.h5")
    assert list(tmp_path.iterdir()) == []  # no file, no temporary left behind


def test_cycles_and_path_errors(tmp_path: Path) -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="cycle"):
        save({"loop": loop}, tmp_path / "x.h5")
    with pytest.raises(FileNotFoundError, match="existing directory"):
        save({}, tmp_path / "missing" / "x.h5")
    with pytest.raises(IsADirectoryError, match="path"):
        save({}, tmp_path)
    with pytest.raises(TypeError, match="path"):
        save({}, 3)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_failed_rename_leaves_old_checkpoint_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ckpt.h5"
    save({"v": 1}, path)

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(ckpt_module.os, "replace", refuse)
    with pytest.raises(OSError, match="disk on fire"):
        save({"v": 2}, path)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.h5"]
    assert load(path) == {"v": 1}
    save({"v": 3}, path)  # overwriting works
    assert load(path) == {"v": 3}


def test_missing_h5py_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"pip install torchtally\[checkpoint\]"):
        save({}, tmp_path / "x.h5")


# ----------------------------------------------------------------------------- retention


def _fake_backend(monkeypatch: pytest.MonkeyPatch, backend: Any) -> None:
    module = types.ModuleType("torchtally.runtime._backend")
    module.current_backend = lambda: backend  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torchtally.runtime._backend", module)


def _names(directory: Path) -> list[str]:
    """The directory's entries but the retention record (tested on its own below)."""
    return sorted(p.name for p in directory.iterdir() if p.name != RECORD_NAME)


def test_max_checkpoints_keeps_newest_of_our_own_files(tmp_path: Path) -> None:
    (tmp_path / "someone_elses.h5").write_bytes(b"not ours")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    save({"x": 0}, elsewhere / "step_0.h5")
    for step in range(1, 6):
        save({"x": step}, tmp_path / f"step_{step}.h5", max_checkpoints=2)
    assert _names(tmp_path) == ["elsewhere", "someone_elses.h5", "step_4.h5", "step_5.h5"]
    assert _names(elsewhere) == ["step_0.h5"]  # another directory is its own set
    assert load(tmp_path / "step_5.h5") == {"x": 5}


def test_resaving_a_path_makes_it_newest_and_foreign_rewrites_are_kept(tmp_path: Path):
    for name in ("a.h5", "b.h5", "c.h5"):
        save({}, tmp_path / name)
    save({}, tmp_path / "a.h5")  # a is now the newest
    (tmp_path / "b.h5").write_bytes(b"rewritten by someone else")  # no longer ours
    save({}, tmp_path / "d.h5", max_checkpoints=2)
    assert _names(tmp_path) == ["a.h5", "b.h5", "d.h5"]  # c was the oldest of ours


def test_max_checkpoints_from_backend_and_explicit_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_backend(monkeypatch, types.SimpleNamespace(max_checkpoints=1))
    save({}, tmp_path / "a.h5")
    save({}, tmp_path / "b.h5")
    assert _names(tmp_path) == ["b.h5"]
    save({}, tmp_path / "c.h5", max_checkpoints=None)  # explicit None: no limit this time
    assert _names(tmp_path) == ["b.h5", "c.h5"]
    _fake_backend(monkeypatch, None)  # no active backend: no limit
    save({}, tmp_path / "d.h5")
    assert _names(tmp_path) == ["b.h5", "c.h5", "d.h5"]
    _fake_backend(monkeypatch, types.SimpleNamespace(max_checkpoints=0))
    with pytest.raises(ValueError, match="max_checkpoints"):
        save({}, tmp_path / "e.h5")


def test_max_checkpoints_of_a_real_cpu_backend(tmp_path: Path) -> None:
    from torchtally.runtime import _backend

    before = _backend.current_backend()
    try:
        _backend.backend("CPU", max_checkpoints=2, artifact_dir=tmp_path / "artifacts")
        for step in range(4):
            save({"step": step}, tmp_path / f"step_{step}.h5")
    finally:
        _backend.set_current_backend(before)
    assert [p.name for p in sorted(tmp_path.glob("*.h5"))] == ["step_2.h5", "step_3.h5"]


def test_a_real_cpu_backend_without_max_checkpoints_keeps_every_file(tmp_path: Path) -> None:
    from torchtally.runtime import _backend

    before = _backend.current_backend()
    try:
        made = _backend.backend("CPU", artifact_dir=tmp_path / "artifacts")
        assert made.max_checkpoints is None
        for step in range(3):
            save({"step": step}, tmp_path / f"step_{step}.h5")
    finally:
        _backend.set_current_backend(before)
    assert [p.name for p in sorted(tmp_path.glob("*.h5"))] == [f"step_{s}.h5" for s in range(3)]


_RESTARTED_RUN = """
import sys
from torchtally.runtime import save
directory, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for step in range(first, last):
    save({"step": step}, f"{directory}/step_{step}.h5", max_checkpoints=2)
"""


def _run_in_a_new_process(directory: Path, first: int, last: int) -> None:
    src = Path(ckpt_module.__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-c", _RESTARTED_RUN, str(directory), str(first), str(last)]
    subprocess.run(command, env=env, check=True, timeout=120)


def test_max_checkpoints_prunes_the_checkpoints_of_a_run_before_a_restart(tmp_path: Path):
    _run_in_a_new_process(tmp_path, 0, 3)  # the first run, then it ends (or is killed)
    assert _names(tmp_path) == ["step_1.h5", "step_2.h5"]
    (tmp_path / "notes.h5").write_bytes(b"not a checkpoint of this run")
    _run_in_a_new_process(tmp_path, 3, 5)  # the restarted run knows the earlier files
    assert _names(tmp_path) == ["notes.h5", "step_3.h5", "step_4.h5"]
    assert load(tmp_path / "step_4.h5") == {"step": 4}


def test_a_damaged_or_hostile_retention_record_deletes_nothing_else(tmp_path: Path) -> None:
    victim = tmp_path / "victim.h5"
    save({"keep": 1}, victim)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.h5"
    outside.write_bytes(b"x")
    stat = victim.stat()
    same_id = [stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size]
    for record in (
        "{not json",
        json.dumps({"victim.h5": same_id}),
        json.dumps([["../" + outside.name, same_id], [str(victim), same_id]]),
        json.dumps([["victim.h5", [stat.st_dev, stat.st_ino, 0, stat.st_size]]]),
    ):
        retention._saved.pop(str(tmp_path.resolve()), None)  # as if in a new process
        (tmp_path / RECORD_NAME).write_text(record)
        for step in range(3):
            save({"step": step}, tmp_path / f"step_{step}.h5", max_checkpoints=1)
        assert victim.exists() and outside.exists(), record
        assert _names(tmp_path) == ["step_2.h5", "victim.h5"]
    outside.unlink()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_max_checkpoints_argument_errors(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(ValueError, match=rf"max_checkpoints={bad!r}"):
        save({}, tmp_path / "x.h5", max_checkpoints=bad)
    assert list(tmp_path.iterdir()) == []
