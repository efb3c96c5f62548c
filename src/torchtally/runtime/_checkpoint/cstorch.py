"""The cstorch 2.x H5 checkpoint layout (format version 0.5), written and read without pickle.

What `cerebras.pytorch.save` 2.10 writes, as observed from its writer: one HDF5 file whose root
attributes hold

- ``__spec__``: JSON ``[readable_tree, treespec]``, the second item being
  `torch.utils._pytree.treespec_dumps` of the flattened state dict;
- ``__version__`` = 0.5, ``__cstorch_version__``, and ``__SUCCESS__`` = True (written last);
- ``<key>.__metadata__`` for every leaf, where ``<key>`` is the leaf's path joined by ".": JSON
  ``{"__spec__": ..., "__objects__": [key], "<key>.__metadata__": {...}}``.

The inner metadata's ``__TYPE__`` names the serializer. Tensors (``TorchTensorSerializer``) and
numpy arrays (``NumpyArraySerializer``) are a dataset named ``<key>`` (bfloat16 as its int16
bits; Cerebras compresses with the LZ4 filter from hdf5plugin); Python scalars, strings and None
live in the metadata only; a leaf that is the same object as an earlier one is a
``LinkedObject`` naming that key. Anything else is a ``dill`` pickle (``ObjectSerializer``), and
files older than version 0.5 (cstorch 1.x) store their tree spec and dtypes as pickles too.
Unpickling runs code from the file: a dill entry loads only with ``unsafe_unpickle=True``, and
the pre-0.5 layout is refused with a message saying how to convert it.

Reading trusts nothing: serializer names come from a closed set, datasets must be hard-linked,
in-file, and either plain or compressed with a filter from a short list of known ones (so no
unknown HDF5 plugin is ever loaded), and shapes and dtypes must match the metadata.
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

import numpy as np
import torch
import torch.utils._pytree as pytree

from torchtally.runtime._checkpoint.format import CheckpointError, short_where, torch_dtype_named

__all__ = [
    "CSTORCH_VERSION",
    "EXPANSION_FLOOR_BYTES",
    "EXPANSION_LIMIT",
    "default_max_bytes",
    "is_cstorch_file",
    "read_cstorch",
    "write_cstorch",
]

CSTORCH_VERSION = 0.5
_CSTORCH_RELEASE = "2.10.0"  # what the files say they were written by, for Cerebras' own tools

# RtFx element-type codes (cerebras.appliance rtfx.proto), stored alongside each tensor.
_RTFX = {
    torch.bool: 1,
    torch.int16: 3,
    torch.int32: 4,
    torch.int64: 5,
    torch.uint8: 6,
    torch.uint16: 7,
    torch.uint32: 8,
    torch.uint64: 9,
    torch.float16: 10,
    torch.float32: 11,
    torch.float64: 12,
    torch.bfloat16: 15,
}
# HDF5 filters a Cerebras file may use: deflate, shuffle, fletcher32, LZF, LZ4 (hdf5plugin).
_SAFE_FILTERS = {1: "deflate", 2: "shuffle", 3: "fletcher32", 32000: "lzf", 32004: "lz4"}
_MAX_DIMS = 64


def is_cstorch_file(f: Any) -> bool:
    """Whether an open HDF5 file has the cstorch layout's version attribute."""
    return "__version__" in f.attrs


# ----------------------------------------------------------------------------------- writing


def _leaf_keys(spec: pytree.TreeSpec, where: list[str]) -> list[str]:
    """Leaf paths joined by ".", as cstorch names them (dict keys by str(), sequences by index)."""
    if spec.is_leaf():
        return [".".join(where)]
    children = spec.children()
    if spec.type in (dict, OrderedDict):
        names = [str(k) for k in spec.context]
    elif spec.type in (list, tuple):
        names = [str(i) for i in range(len(children))]
    else:
        raise TypeError(
            f"Argument `state_dict` must nest only dict, OrderedDict, list and tuple to be saved "
            f"in the cstorch layout. Received a {spec.type.__name__} at "
            f"{short_where('.'.join(where) or 'the top level')}."
        )
    keys: list[str] = []
    for name, child in zip(names, children, strict=True):
        keys.extend(_leaf_keys(child, [*where, name]))
    return keys


