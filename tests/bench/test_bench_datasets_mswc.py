"""MSWC / IncrementalFewShot against NeuroBench 2.3.0's own classes on tiny files in the Hugging
Face subset's layout. NeuroBench's module imports torchaudio only for `_load_waveform`; a
stand-in reading 16-bit WAV with the standard library takes its place, so the CSV parsing,
labels, padding, return values and session sampling checked are NeuroBench's."""

from __future__ import annotations

import ast
import random
import sys
import types
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from torchtally.bench.datasets import FSCIL_KEYWORDS, MSWC, IncrementalFewShot, MSWC_query

RATE = 48000
NEUROBENCH_MODULES = (
    "neurobench.datasets.MSWC_dataset",
    "neurobench.datasets.MSWC_IncrementalLoader",
)


def _stand_in_load_waveform(root: str, filename: str, exp_sample_rate: int) -> torch.Tensor:
    # torchaudio.datasets.utils._load_waveform: load, check the rate, return (channels, frames).
    with wave.open(str(Path(root) / filename)) as reader:
        assert reader.getsampwidth() == 2 and reader.getnchannels() == 1
        rate = reader.getframerate()
        data = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
    if rate != exp_sample_rate:
        raise ValueError(f"sample rate should be {exp_sample_rate}, but got {rate}")
    return torch.from_numpy(data.astype(np.float32) / 32768.0)[None]


