"""NeuroBench's MSWC few-shot class-incremental keyword-spotting data (`MSWC`, `MSWC_query`,
`IncrementalFewShot`) over the local files of its Hugging Face subset, without torchaudio."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset, IterableDataset

from torchtally.bench.datasets._files import load_wav, missing_files_error, refuse_download

__all__ = ["FSCIL_KEYWORDS", "MSWC", "IncrementalFewShot", "MSWC_query"]

SAMPLE_RATE = 48000
FOLDER_AUDIO = "clips"
SOURCE = (
    "https://huggingface.co/datasets/NeuroBench/mswc_fscil_subset (extract mswc_fscil.tar.gz "
    "into <root>, giving <root>/MSWC/)"
)
INCREMENTAL_LANGUAGES = ("fa", "eo", "pt", "eu", "pl", "cy", "nl", "ru", "es", "it")

# The 200 keywords in NeuroBench's label order: 100 base classes (20 each of en, fr, ca, de,
# rw), then 10 for each incremental language.
_KEYWORD_ROWS = (
    # en
    (
        "surrounding appearance collection subsequently experience previously "
        "professional immediately independent successful traditional development "
        "international established information instruments construction performance "
        "university significant"
    ),
    # fr
    (
        "nombreuses l’amendement nationale défavorable toutefois professeur française "
        "commission actuellement politique territoire aujourd’hui gouvernement rapidement "
        "notamment troisième plusieurs maintenant personnes cinquante"
    ),
    # ca
    (
        "tanmateix superior catalunya finalment treballar qualsevol principalment "
        "rectangular important mitjançant president finestres caràcter diferents "
        "programari obertures posteriorment barcelona importants informació"
    ),
    # de
    (
        "allerdings arbeitete deutschland schließlich verheiratet vielleicht verschiedene "
        "bezeichnet gleichzeitig parlament unternehmen entwicklung europäischen "
        "zahlreiche geschichte verwendet anschließend hauptstadt errichtet eigentlich"
    ),
    # rw
    (
        "amahirwe umutekano gukomeza amafaranga abanyarwanda urubyiruko n’abandi ashobora "
        "umuryango abayobozi w’umupira perezida umukinnyi gitaramo w’amaguru abaturage "
        "amashusho minisitiri indirimbo bitandukanye"
    ),
    # fa
    ("میخواستم امیدوارم تلویزیون آپارتمان بینالمللی بنابراین اسفندیار پرسپولیس بفرمایید میتوانند"),
    # eo
    ("demandis respondis sinjorino rigardis fernando ankoraŭ beatrico troviĝas ekzistas esperanto"),
    # pt
    ("enquanto correndo olhando dinheiro vestindo segurando crianças mulheres trabalho cachorro"),
    # eu
    (
        "bakarrik ezagutzen hizkuntza horregatik bitartean erabiltzen horrelako gertatzen "
        "eskatzen batzuetan"
    ),
    # pl
    (
        "podlasiak zupełnie odpowiedział dziwożona jednoręki widocznie powiedział "
        "spojrzał człowiek wszystkich"
    ),
    # cy
    (
        "gobeithio newyddion wybodaeth ddigwyddodd eisteddfod genedlaethol gwasanaeth "
        "gwahaniaeth ffrindiau gerddoriaeth"
    ),
    # nl
    ("gezien iedereen tussen kinderen tijdens worden hoeveel kunnen nieuwe gemaakt"),
    # ru
    (
        "приверженность действительно сотрудничества необходимость деятельности "
        "правительства поблагодарить представителю международного ответственность"
    ),
    # es
    (
        "comunicación arquitectura completamente continuación departamento internacional "
        "especialmente posteriormente investigación generalmente"
    ),
    # it
    (
        "particolare territorio campionato importante capoluogo nonostante attraverso "
        "posizione soprattutto produzione"
    ),
)
FSCIL_KEYWORDS: tuple[str, ...] = tuple(word for row in _KEYWORD_ROWS for word in row.split())
"""The 200 MSWC keywords of NeuroBench's few-shot class-incremental task, in label order:
100 base classes (20 each of en, fr, ca, de, rw), then 10 for each `INCREMENTAL_LANGUAGES`."""
_LABELS = {word: index for index, word in enumerate(FSCIL_KEYWORDS)}

# One entry per clip: (path under the language's clips/ folder, label, language or folder).
Entry = tuple[str, int, str]


def _read_split(split_path: str) -> list[Entry]:
    if not os.path.isfile(split_path):
        raise missing_files_error("MSWC", [split_path], SOURCE)
    entries = []
    with open(split_path, encoding="utf-8") as listing:
        for number, line in enumerate(listing, start=1):
            fields = line.strip().split(",")
            if fields == [""]:
                continue
            if len(fields) != 3:
                raise ValueError(
                    f"MSWC: line {number} of {split_path!r} must be 'PATH,WORD,LANG'. "
                    f"Received: {line.strip()!r}"
                )
            path, word, language = fields
            if word == "WORD":  # the header
                continue
            if word not in _LABELS:
                raise ValueError(
                    f"MSWC: line {number} of {split_path!r} names {word!r}, which is not one "
                    "of the 200 FSCIL_KEYWORDS"
                )
            entries.append((path, _LABELS[word], language))
    return entries


def _clip(folder: str, path: str) -> Tensor:
    """One clip as `(48000, 1)`: 1 s at 48 kHz, zero-padded (or cut: NeuroBench fails on
    longer clips)."""
    file = os.path.join(folder, path)
    if not os.path.isfile(file):
        raise missing_files_error("MSWC", [file], SOURCE)
    waveform, rate = load_wav(file)
    if rate != SAMPLE_RATE:
        raise ValueError(
            f"MSWC clips must be sampled at {SAMPLE_RATE} Hz. Received: {rate} Hz in {file!r}"
        )
    one_second = torch.zeros(waveform.shape[0], SAMPLE_RATE)
    frames = min(SAMPLE_RATE, waveform.shape[1])
    one_second[:, :frames] = waveform[:, :frames]
    return one_second.transpose(0, 1)


class MSWC(Dataset[tuple[Any, ...]]):
    """NeuroBench's `MSWC`: the 200-keyword few-shot class-incremental subset of the
    Multilingual Spoken Words Corpus. Items are `(waveform, label)`, the waveform `(48000, 1)`
    float32 (1 s at 48 kHz, zero-padded), the label an int indexing `FSCIL_KEYWORDS`; the
    evaluation subset (and `incremental=True`) adds the clip's folder and path:
    `(waveform, label, folder, path)`.

    Files (NeuroBench's Hugging Face subset, extracted): `<root>/MSWC/base_train.csv`,
    `base_val.csv`, `base_test.csv` and `<root>/MSWC/<language>/evaluation.csv`, lines
    `PATH,WORD,LANG` (header `...,WORD,...`), each clip at `<root>/MSWC/<LANG>/clips/<PATH>`.
    Clips must be 48 kHz WAV (read with the standard library; torchaudio is not needed).

    Args:
        root: The folder holding `MSWC/`.
        subset: `"base"` (the 100 pre-training classes) or `"evaluation"` (one language's
            incremental classes).
        procedure: For `"base"`: `"training"`, `"validation"` or `"testing"`.
        language: For `"evaluation"`: the language's code, e.g. `"pt"`.
        incremental: For `"base"`: return the folder and path too.
        download: Must be False: torchtally never downloads (NeuroBench's default is True).

    Raises:
        FileNotFoundError: If the split's CSV is missing (or, when read, a clip), naming it.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        subset: str | None = None,
        procedure: str | None = None,
        language: str | None = None,
        incremental: bool | None = False,
        download: bool = False,
    ) -> None:
        self.root = os.fspath(root)
        self.dataset_folder = os.path.join(self.root, "MSWC")
        procedures = {"training": "train", "validation": "val", "testing": "test"}
        if subset == "base":
            if procedure not in procedures:
                raise ValueError(
                    "Argument `procedure` must be 'training', 'validation' or 'testing' for "
                    f"subset='base'. Received: procedure={procedure!r}"
                )
            self.procedure: str | None = procedures[procedure]
            split_path = os.path.join(self.dataset_folder, f"base_{self.procedure}.csv")
            self.return_path = bool(incremental)
        elif subset == "evaluation":
            if not isinstance(language, str) or not language:
                raise ValueError(
                    "Argument `language` must be a language code such as 'pt' for "
                    f"subset='evaluation'. Received: language={language!r}"
                )
            self.procedure = None
            split_path = os.path.join(self.dataset_folder, language, "evaluation.csv")
            self.return_path = True
        else:
            raise ValueError(
                f"Argument `subset` must be 'base' or 'evaluation'. Received: subset={subset!r}"
            )
        self.subset = subset
        refuse_download("MSWC", download, f"{split_path!r} and the clips it lists", SOURCE)
        self._walker = _read_split(split_path)

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        path, label, language = self._walker[index]
        folder = os.path.join(self.dataset_folder, language, FOLDER_AUDIO)
        waveform = _clip(folder, path)
        return (waveform, label, folder, path) if self.return_path else (waveform, label)

    def __len__(self) -> int:
        return len(self._walker)


class MSWC_query(Dataset[tuple[Tensor, int]]):
    """NeuroBench's query set of an incremental session: `(path, label, folder)` entries read
    as `(waveform, label)` items."""

    def __init__(self, walker: Sequence[tuple[str, int, str]]) -> None:
        self._walker = list(walker)

    def __getitem__(self, index: int) -> tuple[Tensor, int]:
        path, label, folder = self._walker[index]
        return _clip(folder, path), label

    def __len__(self) -> int:
        return len(self._walker)


class IncrementalFewShot(IterableDataset[Any]):
    """NeuroBench's `IncrementalFewShot`: iterating yields one session per language, in random
    order, as `(support, query_set, query_classes)`: `support` a list of `k_shot` batches
    `(waveforms (n_way, 48000, 1), labels (n_way,))` of 10 random classes of the language,
    `query_set` an `MSWC_query` holding `query_shots` clips of every class seen so far, and
    `query_classes` those classes. Draws use Python's `random` and NumPy's global generator in
    NeuroBench's order, so the same seeds give NeuroBench's sessions.

    Args:
        k_shot: Support clips per class.
        root: The folder holding `MSWC/`.
        inc_languages: The incremental sessions' languages.
        query_shots: Query clips per class (`-1`: `k_shot`).
        support_query_split: `(n_support, n_query)`: disjoint pools, the first `n_support` and
            the next `n_query` clips of each class. Without it both draw from all 200 clips of
            a class (NeuroBench then draws from `range(first index)` by mistake).
    """

    samples_per_class = 200
    n_way = 10

    def __init__(
        self,
        k_shot: int,
        root: str | os.PathLike[str],
        inc_languages: Sequence[str] = INCREMENTAL_LANGUAGES,
        query_shots: int = -1,
        support_query_split: tuple[int, int] | None = None,
    ) -> None:
        n_support, n_query = support_query_split or (self.samples_per_class,) * 2
        if n_support + n_query > self.samples_per_class and support_query_split is not None:
            raise ValueError(
                "Argument `support_query_split` must be two pool sizes summing to at most "
                f"{self.samples_per_class}. Received: support_query_split={support_query_split!r}"
            )
        shots = query_shots if query_shots != -1 else k_shot
        if not 1 <= k_shot <= n_support or not 1 <= shots <= n_query:
            raise ValueError(
                f"Arguments `k_shot` and `query_shots` must be between 1 and the support and "
                f"query pools ({n_support}, {n_query} clips per class). Received: "
                f"k_shot={k_shot}, query_shots={query_shots}"
            )
        self.k_shot = k_shot
        self.root = os.fspath(root)
        self.languages = list(inc_languages)
        self.query_shots = query_shots if query_shots != -1 else k_shot
        self.support_query_split = support_query_split
        self.indices_per_lang = {
            language: self._pools(MSWC(self.root, "evaluation", language=language))
            for language in self.languages
        }
        self.cumulative_query: list[tuple[str, int, str]] = []

    def _pools(self, dataset: MSWC) -> dict[int, tuple[list[int], list[int]]]:
        # Each class's clips are listed together, `samples_per_class` of them.
        pools = {}
        for start in range(0, len(dataset) - self.samples_per_class + 1, self.samples_per_class):
            label = dataset._walker[start][1]
            indices = list(range(start, start + self.samples_per_class))
            if self.support_query_split is None:
                pools[label] = (indices, indices)
            else:
                n_support, n_query = self.support_query_split
                pools[label] = (indices[:n_support], indices[n_support : n_support + n_query])
        return pools

    def __iter__(self) -> Iterator[tuple[list[tuple[Tensor, Tensor]], MSWC_query, list[int]]]:
        sessions: dict[str, list[int]] = {}
        self.cumulative_query = []
        for language in random.sample(self.languages, len(self.languages)):
            dataset = MSWC(self.root, "evaluation", language=language)
            pools = self.indices_per_lang[language]
            sessions[language] = random.sample(sorted(pools), self.n_way)
            yield self._session(dataset, pools, sessions[language], sessions)

    def _session(
        self,
        dataset: MSWC,
        pools: dict[int, tuple[list[int], list[int]]],
        classes: list[int],
        sessions: dict[str, list[int]],
    ) -> tuple[list[tuple[Tensor, Tensor]], MSWC_query, list[int]]:
        def folder(language: str) -> str:
            return os.path.join(dataset.dataset_folder, language, FOLDER_AUDIO)

        # The query set grows by this session's classes; it is copied (NeuroBench hands every
        # session the same list, so earlier query sets grow too).
        for label in classes:
            for j in np.random.choice(pools[label][1], self.query_shots, replace=False):
                path, _, language = dataset._walker[int(j)]
                self.cumulative_query.append((path, label, folder(language)))
        shots: list[list[tuple[Tensor, int]]] = [[] for _ in range(self.k_shot)]
        for label in classes:
            picks = np.random.choice(pools[label][0], self.k_shot, replace=False)
            for shot, j in enumerate(picks):
                path, real_label, language = dataset._walker[int(j)]
                shots[shot].append((_clip(folder(language), path), real_label))
        support = [
            (torch.stack([x for x, _ in shot]), torch.tensor([y for _, y in shot]))
            for shot in shots
        ]
        seen = [label for labels in sessions.values() for label in labels]
        return support, MSWC_query(self.cumulative_query), seen