def _check_keys(state_dict: Any, spec: pytree.TreeSpec, keys: list[str]) -> None:
    if not isinstance(state_dict, dict):
        raise TypeError(
            "Argument `state_dict` must be a dict to be saved in the cstorch layout. "
            f"Received: {type(state_dict).__name__}"
        )
    seen: set[str] = set()
    for key in keys:
        parts = key.split(".")
        if key in seen:
            raise ValueError(
                f"Argument `state_dict` has two entries that both flatten to the key {key!r} "
                "in the cstorch layout (keys are joined with '.'); rename one of them."
            )
        if "/" in key or "" in parts or key.startswith("__"):
            raise ValueError(
                f"Argument `state_dict` has a key the cstorch layout cannot store: {key!r} "
                "(keys must be non-empty, contain no '/', and not start with '__')."
            )
        seen.add(key)


def _tensor_entry(t: torch.Tensor, key: str) -> tuple[np.ndarray, dict[str, Any]]:
    if t.dtype not in _RTFX or t.is_complex() or t.layout != torch.strided:
        raise TypeError(
            f"Argument `state_dict` has a tensor the cstorch layout cannot hold at {key!r}: "
            f"dtype {t.dtype}, layout {t.layout}. It stores dense tensors of "
            f"{sorted(str(d).removeprefix('torch.') for d in _RTFX)}."
        )
    cpu = t.detach().to("cpu").contiguous()
    array = cpu.view(torch.int16).numpy() if cpu.dtype == torch.bfloat16 else cpu.numpy()
    metadata = {
        "__TORCH__": True,
        "shapes": [list(cpu.shape)],
        "dtypes": [str(cpu.dtype)],
        "rtfx_dtypes": [_RTFX[cpu.dtype]],
        "__TYPE__": "TorchTensorSerializer",
        "__NUMPY__": True,
        "compressed": False,
    }
    return array, metadata


def _array_entry(a: np.ndarray, key: str) -> tuple[np.ndarray, dict[str, Any]]:
    if a.dtype.kind not in "biuf" or a.dtype.byteorder == ">":
        raise TypeError(
            f"Argument `state_dict` has a numpy array the cstorch layout cannot hold at {key!r}: "
            f"dtype {a.dtype} (bool, integer and float arrays in native byte order only)."
        )
    return np.array(a, order="C", copy=True), {  # ascontiguousarray makes 0-d 1-d
        "is_bfloat16": False,
        "__TYPE__": "NumpyArraySerializer",
        "__NUMPY__": True,
        "compressed": False,
    }


def _scalar_entry(value: Any, key: str) -> dict[str, Any]:
    if value is None:
        return {"__TYPE__": "NoneSerializer", "__NONE__": True}
    if isinstance(value, str):
        return {"string_value": value, "__TYPE__": "StringSerializer", "__NONE__": True}
    if type(value) in (bool, int, float):
        return {"scalar_value": value, "__TYPE__": "ScalarSerializer", "__NONE__": True}
    raise TypeError(
        f"Argument `state_dict` holds a {type(value).__name__} at {key!r}, which the cstorch "
        "layout stores only as a pickle. Save tensors, numpy arrays, bool, int, float, str and "
        "None there, or use the default torchtally format."
    )


def _entry_json(key: str, inner: dict[str, Any]) -> str:
    wrapper = {
        "__spec__": [{key: "*"}, pytree.treespec_dumps(pytree.tree_flatten({key: 0})[1])],
        "__objects__": [key],
        f"{key}.__metadata__": inner,
    }
    return json.dumps(wrapper, indent=4)


