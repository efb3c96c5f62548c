"""`torchmetrics.clustering` on torchtally: TorchMetrics 1.9's clustering metrics, with the maths
in `torchtally.functional.clustering`.

Cluster labels are unbounded integers, so a score needs every label seen: TorchMetrics keeps
them in growing lists. Here they go into buffers preallocated at construction (`capacity`
samples, default 65,536: 16 bytes per sample for two labelings), appended at the fill count in
`update` (no host sync, traceable), and `compute` builds the contingency table (or the cluster
centroids) from the stored rows. More samples than `capacity` raise a clear error at compute.
`ClusterAccuracy` keeps a `(C, C)` confusion matrix instead (its ids are bounded).

Scores compared with TorchMetrics: the same values, computed in float64 and returned in the
default dtype; where TorchMetrics departs from scikit-learn's definitions (NMI and AMI of two
single-cluster labelings, V-measure when homogeneity and completeness are both 0) the value is
scikit-learn's, and a score of no samples raises instead of returning a number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, MetricValueError, tracing
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional import clustering as native
from torchtally.functional.classification import confusion_matrix_update

__all__ = [
    "AdjustedMutualInfoScore",
    "AdjustedRandScore",
    "CalinskiHarabaszScore",
    "ClusterAccuracy",
    "CompletenessScore",
    "DaviesBouldinScore",
    "DunnIndex",
    "FowlkesMallowsIndex",
    "HomogeneityScore",
    "MutualInfoScore",
    "NormalizedMutualInfoScore",
    "RandScore",
    "VMeasureScore",
]

#: Samples the label buffers hold unless `capacity` says otherwise.
DEFAULT_CAPACITY = 1 << 16
#: Data values (samples x features) the intrinsic scores' buffer holds by default (8 MiB).
DEFAULT_DATA_CAPACITY = 1 << 20


# ------------------------------------------------------------- TorchMetrics' input checks


def check_label_pair(preds: Any, target: Any) -> None:
    """TorchMetrics' checks of two labelings, with its exception types and messages: the
    same shape, 1-D, not floating or complex."""
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors of cluster labels. Received: "
            f"preds={type(preds).__name__}, target={type(target).__name__}"
        )
    if preds.shape != target.shape:
        raise RuntimeError(
            "Predictions and targets are expected to have the same shape, but got "
            f"{preds.shape} and {target.shape}."
        )
    for value in (preds, target):
        if value.dim() != 1:
            raise ValueError(
                f"Expected arguments to be 1-d tensors but got {value.dim()}-d tensors."
            )
    if any(value.is_floating_point() or value.is_complex() for value in (preds, target)):
        raise ValueError(
            f"Expected real, discrete values for x but received {preds.dtype} and {target.dtype}."
        )


def check_average_method(average_method: Any) -> None:
    """TorchMetrics' check of `average_method`, with its message."""
    if average_method not in native.AVERAGE_METHODS:
        raise ValueError(
            "Expected argument `average_method` to be one of  `min`, `geometric`, "
            f"`arithmetic`, `max`,but got {average_method}"
        )


def check_cluster_data(data: Any, labels: Any) -> None:
    """TorchMetrics' checks of embedded data and its labels, with its messages (and the
    sample counts, which it leaves to a later indexing error)."""
    if not isinstance(data, Tensor) or not isinstance(labels, Tensor):
        raise TypeError(
            "Arguments `data` and `labels` must be tensors. Received: "
            f"data={type(data).__name__}, labels={type(labels).__name__}"
        )
    if data.dim() != 2:
        raise ValueError(f"Expected 2D data, got {data.dim()}D data instead")
    if not data.is_floating_point():
        raise ValueError(f"Expected floating point data, got {data.dtype} data instead")
    if labels.dim() != 1:
        raise ValueError(f"Expected 1D labels, got {labels.dim()}D labels instead")
    native.check_cluster_data(data, labels)


def check_capacity(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"Argument `{name}` must be an integer >= 1. Received: {name}={value!r}")
    return value


def _out(value: Tensor) -> Tensor:
    return value.to(torch.get_default_dtype())


# ---------------------------------------------------------- scores of two labelings


class _LabelPairScore(Metric):
    """Two labelings in preallocated `cat` buffers; `_score(preds, target)` is the native
    function of the whole labelings."""

    is_differentiable = True
    cat_overflow_terms = ("samples", "")

    def __init__(self, capacity: int = DEFAULT_CAPACITY, **kwargs: Any) -> None:
        self.capacity = check_capacity("capacity", capacity)
        super().__init__(**kwargs)
        self.register_state("preds", torch.zeros(capacity, dtype=torch.int64), False, "cat")
        self.register_state("target", torch.zeros(capacity, dtype=torch.int64), False, "cat")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        check_label_pair(preds, target)
        return {"preds": preds.long(), "target": target.long()}

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        raise NotImplementedError

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(self._score(state["preds"], state["target"]))


