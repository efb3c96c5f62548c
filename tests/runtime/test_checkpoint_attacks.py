"""Checkpoint attacks that `test_checkpoint.py` does not already cover (issue 13).

Covered there: truncation at many offsets, bit flips in data and manifest, hostile HDF5
manifests, external/soft links and virtual datasets, gigantic declared shapes, deep nesting,
pickle payloads, empty and foreign files, SIGKILL during save (the previous checkpoint loads,
no partial file is accepted). Here: memory bombs inside `torch.save` zips, a directory given
to `load`, and a disk that fills up during `save`.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from torchtally.runtime import CheckpointError, load, save


def _recompress(source: Path, target: Path) -> None:
    """The same zip members, deflated: what a decompression bomb looks like."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))


def test_a_zip_that_inflates_far_beyond_its_size_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.pt"
    torch.save({"w": torch.zeros(4 << 20)}, plain)  # 16 MiB of zeros
    bomb = tmp_path / "bomb.pt"
    _recompress(plain, bomb)
    assert bomb.stat().st_size < plain.stat().st_size // 100
    with pytest.raises(CheckpointError, match=r"decompression bomb"):
        load(bomb)
    assert torch.equal(load(plain)["w"], torch.zeros(4 << 20))  # the honest file still loads


def test_a_huge_stride_0_view_over_a_tiny_storage_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "view.pt"
    torch.save({"w": torch.zeros(1).expand(2**40)}, path)  # 4 bytes of storage
    assert path.stat().st_size < 10_000
    with pytest.raises(CheckpointError, match=r"views \d+ bytes over a storage of 4 bytes"):
        load(path)
    small = tmp_path / "small_view.pt"
    torch.save({"w": torch.ones(1).expand(1000)}, small)  # a modest expanded view is fine
    assert torch.equal(load(small)["w"], torch.ones(1000))


def test_a_directory_is_a_checkpoint_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"must name an existing file.*\(a directory\)"):
        load(tmp_path)
    with pytest.raises(FileNotFoundError):  # still what torch.load raises, for old callers
        load(tmp_path)


@contextlib.contextmanager
def _file_size_limit(limit: int) -> Iterator[None]:
    """Make writes past `limit` bytes fail with EFBIG, as a full disk fails them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs POSIX file limits")
def test_a_full_disk_during_save_is_a_clear_error_and_keeps_the_previous_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ckpt.h5"
    previous = {"w": torch.arange(10.0), "step": 1}
    save(previous, path)
    with _file_size_limit(256 * 1024), pytest.raises(CheckpointError, match=r"disk is full"):
        save({"w": torch.randn(1 << 20), "step": 2}, path)  # 4 MiB: cannot fit
    state = load(path)
    assert torch.equal(state["w"], previous["w"]) and state["step"] == 1
    assert sorted(os.listdir(tmp_path)) == ["ckpt.h5"]  # no temporary left behind


def test_temporaries_of_killed_saves_are_cleaned_by_the_next_save(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(dead.stdout)
    orphan = tmp_path / f".ckpt.h5.{dead_pid}.0123456789ab.tmp"
    orphan.write_bytes(b"\0" * 1000)  # what a SIGKILLed save leaves behind
    live = tmp_path / f".ckpt.h5.{os.getppid()}.0123456789ab.tmp"  # a live process's save
    live.write_bytes(b"\0")
    other = tmp_path / f".other.h5.{dead_pid}.0123456789ab.tmp"  # another path's temporary
    other.write_bytes(b"\0")
    save({"w": torch.ones(2)}, tmp_path / "ckpt.h5")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ckpt.h5", live.name, other.name])


def _generation(state: dict) -> int:
    """A checkpoint's generation, checked against its data: a torn write cannot pass."""
    gen = state["gen"]
    assert torch.equal(state["w"], torch.full((1 << 20,), float(gen))), gen
    return gen


# The saver runs in a fresh interpreter, not a fork of this one: a fork of a process that has
# run other tests (torch's thread pools, sampler threads) can inherit a lock held by a thread that
# does not exist in the child and hang there before its first save.
_SAVER = """
import sys
from pathlib import Path

import torch

from torchtally.runtime import save

path, gen, ready = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
ready.touch()
while True:  # overwrite the checkpoint with newer generations until killed
    gen += 1
    save({"gen": gen, "w": torch.full((1 << 20,), float(gen))}, path)
"""


