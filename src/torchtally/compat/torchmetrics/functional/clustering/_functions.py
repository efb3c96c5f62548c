"""TorchMetrics 1.9's clustering functions: TorchMetrics' argument checks and messages (those
of `torchmetrics.clustering`'s classes), the native score
(`torchtally.functional.clustering`), the value in the default dtype."""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.clustering import (
    check_average_method,
    check_cluster_data,
    check_label_pair,
)
from torchtally.functional import clustering as native

__all__ = [
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "calinski_harabasz_score",
    "cluster_accuracy",
    "completeness_score",
    "davies_bouldin_score",
    "dunn_index",
    "fowlkes_mallows_index",
    "homogeneity_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "rand_score",
    "v_measure_score",
]


def _out(value: Tensor) -> Tensor:
    return value.to(torch.get_default_dtype())


def mutual_info_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mutual information (nats) between two labelings.

    Example:
        >>> mutual_info_score(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1]))
        tensor(1.0549)
    """
    check_label_pair(preds, target)
    return _out(native.mutual_info_score(preds, target))


def normalized_mutual_info_score(
    preds: Tensor, target: Tensor, average_method: str = "arithmetic"
) -> Tensor:
    """Mutual information over the `average_method` mean of the two entropies.

    Example:
        >>> normalized_mutual_info_score(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1]))
        tensor(0.7919)
    """
    check_label_pair(preds, target)
    check_average_method(average_method)
    return _out(native.normalized_mutual_info_score(preds, target, average_method))


def adjusted_mutual_info_score(
    preds: Tensor, target: Tensor, average_method: str = "arithmetic"
) -> Tensor:
    """Mutual information adjusted for chance.

    Example:
        >>> adjusted_mutual_info_score(torch.tensor([2, 1, 0, 1, 0]), torch.tensor([0, 2, 1, 1, 0]))
        tensor(-0.2500)
    """
    check_label_pair(preds, target)
    check_average_method(average_method)
    return _out(native.adjusted_mutual_info_score(preds, target, average_method))


def rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """The fraction of sample pairs on which two labelings agree.

    Example:
        >>> rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.8333)
    """
    check_label_pair(preds, target)
    return _out(native.rand_score(preds, target))


def adjusted_rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """The Rand index adjusted for chance.

    Example:
        >>> adjusted_rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.5714)
    """
    check_label_pair(preds, target)
    return _out(native.adjusted_rand_score(preds, target))


def fowlkes_mallows_index(preds: Tensor, target: Tensor) -> Tensor:
    """The geometric mean of pair precision and pair recall.

    Example:
        >>> fowlkes_mallows_index(torch.tensor([2, 2, 0, 1, 0]), torch.tensor([2, 2, 1, 1, 0]))
        tensor(0.5000)
    """
    check_label_pair(preds, target)
    return _out(native.fowlkes_mallows_index(preds, target))


def homogeneity_score(preds: Tensor, target: Tensor) -> Tensor:
    """1 when each predicted cluster holds samples of one class.

    Example:
        >>> homogeneity_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(1.)
    """
    check_label_pair(preds, target)
    return _out(native.homogeneity_score(preds, target))


def completeness_score(preds: Tensor, target: Tensor) -> Tensor:
    """1 when the samples of each class share one predicted cluster.

    Example:
        >>> completeness_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.6667)
    """
    check_label_pair(preds, target)
    return _out(native.completeness_score(preds, target))


def v_measure_score(preds: Tensor, target: Tensor, beta: float = 1.0) -> Tensor:
    """The `beta`-weighted harmonic mean of homogeneity and completeness.

    Example:
        >>> v_measure_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.8000)
    """
    check_label_pair(preds, target)
    return _out(native.v_measure_score(preds, target, beta))


def calinski_harabasz_score(data: Tensor, labels: Tensor) -> Tensor:
    """The variance ratio criterion of `(N, d)` data clustered by `(N,)` labels.

    Example:
        >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [5.0, 0.0], [5.0, 1.0]])
        >>> calinski_harabasz_score(data, torch.tensor([0, 0, 1, 1]))
        tensor(50.)
    """
    check_cluster_data(data, labels)
    return _out(native.calinski_harabasz_score(data, labels))


def davies_bouldin_score(data: Tensor, labels: Tensor) -> Tensor:
    """The Davies-Bouldin score of `(N, d)` data clustered by `(N,)` labels (lower is better).

    Example:
        >>> data = torch.tensor([[0.0, 0.0], [0.0, 2.0], [4.0, 0.0], [4.0, 2.0]])
        >>> davies_bouldin_score(data, torch.tensor([0, 0, 1, 1]))
        tensor(0.5000)
    """
    check_cluster_data(data, labels)
    return _out(native.davies_bouldin_score(data, labels))


def dunn_index(data: Tensor, labels: Tensor, p: float = 2) -> Tensor:
    """The smallest distance between centroids over the largest distance from a sample to its
    centroid, in the `p`-norm.

    Example:
        >>> dunn_index(torch.tensor([[0, 0], [0.5, 0], [1, 0], [0.5, 1]]), torch.tensor([0, 0, 0, 1]))
        tensor(2.)
    """
    check_cluster_data(data, labels)
    return _out(native.dunn_index(data, labels, p))


def cluster_accuracy(preds: Tensor, target: Tensor, num_classes: int) -> Tensor:
    """Accuracy under the best one-to-one mapping of cluster ids to classes, both in
    `[0, num_classes)`.

    Example:
        >>> cluster_accuracy(torch.tensor([0, 0, 1, 1]), torch.tensor([1, 1, 0, 0]), 2)
        tensor(1.)
    """
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes <= 0:
        raise ValueError("Argument `num_classes` should be a positive integer")
    return _out(native.cluster_accuracy(preds, target, num_classes))