class MutualInfoScore(_LabelPairScore):
    """TorchMetrics' `MutualInfoScore`: mutual information (nats) between the predicted and
    target labelings (`torchtally.functional.clustering.mutual_info_score`).

    Args:
        capacity: Samples the buffers hold (default 65,536; 16 bytes each).
    """

    higher_is_better = True
    plot_lower_bound = 0.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.mutual_info_score(preds, target)


class _AveragedScore(_LabelPairScore):
    def __init__(
        self, average_method: str = "arithmetic", capacity: int = DEFAULT_CAPACITY, **kwargs: Any
    ) -> None:
        check_average_method(average_method)
        super().__init__(capacity, **kwargs)
        self.average_method = average_method


class NormalizedMutualInfoScore(_AveragedScore):
    """TorchMetrics' `NormalizedMutualInfoScore`: mutual information over the
    `average_method` mean of the two entropies.

    Args:
        average_method: "min", "geometric", "arithmetic" (default) or "max".
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = None
    plot_lower_bound = 0.0
    plot_upper_bound = 0.0  # TorchMetrics 1.9's constant, as it has it

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.normalized_mutual_info_score(preds, target, self.average_method)


class AdjustedMutualInfoScore(_AveragedScore):
    """TorchMetrics' `AdjustedMutualInfoScore`: mutual information adjusted for chance.

    Args:
        average_method: "min", "geometric", "arithmetic" (default) or "max".
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = None
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.adjusted_mutual_info_score(preds, target, self.average_method)


class RandScore(_LabelPairScore):
    """TorchMetrics' `RandScore`: the fraction of sample pairs the labelings agree on.

    Args:
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = None
    plot_lower_bound = 0.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.rand_score(preds, target)


class AdjustedRandScore(_LabelPairScore):
    """TorchMetrics' `AdjustedRandScore`: the Rand index adjusted for chance.

    Args:
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = None
    plot_lower_bound = -0.5
    plot_upper_bound = 1.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.adjusted_rand_score(preds, target)


class FowlkesMallowsIndex(_LabelPairScore):
    """TorchMetrics' `FowlkesMallowsIndex`: the geometric mean of pair precision and recall.

    Args:
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.fowlkes_mallows_index(preds, target)


class HomogeneityScore(_LabelPairScore):
    """TorchMetrics' `HomogeneityScore`: 1 when each predicted cluster holds one class.

    Args:
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.homogeneity_score(preds, target)


