"""Clustering scores of one labeling of embedded data (no ground truth): how compact and how
separated the clusters are.

* Calinski-Harabasz (variance ratio criterion): between-cluster over within-cluster dispersion,
  each divided by its degrees of freedom;
* Davies-Bouldin: the mean over clusters of the worst ratio of summed mean distances to the
  centroids over the distance between centroids (lower is better);
* Dunn index (TorchMetrics' centroid form): the smallest distance between two centroids over
  the largest distance from a sample to its centroid.

Computed in float64 with one scatter per statistic (`index_add_` over the cluster of each
sample). The labels are unbounded integers, mapped to 0..K-1 with `torch.unique`: these are
compute-time functions, not update steps.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = [
    "calinski_harabasz_score",
    "check_cluster_data",
    "davies_bouldin_score",
    "dunn_index",
]


def check_cluster_data(data: object, labels: object) -> tuple[Tensor, Tensor]:
    """Check `(N, d)` floating data and `(N,)` integer labels; returns them as float64 and
    int64.

    Raises:
        TypeError: not tensors.
        ValueError: wrong dimensions or dtypes, different sample counts.
    """
    if not isinstance(data, Tensor) or not isinstance(labels, Tensor):
        raise TypeError(
            "Arguments `data` and `labels` must be tensors (order: (data, labels)). Received: "
            f"data={type(data).__name__}, labels={type(labels).__name__}"
        )
    if data.dim() != 2 or not data.is_floating_point():
        raise ValueError(
            "Argument `data` must be a 2-D floating tensor of shape (samples, features). "
            f"Received: shape {tuple(data.shape)}, dtype {data.dtype}"
        )
    if labels.dim() != 1 or labels.is_floating_point() or labels.is_complex():
        raise ValueError(
            "Argument `labels` must be a 1-D integer tensor of cluster labels. "
            f"Received: shape {tuple(labels.shape)}, dtype {labels.dtype}"
        )
    if labels.shape[0] != data.shape[0]:
        raise ValueError(
            "Arguments `data` and `labels` must hold as many samples. "
            f"Received: {data.shape[0]} rows of data and {labels.shape[0]} labels"
        )
    return data.to(torch.float64), labels.long()


def _clusters(
    data: Tensor, labels: Tensor, at_most_samples: bool
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Cluster index of each sample, cluster sizes (float64), centroids and the data.

    `at_most_samples`: refuse unless 1 < clusters < samples (the scores' defined range)."""
    data, labels = check_cluster_data(data, labels)
    _, index, sizes = torch.unique(labels, return_inverse=True, return_counts=True)
    clusters, samples = sizes.shape[0], data.shape[0]
    if clusters < 2 or (at_most_samples and clusters >= samples):
        bound = f"at most {samples - 1} (one fewer than the samples)" if at_most_samples else ""
        raise ValueError(
            "Argument `labels` must name at least 2 clusters"
            + (f" and {bound}" if bound else "")
            + f". Received: {clusters} clusters over {samples} samples"
        )
    sizes64 = sizes.to(torch.float64)
    sums = torch.zeros((clusters, data.shape[1]), dtype=torch.float64, device=data.device)
    centroids = sums.index_add_(0, index, data) / sizes64.unsqueeze(1)
    return index, sizes64, centroids, data


def calinski_harabasz_score(data: Tensor, labels: Tensor) -> Tensor:
    """`B (N - K) / (W (K - 1))`: `B` the size-weighted squared distances of the centroids to
    the data mean, `W` the squared distances of the samples to their centroids; 1 when `W` is
    0. Needs 1 < K < N clusters.

    Example:
        >>> data = torch.tensor([[0.0, 0.0], [0.0, 1.0], [5.0, 0.0], [5.0, 1.0]])
        >>> calinski_harabasz_score(data, torch.tensor([0, 0, 1, 1]))
        tensor(50., dtype=torch.float64)
    """
    index, sizes, centroids, data = _clusters(data, labels, at_most_samples=True)
    samples, clusters = data.shape[0], sizes.shape[0]
    mean = data.mean(0)
    between = (sizes * (centroids - mean).square().sum(1)).sum()
    within = (data - centroids[index]).square().sum()
    if float(within) == 0.0:
        return torch.ones((), dtype=torch.float64, device=data.device)
    return between * (samples - clusters) / (within * (clusters - 1.0))


def davies_bouldin_score(data: Tensor, labels: Tensor) -> Tensor:
    """Mean over clusters of `max_j (s_i + s_j) / d(c_i, c_j)`, with `s_i` the mean Euclidean
    distance of cluster i's samples to its centroid `c_i`; 0 when every `s_i` or every
    centroid distance is (close to) 0. Needs 1 < K < N clusters.

    Example:
        >>> data = torch.tensor([[0.0, 0.0], [0.0, 2.0], [4.0, 0.0], [4.0, 2.0]])
        >>> davies_bouldin_score(data, torch.tensor([0, 0, 1, 1]))
        tensor(0.5000, dtype=torch.float64)
    """
    index, sizes, centroids, data = _clusters(data, labels, at_most_samples=True)
    distances = (data - centroids[index]).square().sum(1).sqrt()
    spread = torch.zeros_like(sizes).index_add_(0, index, distances) / sizes
    between = torch.cdist(centroids, centroids, compute_mode="donot_use_mm_for_euclid_dist")
    zero = torch.zeros((), dtype=torch.float64, device=data.device)
    if torch.allclose(spread, zero.expand_as(spread)) or torch.allclose(
        between, zero.expand_as(between)
    ):
        return zero
    # coincident centroids (and each cluster with itself) never give the worst ratio
    between = torch.where(between == 0, float("inf"), between)
    ratios = (spread.unsqueeze(0) + spread.unsqueeze(1)) / between
    return ratios.max(1).values.mean()


def dunn_index(data: Tensor, labels: Tensor, p: float = 2.0) -> Tensor:
    """The smallest `p`-norm distance between two cluster centroids over the largest `p`-norm
    distance from a sample to its own centroid (TorchMetrics' centroid form of Dunn's index;
    higher is better). Needs at least 2 clusters.

    Example:
        >>> data = torch.tensor([[0, 0], [0.5, 0], [1, 0], [0.5, 1]])
        >>> dunn_index(data, torch.tensor([0, 0, 0, 1]))
        tensor(2., dtype=torch.float64)
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
        raise ValueError(f"Argument `p` must be a number > 0. Received: p={p!r}")
    index, _, centroids, data = _clusters(data, labels, at_most_samples=False)
    clusters = centroids.shape[0]
    first, second = torch.triu_indices(clusters, clusters, 1, device=data.device)
    between = torch.linalg.vector_norm(centroids[first] - centroids[second], ord=p, dim=1)
    within = torch.linalg.vector_norm(data - centroids[index], ord=p, dim=1)
    result: Tensor = between.min() / within.max()
    return result
