"""Clustering scores that compare two labelings: the contingency-table family.

Both labelings are integer cluster ids of any values (unbounded, not necessarily contiguous); a
score depends only on which samples share a cluster. Everything is computed from the sparse
contingency table (the count of samples in each (target cluster, predicted cluster) pair that
occurs) and its margins, in float64:

* mutual information `MI = sum p_ij log(p_ij / (p_i. p_.j))`, its normalized and adjusted-for-
  chance forms (the expected MI under the hypergeometric model of random labelings with the
  same cluster sizes, Vinh, Epps and Bailey 2010);
* the pair counts (pairs of samples together or apart in each labeling): Rand index, adjusted
  Rand index (Hubert and Arabie 1985), Fowlkes-Mallows index;
* homogeneity, completeness and V-measure (Rosenberg and Hirschberg 2007).

Edge cases follow scikit-learn's definitions (two single-cluster labelings are a perfect
match: NMI and AMI 1; V-measure 0 when homogeneity and completeness are both 0). Building the
table finds the distinct labels (`torch.unique`, a data-dependent shape): these are
compute-time functions, not update steps.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from torchtally._errors import check_choice

__all__ = [
    "AVERAGE_METHODS",
    "Contingency",
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "check_cluster_labels",
    "completeness_score",
    "contingency",
    "contingency_matrix",
    "expected_mutual_info",
    "fowlkes_mallows_index",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "pair_confusion_matrix",
    "rand_score",
    "v_measure_score",
]

AVERAGE_METHODS = ("min", "geometric", "arithmetic", "max")
"""How NMI and AMI average the two labelings' entropies into their normalizer."""

#: float64's machine epsilon: AMI's denominator is kept at least this far from 0.
_EPS64 = float(torch.finfo(torch.float64).eps)
#: Elements of one block of the expected-MI grid (rows x columns x pair counts).
_EMI_BLOCK = 1 << 22


class Contingency(NamedTuple):
    """The sparse contingency table of two labelings.

    Attributes:
        counts: `(nnz,)` int64 sample counts of the (target cluster, predicted cluster) pairs
            that occur.
        rows: `(nnz,)` target cluster index (0-based, in sorted label order) of each count.
        cols: `(nnz,)` predicted cluster index of each count.
        target_sizes: `(T,)` int64 samples per target cluster (the row sums).
        pred_sizes: `(P,)` int64 samples per predicted cluster (the column sums).
    """

    counts: Tensor
    rows: Tensor
    cols: Tensor
    target_sizes: Tensor
    pred_sizes: Tensor

    @property
    def num_samples(self) -> int:
        return int(self.target_sizes.sum())


def check_cluster_labels(preds: object, target: object) -> tuple[Tensor, Tensor]:
    """Check two labelings: 1-D integer (or bool) tensors of the same length, at least one
    sample. Returns them as int64.

    Raises:
        TypeError: not tensors.
        ValueError: not 1-D, different lengths, floating or complex values, or empty.
    """
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Argument `{name}` must be a tensor of cluster labels. "
                f"Received: {type(value).__name__}"
            )
        if value.dim() != 1:
            raise ValueError(
                f"Argument `{name}` must be a 1-D tensor of cluster labels. "
                f"Received: shape {tuple(value.shape)}"
            )
        if value.is_floating_point() or value.is_complex():
            raise ValueError(
                f"Argument `{name}` must hold integer cluster labels. Received: dtype {value.dtype}"
            )
    assert isinstance(preds, Tensor) and isinstance(target, Tensor)
    if preds.shape != target.shape:
        raise ValueError(
            "Arguments `preds` and `target` must hold one label per sample each. "
            f"Received: {preds.shape[0]} and {target.shape[0]} labels"
        )
    if preds.numel() == 0:
        raise ValueError(
            "Arguments `preds` and `target` must hold at least one sample: a clustering score "
            "of no samples is undefined. Received: 0 labels"
        )
    return preds.long(), target.long()


