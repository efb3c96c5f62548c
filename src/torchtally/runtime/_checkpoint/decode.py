"""Rebuild a saved object tree from a checkpoint manifest, trusting nothing in it.

The manifest is untrusted input. Every node is checked against a closed set of kinds, each
with exactly the fields that kind has and the JSON types those fields must be; a tensor view is
bounds-checked against its storage before it is made (`Tensor.set_` does not check on CPU). Any
mismatch is a `CheckpointError` naming the node; nothing in the file can name code to run.
"""

from __future__ import annotations

import json
import re
import struct
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch

from torchtally.runtime._checkpoint.common import VIEW_LIMIT_BYTES, DevicePlacer, device_mapper
from torchtally.runtime._checkpoint.format import (
    BITS_DTYPES,
    MAX_DEPTH,
    NUMPY_DTYPES,
    CheckpointError,
    numpy_dtype_for,
    short_where,
    torch_dtype_named,
)

__all__ = [
    "VIEW_LIMIT_BYTES",
    "StorageSpec",
    "decode_tree",
    "device_mapper",
    "parse_manifest",
    "storage_specs",
]

# Sizes, strides and offsets above this cannot describe real memory; refusing them early keeps
# Python ints that overflow int64 away from torch.
_MAX_INDEX = 2**62
_MAX_DIMS = 64
_HEX = re.compile(r"-?0x[0-9a-f]+")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class StorageSpec:
    """What the manifest says one `/storages/<i>` dataset holds.

    Attributes:
        array_dtype: numpy dtype of the dataset (bits dtype for bfloat16 and friends).
        numel: Number of elements in the 1-D dataset.
        sha256: Hex digest of the dataset's bytes.
        label: The dataset's `dtype` attribute: a torch dtype name or a numpy dtype string.
        torch_dtype: The torch dtype of the storage, or None for a numpy array.
        device: The device string the storage was saved from (None for numpy).
    """

    array_dtype: np.dtype[Any]
    numel: int
    sha256: str
    label: str
    torch_dtype: torch.dtype | None
    device: str | None


def _fail(where: str, problem: str) -> CheckpointError:
    return CheckpointError(f"Malformed checkpoint manifest at {short_where(where)}: {problem}.")


