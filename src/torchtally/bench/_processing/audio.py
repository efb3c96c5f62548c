"""Audio preprocessors on torch alone: NeuroBench's `MFCCPreProcessor` and `S2SPreProcessor`.

NeuroBench wraps `torchaudio.transforms.MFCC` and `MelSpectrogram`; torchaudio has no build for
every torch, so the same transforms are written here from torchaudio's documented definitions
(with its defaults): a centred, reflect-padded STFT with a periodic Hann window, power 2; a
triangular mel filterbank on the HTK mel scale (or Slaney's) without area normalisation unless
asked; power to decibels floored at 1e-10 and clipped 80 dB below each item's maximum (or the
natural log of mel + 1e-6 with `log_mels`); and an orthonormal DCT-II. Speech2spikes takes the
log of the mel spectrogram plus `log_offset` and delta-modulates it over time into -1/0/+1
events (https://doi.org/10.1145/3584954.3584995).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from torchtally.bench._processing.processors import PreProcessor

__all__ = [
    "MFCCPreProcessor",
    "MelSpectrogram",
    "S2SPreProcessor",
    "delta_events",
    "mel_filterbank",
]


def _hz_to_mel(freq: float, scale: str) -> float:
    if scale == "htk":
        return 2595.0 * math.log10(1.0 + freq / 700.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    if freq < min_log_hz:
        return freq / f_sp
    return min_log_hz / f_sp + math.log(freq / min_log_hz) / (math.log(6.4) / 27.0)


def _mel_to_hz(mels: Tensor, scale: str) -> Tensor:
    if scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return torch.where(
        mels >= min_log_mel, min_log_hz * torch.exp(logstep * (mels - min_log_mel)), f_sp * mels
    )


def mel_filterbank(
    n_freqs: int,
    f_min: float,
    f_max: float,
    n_mels: int,
    sample_rate: int,
    norm: str | None = None,
    mel_scale: str = "htk",
) -> Tensor:
    """Triangular mel filters, `(n_freqs, n_mels)`, torchaudio's `melscale_fbanks`.

    Args:
        n_freqs: STFT frequency bins (`n_fft // 2 + 1`).
        f_min: Lowest frequency (Hz).
        f_max: Highest frequency (Hz).
        n_mels: Number of filters.
        sample_rate: Sample rate (Hz).
        norm: None, or ``"slaney"`` to divide each filter by its width (equal area).
        mel_scale: ``"htk"`` or ``"slaney"``.

    Returns:
        The filterbank, float32.

    Example:
        >>> mel_filterbank(201, 0.0, 8000.0, 40, 16000).shape
        torch.Size([201, 40])
    """
    if mel_scale not in ("htk", "slaney"):
        raise ValueError(f"Argument `mel_scale` must be 'htk' or 'slaney'. Received: {mel_scale!r}")
    if norm not in (None, "slaney"):
        raise ValueError(f"Argument `norm` must be None or 'slaney'. Received: {norm!r}")
    freqs = torch.linspace(0, sample_rate // 2, n_freqs, dtype=torch.float64)
    mels = torch.linspace(
        _hz_to_mel(f_min, mel_scale), _hz_to_mel(f_max, mel_scale), n_mels + 2, dtype=torch.float64
    )
    points = _mel_to_hz(mels, mel_scale)
    widths = points[1:] - points[:-1]
    slopes = points[None, :] - freqs[:, None]
    rising = -slopes[:, :-2] / widths[:-1]
    falling = slopes[:, 2:] / widths[1:]
    bank = torch.clamp(torch.minimum(rising, falling), min=0.0)
    if norm == "slaney":
        bank = bank * (2.0 / (points[2 : n_mels + 2] - points[:n_mels]))[None, :]
    return bank.to(torch.float32)


class MelSpectrogram:
    """Mel spectrogram of `(..., time)` audio: `(..., n_mels, frames)` (torchaudio's
    `MelSpectrogram`, same arguments and defaults; `window_fn` is called as
    `window_fn(win_length)`).

    Example:
        >>> MelSpectrogram(n_mels=20)(torch.zeros(2, 1600)).shape
        torch.Size([2, 20, 9])
    """

    def __init__(
        self,
        sample_rate: int = 16000,
        n_fft: int = 400,
        win_length: int | None = None,
        hop_length: int | None = None,
        f_min: float = 0.0,
        f_max: float | None = None,
        pad: int = 0,
        n_mels: int = 128,
        window_fn: Callable[[int], Tensor] = torch.hann_window,
        power: float = 2.0,
        normalized: bool = False,
        center: bool = True,
        pad_mode: str = "reflect",
        norm: str | None = None,
        mel_scale: str = "htk",
    ) -> None:
        self.sample_rate, self.n_fft = sample_rate, n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.pad, self.power, self.normalized = pad, power, normalized
        self.center, self.pad_mode = center, pad_mode
        self.window = window_fn(self.win_length)
        f_max = f_max if f_max is not None else sample_rate / 2
        self.filterbank = mel_filterbank(
            n_fft // 2 + 1, f_min, f_max, n_mels, sample_rate, norm, mel_scale
        )

    def to(self, device: torch.device | str | None) -> MelSpectrogram:
        """Move the window and filterbank to `device` (None: stay)."""
        if device is not None:
            self.window, self.filterbank = self.window.to(device), self.filterbank.to(device)
        return self

    def __call__(self, waveform: Tensor) -> Tensor:
        shape = waveform.shape
        flat = waveform.reshape(-1, shape[-1])
        if self.pad > 0:
            flat = torch.nn.functional.pad(flat, (self.pad, self.pad))
        spec = torch.stft(
            flat,
            self.n_fft,
            hop_length=self.hop_length,
            win_length=self.win_length,
            window=self.window.to(flat.device, flat.dtype),
            center=self.center,
            pad_mode=self.pad_mode,
            normalized=self.normalized,
            onesided=True,
            return_complex=True,
        )
        power = spec.abs().pow(self.power)
        mel = torch.matmul(power.transpose(-1, -2), self.filterbank.to(power.dtype))
        return mel.transpose(-1, -2).reshape(*shape[:-1], mel.shape[-1], mel.shape[-2])


def _power_to_db(x: Tensor, top_db: float | None = 80.0) -> Tensor:
    db = 10.0 * torch.log10(torch.clamp(x, min=1e-10))
    if top_db is None:
        return db
    # The floor is per item: over channels, mels and frames (torchaudio's packing).
    packed = db.reshape(-1, *db.shape[-3:]) if db.dim() > 2 else db.reshape(1, 1, *db.shape)
    floor = packed.amax(dim=(-3, -2, -1)) - top_db
    return torch.maximum(packed, floor[:, None, None, None]).reshape(db.shape)


def _dct_matrix(n_mfcc: int, n_mels: int, norm: str | None) -> Tensor:
    n = torch.arange(n_mels, dtype=torch.float64)
    k = torch.arange(n_mfcc, dtype=torch.float64)[:, None]
    dct = torch.cos(math.pi / n_mels * (n + 0.5) * k)
    if norm is None:
        dct = dct * 2.0
    else:
        dct[0] *= 1.0 / math.sqrt(2.0)
        dct = dct * math.sqrt(2.0 / n_mels)
    return dct.t().to(torch.float32)


def _split_batch(name: str, batch: Any) -> tuple[Tensor, Any, Any]:
    if not isinstance(batch, tuple):
        raise TypeError(
            f"{name} expects a batch tuple (data, targets) or (data, targets, kwargs). "
            f"Received: {type(batch).__name__}"
        )
    if len(batch) not in (2, 3):
        raise ValueError(
            f"{name} expects a batch tuple (data, targets) or (data, targets, kwargs). "
            f"Received a tuple of length {len(batch)}"
        )
    return batch[0], batch[1], batch[2] if len(batch) == 3 else None


class MFCCPreProcessor(PreProcessor):
    """MFCCs of audio batches, NeuroBench's `MFCCPreProcessor` (torchaudio's `MFCC`).

    A batch is `(data, targets)` or `(data, targets, kwargs)`, `data` `(batch, time,
    channels)` (or a list of such tensors, stacked); it becomes `(mfcc, targets[, kwargs])`
    with `mfcc` of shape `(batch, channels, n_mfcc, frames)`.

    Args:
        sample_rate: Sample rate of the audio.
        n_mfcc: Coefficients kept (at most `n_mels`).
        dct_type: 2 (the only type torchaudio offers).
        norm: ``"ortho"`` or None, the DCT's normalisation.
        log_mels: Natural log of mel + 1e-6 instead of decibels.
        melkwargs: `MelSpectrogram` arguments (torchaudio's defaults otherwise).
        device: Where to compute.

    Example:
        >>> mfcc = MFCCPreProcessor(n_mfcc=13, melkwargs={"n_mels": 40})
        >>> mfcc((torch.randn(2, 1600, 1), torch.zeros(2)))[0].shape
        torch.Size([2, 1, 13, 9])
    """

    def __init__(
        self,
        sample_rate: int = 16000,
        n_mfcc: int = 40,
        dct_type: int = 2,
        norm: str | None = "ortho",
        log_mels: bool = False,
        melkwargs: dict[str, Any] | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        if dct_type != 2:
            raise ValueError(f"Argument `dct_type` must be 2. Received: dct_type={dct_type!r}")
        if norm not in (None, "ortho"):
            raise ValueError(f"Argument `norm` must be 'ortho' or None. Received: norm={norm!r}")
        self.sample_rate, self.n_mfcc, self.dct_type = sample_rate, n_mfcc, 2
        self.norm, self.log_mels, self.melkwargs = norm, log_mels, melkwargs
        self.mel = MelSpectrogram(sample_rate=sample_rate, **(melkwargs or {})).to(device)
        n_mels = self.mel.filterbank.shape[1]
        if n_mfcc > n_mels:
            raise ValueError(
                f"Argument `n_mfcc` must be <= n_mels ({n_mels}). Received: n_mfcc={n_mfcc}"
            )
        self.dct = _dct_matrix(n_mfcc, n_mels, norm)
        if device is not None:
            self.dct = self.dct.to(device)

    def transform(self, audio: Tensor) -> Tensor:
        """MFCCs of `(..., time)` audio: `(..., n_mfcc, frames)`."""
        mel = self.mel(audio)
        mel = torch.log(mel + 1e-6) if self.log_mels else _power_to_db(mel)
        coefficients = torch.matmul(mel.transpose(-1, -2), self.dct.to(mel.device, mel.dtype))
        return coefficients.transpose(-1, -2)

    def __call__(self, dataset: Any) -> Any:
        data, targets, kwargs = _split_batch("MFCCPreProcessor", dataset)
        if isinstance(data, list):
            data = torch.vstack(data)
        if data.dim() == 3:
            data = data.permute(0, 2, 1)  # (batch, time, channels) to (batch, channels, time)
        result = self.transform(data)
        return (result, targets, kwargs) if kwargs else (result, targets)


def delta_events(signal: Tensor, threshold: float = 1.0) -> Tensor:
    """Delta modulation over the last dimension: +1 where the signal rose more than
    `threshold` above the running level, -1 where it fell more than that below, else 0;
    the level starts at the rounded first value and moves by `threshold` per event.

    Args:
        signal: `(..., time)`.
        threshold: The step.

    Returns:
        Events, float32, of the signal's shape.

    Example:
        >>> delta_events(torch.tensor([0.0, 1.5, 3.2, 0.1])).tolist()
        [0.0, 1.0, 1.0, -1.0]
    """
    events = torch.zeros(signal.shape, device=signal.device)
    level = torch.round(signal[..., 0])
    for t in range(signal.shape[-1]):
        step = signal[..., t] - level
        event = (step > threshold).to(torch.int8) - (step < -threshold).to(torch.int8)
        events[..., t] = event
        level = level + events[..., t] * threshold
    return events


class S2SPreProcessor(PreProcessor):
    """Speech2spikes: audio to -1/0/+1 events, NeuroBench's `S2SPreProcessor`.

    A batch `(audio (batch, time, channels), targets[, kwargs])` becomes
    `(events (batch, frames, n_mels), targets[, kwargs])`: a log mel spectrogram (16 kHz,
    20 mels from 20 Hz to 4 kHz, 512-point FFT, hop 80, by default) delta-modulated over time.
    Like NeuroBench's, the output is squeezed (a batch of one loses its batch dimension) and a
    first frame is dropped when the frame count is `time / hop_length + 1`.

    Args:
        device: Where to compute.
        transpose: The audio is `(batch, time, channels)` and is transposed first.
        log_offset: Added to the mel spectrogram before the log.

    Example:
        >>> S2SPreProcessor()((torch.randn(2, 1600, 1), torch.zeros(2)))[0].shape
        torch.Size([2, 20, 20])
    """

    def __init__(
        self,
        device: torch.device | str | None = None,
        transpose: bool = True,
        log_offset: float = 1e-6,
    ) -> None:
        self.device, self.transpose, self.log_offset = device, transpose, log_offset
        self.spec_kwargs: dict[str, Any] = {
            "sample_rate": 16000,
            "n_mels": 20,
            "n_fft": 512,
            "f_min": 20,
            "f_max": 4000,
            "hop_length": 80,
        }
        self.threshold: float = 1
        self.transform = MelSpectrogram(**self.spec_kwargs).to(device)

    def configure(self, threshold: float = 1, **spec_kwargs: Any) -> None:
        """Set the delta threshold and `MelSpectrogram` arguments (merged with the current).

        Args:
            threshold: The delta modulation's step.
            **spec_kwargs: `MelSpectrogram` arguments.
        """
        self.threshold = threshold
        self.spec_kwargs = {**self.spec_kwargs, **spec_kwargs}
        self.transform = MelSpectrogram(**self.spec_kwargs).to(self.device)

    def __call__(self, batch: Any) -> Any:
        audio, targets, kwargs = _split_batch("S2SPreProcessor", batch)
        timesteps = audio.shape[1]
        tensors = audio.transpose(1, 2) if self.transpose else audio
        tensors = self.transform(tensors)
        if self.log_offset:
            tensors = tensors + self.log_offset
        events = delta_events(torch.log(tensors), self.threshold)
        events = events.transpose(1, 3).squeeze()
        if events.shape[1] == timesteps / self.spec_kwargs["hop_length"] + 1:
            events = events[:, 1:, :]
        return (events, targets, kwargs) if kwargs else (events, targets)
