"""NeuroBench's `SpeechCommands` (Google Speech Commands v0.02, 35 keywords) over local files,
without torchaudio."""

from __future__ import annotations

import os

import torch
from torch import Tensor
from torch.utils.data import Dataset

from torchtally.bench.datasets._files import load_wav, missing_files_error, refuse_download

__all__ = ["SpeechCommands"]

FOLDER = os.path.join("SpeechCommands", "speech_commands_v0.02")
NOISE_FOLDER = "_background_noise_"
SOURCE = (
    "http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz (extract it into "
    "<path>/SpeechCommands/speech_commands_v0.02/)"
)
_SUBSETS = (None, "training", "validation", "testing")


class SpeechCommands(Dataset[tuple[Tensor, Tensor]]):
    """NeuroBench's `SpeechCommands`: items `(waveform, label)`, the waveform `(16000, 1)`
    float32 in [-1, 1) (1 s at 16 kHz, truncated or zero-padded), the label a 0-d long tensor.

    The files are torchaudio's `SPEECHCOMMANDS` layout:
    `<path>/SpeechCommands/speech_commands_v0.02/<keyword>/<speaker>_nohash_<n>.wav` with
    `validation_list.txt` and `testing_list.txt` beside the keyword folders. Subsets and item
    order are torchaudio's: "validation"/"testing" follow their list file; "training" is every
    other `*_nohash_*.wav` (outside `_background_noise_`), sorted by path; `None` is all of them.
    Labels index the sorted keyword folders (NeuroBench's numbering; `_background_noise_` has
    none). WAV is read with the standard library, so neither torchaudio nor a download is needed.

    Args:
        path: The root folder (the one holding `SpeechCommands/`).
        subset: `"training"`, `"validation"`, `"testing"` or `None` (every clip).
        truncate_or_pad_to_1s: Cut or zero-pad each clip to one second. Without it an item's
            waveform is `(channels, frames, 1)`, as NeuroBench returns it.
        download: Must be False: torchtally never downloads (NeuroBench always does).

    Raises:
        FileNotFoundError: If the folder or a list file a subset needs is missing, naming it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        subset: str | None = None,
        truncate_or_pad_to_1s: bool = True,
        download: bool = False,
    ) -> None:
        if subset not in _SUBSETS:
            raise ValueError(
                "Argument `subset` must be one of 'training', 'validation', 'testing' or None. "
                f"Received: subset={subset!r}"
            )
        self.truncate_or_pad_to_1s = truncate_or_pad_to_1s
        self._path = os.path.join(os.fspath(path), FOLDER)
        where = f"the keyword folders, validation_list.txt and testing_list.txt in {self._path!r}"
        refuse_download("SpeechCommands", download, where, SOURCE)
        if not os.path.isdir(self._path):
            raise missing_files_error("SpeechCommands", [self._path], SOURCE)
        keywords = sorted(
            entry.name
            for entry in os.scandir(self._path)
            # glob's rule, as in torchaudio and NeuroBench: hidden folders are not keywords.
            if entry.is_dir() and entry.name != NOISE_FOLDER and not entry.name.startswith(".")
        )
        self.labels = {keyword: index for index, keyword in enumerate(keywords)}
        self._walker = self._clips(subset)

    def _listed(self, *names: str) -> list[str]:
        files = [os.path.join(self._path, name) for name in names]
        missing = [f for f in files if not os.path.isfile(f)]
        if missing:
            raise missing_files_error("SpeechCommands", missing, SOURCE)
        clips = []
        for file in files:
            with open(file, encoding="utf-8") as listing:
                clips += [os.path.normpath(line.strip()) for line in listing if line.strip()]
        return clips

    def _clips(self, subset: str | None) -> list[str]:
        if subset == "validation":
            return self._listed("validation_list.txt")
        if subset == "testing":
            return self._listed("testing_list.txt")
        held_out = set(self._listed("validation_list.txt", "testing_list.txt")) if subset else set()
        every = sorted(
            os.path.join(keyword, name)
            for keyword in self.labels
            for name in os.listdir(os.path.join(self._path, keyword))
            if name.endswith(".wav") and "_nohash_" in name and not name.startswith(".")
        )
        return [clip for clip in every if clip not in held_out]

    def label_to_index(self, label: str) -> Tensor:
        """The label's index as a 0-d long tensor."""
        if label not in self.labels:
            raise KeyError(
                f"Argument `label` must be one of the keyword folders {sorted(self.labels)}. "
                f"Received: label={label!r}"
            )
        return torch.tensor(self.labels[label])

    def __getitem__(self, idx: int) -> tuple[Tensor, Tensor]:
        clip = self._walker[idx]
        file = os.path.join(self._path, clip)
        if not os.path.isfile(file):
            raise missing_files_error("SpeechCommands", [file], SOURCE)
        waveform, rate = load_wav(file)
        if self.truncate_or_pad_to_1s:
            if waveform.shape[0] != 1:
                raise ValueError(
                    f"SpeechCommands clips must be mono. Received: {waveform.shape[0]} "
                    f"channels in {file!r}"
                )
            # NeuroBench pads to one second (its truncation branch never runs: it compares
            # the channel count with the rate); longer clips are cut here instead of failing.
            one_second = torch.zeros(rate)
            frames = min(rate, waveform.shape[1])
            one_second[:frames] = waveform[0, :frames]
            waveform = one_second
        return waveform.unsqueeze(-1), self.label_to_index(os.path.dirname(clip))

    def __len__(self) -> int:
        return len(self._walker)
