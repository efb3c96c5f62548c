"""Local-file helpers shared by the data-set loaders: WAV reading without torchaudio, and the
errors for missing files (torchtally never downloads)."""

from __future__ import annotations

import os
import wave
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

__all__ = ["load_wav", "missing_files_error", "refuse_download"]

# Divisors that map each PCM width onto [-1, 1), as torchaudio.load(normalize=True) does.
_PCM_SCALE = {2: 32768.0, 3: 8388608.0, 4: 2147483648.0}


def _pcm_to_float(raw: bytes, width: int, channels: int) -> np.ndarray:
    if width == 1:  # 8-bit WAV is unsigned, centred on 128
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 3:  # no numpy 24-bit type: widen each little-endian triple to int32
        triples = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)
        ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
        data = ints.astype(np.float64) / _PCM_SCALE[3]
    else:
        dtype = {2: "<i2", 4: "<i4"}[width]
        data = np.frombuffer(raw, dtype=dtype).astype(np.float64) / _PCM_SCALE[width]
    return data.astype(np.float32).reshape(-1, channels).T


def _load_float_wav(path: str) -> tuple[Tensor, int]:
    try:
        from scipy.io import wavfile
    except ImportError as error:
        raise ImportError(
            f"Reading the non-PCM WAV file {path!r} needs scipy (`pip install scipy`); "
            "16/24/32-bit integer PCM WAV files need only the standard library."
        ) from error
    rate, data = wavfile.read(path)
    data = np.asarray(data, dtype=np.float32)
    data = data[:, None] if data.ndim == 1 else data
    return torch.from_numpy(np.ascontiguousarray(data.T)), int(rate)


def load_wav(path: str | os.PathLike[str]) -> tuple[Tensor, int]:
    """A WAV file as torchaudio.load returns it: a float32 `(channels, frames)` tensor scaled to
    [-1, 1), and the sample rate. Integer PCM is read with the standard library's `wave`; float
    WAV needs scipy."""
    path = os.fspath(path)
    if not path.lower().endswith(".wav"):
        raise ValueError(
            f"Only WAV audio can be read without torchaudio. Received: {path!r} (convert it to "
            "WAV first, e.g. `ffmpeg -i in.opus -ar 48000 out.wav`, keeping the sample rate the "
            "data set expects)"
        )
    try:
        with wave.open(path, "rb") as reader:
            channels, width = reader.getnchannels(), reader.getsampwidth()
            rate, raw = reader.getframerate(), reader.readframes(reader.getnframes())
    except wave.Error:
        # The standard library reads integer PCM only (format tag 1).
        return _load_float_wav(path)
    return torch.from_numpy(_pcm_to_float(raw, width, channels)), rate


def refuse_download(dataset: str, download: bool, where: str, source: str) -> None:
    """`download=True` is refused up front, naming the files to place and where: torchtally
    reads local files only."""
    if download:
        raise ValueError(
            f"{dataset}: argument `download` must be False: torchtally never downloads data. "
            f"Received: download=True. Place {where} (from {source}) and pass download=False."
        )


def missing_files_error(dataset: str, missing: Sequence[str], source: str) -> FileNotFoundError:
    """The error for absent data files, naming every one and where the data comes from."""
    listed = ", ".join(repr(p) for p in missing[:10])
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    return FileNotFoundError(
        f"{dataset}: missing data file(s) {listed}{more}. torchtally never downloads data: "
        f"get it from {source} and place it there."
    )
