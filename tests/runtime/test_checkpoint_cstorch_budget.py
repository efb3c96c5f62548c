"""The cstorch-format reader bounds what a file's entries declare in total, not only each entry,
and reads each tensor once (issue 25, class 8).

A few KiB of HDF5 can declare GiBs: a chunked dataset whose chunks were never written, a deflated
one, `DeferredFullTensor` metadata. Each such entry below the machine's memory used to pass its
own check, and their sum was then allocated (and each dataset copied once more). The declared
sizes are now summed before anything is allocated and refused above the budget with an error
naming the file and the entry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from torchtally.runtime import CheckpointError, load, save

h5py = pytest.importorskip("h5py")
np = pytest.importorskip("numpy")

MIB = 1 << 20
SRC = Path(__file__).resolve().parents[2] / "src"


def _replace_metadata(f: Any, key: str, inner: dict[str, Any]) -> None:
    wrapper = json.loads(f.attrs[f"{key}.__metadata__"])
    wrapper[f"{key}.__metadata__"] = inner
    f.attrs[f"{key}.__metadata__"] = json.dumps(wrapper)


def _bomb(path: Path, unwritten: int, deflated: int, full: int, fulls: int = 3) -> None:
    """A cstorch checkpoint of a few KiB declaring `unwritten` + `deflated` + `fulls` x `full`
    float32 elements: a chunked dataset with no chunk written, a deflated dataset of zeros, and
    `DeferredFullTensor` entries."""
    names = ["unwritten", "deflated", *(f"full{i}" for i in range(fulls))]
    save({name: torch.ones(2) for name in names}, path, format="cstorch")
    with h5py.File(path, "r+") as f:
        for name, size in (("unwritten", unwritten), ("deflated", deflated)):
            attrs = dict(f[name].attrs)
            del f[name]
            chunk = min(size, 1 << 20)
            if name == "unwritten":
                f.create_dataset(name, shape=(size,), dtype="<f4", chunks=(chunk,))
            else:
                dataset = f.create_dataset(
                    name, shape=(size,), dtype="<f4", chunks=(chunk,), compression="gzip"
                )
                zeros = np.zeros(chunk, dtype="<f4")
                for start in range(0, size, chunk):  # every chunk written, all zeros
                    dataset[start : start + chunk] = zeros[: size - start]
            for attr, value in attrs.items():
                f[name].attrs[attr] = value
            wrapper = json.loads(f.attrs[f"{name}.__metadata__"])
            wrapper[f"{name}.__metadata__"]["shapes"] = [[size]]
            f.attrs[f"{name}.__metadata__"] = json.dumps(wrapper)
        for i in range(fulls):
            del f[f"full{i}"]  # cstorch stores a full tensor as metadata only
            _replace_metadata(
                f,
                f"full{i}",
                {
                    "__TYPE__": "DeferredFullTensor",
                    "shape": [full],
                    "dtype": "torch.float32",
                    "fill_value": 0.0,
                },
            )


def test_entries_declaring_more_than_the_budget_together_are_refused(tmp_path: Path) -> None:
    """Each entry is far below memory; their sum (about 520 MiB from a file of tens of KiB) is
    above the budget, and the error names the file and the entry that crosses it."""
    path = tmp_path / "bomb.mdl"
    _bomb(path, unwritten=32 * MIB, deflated=2 * MIB, full=32 * MIB)  # float32 elements
    size = path.stat().st_size
    assert size < 64 * 1024, size
    with pytest.raises(CheckpointError) as error:
        load(path)
    message = str(error.value)
    assert str(path) in message
    assert "'full" in message or "'unwritten'" in message or "'deflated'" in message
    assert "max_bytes" in message  # how to allow a file that is honest about its size


def test_a_file_within_the_budget_loads_and_max_bytes_widens_or_narrows_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "small.mdl"
    _bomb(path, unwritten=1 << 16, deflated=1 << 16, full=1 << 16, fulls=2)  # 1 MiB in all
    state = load(path)
    assert torch.equal(state["full1"], torch.zeros(1 << 16))
    assert torch.equal(state["deflated"], torch.zeros(1 << 16))
    with pytest.raises(CheckpointError, match=r"max_bytes=524288") as error:
        load(path, max_bytes=512 * 1024)
    assert str(path) in str(error.value)
    assert torch.equal(load(path, max_bytes=2 * MIB)["unwritten"], torch.zeros(1 << 16))
    big = tmp_path / "big.mdl"
    _bomb(big, unwritten=1 << 16, deflated=1 << 16, full=48 * MIB, fulls=2)  # 384 MiB declared
    with pytest.raises(CheckpointError, match="max_bytes"):
        load(big)
    allowed = load(big, max_bytes=512 * MIB)
    assert allowed["full0"].shape == (48 * MIB,) and float(allowed["full0"][-1]) == 0.0


@pytest.mark.parametrize("bad", [-1, 1.5, "1 GiB", True])
def test_max_bytes_must_be_a_non_negative_int(tmp_path: Path, bad: object) -> None:
    path = tmp_path / "ok.mdl"
    save({"w": torch.ones(2)}, path, format="cstorch")
    with pytest.raises((TypeError, ValueError), match="Argument `max_bytes`"):
        load(path, max_bytes=bad)  # type: ignore[arg-type]


# Loads a checkpoint in a fresh process (optionally under an address-space limit a little above
# what the interpreter already maps) and reports what happened and how far the peak resident
# set rose above the resident set before the load (Linux: /proc/self/clear_refs resets the peak).
_PROBE = r"""
import json, resource, sys
import torch, h5py
from torchtally.runtime import load, save

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(l.split()[1]) * 1024 for l in lines if l.startswith(field + ":"))