def _fields(
    node: Any, where: str, kind: str, names: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Check `node` is a JSON object with exactly `names` (+ any of `optional`) besides `t`."""
    if not isinstance(node, dict):
        raise _fail(where, f"expected an object, found {type(node).__name__}")
    keys = set(node)
    required = {"t", *names} if kind else set(names)
    if not required <= keys <= required | set(optional):
        label = f"node of kind {kind!r}" if kind else "entry"
        raise _fail(where, f"{label} has fields {sorted(keys)}, expected {sorted(required)}")
    return node


def _int(node: dict[str, Any], name: str, where: str, low: int = 0, high: int = _MAX_INDEX) -> int:
    value = node[name]
    if type(value) is not int or not low <= value <= high:
        raise _fail(where, f"field {name!r} must be an integer in [{low}, {high}], found {value!r}")
    return value


def _typed(node: dict[str, Any], name: str, where: str, kind: type) -> Any:
    value = node[name]
    if type(value) is not kind:
        raise _fail(where, f"field {name!r} must be a {kind.__name__}, found {value!r}")
    return value


def _float(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def _int_list(node: dict[str, Any], name: str, where: str) -> list[int]:
    values = _typed(node, name, where, list)
    if len(values) > _MAX_DIMS or any(
        type(v) is not int or not 0 <= v <= _MAX_INDEX for v in values
    ):
        raise _fail(where, f"field {name!r} must list at most {_MAX_DIMS} non-negative integers")
    return cast(list[int], values)


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise CheckpointError(f"Malformed checkpoint manifest: duplicate JSON field {key!r}.")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise CheckpointError(f"Malformed checkpoint manifest: non-standard JSON constant {name}.")


def parse_manifest(data: bytes) -> dict[str, Any]:
    """Parse manifest bytes as strict JSON (no NaN constants, no duplicate fields).

    Args:
        data: The bytes of the `/manifest` dataset, already checked against its digest.

    Returns:
        The manifest object, with `storages` and `root` fields.

    Example:
        >>> parse_manifest(b'{"storages":[],"root":{"t":"none"}}')["root"]
        {'t': 'none'}
    """
    try:
        manifest = json.loads(
            data.decode("ascii"),
            object_pairs_hook=_reject_duplicates,
            parse_constant=_reject_constant,
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise CheckpointError(f"Malformed checkpoint manifest: not valid JSON ({err}).") from err
    _fields(manifest, "the top level", "", ("storages", "root"))
    if not isinstance(manifest["storages"], list):
        raise _fail("storages", "expected a list")
    return cast(dict[str, Any], manifest)


def storage_specs(manifest: dict[str, Any]) -> list[StorageSpec]:
    """Validate the manifest's storage table and say what each dataset must hold.

    Args:
        manifest: The parsed manifest.

    Returns:
        One spec per storage, in dataset order.

    Example:
        >>> storage_specs({"storages": [], "root": {"t": "none"}})
        []
    """
    specs = []
    for i, record in enumerate(manifest["storages"]):
        where = f"storages[{i}]"
        if not isinstance(record, dict) or record.get("kind") not in ("torch", "numpy"):
            raise _fail(where, "expected an entry of kind 'torch' or 'numpy'")
        numel = 0
        if record["kind"] == "torch":
            _fields(record, where, "", ("kind", "dtype", "device", "numel", "sha256"))
            dtype = torch_dtype_named(record["dtype"])
            array_dtype = numpy_dtype_for(dtype) if dtype is not None else None
            if dtype is None or array_dtype is None:
                raise _fail(where, f"unsupported tensor dtype {record['dtype']!r}")
            device = _typed(record, "device", where, str)
            if device == "meta":
                raise _fail(where, "a storage cannot come from the meta device")
            torch_dtype: torch.dtype | None = dtype
        else:
            _fields(record, where, "", ("kind", "dtype", "numel", "sha256"))
            if record["dtype"] not in NUMPY_DTYPES:
                raise _fail(where, f"unsupported numpy dtype {record['dtype']!r}")
            array_dtype, torch_dtype, device = NUMPY_DTYPES[record["dtype"]], None, None
        numel = _int(record, "numel", where)
        digest = _typed(record, "sha256", where, str)
        if not _SHA256.fullmatch(digest):
            raise _fail(where, "field 'sha256' must be 64 lowercase hex digits")
        specs.append(StorageSpec(array_dtype, numel, digest, record["dtype"], torch_dtype, device))
    return specs


class _Decoder:
    """Decodes nodes depth first, in the order the encoder wrote them (tensor memo order)."""

    def __init__(self, specs: list[StorageSpec], arrays: list[np.ndarray], place: DevicePlacer):
        self._specs = specs
        self._arrays = arrays
        self._place = place
        self._bases: dict[int, torch.Tensor] = {}
        self._numpy_used: set[int] = set()
        self._tensors: list[torch.Tensor] = []

    def node(self, node: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _fail(where, f"nested more than {MAX_DEPTH} levels deep")
        if not isinstance(node, dict) or not isinstance(node.get("t"), str):
            raise _fail(where, "expected an object with a string field 't'")
        kind = node["t"]
        if kind in ("none", "bool", "int", "float", "complex", "str", "bytes"):
            return _scalar(node, where)
        if kind in ("list", "tuple"):
            items = _typed(_fields(node, where, kind, ("items",)), "items", where, list)
            values = [self.node(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
            return values if kind == "list" else tuple(values)
        if kind == "dict":
            return self._dict(node, where, depth)
        if kind == "tensor":
            return self._tensor(node, where)
        if kind == "same":
            index = _int(_fields(node, where, kind, ("i",)), "i", where)
            if index >= len(self._tensors):
                raise _fail(where, f"refers to tensor #{index}, which has not appeared yet")
            return self._tensors[index]
        if kind == "ndarray":
            return self._ndarray(node, where)
        return _torch_value(node, where, kind)

    def _dict(self, node: dict[str, Any], where: str, depth: int) -> dict[Any, Any]:
        _fields(node, where, "dict", ("ordered", "items"), ("meta",))
        ordered = _typed(node, "ordered", where, bool)
        out: dict[Any, Any] = OrderedDict() if ordered else {}
        for i, pair in enumerate(_typed(node, "items", where, list)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise _fail(f"{where}.items[{i}]", "expected a [key, value] pair")
            key = _key(pair[0], f"{where}.items[{i}]", depth + 1)
            if key in out:
                raise _fail(where, f"duplicate dict key {key!r}")
            out[key] = self.node(pair[1], f"{where}[{key!r}]", depth + 1)
        if "meta" in node:
            if not ordered:
                raise _fail(where, "only an OrderedDict carries `_metadata`")
            metadata = self.node(node["meta"], f"{where}._metadata", depth + 1)
            out._metadata = metadata  # type: ignore[attr-defined]
        return out

    def _base(self, index: int, where: str) -> torch.Tensor:
        """The storage tensor for `/storages/<index>`, built once so its views share it."""
        if index >= len(self._specs) or self._specs[index].torch_dtype is None:
            raise _fail(where, f"storage #{index} is not a tensor storage in this file")
        if index in self._bases:
            return self._bases[index]
        spec = self._specs[index]
        assert spec.torch_dtype is not None and spec.device is not None
        base = torch.from_numpy(self._arrays[index])
        if spec.torch_dtype in BITS_DTYPES:
            base = base.view(spec.torch_dtype)
        try:
            target = self._place(spec.device)
        except (RuntimeError, TypeError, ValueError) as err:
            raise _fail(f"storages[{index}]", f"invalid device {spec.device!r}") from err
        if target != base.device:
            try:
                base = base.to(target)
            except (RuntimeError, AssertionError) as err:
                raise CheckpointError(
                    f"A tensor storage saved on {spec.device!r} cannot be placed on {target} "
                    f"({err}). Pass map_location='cpu' (or another available device) to load()."
                ) from err
        self._bases[index] = base
        return base

    def _tensor(self, node: dict[str, Any], where: str) -> torch.Tensor:
        names = ("s", "dtype", "offset", "size", "stride", "conj", "param", "grad")
        _fields(node, where, "tensor", names)
        base = self._base(_int(node, "s", where), where)
        dtype = torch_dtype_named(node["dtype"])
        if dtype is None or numpy_dtype_for(dtype) is None:
            raise _fail(where, f"unsupported tensor dtype {node['dtype']!r}")
        offset = _int(node, "offset", where)
        size, stride = _int_list(node, "size", where), _int_list(node, "stride", where)
        if len(size) != len(stride):
            raise _fail(where, f"size {size} and stride {stride} differ in length")
        # The last element the view touches must lie inside the storage.
        extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
        nbytes = base.untyped_storage().nbytes()
        if (offset + extent) * dtype.itemsize > nbytes:
            raise _fail(
                where,
                f"view (offset {offset}, size {size}, stride {stride}) of "
                f"{dtype} runs past the end of its {nbytes}-byte storage",
            )
        logical = dtype.itemsize
        for n in size:
            logical *= n
        if logical > VIEW_LIMIT_BYTES and logical > nbytes:
            raise _fail(
                where,
                f"a view of size {size} (stride {stride}) spans {logical} bytes over a "
                f"{nbytes}-byte storage; refused, since copying it would exhaust memory",
            )
        tensor = torch.empty(0, dtype=dtype, device=base.device)
        tensor.set_(base.untyped_storage(), offset, size, stride)
        if _typed(node, "conj", where, bool):
            if not dtype.is_complex:
                raise _fail(where, f"a {dtype} tensor cannot be conjugated")
            tensor = tensor.conj()
        grad = _typed(node, "grad", where, bool)
        if grad and not (dtype.is_floating_point or dtype.is_complex):
            raise _fail(where, f"a {dtype} tensor cannot require gradients")
        if _typed(node, "param", where, bool):
            tensor = torch.nn.Parameter(tensor, requires_grad=grad)
        elif grad:
            tensor.requires_grad_(True)
        self._tensors.append(tensor)
        return tensor

    def _ndarray(self, node: dict[str, Any], where: str) -> np.ndarray:
        _fields(node, where, "ndarray", ("s", "shape"))
        index = _int(node, "s", where)
        shape = _int_list(node, "shape", where)
        if index >= len(self._specs) or self._specs[index].torch_dtype is not None:
            raise _fail(where, f"storage #{index} is not a numpy storage in this file")
        if index in self._numpy_used:
            raise _fail(where, f"numpy storage #{index} is used twice")
        self._numpy_used.add(index)
        array = self._arrays[index]
        if int(np.prod(shape, dtype=object)) != array.size:
            raise _fail(where, f"shape {shape} does not hold the storage's {array.size} elements")
        return array.reshape(shape)


def _scalar(node: dict[str, Any], where: str) -> Any:
    kind = node["t"]
    if kind == "none":
        _fields(node, where, kind, ())
        return None
    if kind == "int":
        _fields(node, where, kind, (), ("v", "hex"))
        if len(node) != 2:
            raise _fail(where, "an int has exactly one of the fields 'v' and 'hex'")
        if "v" in node:
            return _int(node, "v", where, -(2**63), 2**63 - 1)
        text = _typed(node, "hex", where, str)
        if not _HEX.fullmatch(text) or len(text) > 100_000:
            raise _fail(where, "field 'hex' must be a hexadecimal integer such as '-0x1f'")
        return int(text, 16)
    if kind == "float":
        return _float(_int(_fields(node, where, kind, ("bits",)), "bits", where, 0, 2**64 - 1))
    if kind == "complex":
        _fields(node, where, kind, ("re", "im"))
        real = _float(_int(node, "re", where, 0, 2**64 - 1))
        return complex(real, _float(_int(node, "im", where, 0, 2**64 - 1)))
    field = "hex" if kind == "bytes" else "v"
    value = _typed(
        _fields(node, where, kind, (field,)),
        field,
        where,
        {"bool": bool, "str": str, "bytes": str}[kind],
    )
    if kind != "bytes":
        return value
    try:
        return bytes.fromhex(value)
    except ValueError as err:
        raise _fail(where, "field 'hex' must be hexadecimal") from err


def _key(node: Any, where: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _fail(where, f"nested more than {MAX_DEPTH} levels deep")
    kind = node.get("t") if isinstance(node, dict) else None
    if kind in ("none", "bool", "int", "float", "str"):
        return _scalar(node, where)
    if kind == "tuple":
        items = _typed(_fields(node, where, kind, ("items",)), "items", where, list)
        return tuple(_key(k, where, depth + 1) for k in items)
    raise _fail(where, "a dict key must be None, bool, int, float, str or a tuple of those")


def _torch_value(node: dict[str, Any], where: str, kind: str) -> Any:
    if kind == "size":
        return torch.Size(_int_list(_fields(node, where, kind, ("v",)), "v", where))
    if kind == "dtype":
        dtype = torch_dtype_named(_fields(node, where, kind, ("v",))["v"])
        if dtype is None:
            raise _fail(where, f"unknown torch dtype {node['v']!r}")
        return dtype
    if kind == "device":
        text = _typed(_fields(node, where, kind, ("v",)), "v", where, str)
        try:
            return torch.device(text)
        except (RuntimeError, ValueError) as err:
            raise _fail(where, f"invalid device {text!r}") from err
    if kind == "npscalar":
        _fields(node, where, kind, ("dtype", "hex"))
        if node["dtype"] not in NUMPY_DTYPES:
            raise _fail(where, f"unsupported numpy dtype {node['dtype']!r}")
        np_dtype = NUMPY_DTYPES[node["dtype"]]
        text = _typed(node, "hex", where, str)
        try:
            data = bytes.fromhex(text)
        except ValueError as err:
            raise _fail(where, "field 'hex' must be hexadecimal") from err
        if len(data) != np_dtype.itemsize:
            raise _fail(
                where, f"a {np_dtype} scalar needs {np_dtype.itemsize} bytes, found {len(data)}"
            )
        return np.frombuffer(data, dtype=np_dtype)[0]
    raise _fail(where, f"unknown node kind {kind!r}")


def decode_tree(
    manifest: dict[str, Any],
    specs: list[StorageSpec],
    arrays: list[np.ndarray],
    place: DevicePlacer,
) -> Any:
    """Rebuild the saved object from a validated storage table and the manifest's root node.

    Args:
        manifest: The parsed manifest.
        specs: `storage_specs(manifest)`.
        arrays: The storage datasets, read and digest-checked, in order.
        place: Maps a saved device string to the device to load onto (see `device_mapper`).

    Returns:
        The object that was saved.

    Example:
        >>> decode_tree({"storages": [], "root": {"t": "int", "v": 3}}, [], [], torch.device)
        3
    """
    return _Decoder(specs, arrays, place).node(manifest["root"], "state_dict", 0)
