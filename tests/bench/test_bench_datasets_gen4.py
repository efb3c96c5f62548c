"""Gen4DetectionDataLoader: missing files are named; present files give the clear
not-reimplemented error (NeuroBench's loader needs Prophesee's Metavision SDK, not on PyPI)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from torchtally.bench.datasets import Gen4DetectionDataLoader


def test_gen4_signature_is_neurobench() -> None:
    source = Path(pytest.importorskip("neurobench").__file__).parent / "datasets"
    text = (source / "megapixel_automotive.py").read_text()
    ours = inspect.signature(Gen4DetectionDataLoader.__init__).parameters
    for name, parameter in ours.items():
        if name != "self":
            assert f"        {name}" in text, name
            assert parameter.default is not inspect.Parameter.empty


def test_gen4_errors_name_files_and_the_missing_sdk(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"Gen 4 Histograms/test/\*\.h5.*never downloads"):
        Gen4DetectionDataLoader(tmp_path / "Gen 4 Histograms")
    (tmp_path / "val").mkdir()
    (tmp_path / "val" / "moorea_2019-02-21_000_td_2257500000_2317500000.h5").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"train/\*\.h5"):
        Gen4DetectionDataLoader(tmp_path, split="training")
    with pytest.raises(NotImplementedError, match=r"metavision_ml.*Metavision SDK"):
        Gen4DetectionDataLoader(tmp_path, split="validation")
    with pytest.raises(ValueError, match=r"`split`.*Received: split='val'"):
        Gen4DetectionDataLoader(tmp_path, split="val")