save({"w": torch.ones(2)}, sys.argv[2], format="cstorch")
load(sys.argv[2])  # the lazily imported modules, before measuring
headroom = int(sys.argv[3])
if headroom:
    resource.setrlimit(resource.RLIMIT_AS, (status("VmSize") + headroom, resource.RLIM_INFINITY))
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak resident set starts again from the current one
before = status("VmRSS")
try:
    state = load(sys.argv[1])
    outcome = ["loaded", sorted(state)]
except Exception as err:
    outcome = [type(err).__name__, str(err)]
print(json.dumps(outcome + [status("VmHWM") - before]))
"""


def _probe(path: Path, tmp_path: Path, headroom: int = 0) -> tuple[str, Any, int]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path), str(tmp_path / "warm.mdl"), str(headroom)],
        capture_output=True,
        text=True,
        timeout=240,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    kind, detail, grown = json.loads(done.stdout.strip().splitlines()[-1])
    return kind, detail, grown


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_bomb_declaring_gibs_is_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    """A file of tens of KiB declaring 4 GiB over five entries, each below memory.
    Loaded with 1 GiB of address space to spare, it is refused by the budget (not by a failed
    allocation), and the process grew by less than 64 MiB."""
    path = tmp_path / "gib_bomb.mdl"
    _bomb(path, unwritten=256 * MIB, deflated=1 * MIB, full=256 * MIB)
    assert path.stat().st_size < 64 * 1024, path.stat().st_size
    kind, message, grown = _probe(path, tmp_path, headroom=1 << 30)
    assert kind == "CheckpointError", (kind, message)
    assert "max_bytes" in message and str(path) in message, message
    assert grown < 64 * MIB, grown


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_tensor_is_read_once_without_a_second_copy(tmp_path: Path, dtype: torch.dtype) -> None:
    """Loading a 96 MiB tensor grows the process by about 96 MiB, not twice that."""
    path = tmp_path / "plain.mdl"
    numel = 96 * MIB // dtype.itemsize
    save({"w": torch.full((numel,), 0.5, dtype=dtype)}, path, format="cstorch")
    kind, keys, grown = _probe(path, tmp_path)
    assert (kind, keys) == ("loaded", ["w"])
    assert grown < 96 * MIB * 1.4, f"grew by {grown / MIB:.0f} MiB for a 96 MiB tensor"
