"""Cluster accuracy: the accuracy of predicted cluster ids under the best one-to-one mapping of
clusters to classes (a maximum-weight matching on the confusion matrix).

The matching is the Hungarian algorithm (shortest augmenting paths with dual potentials,
O(C^3)) on the host: the `(C, C)` confusion matrix is small, and the update that fills it is the
plain traceable confusion-matrix update.
"""

from __future__ import annotations

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.functional.classification import confusion_matrix_update

__all__ = ["cluster_accuracy", "cluster_accuracy_compute", "linear_assignment"]


def linear_assignment(weights: Tensor, maximize: bool = False) -> Tensor:
    """The column assigned to each row of a square `(C, C)` weight matrix that minimizes (or
    with `maximize`, maximizes) the summed weights of the assignment.

    Example:
        >>> linear_assignment(torch.tensor([[4, 1, 3], [2, 0, 5], [3, 2, 2]]))
        tensor([1, 0, 2])
    """
    if (
        not isinstance(weights, Tensor)
        or weights.dim() != 2
        or weights.shape[0] != weights.shape[1]
    ):
        raise ValueError(
            "Argument `weights` must be a square 2-D tensor. Received: "
            f"{tuple(weights.shape) if isinstance(weights, Tensor) else type(weights).__name__}"
        )
    size = weights.shape[0]
    values = weights.detach().cpu()
    # float64 holds integer weights (counts) and their potentials exactly below 2**53
    rows: list[list[float]] = values.double().tolist()
    if maximize:
        rows = [[-value for value in row] for row in rows]
    cost = [[0.0, *row] for row in [[0.0] * size, *rows]]  # 1-based; row/column 0 are sentinels
    infinity = float("inf")
    u = [0.0] * (size + 1)  # row potentials
    v = [0.0] * (size + 1)  # column potentials
    owner = [0] * (size + 1)  # owner[j]: the row matched to column j (0: none)
    way = [0] * (size + 1)
    for row in range(1, size + 1):
        owner[0] = row
        column = 0
        reach = [infinity] * (size + 1)
        used = [False] * (size + 1)
        while True:
            used[column] = True
            current, delta, next_column = owner[column], infinity, 0
            for j in range(1, size + 1):
                if used[j]:
                    continue
                reduced = cost[current][j] - u[current] - v[j]
                if reduced < reach[j]:
                    reach[j], way[j] = reduced, column
                if reach[j] < delta:
                    delta, next_column = reach[j], j
            for j in range(size + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    reach[j] -= delta
            column = next_column
            if owner[column] == 0:
                break
        while column:  # flip the augmenting path
            previous = way[column]
            owner[column] = owner[previous]
            column = previous
    assignment = [0] * size
    for j in range(1, size + 1):
        assignment[owner[j] - 1] = j - 1
    return torch.tensor(assignment, dtype=torch.int64, device=weights.device)


def cluster_accuracy_compute(confmat: Tensor) -> Tensor:
    """Accuracy under the best one-to-one mapping of clusters (columns) to classes (rows) of a
    `(C, C)` confusion matrix, a 0-d float64 tensor (NaN when it is empty).

    Example:
        >>> cluster_accuracy_compute(torch.tensor([[0, 3], [2, 0]]))
        tensor(1., dtype=torch.float64)
    """
    assignment = linear_assignment(confmat, maximize=True)
    rows = torch.arange(confmat.shape[0], device=confmat.device)
    matched = confmat[rows, assignment].to(torch.float64).sum()
    return matched / confmat.to(torch.float64).sum()


def cluster_accuracy(preds: Tensor, target: Tensor, num_classes: int) -> Tensor:
    """Cluster accuracy of predicted cluster ids in `[0, num_classes)` against class labels.

    Raises:
        ValueError: a label or cluster id outside `[0, num_classes)`, or inputs that are not
            integer tensors of the same shape.

    Example:
        >>> cluster_accuracy(torch.tensor([0, 0, 1, 1]), torch.tensor([1, 1, 0, 0]), 2)
        tensor(1., dtype=torch.float64)
    """
    check_int("num_classes", num_classes, 1)
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor) or value.is_floating_point() or value.is_complex():
            raise ValueError(
                f"Argument `{name}` must be an integer tensor of cluster ids. Received: "
                f"{value.dtype if isinstance(value, Tensor) else type(value).__name__}"
            )
    if preds.shape != target.shape:
        raise ValueError(
            "Arguments `preds` and `target` must have the same shape. "
            f"Received: {tuple(preds.shape)} and {tuple(target.shape)}"
        )
    for name, value in (("preds", preds), ("target", target)):
        outside = ((value < 0) | (value >= num_classes)).sum()
        if int(outside):
            raise ValueError(
                f"Argument `{name}` must hold ids in [0, num_classes={num_classes}). "
                f"Received: {int(outside)} values outside"
            )
    if num_classes == 1:  # every id is 0: one cell
        matrix = torch.full((1, 1), float(target.numel()), dtype=torch.float64)
    else:
        matrix = confusion_matrix_update(target.reshape(-1), preds.reshape(-1), num_classes)
    return cluster_accuracy_compute(matrix)