def contingency(preds: Tensor, target: Tensor) -> Contingency:
    """The sparse contingency table of `target` (rows) against `preds` (columns).

    Example:
        >>> table = contingency(torch.tensor([0, 0, 5]), torch.tensor([1, 1, 1]))
        >>> table.counts, table.target_sizes, table.pred_sizes
        (tensor([2, 1]), tensor([3]), tensor([2, 1]))
    """
    preds, target = check_cluster_labels(preds, target)
    _, pred_index, pred_sizes = torch.unique(preds, return_inverse=True, return_counts=True)
    _, target_index, target_sizes = torch.unique(target, return_inverse=True, return_counts=True)
    width = pred_sizes.shape[0]
    pairs, counts = torch.unique(target_index * width + pred_index, return_counts=True)
    return Contingency(
        counts, pairs.div(width, rounding_mode="floor"), pairs % width, target_sizes, pred_sizes
    )


def contingency_matrix(preds: Tensor, target: Tensor) -> Tensor:
    """The dense `(T, P)` int64 contingency matrix: samples in target cluster `i` (rows, in
    sorted label order) and predicted cluster `j` (columns), as scikit-learn's
    `contingency_matrix(target, preds)`.

    Example:
        >>> contingency_matrix(torch.tensor([2, 1, 0, 1, 0]), torch.tensor([0, 2, 1, 1, 0]))
        tensor([[1, 0, 1],
                [1, 1, 0],
                [0, 1, 0]])
    """
    table = contingency(preds, target)
    shape = (table.target_sizes.shape[0], table.pred_sizes.shape[0])
    dense = torch.zeros(shape, dtype=torch.int64, device=table.counts.device)
    dense[table.rows, table.cols] = table.counts
    return dense


def _entropy(sizes: Tensor) -> Tensor:
    """Entropy (nats) of a labeling from its cluster sizes; exactly 0 for one cluster."""
    if sizes.shape[0] <= 1:
        return torch.zeros((), dtype=torch.float64, device=sizes.device)
    sizes = sizes.to(torch.float64)
    total = sizes.sum()
    return -((sizes / total) * (sizes.log() - total.log())).sum()


def _mutual_info(table: Contingency) -> Tensor:
    """MI (nats) from the table: 0 when either labeling has one cluster (MI <= each entropy),
    clipped at 0 (rounding can leave a tiny negative sum for independent labelings)."""
    device = table.counts.device
    if table.target_sizes.shape[0] == 1 or table.pred_sizes.shape[0] == 1:
        return torch.zeros((), dtype=torch.float64, device=device)
    counts = table.counts.to(torch.float64)
    n = counts.sum()
    row = table.target_sizes.to(torch.float64)[table.rows]
    col = table.pred_sizes.to(torch.float64)[table.cols]
    terms = (counts / n) * (counts.log() + n.log() - row.log() - col.log())
    return terms.sum().clamp(min=0.0)


def _generalized_mean(first: Tensor, second: Tensor, average_method: str) -> Tensor:
    if average_method == "min":
        return torch.minimum(first, second)
    if average_method == "max":
        return torch.maximum(first, second)
    if average_method == "geometric":
        return (first * second).sqrt()
    return (first + second) / 2


def _check_average_method(average_method: str) -> None:
    check_choice("average_method", average_method, AVERAGE_METHODS)