@pytest.fixture
def neurobench_mswc(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    pytest.importorskip("tqdm")
    for name in ("torchaudio", "torchaudio.datasets", "torchaudio.datasets.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setattr(
        sys.modules["torchaudio.datasets.utils"],
        "_load_waveform",
        _stand_in_load_waveform,
        raising=False,
    )
    for name in NEUROBENCH_MODULES:
        sys.modules.pop(name, None)
    from neurobench.datasets import MSWC_dataset, MSWC_IncrementalLoader

    yield types.SimpleNamespace(
        MSWC=MSWC_dataset.MSWC, IncrementalFewShot=MSWC_IncrementalLoader.IncrementalFewShot
    )
    for name in NEUROBENCH_MODULES:
        sys.modules.pop(name, None)


def _write_wav(path: Path, samples: np.ndarray, rate: int = RATE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes())


def _write_mswc(root: Path, languages: tuple[str, ...] = ("pt", "eo")) -> None:
    folder = root / "MSWC"
    rng = np.random.default_rng(3)
    base = {"train": 4, "val": 2, "test": 2}
    for split, per_class in base.items():
        lines = ["LINK,WORD,LANG"]
        for word, lang in (("surrounding", "en"), ("nombreuses", "fr"), ("barcelona", "ca")):
            for i in range(per_class):
                name = f"{word}/common_voice_{lang}_{split}{i}.wav"
                _write_wav(folder / lang / "clips" / name, rng.integers(-3e4, 3e4, 40 + 7 * i))
                lines.append(f"{name},{word},{lang}")
        (folder / f"base_{split}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for lang in languages:
        first = FSCIL_KEYWORDS.index({"pt": "enquanto", "eo": "demandis"}[lang])
        lines = ["LINK,WORD,LANG"]
        for word in FSCIL_KEYWORDS[first : first + 10]:
            # 200 rows per class (NeuroBench's fixed count) over 23 distinct clips, to keep
            # the file writing short; an index off by less than 23 still reads another clip.
            for i in range(23):
                name = f"{word}/{lang}_{i}.wav"
                _write_wav(folder / lang / "clips" / name, rng.integers(-3e4, 3e4, 8 + i % 5))
            lines += [f"{word}/{lang}_{i % 23}.wav,{word},{lang}" for i in range(200)]
        (folder / lang / "evaluation.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _same_items(ours: Any, oracle: Any, indices: Any) -> None:
    for index in indices:
        got, want = ours[index], oracle[index]
        assert len(got) == len(want)
        assert got[0].shape == (RATE, 1) and torch.equal(got[0], want[0]), index
        assert got[1:] == want[1:], index


def test_keyword_order_is_neurobench() -> None:
    import neurobench

    source = Path(neurobench.__file__).parent / "datasets" / "MSWC_dataset.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    listed = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FSCIL_KEYWORDS"
    )
    assert tuple(ast.literal_eval(listed)) == FSCIL_KEYWORDS


def test_mswc_items_match_neurobench(tmp_path: Path, neurobench_mswc: Any) -> None:
    _write_mswc(tmp_path, languages=("pt",))
    for procedure in ("training", "validation", "testing"):
        for incremental in (False, True):
            ours = MSWC(tmp_path, "base", procedure, incremental=incremental)
            oracle = neurobench_mswc.MSWC(
                str(tmp_path), "base", procedure, incremental=incremental, download=False
            )
            assert len(ours) == len(oracle) == 3 * {"training": 4}.get(procedure, 2)
            _same_items(ours, oracle, range(len(ours)))
    ours = MSWC(tmp_path, "evaluation", language="pt")
    oracle = neurobench_mswc.MSWC(str(tmp_path), "evaluation", language="pt", download=False)
    assert len(ours) == len(oracle) == 2000
    _same_items(ours, oracle, [0, 1, 199, 200, 1234, 1999])
    assert ours[200][1] == FSCIL_KEYWORDS.index("correndo")


def test_incremental_sessions_match_neurobench(tmp_path: Path, neurobench_mswc: Any) -> None:
    _write_mswc(tmp_path)
    args = {"k_shot": 3, "root": str(tmp_path), "inc_languages": ["pt", "eo"]}
    split = {"query_shots": 2, "support_query_split": (100, 100)}

    def sessions(cls: Any) -> list[tuple[Any, ...]]:
        random.seed(11)
        np.random.seed(11)
        few_shot = cls(**args, **split)
        out = []
        for support, query, classes in few_shot:
            # NeuroBench's query sets share one growing list: snapshot each when yielded.
            items = [query[i] for i in range(len(query))]
            out.append((support, list(query._walker), items, list(classes)))
        return out

    want = sessions(neurobench_mswc.IncrementalFewShot)
    got = sessions(IncrementalFewShot)
    assert len(got) == len(want) == 2
    for (support, walker, items, classes), (o_support, o_walker, o_items, o_classes) in zip(
        got, want, strict=True
    ):
        assert classes == o_classes and len(classes) in (10, 20)
        assert len(support) == 3
        for (x, y), (ox, oy) in zip(support, o_support, strict=True):
            assert x.shape == (10, RATE, 1) and torch.equal(x, ox)
            assert y.dtype == torch.long and torch.equal(y, oy)
        assert walker == [tuple(entry) for entry in o_walker] and len(walker) == 2 * len(classes)
        for (x, y), (ox, oy) in zip(items, o_items, strict=True):
            assert torch.equal(x, ox) and y == oy


def test_incremental_without_split_and_query_set(tmp_path: Path) -> None:
    _write_mswc(tmp_path, languages=("eo",))
    random.seed(0)
    np.random.seed(0)
    few_shot = IncrementalFewShot(2, tmp_path, inc_languages=["eo"])
    pools = few_shot.indices_per_lang["eo"]
    first = FSCIL_KEYWORDS.index("demandis")
    assert sorted(pools) == list(range(first, first + 10))
    assert pools[first + 1][0] == pools[first + 1][1] == list(range(200, 400))
    ((support, query, classes),) = list(few_shot)
    assert [tuple(y.tolist()) for _, y in support] == [tuple(classes)] * 2
    assert isinstance(query, MSWC_query) and len(query) == 20
    assert sorted({label for _, label in (query[i] for i in range(20))}) == sorted(classes)
    # Each session's query set is its own: later sessions do not grow an earlier one.
    _write_mswc(tmp_path, languages=("pt",))
    two = IncrementalFewShot(1, tmp_path, inc_languages=["eo", "pt"], query_shots=3)
    first, second = ((query, classes) for _, query, classes in two)
    assert (len(first[0]), len(first[1])) == (30, 10)
    assert (len(second[0]), len(second[1])) == (60, 20)


def test_mswc_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"base_train\.csv.*never downloads"):
        MSWC(tmp_path, "base", "training")
    with pytest.raises(FileNotFoundError, match=r"MSWC/pt/evaluation\.csv"):
        MSWC(tmp_path, "evaluation", language="pt")
    with pytest.raises(ValueError, match=r"`procedure`.*Received: procedure='train'"):
        MSWC(tmp_path, "base", "train")
    with pytest.raises(ValueError, match=r"`subset` must be 'base' or 'evaluation'"):
        MSWC(tmp_path, "eval")
    with pytest.raises(ValueError, match=r"`language`.*Received: language=None"):
        MSWC(tmp_path, "evaluation")
    with pytest.raises(
        ValueError, match=r"never downloads.*download=True.*MSWC/base_test\.csv.*huggingface"
    ):
        MSWC(tmp_path, "base", "testing", download=True)
    with pytest.raises(ValueError, match=r"`k_shot`.*\(100, 100 clips.*k_shot=101"):
        IncrementalFewShot(101, tmp_path, support_query_split=(100, 100))
    with pytest.raises(ValueError, match=r"`support_query_split`.*at most 200"):
        IncrementalFewShot(5, tmp_path, support_query_split=(150, 100))
    folder = tmp_path / "MSWC"
    folder.mkdir()
    (folder / "base_test.csv").write_text("LINK,WORD,LANG\nx/a.wav,hello,en\n")
    with pytest.raises(ValueError, match=r"'hello', which is not one of the 200"):
        MSWC(tmp_path, "base", "testing")
    (folder / "base_test.csv").write_text("x/a.wav,surrounding,en\ny/b.wav,surrounding,en\n")
    _write_wav(folder / "en" / "clips" / "x" / "a.wav", np.zeros(10), rate=16000)
    data = MSWC(tmp_path, "base", "testing")
    with pytest.raises(ValueError, match=r"48000 Hz. Received: 16000 Hz"):
        data[0]
    with pytest.raises(FileNotFoundError, match=r"clips/y/b\.wav"):
        data[1]
    # A clip over one second is cut to it (NeuroBench's padding fails on it).
    long_clip = np.arange(RATE + 500) % 20000
    _write_wav(folder / "en" / "clips" / "y" / "b.wav", long_clip)
    waveform, label = data[1]
    assert label == 0 and waveform.shape == (RATE, 1)
    assert torch.equal(waveform[:, 0], torch.from_numpy(long_clip[:RATE] / 32768.0).float())