class CompletenessScore(_LabelPairScore):
    """TorchMetrics' `CompletenessScore`: 1 when each class lies in one predicted cluster.

    Args:
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.completeness_score(preds, target)


def check_beta(beta: Any) -> float:
    """TorchMetrics' check of the V-measure's `beta` (a positive float), with its message."""
    if not (isinstance(beta, float) and beta > 0):
        raise ValueError(f"Argument `beta` should be a positive float. Got {beta}.")
    return beta


class VMeasureScore(_LabelPairScore):
    """TorchMetrics' `VMeasureScore`: the `beta`-weighted harmonic mean of homogeneity and
    completeness.

    Args:
        beta: A positive float (default 1.0; above 1 weights completeness more).
        capacity: Samples the buffers hold (default 65,536).
    """

    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(self, beta: float = 1.0, capacity: int = DEFAULT_CAPACITY, **kwargs: Any) -> None:
        self.beta = check_beta(beta)
        super().__init__(capacity, **kwargs)

    def _score(self, preds: Tensor, target: Tensor) -> Tensor:
        return native.v_measure_score(preds, target, self.beta)


# ------------------------------------------------------------ scores of embedded data


class _DataScore(Metric):
    """Data and labels in preallocated `cat` buffers: the labels and each sample's feature
    count (`capacity` samples), the data flattened (`data_capacity` values, as the feature
    count is known only from the first batch)."""

    is_differentiable = True
    higher_is_better = True
    plot_lower_bound = 0.0
    cat_overflow_terms = ("samples", "")

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        data_capacity: int = DEFAULT_DATA_CAPACITY,
        **kwargs: Any,
    ) -> None:
        self.capacity = check_capacity("capacity", capacity)
        self.data_capacity = check_capacity("data_capacity", data_capacity)
        super().__init__(**kwargs)
        self.register_state("labels", torch.zeros(capacity, dtype=torch.int64), False, "cat")
        self.register_state("features", torch.zeros(capacity, dtype=torch.int32), False, "cat")
        self.register_state("data", torch.zeros(data_capacity, dtype=torch.float64), False, "cat")

    def _batch(self, data: Tensor, labels: Tensor) -> dict[str, Tensor]:
        check_cluster_data(data, labels)
        return {
            "labels": labels.long(),
            "features": torch.full(
                (data.shape[0],), data.shape[1], dtype=torch.int32, device=labels.device
            ),
            "data": data.reshape(-1).to(torch.float64),
        }

    def check_errors(self) -> None:
        lost = self.cat_state("data").overflow()
        if not tracing(lost) and int(lost) > 0:
            seen = self.data_capacity + int(lost)
            raise MetricValueError(
                f"`{type(self).__name__}` received {seen} data values (samples x features) but "
                f"its buffer holds data_capacity={self.data_capacity}: {int(lost)} were "
                f"dropped. Construct it with data_capacity >= {seen}."
            )
        super().check_errors()

    def _score(self, data: Tensor, labels: Tensor) -> Tensor:
        raise NotImplementedError

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        labels, features = state["labels"], state["features"]
        samples = labels.shape[0]
        width = int(features[0]) if samples else 0
        if samples and not bool((features == width).all()):
            raise ValueError(
                f"`{type(self).__name__}` received data of different feature counts across "
                f"updates: {sorted(set(features.tolist()))}; every update's `data` must have "
                "the same number of columns."
            )
        data = state["data"].reshape(samples, width)
        return _out(self._score(data, labels))


class CalinskiHarabaszScore(_DataScore):
    """TorchMetrics' `CalinskiHarabaszScore` (variance ratio criterion) of
    `update(data, labels)`: `(N, d)` embedded data and its `(N,)` cluster labels.

    Args:
        capacity: Samples the label buffers hold (default 65,536).
        data_capacity: Data values (samples x features) the data buffer holds (default
            1,048,576: 8 MiB).
    """

    def _score(self, data: Tensor, labels: Tensor) -> Tensor:
        return native.calinski_harabasz_score(data, labels)


class DaviesBouldinScore(_DataScore):
    """TorchMetrics' `DaviesBouldinScore` of `update(data, labels)` (lower is better, although
    TorchMetrics 1.9 declares `higher_is_better=True`, kept here as its constant).

    Args:
        capacity: Samples the label buffers hold (default 65,536).
        data_capacity: Data values (samples x features) the data buffer holds (default
            1,048,576: 8 MiB).
    """

    def _score(self, data: Tensor, labels: Tensor) -> Tensor:
        return native.davies_bouldin_score(data, labels)


class DunnIndex(_DataScore):
    """TorchMetrics' `DunnIndex` of `update(data, labels)`: the smallest distance between
    centroids over the largest distance from a sample to its centroid, in the `p`-norm.

    Args:
        p: The norm's order (default 2).
        capacity: Samples the label buffers hold (default 65,536).
        data_capacity: Data values (samples x features) the data buffer holds (default
            1,048,576: 8 MiB).
    """

    def __init__(
        self,
        p: float = 2,
        capacity: int = DEFAULT_CAPACITY,
        data_capacity: int = DEFAULT_DATA_CAPACITY,
        **kwargs: Any,
    ) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
            raise ValueError(f"Argument `p` must be a number > 0. Received: p={p!r}")
        super().__init__(capacity, data_capacity, **kwargs)
        self.p = p

    def _score(self, data: Tensor, labels: Tensor) -> Tensor:
        return native.dunn_index(data, labels, self.p)


# ------------------------------------------------------------------ cluster accuracy


class ClusterAccuracy(Metric):
    """TorchMetrics' `ClusterAccuracy`: accuracy under the best one-to-one mapping of predicted
    cluster ids to classes, both in `[0, num_classes)`.

    The update adds to a `(C, C)` confusion matrix (traceable, no host sync; ids outside the
    range are counted and raised at `compute`); the mapping is found at compute by the
    Hungarian algorithm (`torchtally.functional.clustering.linear_assignment`), so unlike
    TorchMetrics no `torch_linear_assignment` package is needed.

    Args:
        num_classes: The number of classes and of clusters (a positive integer).
    """

    error_kinds = ErrorKinds(invalid_ids="cluster ids or labels outside [0, num_classes)")
    is_differentiable = False
    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(self, num_classes: int, **kwargs: Any) -> None:
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
            raise ValueError("Argument `num_classes` should be a positive integer")
        super().__init__(**kwargs)
        self.num_classes = num_classes
        shape = (num_classes, num_classes)
        self.register_state("confmat", torch.zeros(shape, dtype=torch.float64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Any]:
        for name, value in (("preds", preds), ("target", target)):
            if not isinstance(value, Tensor) or value.is_floating_point() or value.is_complex():
                raise ValueError(
                    f"Argument `{name}` must be an integer tensor of cluster ids. Received: "
                    f"{value.dtype if isinstance(value, Tensor) else type(value).__name__}"
                )
        if preds.shape != target.shape:
            raise RuntimeError(
                "Predictions and targets are expected to have the same shape, but got "
                f"{preds.shape} and {target.shape}."
            )
        classes = self.num_classes
        preds, target = preds.reshape(-1), target.reshape(-1)
        invalid = (preds < 0) | (preds >= classes) | (target < 0) | (target >= classes)
        if classes == 1:
            confmat = (~invalid).sum(dtype=torch.float64).reshape(1, 1)
        else:
            confmat = confusion_matrix_update(target, preds, classes)
        return {"confmat": confmat, "_errors": {"invalid_ids": invalid.sum()}}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(native.cluster_accuracy_compute(state["confmat"]))