def write_cstorch(h5py: ModuleType, path: str, state_dict: Any) -> None:
    """Write `state_dict` to a new file at `path` in the cstorch 2.10 layout.

    Args:
        h5py: The h5py module.
        path: A file that must not exist yet (the caller's temporary file).
        state_dict: A dict nesting dicts, lists and tuples of tensors, numpy arrays, bool,
            int, float, str and None.

    Example:
        >>> import h5py
        >>> model = torch.nn.Linear(2, 1)
        >>> write_cstorch(h5py, "cstorch.mdl", {"model": model.state_dict(), "step": 3})
        >>> with h5py.File("cstorch.mdl", "r") as f:
        ...     is_cstorch_file(f)
        True
    """
    leaves, spec = pytree.tree_flatten(state_dict)
    keys = _leaf_keys(spec, [])
    _check_keys(state_dict, spec, keys)
    readable = pytree.tree_unflatten(["*"] * len(leaves), spec)
    try:
        json.dumps(readable)
    except TypeError:
        readable = None  # non-str dict keys: Cerebras writes None here too
    first_key: dict[int, str] = {}
    entries: list[tuple[str, np.ndarray | None, dict[str, Any]]] = []
    for key, leaf in zip(keys, leaves, strict=True):
        if isinstance(leaf, torch.Tensor | np.ndarray) and id(leaf) in first_key:
            inner = {"key": first_key[id(leaf)], "__LINKED__": True, "__TYPE__": "LinkedObject"}
            entries.append((key, None, {**inner, "__NONE__": True}))
            continue
        if isinstance(leaf, torch.Tensor):
            array, inner = _tensor_entry(leaf, key)
        elif isinstance(leaf, np.ndarray):
            array, inner = _array_entry(leaf, key)
        else:
            entries.append((key, None, _scalar_entry(leaf, key)))
            continue
        first_key[id(leaf)] = key
        entries.append((key, array, inner))
    with h5py.File(path, "w-") as f:
        f.attrs["__spec__"] = json.dumps([readable, pytree.treespec_dumps(spec)], indent=4)
        f.attrs["__version__"] = np.float64(CSTORCH_VERSION)
        f.attrs["__cstorch_version__"] = _CSTORCH_RELEASE
        for key, data, inner in entries:
            if data is not None:
                dataset = f.create_dataset(key, data=data)
                for name, value in inner.items():
                    dataset.attrs[name] = value
            f.attrs[f"{key}.__metadata__"] = _entry_json(key, inner)
        f.flush()
        f.attrs["__SUCCESS__"] = True


# ----------------------------------------------------------------------------------- reading


def _fail(where: str, problem: str) -> CheckpointError:
    return CheckpointError(f"{short_where(where)}: {problem}")


def _text(value: Any, where: str) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="strict")
    if not isinstance(value, str):
        raise _fail(where, f"must be a string, found {type(value).__name__}.")
    return value


def _json(value: Any, where: str) -> Any:
    try:
        return json.loads(_text(value, where))
    except (ValueError, UnicodeDecodeError) as err:
        raise _fail(where, f"is not valid JSON ({err}).") from err


def _dataset(h5py: ModuleType, f: Any, key: str) -> Any:
    """The in-file, hard-linked dataset named `key`, with only known filters."""
    parts = key.split("/")
    group = f
    for i, part in enumerate(parts):
        if part in ("", ".", "..") or part not in group:
            raise _fail(key, "the dataset this entry names is missing.")
        link = group.get(part, getlink=True)
        if not isinstance(link, h5py.HardLink):
            raise _fail(key, f"is a {type(link).__name__}; only hard links are allowed.")
        group = group[part]
        if i < len(parts) - 1 and not isinstance(group, h5py.Group):
            raise _fail(key, "the dataset this entry names is missing.")
    if not isinstance(group, h5py.Dataset):
        raise _fail(key, f"must be an HDF5 dataset, found {type(group).__name__}.")
    if group.external is not None or group.is_virtual:
        raise _fail(key, "is an external or virtual dataset; its bytes live in another file.")
    plist = group.id.get_create_plist()
    for i in range(plist.get_nfilters()):
        code = plist.get_filter(i)[0]
        if code not in _SAFE_FILTERS:
            raise _fail(
                key,
                f"uses HDF5 filter {code}, which is not one of the known filters "
                f"{sorted(_SAFE_FILTERS.values())}; it is refused rather than loaded as a plugin.",
            )
        if code == 32004:
            _import_hdf5plugin()
    return group