def mutual_info_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mutual information (nats) between two labelings, a 0-d float64 tensor.

    Example:
        >>> mutual_info_score(torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1]))
        tensor(1.0549, dtype=torch.float64)
    """
    return _mutual_info(contingency(preds, target))


def normalized_mutual_info_score(
    preds: Tensor, target: Tensor, average_method: str = "arithmetic"
) -> Tensor:
    """MI over the `average_method` mean of the two entropies, in [0, 1]; 1 when both
    labelings have a single cluster (identical), 0 when MI is 0.

    Example:
        >>> preds, target = torch.tensor([1, 3, 2, 0, 1]), torch.tensor([0, 3, 2, 2, 1])
        >>> normalized_mutual_info_score(preds, target)
        tensor(0.7919, dtype=torch.float64)
    """
    _check_average_method(average_method)
    table = contingency(preds, target)
    device = table.counts.device
    if table.target_sizes.shape[0] == 1 and table.pred_sizes.shape[0] == 1:
        return torch.ones((), dtype=torch.float64, device=device)
    mutual_info = _mutual_info(table)
    if float(mutual_info) == 0.0:
        return mutual_info
    normalizer = _generalized_mean(
        _entropy(table.target_sizes), _entropy(table.pred_sizes), average_method
    )
    return mutual_info / normalizer


def expected_mutual_info(target_sizes: Tensor, pred_sizes: Tensor) -> Tensor:
    """Expected MI (nats) of two random labelings with these cluster sizes (hypergeometric
    model): the sum over every cell `(i, j)` and every possible count `k` of
    `k/N log(N k / (a_i b_j))` times the probability of `k`, in log-gamma form.

    The grid of (row, column, count) terms is evaluated in blocks of rows (about 4M terms
    each), along the orientation with fewer terms.

    Example:
        >>> expected_mutual_info(torch.tensor([2, 2]), torch.tensor([2, 2]))
        tensor(0.2310, dtype=torch.float64)
    """
    a = target_sizes.to(torch.float64)
    b = pred_sizes.to(torch.float64)
    device = a.device
    if a.shape[0] <= 1 or b.shape[0] <= 1:
        return torch.zeros((), dtype=torch.float64, device=device)
    n = float(a.sum())
    a_sizes, b_sizes = a.tolist(), b.tolist()
    a_max, b_max = max(a_sizes), max(b_sizes)
    # Rows: the side whose grid has fewer terms (each row i spans min(a_i, max b) counts).
    if len(b_sizes) * sum(min(x, b_max) for x in a_sizes) > len(a_sizes) * sum(
        min(x, a_max) for x in b_sizes
    ):
        a, b, a_sizes, b_max = b, a, b_sizes, a_max
    a_sizes = sorted(a_sizes)  # a block's count range is set by its last (largest) row
    a = torch.tensor(a_sizes, dtype=torch.float64, device=device)
    b_parts = (
        b.view(1, -1, 1),
        b.log().view(1, -1, 1),
        (torch.lgamma(b + 1) + torch.lgamma(n - b + 1)).view(1, -1, 1),
    )
    const = -math.lgamma(n + 1)
    total = torch.zeros((), dtype=torch.float64, device=device)
    columns = b.shape[0]
    start, count = 0, len(a_sizes)
    while start < count:
        end = start + 1
        while end < count and (end + 1 - start) * columns * min(a_sizes[end], b_max) <= _EMI_BLOCK:
            end += 1
        block = a[start:end].view(-1, 1, 1)  # (rows, 1, 1)
        top = int(min(a_sizes[end - 1], b_max))
        step = max(1, _EMI_BLOCK // ((end - start) * columns))  # counts per piece
        for first in range(1, top + 1, step):
            last = min(top, first + step - 1)
            k = torch.arange(first, last + 1, dtype=torch.float64, device=device).view(1, 1, -1)
            total = total + _emi_terms(block, b_parts, k, n, const)
        start = end
    return total


def _emi_terms(
    block: Tensor, b_parts: tuple[Tensor, Tensor, Tensor], k: Tensor, n: float, const: float
) -> Tensor:
    """The summed expected-MI terms of rows `block` (`(r, 1, 1)` sizes) against every column
    (`b_parts`: sizes, their logs and `lgamma(b + 1) + lgamma(n - b + 1)`, each `(1, C, 1)`)
    for the pair counts `k` (`(1, 1, K)`); terms outside each cell's possible range are 0."""
    col, col_log, col_gln = b_parts
    valid = (k >= block + col - n) & (k <= torch.minimum(block, col))
    log_ratio = math.log(n) + k.log() - block.log() - col_log
    log_prob = (
        torch.lgamma(block + 1)
        + torch.lgamma(n - block + 1)
        + col_gln
        + const
        - torch.lgamma(k + 1)
        - torch.lgamma((block - k).clamp(min=0) + 1)
        - torch.lgamma((col - k).clamp(min=0) + 1)
        - torch.lgamma((n - block - col + k).clamp(min=0) + 1)
    )
    terms = (k / n) * log_ratio * log_prob.exp()
    return torch.where(valid, terms, 0.0).sum()


