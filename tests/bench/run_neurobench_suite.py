"""Run NeuroBench's own test suite against torchtally.bench (imports redirected).

    python tests/bench/run_neurobench_suite.py /path/to/neurobench-checkout [pytest args]

Copies the checkout's tests/ to a temporary folder, rewrites every `neurobench` import of the
models, metrics, processors and data sets to `torchtally.bench` (data sets to
`torchtally.bench.datasets`), provides a stand-in `torchaudio` module whose `load` reads 16-bit
PCM WAV with the standard library (torchaudio has no build for every torch), and runs pytest
there. The data-set tests need NeuroBench's downloaded data; pass
`--ignore=tests/test_datasets.py` to leave them out. At NeuroBench v2.3.0 the other 28 pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REDIRECTS = [
    (r"from neurobench\.models import", "from torchtally.bench import"),
    (r"from neurobench\.metrics\.(workload|static) import", "from torchtally.bench import"),
    (r"from neurobench\.processors\.postprocessors import", "from torchtally.bench import"),
    (
        r"from neurobench\.processors\.preprocessors\.(mfcc|speech2spikes) import",
        "from torchtally.bench import",
    ),
    (r"from neurobench\.datasets import", "from torchtally.bench.datasets import"),
]

TORCHAUDIO_STAND_IN = """
import wave

import numpy as np
import torch


def load(path):
    with wave.open(str(path)) as w:
        channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
        raw = w.readframes(w.getnframes())
    if width != 2:
        raise ValueError(f"only 16-bit PCM is read here; {path} has {8 * width}-bit samples")
    pcm = np.frombuffer(raw, dtype="<i2").reshape(-1, channels).T
    return torch.from_numpy(pcm.astype(np.float32) / 32768.0), rate
"""


def main(argv: list[str]) -> int:
    if not argv or not (Path(argv[0]) / "tests").is_dir():
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        shutil.copytree(Path(argv[0]) / "tests", root / "tests")
        for path in (root / "tests").rglob("*.py"):
            text = path.read_text()
            for pattern, replacement in REDIRECTS:
                text = re.sub(pattern, replacement, text)
            path.write_text(text)
        (root / "torchaudio.py").write_text(TORCHAUDIO_STAND_IN)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        return subprocess.call([*command, *argv[1:]], cwd=root)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