def _import_hdf5plugin() -> None:
    try:
        import hdf5plugin  # noqa: F401  (registers the LZ4 filter with HDF5)
    except ImportError as err:
        raise ImportError(
            "This cstorch checkpoint is LZ4-compressed, which needs hdf5plugin. Install it with "
            "`pip install torchtally[checkpoint]` (or `pip install hdf5plugin`)."
        ) from err


def _shape(meta: dict[str, Any], where: str) -> list[int]:
    shapes = meta.get("shapes")
    shape = shapes[0] if isinstance(shapes, list) and len(shapes) == 1 else None
    if (
        not isinstance(shape, list)
        or len(shape) > _MAX_DIMS
        or not all(type(n) is int and 0 <= n < 2**62 for n in shape)
    ):
        raise _fail(where, f"has invalid tensor shapes metadata {shapes!r}.")
    return shape


def _torch_dtype(meta: dict[str, Any], where: str) -> torch.dtype:
    dtypes = meta.get("dtypes")
    name = dtypes[0] if isinstance(dtypes, list) and len(dtypes) == 1 else None
    dtype = None
    if isinstance(name, str) and name.startswith("torch."):
        dtype = torch_dtype_named(name.removeprefix("torch."))
    if dtype is None or dtype not in _RTFX:
        raise _fail(where, f"has an unsupported tensor dtype {dtypes!r}.")
    return dtype


def _checked_dataset(h5py: ModuleType, f: Any, key: str, shape: list[int] | None) -> Any:
    """The entry's dataset, checked to hold plain numbers (of the shape its metadata gives)
    and to declare no more bytes than this machine's memory; nothing is read yet."""
    dataset = _dataset(h5py, f, key)
    found = dataset.dtype
    if (
        found.fields is not None
        or h5py.check_dtype(vlen=found) is not None
        or found.kind not in "biuf"
    ):
        raise _fail(key, f"must hold numeric data, found {found}.")
    if shape is not None and tuple(dataset.shape) != tuple(shape):
        raise _fail(key, f"has shape {dataset.shape} but its metadata says {tuple(shape)}.")
    # Compressed or never-written chunks can declare any size in a tiny file.
    nbytes = _dataset_bytes(dataset)
    memory = _host_memory_bytes()
    if memory is not None and nbytes > memory:
        raise _fail(
            key,
            f"declares {nbytes} bytes of data (shape {dataset.shape}, stored in "
            f"{dataset.id.get_storage_size()} bytes), more than this machine's memory "
            f"({memory} bytes).",
        )
    return dataset


def _dataset_bytes(dataset: Any) -> int:
    return int(math.prod(dataset.shape)) * int(dataset.dtype.itemsize)


