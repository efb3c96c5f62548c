"""Turn a state dict into the checkpoint manifest (JSON-ready nodes) plus the storage arrays.

Encoding walks the object once. Containers and scalars become manifest nodes; every tensor
becomes a view of a storage, and storages are keyed by identity so that tensors sharing memory
(tied weights, transposes, slices) are written once and stay tied. Anything the format cannot
represent exactly is refused with a `TypeError` naming where it sits, before a file is touched.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from torchtally.runtime._checkpoint.format import (
    BITS_DTYPES,
    MAX_DEPTH,
    NUMPY_DTYPES,
    dtype_name,
    numpy_dtype_for,
    short_where,
)

__all__ = ["EncodedTree", "array_digest", "encode_tree", "float_bits"]

_SUPPORTED = (
    "dict, OrderedDict, list, tuple, None, bool, int, float, complex, str, bytes, torch.Tensor, "
    "torch.nn.Parameter, torch.dtype, torch.device, torch.Size, numpy arrays and numpy scalars "
    "of bool/integer/float/complex dtypes"
)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass
class EncodedTree:
    """What `save` writes: the manifest bytes and, per storage, its array and dtype label."""

    manifest: bytes
    arrays: list[tuple[np.ndarray, str]]


@dataclass
class _TorchStorage:
    storage: torch.UntypedStorage
    device: torch.device
    dtypes: set[torch.dtype] = field(default_factory=set)


def float_bits(value: float) -> int:
    """The IEEE-754 binary64 bits of `value` as an unsigned int (exact, NaN payloads included).

    Args:
        value: A Python float.

    Returns:
        The 64 bits as an int in [0, 2**64).

    Example:
        >>> float_bits(1.0)
        4607182418800017408
    """
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def array_digest(array: np.ndarray) -> str:
    """The SHA-256 hex digest of an array's bytes (C order).

    Args:
        array: Any numpy array.

    Returns:
        64 lowercase hex digits.

    Example:
        >>> array_digest(np.zeros(0, dtype=np.uint8))[:8]
        'e3b0c442'
    """
    return hashlib.sha256(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data).hexdigest()


class _Encoder:
    """One pass over the object tree; holds the storage table and the tensor identity memo."""

    def __init__(self) -> None:
        self.storages: list[_TorchStorage | np.ndarray] = []
        self._storage_ids: dict[int, int] = {}
        self._tensor_ids: dict[int, int] = {}
        self._active: set[int] = set()  # containers on the current path, to refuse cycles
        # Holding every encoded tensor keeps its id() from being reused by a new object mid-walk.
        self._keep: list[torch.Tensor] = []

    def node(self, obj: Any, where: str, depth: int) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            raise ValueError(
                f"Argument `state_dict` is nested more than {MAX_DEPTH} levels deep at "
                f"{short_where(where)}."
            )
        kind = type(obj)
        if obj is None:
            return {"t": "none"}
        if kind in (bool, int, float, complex, str, bytes):
            return _scalar_node(obj)
        if kind in (torch.Tensor, torch.nn.Parameter):
            return self._tensor(obj, where)
        if kind is torch.Size:
            return {"t": "size", "v": [int(n) for n in obj]}
        if kind is torch.dtype:
            return {"t": "dtype", "v": dtype_name(obj)}
        if kind is torch.device:
            return {"t": "device", "v": str(obj)}
        if kind is np.ndarray:
            return self._ndarray(obj, where)
        if isinstance(obj, np.generic) and obj.dtype.str in NUMPY_DTYPES:
            return {"t": "npscalar", "dtype": obj.dtype.str, "hex": obj.tobytes().hex()}
        if kind in (dict, OrderedDict, list, tuple):
            if id(obj) in self._active:
                raise ValueError(f"Argument `state_dict` contains itself at {where} (a cycle).")
            self._active.add(id(obj))
            try:
                return self._container(obj, where, depth)
            finally:
                self._active.discard(id(obj))
        raise TypeError(
            f"Argument `state_dict` holds a value the checkpoint format cannot store at {where}: "
            f"{kind.__module__}.{kind.__qualname__}. Supported: {_SUPPORTED}."
        )

    def _container(self, obj: Any, where: str, depth: int) -> dict[str, Any]:
        if isinstance(obj, dict):
            items = [
                [_key_node(key, where), self.node(value, f"{where}[{key!r}]", depth + 1)]
                for key, value in obj.items()
            ]
            out: dict[str, Any] = {"t": "dict", "ordered": type(obj) is OrderedDict, "items": items}
            # Module.state_dict() hangs per-module versions on the OrderedDict; load_state_dict
            # reads them, so they travel too.
            metadata = getattr(obj, "_metadata", None)
            if metadata is not None:
                out["meta"] = self.node(metadata, f"{where}._metadata", depth + 1)
            return out
        values = [self.node(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]
        return {"t": "list" if type(obj) is list else "tuple", "items": values}

    def _tensor(self, tensor: torch.Tensor, where: str) -> dict[str, Any]:
        if id(tensor) in self._tensor_ids:
            return {"t": "same", "i": self._tensor_ids[id(tensor)]}
        if tensor.layout != torch.strided or tensor.is_nested:
            raise TypeError(
                f"Argument `state_dict` holds a {tensor.layout} tensor at {where}; only dense "
                "(strided) tensors can be saved. Convert it with `.to_dense()` first."
            )
        if tensor.device.type == "meta":
            raise TypeError(
                f"Argument `state_dict` holds a meta tensor at {where}; it has no data to save."
            )
        view = tensor.detach()
        conj = view.is_conj()
        if conj:  # keep the storage (and its ties); the conjugation is re-applied on load
            view = view.conj()
        if view.is_neg():
            view = view.resolve_neg()
        if numpy_dtype_for(view.dtype) is None:
            raise TypeError(
                f"Argument `state_dict` holds a tensor of dtype {view.dtype} at {where}, which "
                "the checkpoint format cannot store (quantized and sub-byte dtypes are not "
                "supported)."
            )
        node = {
            "t": "tensor",
            "s": self._storage(view),
            "dtype": dtype_name(view.dtype),
            "offset": int(view.storage_offset()),
            "size": [int(n) for n in view.shape],
            "stride": [int(n) for n in view.stride()],
            "conj": conj,
            "param": type(tensor) is torch.nn.Parameter,
            "grad": bool(tensor.requires_grad),
        }
        self._tensor_ids[id(tensor)] = len(self._tensor_ids)
        self._keep.append(tensor)
        return node

    def _storage(self, view: torch.Tensor) -> int:
        storage = view.untyped_storage()
        # `_cdata` identifies the StorageImpl (what torch.save keys on). Empty storages have no
        # memory to share, so each gets its own entry.
        key = getattr(storage, "_cdata", None)
        if key is None or storage.nbytes() == 0:
            key = None
        index = self._storage_ids.get(key) if key is not None else None
        if index is None:
            index = len(self.storages)
            self.storages.append(_TorchStorage(storage, view.device))
            if key is not None:
                self._storage_ids[key] = index
        entry = self.storages[index]
        assert isinstance(entry, _TorchStorage)
        entry.dtypes.add(view.dtype)
        return index

    def _ndarray(self, array: np.ndarray, where: str) -> dict[str, Any]:
        if array.dtype.str not in NUMPY_DTYPES:
            raise TypeError(
                f"Argument `state_dict` holds a numpy array of dtype {array.dtype} at {where}; "
                "only bool, integer, float16/32/64 and complex64/128 arrays can be saved."
            )
        self.storages.append(np.ascontiguousarray(array).reshape(-1))
        return {"t": "ndarray", "s": len(self.storages) - 1, "shape": list(array.shape)}


def _scalar_node(value: bool | int | float | complex | str | bytes) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return {"t": "int", "v": value}
        # Beyond int64, hex keeps the digits exact and clear of int/str conversion limits.
        return {"t": "int", "hex": hex(value)}
    if isinstance(value, float):
        return {"t": "float", "bits": float_bits(value)}
    if isinstance(value, complex):
        return {"t": "complex", "re": float_bits(value.real), "im": float_bits(value.imag)}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    return {"t": "bytes", "hex": value.hex()}


def _key_node(key: Any, where: str) -> dict[str, Any]:
    if key is None:
        return {"t": "none"}
    if type(key) in (bool, int, float, str):
        return _scalar_node(key)
    if type(key) is tuple:
        return {"t": "tuple", "items": [_key_node(k, where) for k in key]}
    raise TypeError(
        f"Argument `state_dict` has a dict key of type {type(key).__qualname__} in {where}; keys "
        f"must be None, bool, int, float, str, or tuples of those. Received key: {key!r}"
    )


def _storage_record(entry: _TorchStorage | np.ndarray) -> tuple[dict[str, Any], np.ndarray, str]:
    if isinstance(entry, np.ndarray):
        record = {"kind": "numpy", "dtype": entry.dtype.str, "numel": int(entry.size)}
        return record, entry, entry.dtype.str
    nbytes = entry.storage.nbytes()
    (dtype,) = entry.dtypes if len(entry.dtypes) == 1 else (torch.uint8,)
    if nbytes % dtype.itemsize:
        dtype = torch.uint8  # views of several dtypes (or a ragged tail): store plain bytes
    # h5py has no bfloat16/float8/complex32: their bits go out as same-width unsigned ints.
    stored = BITS_DTYPES.get(dtype, dtype)
    base = torch.empty(0, dtype=stored, device=entry.device)
    base.set_(entry.storage, 0, (nbytes // dtype.itemsize,), (1,))
    array = base.cpu().numpy()
    record = {
        "kind": "torch",
        "dtype": dtype_name(dtype),
        "device": str(entry.device),
        "numel": int(base.numel()),
    }
    return record, array, dtype_name(dtype)


def encode_tree(obj: Any) -> EncodedTree:
    """Encode `obj` into manifest bytes and storage arrays, refusing what cannot round-trip.

    Args:
        obj: The object to save, typically a dict of state dicts.

    Returns:
        The encoded tree: UTF-8 JSON manifest and one (array, dtype label) per storage.

    Example:
        >>> tree = encode_tree({"w": torch.ones(2), "step": 3})
        >>> len(tree.arrays)
        1
    """
    encoder = _Encoder()
    root = encoder.node(obj, "state_dict", 0)
    records: list[dict[str, Any]] = []
    arrays: list[tuple[np.ndarray, str]] = []
    for entry in encoder.storages:
        record, array, label = _storage_record(entry)
        record["sha256"] = array_digest(array)
        records.append(record)
        arrays.append((array, label))
    manifest = {"storages": records, "root": root}
    text = json.dumps(manifest, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return EncodedTree(text.encode("ascii"), arrays)
