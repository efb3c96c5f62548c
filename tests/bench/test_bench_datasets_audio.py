"""SpeechCommands over tiny files in the real on-disk layout, and the WAV reader against scipy.

NeuroBench's own `SpeechCommands` subclasses torchaudio's `SPEECHCOMMANDS`, which cannot be
installed beside torch 2.13, so the expectations here are hand-built from torchaudio's and
NeuroBench's documented conventions."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest
import torch

from torchtally.bench.datasets import SpeechCommands
from torchtally.bench.datasets._files import load_wav

RATE = 16000


def _write_wav(path: Path, samples: np.ndarray, rate: int = RATE, width: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        writer.setsampwidth(width)
        writer.setframerate(rate)
        writer.writeframes(samples.tobytes())


def _speech_commands(root: Path) -> dict[str, np.ndarray]:
    """Clips in torchaudio's layout; returns the int16 samples by relative path."""
    folder = root / "SpeechCommands" / "speech_commands_v0.02"
    rng = np.random.default_rng(0)
    lengths = {
        "yes/aa11_nohash_0.wav": 12000,
        "yes/bb22_nohash_0.wav": RATE,
        "yes/bb22_nohash_1.wav": 20000,  # longer than 1 s: cut
        "no/aa11_nohash_0.wav": 800,
        "no/cc33_nohash_0.wav": 16000,
        "up/dd44_nohash_0.wav": 9000,
        "up/dd44_nohash_2.wav": 15999,
    }
    clips = {}
    for name, n in lengths.items():
        clips[name] = rng.integers(-32768, 32767, n, dtype=np.int16)
        _write_wav(folder / name, clips[name])
    _write_wav(folder / "_background_noise_" / "white_noise.wav", clips["no/aa11_nohash_0.wav"])
    # Hidden entries are not keywords or clips (glob's rule in torchaudio and NeuroBench).
    _write_wav(folder / ".cache" / "x_nohash_0.wav", clips["no/aa11_nohash_0.wav"])
    _write_wav(folder / "yes" / ".aa11_nohash_9.wav", clips["no/aa11_nohash_0.wav"])
    _write_wav(folder / "no" / "aa11_nohash_0.wav.tmp", clips["no/aa11_nohash_0.wav"])
    (folder / "validation_list.txt").write_text("up/dd44_nohash_0.wav\nno/aa11_nohash_0.wav\n")
    (folder / "testing_list.txt").write_text("yes/bb22_nohash_1.wav\n")
    return clips


def _expected(samples: np.ndarray) -> torch.Tensor:
    one_second = np.zeros(RATE, dtype=np.float32)
    n = min(RATE, samples.size)
    one_second[:n] = samples[:n] / 32768.0
    return torch.from_numpy(one_second).unsqueeze(-1)


def test_speech_commands_subsets_items_and_labels(tmp_path: Path) -> None:
    clips = _speech_commands(tmp_path)
    # Labels index the sorted keyword folders: no=0, up=1, yes=2 (torchaudio's 35 keywords
    # give NeuroBench's 0..34 the same way).
    labels = {"no": 0, "up": 1, "yes": 2}
    expected_order = {
        "validation": ["up/dd44_nohash_0.wav", "no/aa11_nohash_0.wav"],
        "testing": ["yes/bb22_nohash_1.wav"],
        "training": [
            "no/cc33_nohash_0.wav",
            "up/dd44_nohash_2.wav",
            "yes/aa11_nohash_0.wav",
            "yes/bb22_nohash_0.wav",
        ],
        None: sorted(clips),
    }
    for subset, names in expected_order.items():
        data = SpeechCommands(str(tmp_path), subset=subset)
        assert len(data) == len(names), subset
        for i, name in enumerate(names):
            waveform, label = data[i]
            assert waveform.shape == (RATE, 1) and waveform.dtype == torch.float32
            assert torch.equal(waveform, _expected(clips[name])), name
            assert label.dtype == torch.long and label.shape == ()
            assert int(label) == labels[name.split("/")[0]]
    assert data.labels == labels
    raw, label = SpeechCommands(tmp_path, "testing", truncate_or_pad_to_1s=False)[0]
    assert raw.shape == (1, 20000, 1) and int(label) == 2
    loader = torch.utils.data.DataLoader(SpeechCommands(tmp_path, "training"), batch_size=4)
    batch, targets = next(iter(loader))
    assert batch.shape == (4, RATE, 1) and targets.tolist() == [0, 1, 2, 2]


