"""Constants, dtype tables and the error type of the torchtally checkpoint format.

The format (version 1) is one HDF5 file laid out as::

    /                       attrs: format="torchtally.checkpoint", version=1,
                                   manifest_sha256=uint8[32], complete=1 (written last)
    /manifest               uint8[n]: UTF-8 JSON describing the saved object tree
    /storages/0 ... /k-1    1-D datasets: the bytes of each distinct tensor storage
                            (or numpy array), attr dtype=<torch or numpy dtype name>

Every tensor in the tree is a *view* `(storage index, dtype, offset, size, stride)` into one of
the storages, so tensors that shared a storage when saved (tied embedding weights, a tensor and
its transpose) share one storage again when loaded. The manifest lists, per storage, its dtype,
device, element count and SHA-256; its own SHA-256 sits in a root attribute. HDF5 checksums its
metadata (the file is written with the latest format versions) but not raw data, which is why
the digests are ours. Nothing in the format is pickled: the manifest is JSON with a closed set of
node kinds, and datasets are plain numeric arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

from torchtally.runtime._checkpoint.common import CheckpointError, import_h5py, short_where

__all__ = [
    "BITS_DTYPES",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "NATIVE_DTYPES",
    "NUMPY_DTYPES",
    "CheckpointError",
    "import_h5py",
    "numpy_dtype_for",
    "short_where",
    "torch_dtype_named",
]

FORMAT_NAME = "torchtally.checkpoint"
FORMAT_VERSION = 1
# Nesting deeper than this is refused on save and on load: a state dict is a few levels deep,
# and a bound keeps a hostile manifest from exhausting the interpreter stack.
MAX_DEPTH = 200


# torch dtypes numpy stores as they are (HDF5 maps these to native types; bool becomes an enum).
NATIVE_DTYPES: dict[torch.dtype, np.dtype[Any]] = {
    torch.bool: np.dtype(np.bool_),
    torch.uint8: np.dtype(np.uint8),
    torch.int8: np.dtype(np.int8),
    torch.int16: np.dtype(np.int16),
    torch.int32: np.dtype(np.int32),
    torch.int64: np.dtype(np.int64),
    torch.uint16: np.dtype(np.uint16),
    torch.uint32: np.dtype(np.uint32),
    torch.uint64: np.dtype(np.uint64),
    torch.float16: np.dtype(np.float16),
    torch.float32: np.dtype(np.float32),
    torch.float64: np.dtype(np.float64),
    torch.complex64: np.dtype(np.complex64),
    torch.complex128: np.dtype(np.complex128),
}


def _bits_dtypes() -> dict[torch.dtype, torch.dtype]:
    """torch dtypes numpy lacks, each mapped to the unsigned integer dtype that holds its bits."""
    wanted = {
        "bfloat16": torch.uint16,
        "complex32": torch.uint32,
        "float8_e4m3fn": torch.uint8,
        "float8_e4m3fnuz": torch.uint8,
        "float8_e5m2": torch.uint8,
        "float8_e5m2fnuz": torch.uint8,
        "float8_e8m0fnu": torch.uint8,
        "float4_e2m1fn_x2": torch.uint8,
    }
    # Older torch releases lack some float8/float4 dtypes; only those present are supported.
    found = {getattr(torch, name, None): bits for name, bits in wanted.items()}
    return {dt: bits for dt, bits in found.items() if isinstance(dt, torch.dtype)}


BITS_DTYPES: dict[torch.dtype, torch.dtype] = _bits_dtypes()

# numpy arrays and scalars: bool, integers, IEEE floats and complex, in either byte order.
NUMPY_DTYPES: dict[str, np.dtype[Any]] = {
    np.dtype(code).newbyteorder(order).str: np.dtype(code).newbyteorder(order)
    for code in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16")
    for order in ("<", ">")
}


def dtype_name(dtype: torch.dtype) -> str:
    """The canonical short name of a torch dtype, e.g. "bfloat16" for `torch.bfloat16`."""
    return str(dtype).removeprefix("torch.")


@functools.cache
def _all_torch_dtypes() -> dict[str, torch.dtype]:
    """Every torch dtype by canonical name, found once; file strings are looked up here only."""
    found: dict[str, torch.dtype] = {}
    for attr in dir(torch):
        value = getattr(torch, attr, None)
        if isinstance(value, torch.dtype):
            found[dtype_name(value)] = value
    return found


def torch_dtype_named(name: object) -> torch.dtype | None:
    """The torch dtype called `name`, or None: a file's string never reaches `getattr(torch, …)`.

    Args:
        name: A canonical dtype name such as "float32", as read from a file.

    Returns:
        The dtype, or None when `name` is not a str naming one.

    Example:
        >>> torch_dtype_named("bfloat16")
        torch.bfloat16
    """
    if not isinstance(name, str):
        return None
    return _all_torch_dtypes().get(name)


def numpy_dtype_for(dtype: torch.dtype) -> np.dtype[Any] | None:
    """The numpy dtype a storage of `dtype` is written as (its bits for dtypes numpy lacks).

    Args:
        dtype: A torch dtype.

    Returns:
        The numpy dtype of the stored dataset, or None when the format cannot hold `dtype`.

    Example:
        >>> numpy_dtype_for(torch.bfloat16)
        dtype('uint16')
    """
    if dtype in NATIVE_DTYPES:
        return NATIVE_DTYPES[dtype]
    if dtype in BITS_DTYPES:
        return NATIVE_DTYPES[BITS_DTYPES[dtype]]
    return None