def adjusted_mutual_info_score(
    preds: Tensor, target: Tensor, average_method: str = "arithmetic"
) -> Tensor:
    """MI adjusted for chance: `(MI - E[MI]) / (mean(H_target, H_preds) - E[MI])`: 1 for the
    same partition (a single cluster or a sample per cluster included), about 0 for random
    labelings, negative below chance; exactly 0 when only one labeling has a sample per
    cluster (its MI is then its expectation).

    Example:
        >>> preds, target = torch.tensor([2, 1, 0, 1, 0]), torch.tensor([0, 2, 1, 1, 0])
        >>> adjusted_mutual_info_score(preds, target)
        tensor(-0.2500, dtype=torch.float64)
    """
    _check_average_method(average_method)
    table = contingency(preds, target)
    pairs = table.counts.shape[0]
    if pairs == table.target_sizes.shape[0] == table.pred_sizes.shape[0]:
        # A perfect match (the same partition, one cluster included). When every cluster is
        # a single sample, MI, its expectation and the normalizer are all log N and the
        # ratio is 0/0: the match decides, not rounding.
        return torch.ones((), dtype=torch.float64, device=table.counts.device)
    if table.num_samples in (table.target_sizes.shape[0], table.pred_sizes.shape[0]):
        # One labeling puts every sample in a cluster of its own, the other does not: every
        # relabeling then has the same MI, so MI equals its expectation exactly and the
        # agreement is chance's, 0. (With `average_method="min"` the normalizer equals that
        # expectation too, and the computed ratio is rounding over rounding: scikit-learn
        # returns -1, 0.5, 1 or 2 for such labelings.)
        return torch.zeros((), dtype=torch.float64, device=table.counts.device)
    mutual_info = _mutual_info(table)
    expected = expected_mutual_info(table.target_sizes, table.pred_sizes)
    normalizer = _generalized_mean(
        _entropy(table.target_sizes), _entropy(table.pred_sizes), average_method
    )
    denominator = normalizer - expected
    # kept at least eps away from 0, on its own side
    if float(denominator) < 0:
        denominator = denominator.clamp(max=-_EPS64)
    else:
        denominator = denominator.clamp(min=_EPS64)
    return (mutual_info - expected) / denominator


def _pair_counts(table: Contingency) -> Tensor:
    """The 2x2 int64 pair confusion matrix of a table (see `pair_confusion_matrix`)."""
    counts = table.counts
    n = counts.sum()
    squares = (counts * counts).sum()
    together_in_target = (counts * table.target_sizes[table.rows]).sum() - squares
    together_in_preds = (counts * table.pred_sizes[table.cols]).sum() - squares
    both = squares - n
    neither = n * n - together_in_target - together_in_preds - squares
    return torch.stack(
        [
            torch.stack([neither, together_in_preds]),
            torch.stack([together_in_target, both]),
        ]
    )


def pair_confusion_matrix(preds: Tensor, target: Tensor) -> Tensor:
    """The 2x2 int64 confusion matrix over ordered pairs of distinct samples, as
    scikit-learn's: `C[i, j]` counts the pairs together in `target` (`i = 1`) or not
    (`i = 0`), and together in `preds` (`j = 1`) or not. The entries sum to `N(N - 1)`.

    Example:
        >>> pair_confusion_matrix(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor([[8, 0],
                [2, 2]])
    """
    return _pair_counts(contingency(preds, target))


def rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """The fraction of sample pairs on which the labelings agree (together in both or apart
    in both); 1 when there are no pairs or all agree.

    Example:
        >>> rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.8333, dtype=torch.float64)
    """
    pairs = _pair_counts(contingency(preds, target))
    agree = pairs.diagonal().sum()
    total = pairs.sum()
    if int(agree) == int(total):  # no pairs (one sample), or a perfect match
        return torch.ones((), dtype=torch.float64, device=pairs.device)
    return agree.to(torch.float64) / total.to(torch.float64)


