"""MFCC and speech2spikes preprocessors against stored reference values.

tests/bench/data/audio_reference.json holds the expected outputs for the signal `_signal`
(three tones, one a chirp, rounded to float32), computed once in float64 with numpy and scipy
from torchaudio's documented definitions, independently of our code: a reflect-padded STFT with
a periodic Hann window (numpy's rfft), HTK triangular mel filters (written piecewise), power to
dB floored at 1e-10 and clipped 80 dB below the maximum, and scipy's orthonormal DCT-II;
speech2spikes adds 1e-6, takes the log and delta-modulates with threshold 1.

Tolerances: our transforms run in float32, so MFCCs match to 2e-3 absolute (the values span
about +-300 dB-units); speech2spikes events may move by a frame where a value sits within
float32 rounding of a threshold (see the test).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

import torchtally.bench as tb

REFERENCE = json.loads((Path(__file__).parent / "data" / "audio_reference.json").read_text())


def _signal(n: int, sample_rate: int) -> torch.Tensor:
    t = torch.arange(n, dtype=torch.float64) / sample_rate
    x = (
        0.5 * torch.sin(2 * math.pi * 440 * t)
        + 0.3 * torch.sin(2 * math.pi * (300 * t + 2000 * t * t))
        + 0.1 * torch.sin(2 * math.pi * 3100 * t)
    )
    return x.float()


def _batch(x: torch.Tensor, copies: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    return x[None, :, None].repeat(copies, 1, 1), torch.arange(copies)  # (batch, time, 1)


@pytest.mark.parametrize(
    ("key", "n", "rate", "kwargs"),
    [
        (
            "mfcc_nb_test_args",
            2400,
            8000,
            {
                "n_mfcc": 20,
                "melkwargs": {"n_fft": 256, "hop_length": 160, "n_mels": 40, "center": False},
            },
        ),
        ("mfcc_defaults", 4000, 16000, {}),
        (
            "mfcc_log_mels",
            4000,
            16000,
            {
                "n_mfcc": 13,
                "log_mels": True,
                "melkwargs": {"n_fft": 512, "hop_length": 160, "n_mels": 40},
            },
        ),
    ],
)
def test_mfcc_matches_reference(key: str, n: int, rate: int, kwargs: dict) -> None:
    mfcc = tb.MFCCPreProcessor(sample_rate=rate, **kwargs)
    out, targets = mfcc(_batch(_signal(n, rate)))
    expected = torch.tensor(REFERENCE[key], dtype=torch.float32)
    assert out.shape == (2, 1, *expected.shape)
    torch.testing.assert_close(out[1, 0], expected, rtol=0, atol=2e-3)
    assert torch.equal(targets, torch.arange(2))


def test_s2s_matches_reference() -> None:
    events, _ = tb.S2SPreProcessor()(_batch(_signal(4000, 16000), copies=3))
    expected = torch.tensor(REFERENCE["s2s_defaults"], dtype=torch.float32)
    assert events.shape == (3, 50, 20)  # 51 frames, the first dropped as NeuroBench does
    # A log-mel value within float32 rounding of a level +- 1 can fire one frame earlier or
    # later than in float64: at most 0.5% of events may differ, and each channel's net level
    # change (its sum of events) must be the reference's.
    assert (events[2] != expected).float().mean() <= 0.005
    assert torch.equal(events[2].sum(0), expected.sum(0))
    assert set(events.unique().tolist()) <= {-1.0, 0.0, 1.0}


def test_preprocessor_batch_forms_and_errors() -> None:
    mfcc = tb.MFCCPreProcessor(n_mfcc=13, melkwargs={"n_mels": 40})
    x, y = _batch(_signal(1600, 16000))
    assert len(mfcc((x, y, {"extra": 1}))) == 3
    with pytest.raises(TypeError, match="expects a batch tuple"):
        mfcc([1, 2, 3])
    with pytest.raises(ValueError, match="tuple of length 4"):
        mfcc((x, 2, 3, 4))
    with pytest.raises(ValueError, match="`n_mfcc` must be <= n_mels"):
        tb.MFCCPreProcessor(n_mfcc=50, melkwargs={"n_mels": 40})
    s2s = tb.S2SPreProcessor()
    s2s.configure(threshold=2, n_mels=40, hop_length=160)
    assert (s2s.threshold, s2s.spec_kwargs["n_mels"], s2s.spec_kwargs["sample_rate"]) == (
        2,
        40,
        16000,
    )
    assert s2s((x, y))[0].shape == (2, 10, 40)


def test_preprocessors_in_a_benchmark() -> None:
    x, y = _batch(_signal(1600, 16000), copies=4)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=2)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(20 * 20, 3))
    bench = tb.Benchmark(
        net,
        loader,
        [tb.S2SPreProcessor()],
        [lambda out: out.argmax(-1)],
        [[], [tb.SynapticOperations]],
    )
    ops = bench.run(quiet=True)["SynapticOperations"]
    assert ops["Dense"] == 400 * 3 and ops["Effective_MACs"] == 0 < ops["Effective_ACs"]
