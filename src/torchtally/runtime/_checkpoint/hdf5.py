"""Write and read the HDF5 container of a checkpoint (layout in `_checkpoint.format`).

Reading is strict about the container, not only the manifest: the root holds exactly the
expected attributes and members, every member is a hard link (soft and external links could
point anywhere, including other files), and every dataset is a plain contiguous numeric array.
Chunked datasets are refused before any data is read, so no HDF5 filter (which HDF5 may load
as a plugin) ever runs; external and virtual datasets are refused because their bytes live in
other files; and a dataset must have as many bytes stored as its shape claims.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from torchtally.runtime._checkpoint.decode import StorageSpec, parse_manifest, storage_specs
from torchtally.runtime._checkpoint.encode import EncodedTree, array_digest
from torchtally.runtime._checkpoint.format import FORMAT_NAME, FORMAT_VERSION, CheckpointError

__all__ = ["read_container", "write_container"]

_ROOT_ATTRS = {"format", "version", "manifest_sha256", "complete"}


def _ascii(text: str) -> np.bytes_:
    """A fixed-length string attribute value.

    h5py stores a Python str attribute as a variable-length string, whose bytes live in the
    HDF5 global heap, the one metadata structure HDF5 does not checksum (a flipped byte there
    was seen to hang HDF5 2.0). Fixed-length strings sit in the checksummed object header.
    """
    return np.bytes_(text.encode("ascii"))


def write_container(
    h5py: ModuleType, path: str, tree: EncodedTree, pause: Callable[[str], None] | None = None
) -> None:
    """Write `tree` to a new HDF5 file at `path`; the `complete` attribute is written last.

    Args:
        h5py: The h5py module.
        path: A path that must not exist yet (the caller's temporary file).
        tree: The encoded object.
        pause: Test seam, called with "partial" once part of the storages are written.

    Example:
        >>> import h5py
        >>> from torchtally.runtime._checkpoint.encode import encode_tree
        >>> write_container(h5py, "step.h5", encode_tree({"step": 1}))
        >>> with h5py.File("step.h5", "r") as f:
        ...     int(f.attrs["complete"])
        1
    """
    with h5py.File(path, "w-", libver="latest") as f:
        f.attrs["format"] = _ascii(FORMAT_NAME)
        f.attrs["version"] = np.int64(FORMAT_VERSION)
        group = f.create_group("storages")
        halfway = len(tree.arrays) // 2
        for i, (array, label) in enumerate(tree.arrays):
            if i == halfway and pause is not None:
                f.flush()
                pause("partial")
            # Contiguous and unfiltered, which is what the reader accepts.
            dataset = group.create_dataset(str(i), data=array)
            dataset.attrs["dtype"] = _ascii(label)
        if not tree.arrays and pause is not None:
            pause("partial")
        f.create_dataset("manifest", data=np.frombuffer(tree.manifest, dtype=np.uint8))
        f.attrs["manifest_sha256"] = np.frombuffer(
            hashlib.sha256(tree.manifest).digest(), dtype=np.uint8
        )
        f.flush()
        f.attrs["complete"] = np.int64(1)


def _members(h5py: ModuleType, group: Any, expected: dict[str, type], where: str) -> None:
    """Check `group` holds exactly `expected` (name -> h5py class), all as hard links."""
    names = set(group.keys())
    if names != set(expected):
        extra, missing = sorted(names - set(expected)), sorted(set(expected) - names)
        raise CheckpointError(
            f"Unexpected layout in {where or '/'}: extra members {extra}, missing members "
            f"{missing}."
        )
    for name, kind in expected.items():
        link = group.get(name, getlink=True)
        if not isinstance(link, h5py.HardLink):
            raise CheckpointError(
                f"{where}/{name} is a {type(link).__name__}; only hard links are allowed."
            )
        found = type(group[name]).__name__
        if not isinstance(group[name], kind):
            raise CheckpointError(f"{where}/{name} must be an HDF5 {kind.__name__}, found {found}.")


def _read_array(
    h5py: ModuleType, dataset: Any, dtype: np.dtype[Any], numel: int, where: str
) -> np.ndarray:
    """Read a 1-D dataset of `numel` elements of `dtype`, refusing anything but plain storage."""
    found = dataset.dtype
    plain = (
        found.fields is None
        and h5py.check_dtype(vlen=found) is None
        and h5py.check_dtype(ref=found) is None
    )
    if not plain or found.kind != dtype.kind or found.itemsize != dtype.itemsize:
        raise CheckpointError(f"{where} must hold {dtype} data, found {found}.")
    if dataset.shape != (numel,):
        raise CheckpointError(f"{where} must have shape ({numel},), found {dataset.shape}.")
    if dataset.chunks is not None or dataset.external is not None or dataset.is_virtual:
        raise CheckpointError(
            f"{where} is chunked, filtered, external or virtual; checkpoints store plain "
            "contiguous datasets only."
        )
    stored, needed = dataset.id.get_storage_size(), numel * dtype.itemsize
    if stored < needed:
        raise CheckpointError(f"{where} claims {needed} bytes but only {stored} are stored.")
    array = np.asarray(dataset[()]).astype(dtype, copy=False)  # byte order only
    if dtype.kind == "b" and array.size and int(array.view(np.uint8).max()) > 1:
        raise CheckpointError(f"{where} holds bool values other than 0 and 1.")
    return array


def _check_root(f: Any) -> None:
    attrs = f.attrs
    name = attrs.get("format")
    if not isinstance(name, bytes) or name != _ascii(FORMAT_NAME):
        raise CheckpointError(
            "The file is HDF5 but not a torchtally checkpoint (no format attribute "
            f"{FORMAT_NAME!r})."
        )
    version = attrs.get("version")
    if not isinstance(version, np.integer) or int(version) < 1:
        raise CheckpointError(f"Invalid checkpoint format version {version!r}.")
    if int(version) > FORMAT_VERSION:
        raise CheckpointError(
            f"The checkpoint has format version {int(version)}, newer than this torchtally "
            f"reads ({FORMAT_VERSION}). Upgrade torchtally to load it."
        )
    complete = attrs.get("complete")
    if not isinstance(complete, np.integer) or int(complete) != 1:
        raise CheckpointError(
            "The checkpoint is incomplete (its completion marker is missing): the write that "
            "produced it did not finish."
        )
    names = set(attrs.keys())
    if names != _ROOT_ATTRS:
        raise CheckpointError(f"Unexpected root attributes {sorted(names - _ROOT_ATTRS)}.")


def read_container(
    h5py: ModuleType, f: Any
) -> tuple[dict[str, Any], list[StorageSpec], list[np.ndarray]]:
    """Validate an open checkpoint file and read its manifest and storages.

    Args:
        h5py: The h5py module.
        f: The open `h5py.File`.

    Returns:
        The parsed manifest, the storage specs it declares, and the storage arrays (each
        checked against its digest).

    Example:
        >>> import h5py
        >>> from torchtally.runtime._checkpoint.encode import encode_tree
        >>> write_container(h5py, "model.h5", encode_tree({"weight": torch.ones(3)}))
        >>> with h5py.File("model.h5", "r") as f:
        ...     manifest, specs, arrays = read_container(h5py, f)
        >>> len(arrays)
        1
    """
    _check_root(f)
    _members(h5py, f, {"manifest": h5py.Dataset, "storages": h5py.Group}, "")
    expected = f.attrs["manifest_sha256"]
    if (
        not isinstance(expected, np.ndarray)
        or expected.dtype != np.uint8
        or expected.shape != (32,)
    ):
        raise CheckpointError("The root attribute manifest_sha256 must be 32 bytes.")
    manifest_dataset = f["manifest"]
    data = _read_array(
        h5py, manifest_dataset, np.dtype(np.uint8), manifest_dataset.size, "/manifest"
    )
    if hashlib.sha256(data.tobytes()).digest() != expected.tobytes():
        raise CheckpointError("The checkpoint manifest is corrupt (SHA-256 mismatch).")
    manifest = parse_manifest(data.tobytes())
    specs = storage_specs(manifest)
    group = f["storages"]
    _members(h5py, group, {str(i): h5py.Dataset for i in range(len(specs))}, "/storages")
    arrays = []
    for i, spec in enumerate(specs):
        where = f"/storages/{i}"
        dataset = group[str(i)]
        label = dataset.attrs.get("dtype")
        if isinstance(label, bytes):
            label = label.decode("ascii", errors="replace")
        if (
            set(dataset.attrs.keys()) != {"dtype"}
            or not isinstance(label, str)
            or label != spec.label
        ):
            raise CheckpointError(f"{where} must carry exactly the attribute dtype={spec.label!r}.")
        array = _read_array(h5py, dataset, spec.array_dtype, spec.numel, where)
        if array_digest(array) != spec.sha256:
            raise CheckpointError(f"{where} is corrupt (SHA-256 mismatch).")
        arrays.append(array)
    return manifest, specs, arrays