@pytest.mark.slow
def test_sigkill_at_random_moments_of_save_20_trials(tmp_path: Path) -> None:
    import random
    import subprocess
    import sys
    import time

    import torchtally

    folder, ready = tmp_path / "checkpoints", tmp_path / "ready"
    folder.mkdir()
    path = folder / "ckpt.h5"
    save({"gen": 0, "w": torch.zeros(1 << 20)}, path)
    src = Path(torchtally.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    rng = random.Random(13)
    latest, torn, partial_refused = 0, 0, 0
    for trial in range(20):
        saver = subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(path), str(latest), str(ready)], env=env
        )
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert saver.poll() is None, f"the saver exited with {saver.returncode}"
            assert time.monotonic() < deadline, "the saver did not start"
            time.sleep(0.01)
        ready.unlink()
        time.sleep(rng.uniform(0.02, 0.4))  # a random moment, nearly always inside a save
        saver.send_signal(signal.SIGKILL)
        assert saver.wait() == -signal.SIGKILL, trial
        gen = _generation(load(path))  # the last complete generation, whole
        assert gen >= latest, (trial, gen, latest)
        latest = gen
        for temp in folder.glob(".ckpt.h5.*.tmp"):  # what the killed save left behind
            torn += 1
            try:
                _generation(load(temp))  # finished but not yet renamed: complete and whole
            except CheckpointError:
                partial_refused += 1  # half-written: refused, never mistaken for a checkpoint
        assert len(list(folder.glob(".ckpt.h5.*.tmp"))) <= 1  # older orphans were removed
    print(f"20 kills: {torn} mid-save ({partial_refused} partial files refused), {latest} saves")
    # The invariants above held for every trial; this shows the kills really hit saves.
    assert latest > 0 and torn >= 3, (latest, torn, partial_refused)
    save({"gen": latest + 1, "w": torch.full((1 << 20,), float(latest + 1))}, path)
    assert sorted(p.name for p in folder.iterdir()) == ["ckpt.h5"]


def test_a_cstorch_full_tensor_declaring_more_than_memory_is_refused(tmp_path: Path) -> None:
    import json

    import h5py

    path = tmp_path / "full.mdl"
    save({"w": torch.ones(2)}, path, format="cstorch")
    with h5py.File(path, "r+") as f:
        wrapper = json.loads(f.attrs["w.__metadata__"])
        del f["w"]  # cstorch stores a full tensor as metadata only
        wrapper["w.__metadata__"] = {
            "__TYPE__": "DeferredFullTensor",
            "shape": [2**40, 2**10],  # 4 PiB of float32 in a few bytes of metadata
            "dtype": "torch.float32",
            "fill_value": 0.0,
        }
        f.attrs["w.__metadata__"] = json.dumps(wrapper)
    with pytest.raises(CheckpointError, match=r"declares a full torch.float32 tensor .* more than"):
        load(path)
    with h5py.File(path, "r+") as f:  # a modest full tensor still loads
        wrapper["w.__metadata__"]["shape"] = [3, 2]
        f.attrs["w.__metadata__"] = json.dumps(wrapper)
    assert torch.equal(load(path)["w"], torch.zeros(3, 2))


def test_a_cstorch_dataset_declaring_more_than_memory_is_refused(tmp_path: Path) -> None:
    import json

    import h5py

    path = tmp_path / "sparse.mdl"
    save({"w": torch.ones(2)}, path, format="cstorch")
    huge = 2**42  # 16 TiB of float32, in chunks never written: the file stays tiny
    with h5py.File(path, "r+") as f:
        attrs = dict(f["w"].attrs)
        del f["w"]
        f.create_dataset("w", shape=(huge,), dtype="<f4", chunks=(1 << 16,), compression="gzip")
        for name, value in attrs.items():
            f["w"].attrs[name] = value
        wrapper = json.loads(f.attrs["w.__metadata__"])
        wrapper["w.__metadata__"]["shapes"] = [[huge]]
        f.attrs["w.__metadata__"] = json.dumps(wrapper)
    assert path.stat().st_size < 100_000
    with pytest.raises(CheckpointError, match=r"declares 17592186044416 bytes of data"):
        load(path)


@pytest.mark.parametrize("depth", [3000, 100_000])
def test_a_cstorch_spec_nested_past_any_limit_is_a_checkpoint_error(
    tmp_path: Path, depth: int
) -> None:
    import h5py

    path = tmp_path / "deep.mdl"
    save({"w": torch.ones(2)}, path, format="cstorch")
    # A tree spec of `depth` nested lists (torch's treespec JSON), and bare JSON nesting.
    node = '{"type": null, "context": null, "children_spec": []}'
    for _ in range(depth if depth < 10_000 else 0):
        node = f'{{"type": "builtins.list", "context": "null", "children_spec": [{node}]}}'
    spec = "[" * depth + "]" * depth if depth >= 10_000 else f"[1, {node}]"
    with h5py.File(path, "r+") as f:
        f.attrs["__spec__"] = spec if depth >= 10_000 else f'[null, "{_escape(spec)}"]'
    with pytest.raises(CheckpointError, match="recursion depth"):
        load(path)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