def adjusted_rand_score(preds: Tensor, target: Tensor) -> Tensor:
    """Rand index adjusted for chance (Hubert and Arabie): 1 for identical labelings, about 0
    for random ones, down to -0.5 below chance.

    Example:
        >>> adjusted_rand_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.5714, dtype=torch.float64)
    """
    pairs = _pair_counts(contingency(preds, target))
    (tn, fp), (fn, tp) = pairs.to(torch.float64)
    if int(pairs[0, 1]) == 0 and int(pairs[1, 0]) == 0:
        return torch.ones((), dtype=torch.float64, device=pairs.device)
    score: Tensor = 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))
    return score


def fowlkes_mallows_index(preds: Tensor, target: Tensor) -> Tensor:
    """Geometric mean of pair precision and pair recall: `TP / sqrt((TP + FP)(TP + FN))` over
    unordered pairs; 0 when no pair is together in both labelings.

    Example:
        >>> fowlkes_mallows_index(torch.tensor([2, 2, 0, 1, 0]), torch.tensor([2, 2, 1, 1, 0]))
        tensor(0.5000, dtype=torch.float64)
    """
    table = contingency(preds, target)
    counts = table.counts
    n = counts.sum()
    tk = ((counts * counts).sum() - n).to(torch.float64)
    if float(tk) == 0.0:
        return torch.zeros((), dtype=torch.float64, device=counts.device)
    pk = (table.pred_sizes.square().sum() - n).to(torch.float64)
    qk = (table.target_sizes.square().sum() - n).to(torch.float64)
    return (tk / pk).sqrt() * (tk / qk).sqrt()


def homogeneity_completeness_v_measure(
    preds: Tensor, target: Tensor, beta: float = 1.0
) -> tuple[Tensor, Tensor, Tensor]:
    """`(homogeneity, completeness, V-measure)`: `MI / H(target)` (each predicted cluster
    holds one target class; 1 when `H(target)` is 0), `MI / H(preds)` (each class in one
    cluster; 1 when `H(preds)` is 0) and their weighted harmonic mean
    `(1 + beta) h c / (beta h + c)` (0 when both are 0).

    Example:
        >>> scores = homogeneity_completeness_v_measure(
        ...     torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1])
        ... )
        >>> [round(float(score), 4) for score in scores]
        [1.0, 0.6667, 0.8]
    """
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
        raise ValueError(f"Argument `beta` must be a number > 0. Received: beta={beta!r}")
    table = contingency(preds, target)
    mutual_info = _mutual_info(table)
    one = torch.ones((), dtype=torch.float64, device=mutual_info.device)
    entropy_target, entropy_preds = _entropy(table.target_sizes), _entropy(table.pred_sizes)
    homogeneity = mutual_info / entropy_target if float(entropy_target) else one
    completeness = mutual_info / entropy_preds if float(entropy_preds) else one.clone()
    if float(homogeneity + completeness) == 0.0:
        v_measure = torch.zeros_like(one)
    else:
        v_measure = (1 + beta) * homogeneity * completeness / (beta * homogeneity + completeness)
    return homogeneity, completeness, v_measure


def homogeneity_score(preds: Tensor, target: Tensor) -> Tensor:
    """`MI / H(target)`: 1 when each predicted cluster holds samples of one target class.

    Example:
        >>> round(float(homogeneity_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))), 4)
        1.0
    """
    return homogeneity_completeness_v_measure(preds, target)[0]


def completeness_score(preds: Tensor, target: Tensor) -> Tensor:
    """`MI / H(preds)`: 1 when the samples of each target class share one predicted cluster.

    Example:
        >>> completeness_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.6667, dtype=torch.float64)
    """
    return homogeneity_completeness_v_measure(preds, target)[1]


def v_measure_score(preds: Tensor, target: Tensor, beta: float = 1.0) -> Tensor:
    """Weighted harmonic mean of homogeneity and completeness (`beta > 1` weights
    completeness more).

    Example:
        >>> v_measure_score(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 1, 1]))
        tensor(0.8000, dtype=torch.float64)
    """
    return homogeneity_completeness_v_measure(preds, target, beta)[2]