def _storage_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype a tensor of `dtype` is stored as (numpy has no bfloat16: its int16 bits)."""
    return torch.int16 if dtype == torch.bfloat16 else dtype


def _check_stored_dtype(found: np.dtype[Any], dtype: torch.dtype, key: str) -> None:
    if dtype == torch.bfloat16:
        if found.kind not in "iu" or found.itemsize != 2:
            raise _fail(key, f"a bfloat16 tensor must be stored as 16-bit integers, found {found}.")
        return
    expected = torch.empty(0, dtype=dtype).numpy().dtype
    if found.kind != expected.kind or found.itemsize != expected.itemsize:
        raise _fail(key, f"a {dtype} tensor must be stored as {expected}, found {found}.")


def _read_tensor(dataset: Any, dtype: torch.dtype, key: str) -> torch.Tensor:
    """Read the dataset straight into a new tensor: one allocation of its size and no copy
    (HDF5 converts a foreign byte order as it reads)."""
    storage = torch.empty(tuple(dataset.shape), dtype=_storage_dtype(dtype))
    if storage.numel():
        dataset.read_direct(storage.numpy())
    if dtype == torch.bool and storage.numel() and int(storage.view(torch.uint8).max()) > 1:
        raise _fail(key, "holds bool values other than 0 and 1.")
    return storage.view(dtype) if dtype == torch.bfloat16 else storage


def _read_array(dataset: Any, key: str) -> np.ndarray:
    """Read the dataset into a new numpy array of its dtype in native byte order: one
    allocation, no copy."""
    array = np.empty(dataset.shape, dtype=dataset.dtype.newbyteorder("="))
    if array.size:
        dataset.read_direct(array)
    if array.dtype.kind == "b" and array.size and int(array.view(np.uint8).max()) > 1:
        raise _fail(key, "holds bool values other than 0 and 1.")
    return array


def _full(meta: dict[str, Any], key: str, device: torch.device) -> tuple[int, Callable[[], Any]]:
    """A tensor cstorch stored as its shape and one fill value: its bytes, and how to make it."""
    shape, name, value = meta.get("shape"), meta.get("dtype"), meta.get("fill_value")
    dtype = torch_dtype_named(name.removeprefix("torch.")) if isinstance(name, str) else None
    if (
        dtype is None
        or not isinstance(shape, list)
        or len(shape) > _MAX_DIMS
        or not all(type(n) is int and 0 <= n < 2**62 for n in shape)
        or type(value) not in (bool, int, float)
    ):
        raise _fail(key, "has invalid full-tensor metadata.")
    # A few bytes of metadata may declare any size: never attempt more than the machine holds
    # (the allocation would be filled, and the process killed for memory, not refused).
    nbytes = math.prod(shape) * dtype.itemsize
    memory = _host_memory_bytes()
    if device.type == "cpu" and memory is not None and nbytes > memory:
        raise _fail(
            key,
            f"declares a full {dtype} tensor of shape {shape} ({nbytes} bytes), more than "
            f"this machine's memory ({memory} bytes).",
        )

    def make() -> torch.Tensor:
        try:
            return torch.full(shape, cast(float, value), dtype=dtype, device=device)
        except (RuntimeError, MemoryError) as err:  # e.g. out of device memory
            problem = f"declares a full tensor of shape {shape} that cannot be made: {err}"
            raise _fail(key, problem) from err

    return nbytes, make


#: What the entries of a cstorch checkpoint may declare in all, by default, relative to the
#: file's size: compression and never-written chunks let a few KiB declare any size, and
#: `DeferredFullTensor` entries are metadata only. Honest files reach this rarely (a
#: checkpoint of mostly deferred or constant tensors); `load(..., max_bytes=...)` allows them.
EXPANSION_LIMIT = 1024
EXPANSION_FLOOR_BYTES = 256 << 20


def default_max_bytes(file_size: int) -> int:
    """The default bound on the bytes a cstorch checkpoint's entries declare in all.

    Example:
        >>> default_max_bytes(1 << 30)  # 1 GiB file: up to 1 TiB (memory bounds it too)
        1099511627776
        >>> default_max_bytes(10_000)  # a tiny file: the floor
        268435456
    """
    return max(EXPANSION_LIMIT * file_size, EXPANSION_FLOOR_BYTES)


def _check_total(
    planned: list[tuple[str, int, Callable[[], Any]]], max_bytes: int | None, file_size: int
) -> None:
    """Refuse before anything is allocated when the declared sizes add up to more than the
    budget (or than this machine's memory), naming the entry that crosses it."""
    limit = default_max_bytes(file_size) if max_bytes is None else max_bytes
    memory = _host_memory_bytes()
    total = 0
    for count, (key, nbytes, _) in enumerate(planned, start=1):
        total += nbytes
        if memory is not None and total > memory:
            raise CheckpointError(
                f"Entry {short_where(key)!r} brings the data the checkpoint's entries declare "
                f"to {total} bytes ({count} of {len(planned)} entries), more than this "
                f"machine's memory ({memory} bytes)."
            )
        if total > limit:
            if max_bytes is None:
                rule = (
                    f"above the default limit of {limit} bytes ({EXPANSION_LIMIT} x the file's "
                    f"{file_size} bytes, at least {EXPANSION_FLOOR_BYTES}): compressed, "
                    "never-written or metadata-only (DeferredFullTensor) entries declare far "
                    "more than the file holds. If the file is trusted, pass a larger "
                    "`max_bytes=` to `load`."
                )
            else:
                rule = f"above max_bytes={max_bytes}."
            raise CheckpointError(
                f"Entry {short_where(key)!r} brings the data the checkpoint's entries declare "
                f"to {total} bytes ({count} of {len(planned)} entries), {rule}"
            )


def _host_memory_bytes() -> int | None:
    """Physical memory in bytes, or None where the platform does not say."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _unpickle(data: bytes, key: str) -> Any:
    try:
        import dill
    except ImportError as err:
        raise ImportError(
            f"Loading the pickled entry {key!r} needs dill (`pip install dill`)."
        ) from err
    return dill.loads(data)


def _pickle_refused(what: str) -> CheckpointError:
    return CheckpointError(
        f"{what} Unpickling runs code stored in the file, so torchtally refuses it by default. "
        "If you wrote this file yourself or trust its source, pass `unsafe_unpickle=True` to "
        "`load`."
    )


class _CstorchReader:
    def __init__(self, h5py: ModuleType, f: Any, place: Any, unsafe_unpickle: bool) -> None:
        self.h5py = h5py
        self.f = f
        self.place = place
        self.unsafe_unpickle = unsafe_unpickle

    def plan(self, key: str, meta: dict[str, Any]) -> tuple[int, Callable[[], Any]]:
        """Check the entry (metadata, and its dataset's shape and dtype, without reading it):
        the bytes it will allocate, and how to read it."""
        kind = meta.get("__TYPE__")
        if kind == "NoneSerializer":
            return 0, lambda: None
        if kind == "StringSerializer":
            text = _text(meta.get("string_value"), key)
            return 0, lambda: text
        if kind == "ScalarSerializer":
            value = meta.get("scalar_value")
            if type(value) not in (bool, int, float):
                raise _fail(key, f"has an invalid scalar_value {value!r}.")
            return 0, lambda: value
        if kind == "TorchTensorSerializer":
            if meta.get("__RTFX__"):
                raise _fail(key, "holds an appliance-native (RtFx) tensor, which is not supported.")
            shape, dtype = _shape(meta, key), _torch_dtype(meta, key)
            dataset = _checked_dataset(self.h5py, self.f, key, shape)
            _check_stored_dtype(dataset.dtype, dtype, key)
            device = self.place("cpu")
            return _dataset_bytes(dataset), lambda: _read_tensor(dataset, dtype, key).to(device)
        if kind == "NumpyArraySerializer":
            if meta.get("is_bfloat16"):
                raise _fail(key, "holds a Cerebras bfloat16 numpy array, which numpy cannot hold.")
            dataset = _checked_dataset(self.h5py, self.f, key, None)
            return _dataset_bytes(dataset), lambda: _read_array(dataset, key)
        if kind == "DeferredFullTensor":
            return _full(meta, key, self.place("cpu"))
        if kind == "ObjectSerializer":
            if not self.unsafe_unpickle:
                raise _pickle_refused(f"Entry {key!r} of this cstorch checkpoint is a dill pickle.")
            dataset = _dataset(self.h5py, self.f, key)
            raw = dataset.attrs.get("__BYTES__")
            if not isinstance(raw, np.void | np.ndarray) or raw.dtype.kind != "V":
                raise _fail(key, "has no pickled bytes.")
            # an attribute's bytes are in the file (HDF5 never compresses attributes)
            return 0, lambda: _unpickle(raw.tobytes(), key)
        if isinstance(kind, str) and kind.startswith("Deferred"):
            raise _fail(
                key,
                f"is a {kind}, which refers to data outside this file; torchtally reads only "
                "self-contained checkpoints (save it with external links disabled).",
            )
        raise _fail(key, f"has an unknown serializer {kind!r}.")


def _top_keys(spec: pytree.TreeSpec) -> list[str]:
    try:
        return _leaf_keys(spec, [])
    except TypeError as err:
        raise CheckpointError(f"The checkpoint's tree spec is not supported: {err}") from err


def read_cstorch(
    h5py: ModuleType,
    f: Any,
    place: Any,
    *,
    unsafe_unpickle: bool = False,
    max_bytes: int | None = None,
    file_size: int | None = None,
) -> Any:
    """Read an open cstorch-layout checkpoint.

    Every entry is checked, and the bytes the entries declare are summed, before any is read:
    above the budget the file is refused, naming the entry that crosses it. Each tensor is then
    read straight into its own memory (one allocation, no copy).

    Args:
        h5py: The h5py module.
        f: The open `h5py.File`.
        place: Maps the saved device string ("cpu") to the device to load onto.
        unsafe_unpickle: Also load entries stored as dill pickles (runs code from the file).
        max_bytes: The most bytes the entries may declare in all; None: `default_max_bytes`
            of the file's size. This machine's memory bounds it either way.
        file_size: The file's size in bytes (None: read from `f.filename`).

    Returns:
        The saved state dict, with tied tensors tied again.

    Example:
        >>> import h5py
        >>> from torchtally.runtime._checkpoint.decode import device_mapper
        >>> write_cstorch(h5py, "cerebras_ckpt.mdl", {"weight": torch.ones(2), "step": 3})
        >>> with h5py.File("cerebras_ckpt.mdl", "r") as f:
        ...     state = read_cstorch(h5py, f, device_mapper(None))
        >>> state
        {'weight': tensor([1., 1.]), 'step': 3}
    """
    attrs = f.attrs
    version = attrs.get("__version__")
    if not isinstance(version, np.floating | float | np.integer | int) or not math.isfinite(
        float(version)
    ):
        raise CheckpointError(f"Invalid cstorch checkpoint version {version!r}.")
    if float(version) < CSTORCH_VERSION:
        raise CheckpointError(
            f"This is a legacy cstorch checkpoint (format version {float(version)}, from cstorch "
            "before 2.0), whose tree spec and dtypes are stored as dill pickles; unpickling runs "
            "code stored in the file, and torchtally does not read this layout. Convert it once, "
            "where you trust it, with cstorch 2.x: `cstorch.save(cstorch.load(path), new_path)`."
        )
    if float(version) > CSTORCH_VERSION:
        raise CheckpointError(
            f"The cstorch checkpoint has format version {float(version)}; torchtally reads "
            f"version {CSTORCH_VERSION} (cstorch 2.x)."
        )
    if not bool(attrs.get("__SUCCESS__", False)):
        raise CheckpointError(
            "The cstorch checkpoint is incomplete (no __SUCCESS__ marker): the write that "
            "produced it did not finish."
        )
    head = _json(attrs.get("__spec__"), "__spec__")
    if not isinstance(head, list) or len(head) != 2 or not isinstance(head[1], str):
        raise CheckpointError("The checkpoint's __spec__ must be [tree, treespec].")
    try:
        spec = pytree.treespec_loads(head[1])
    except Exception as err:  # torch reports unknown node types and bad JSON variously
        raise CheckpointError(f"The checkpoint's tree spec cannot be read ({err}).") from err
    keys = _top_keys(spec)
    reader = _CstorchReader(h5py, f, place, unsafe_unpickle)
    planned: list[tuple[str, int, Callable[[], Any]]] = []
    links: dict[str, str] = {}
    for key in keys:
        wrapper = _json(attrs.get(f"{key}.__metadata__"), f"{key}.__metadata__")
        meta = wrapper.get(f"{key}.__metadata__") if isinstance(wrapper, dict) else None
        if not isinstance(meta, dict) or wrapper.get("__objects__") != [key]:
            raise _fail(key, "has metadata this reader does not support (a nested object).")
        if meta.get("__TYPE__") == "LinkedObject":
            target = meta.get("key")
            if not isinstance(target, str) or target not in keys:
                raise _fail(key, f"links to an unknown entry {target!r}.")
            links[key] = target
            continue
        planned.append((key, *reader.plan(key, meta)))
    size = os.path.getsize(f.filename) if file_size is None else file_size
    _check_total(planned, max_bytes, size)
    values = {key: read() for key, _, read in planned}
    for key, target in links.items():
        if target not in values:
            raise _fail(key, f"links to {target!r}, which is itself a link.")
        values[key] = values[target]
    return pytree.tree_unflatten([values[k] for k in keys], spec)