def test_speech_commands_missing_files_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"speech_commands_v0.02.*never downloads"):
        SpeechCommands(tmp_path)
    _speech_commands(tmp_path)
    (tmp_path / "SpeechCommands" / "speech_commands_v0.02" / "testing_list.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"testing_list.txt"):
        SpeechCommands(tmp_path, subset="training")
    assert len(SpeechCommands(tmp_path, subset="validation")) == 2
    with pytest.raises(ValueError, match=r"Argument `subset`.*Received: subset='train'"):
        SpeechCommands(tmp_path, subset="train")
    with pytest.raises(
        ValueError,
        match=r"never downloads.*download=True.*testing_list\.txt in .*speech_commands_v0\.02'",
    ):
        SpeechCommands(tmp_path, subset="validation", download=True)


@pytest.mark.parametrize(
    ("width", "dtype", "scale"),
    [(1, np.uint8, None), (2, np.int16, 2.0**15), (3, None, 2.0**31), (4, np.int32, 2.0**31)],
)
def test_load_wav_matches_scipy(
    tmp_path: Path, width: int, dtype: type | None, scale: float | None
) -> None:
    wavfile = pytest.importorskip("scipy.io.wavfile")
    rng = np.random.default_rng(width)
    path = tmp_path / "clip.wav"
    if width == 3:
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = rng.integers(0, 256, (50, 2, 3), dtype=np.uint8)
        with wave.open(str(path), "wb") as writer:
            writer.setnchannels(2)
            writer.setsampwidth(3)
            writer.setframerate(8000)
            writer.writeframes(raw.tobytes())
    else:
        info = np.iinfo(dtype)
        _write_wav(path, rng.integers(info.min, info.max, (50, 2), dtype=dtype), 8000, width)
    rate, reference = wavfile.read(str(path))
    if width == 1:
        expected = (reference.astype(np.float64) - 128.0) / 128.0
    else:  # scipy returns 24-bit data shifted into int32's high bytes
        assert scale is not None
        expected = reference.astype(np.float64) / scale
    waveform, got_rate = load_wav(path)
    assert got_rate == rate == 8000
    assert waveform.shape == (2, 50) and waveform.dtype == torch.float32
    np.testing.assert_allclose(waveform.numpy(), expected.T, rtol=0, atol=1e-7)


def test_load_wav_float_and_other_formats(tmp_path: Path) -> None:
    wavfile = pytest.importorskip("scipy.io.wavfile")
    data = np.random.default_rng(1).uniform(-1, 1, 300).astype(np.float32)
    wavfile.write(str(tmp_path / "f.wav"), 48000, data)
    waveform, rate = load_wav(tmp_path / "f.wav")
    assert rate == 48000 and torch.equal(waveform, torch.from_numpy(data)[None])
    with pytest.raises(ValueError, match=r"Only WAV.*clip.opus"):
        load_wav(tmp_path / "clip.opus")


def test_speech_commands_feed_the_gsc_pipeline(tmp_path: Path) -> None:
    # NeuroBench's keyword-spotting examples: SpeechCommands batches through S2SPreProcessor
    # (and MFCCPreProcessor) into a Benchmark-style (data, targets) batch.
    from torchtally.bench import MFCCPreProcessor, S2SPreProcessor

    _speech_commands(tmp_path)
    loader = torch.utils.data.DataLoader(SpeechCommands(tmp_path, "validation"), batch_size=2)
    batch = tuple(next(iter(loader)))  # as Benchmark.run passes it (NeuroBench's too)
    spikes, targets = S2SPreProcessor()(batch)
    assert spikes.shape[0] == 2 and spikes.shape[-1] == 20 and targets.tolist() == [1, 0]
    coefficients, _ = MFCCPreProcessor(n_mfcc=13, melkwargs={"n_mels": 20})(batch)
    assert coefficients.shape[:3] == (2, 1, 13)


def _argmax(output: torch.Tensor) -> torch.Tensor:
    return output.argmax(-1)


def test_speech_commands_benchmark_end_to_end(tmp_path: Path) -> None:
    import torchtally.bench as tb

    _speech_commands(tmp_path)
    data = SpeechCommands(tmp_path, "training")
    loader = torch.utils.data.DataLoader(data, batch_size=2)
    mfcc = tb.MFCCPreProcessor(n_mfcc=8, melkwargs={"n_mels": 16})
    features = mfcc(tuple(next(iter(loader))))[0][0].numel()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(features, 3))
    metrics = [[tb.ParameterCount], [tb.ClassificationAccuracy]]
    results = tb.Benchmark(tb.TorchModel(net), loader, [mfcc], [_argmax], metrics).run(quiet=True)
    with torch.no_grad():
        hits = sum(int((net(mfcc(tuple(b))[0]).argmax(1) == b[1]).sum()) for b in loader)
    assert results["ParameterCount"] == features * 3 + 3
    assert results["ClassificationAccuracy"] == pytest.approx(hits / len(data))
