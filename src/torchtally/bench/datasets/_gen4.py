"""NeuroBench's `Gen4DetectionDataLoader` (Prophesee Gen4 automotive detection): its files are
checked, but the loader needs Prophesee's Metavision SDK, so constructing it is a clear error."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from torchtally.bench.datasets._files import missing_files_error

__all__ = ["Gen4DetectionDataLoader"]

SOURCE = (
    "https://docs.prophesee.ai/stable/datasets.html#precomputed-datasets ('Gen 4 Histograms', "
    "extracted so that <dataset_path>/train, val and test hold the .h5 files)"
)
_SPLIT_FOLDERS = {"training": "train", "validation": "val", "testing": "test"}


class Gen4DetectionDataLoader:
    """NeuroBench's `Gen4DetectionDataLoader`, with its arguments, is not reimplemented.

    NeuroBench's is a subclass of Prophesee's `metavision_ml.data.SequentialDataLoader`: it
    streams `num_tbins` consecutive histogram frames of several recordings side by side, pads and
    masks recording boundaries (`mask_keep_memory`, `frame_is_labeled`) and loads boxes with
    `metavision_ml.data.box_processing.load_boxes`. That SDK is not on PyPI and its batching has
    no public specification to test a rewrite against, so this class checks the data files (a
    missing folder or an empty split is a `FileNotFoundError` naming it) and then raises
    `NotImplementedError` saying so: install the Metavision SDK and use NeuroBench's loader.

    Args:
        dataset_path: The extracted "Gen 4 Histograms" folder (holding `train/`, `val/`,
            `test/` with `.h5` files).
        split: `"training"`, `"validation"` or `"testing"`.
        **neurobench_arguments: `batch_size`, `num_tbins`, `preprocess_function_name`,
            `delta_t`, `channels`, `height`, `width`, `max_incr_per_pixel`,
            `class_selection`, `num_workers`: NeuroBench's, accepted and unused.
    """

    def __init__(
        self,
        dataset_path: str | os.PathLike[str] = "data/Gen 4 Histograms",
        split: str = "testing",
        batch_size: int = 4,
        num_tbins: int = 12,
        preprocess_function_name: str = "histo",
        delta_t: int = 50000,
        channels: int = 2,
        height: int = 360,
        width: int = 640,
        max_incr_per_pixel: int = 5,
        class_selection: Sequence[str] = ("pedestrian", "two wheeler", "car"),
        num_workers: int = 4,
    ) -> None:
        if split not in _SPLIT_FOLDERS:
            raise ValueError(
                "Argument `split` must be 'training', 'validation' or 'testing'. "
                f"Received: split={split!r}"
            )
        folder = os.path.join(os.fspath(dataset_path), _SPLIT_FOLDERS[split])
        if not glob.glob(os.path.join(glob.escape(folder), "*.h5")):
            raise missing_files_error(
                "Gen4DetectionDataLoader", [os.path.join(folder, "*.h5")], SOURCE
            )
        raise NotImplementedError(
            "Gen4DetectionDataLoader: torchtally does not reimplement this loader. NeuroBench's "
            "is Prophesee's metavision_ml.data.SequentialDataLoader (from the Metavision SDK, "
            "not on PyPI), whose streaming of consecutive time bins across recordings, padding "
            "masks and box loading have no public specification to test a rewrite against. "
            "Install the Metavision SDK and use neurobench.datasets.Gen4DetectionDataLoader; "
            f"the data files under {folder!r} are in place."
        )
