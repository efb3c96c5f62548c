"""Clustering scores: labelings compared with each other (mutual information and its
normalized and adjusted forms, Rand and adjusted Rand, Fowlkes-Mallows, homogeneity,
completeness, V-measure, cluster accuracy) and one labeling of embedded data judged alone
(Calinski-Harabasz, Davies-Bouldin, Dunn). Labels are unbounded integers; these functions
find the distinct ones, so they belong in a compute, not in an update step."""

from torchtally.functional.clustering._assignment import (
    cluster_accuracy,
    cluster_accuracy_compute,
    linear_assignment,
)
from torchtally.functional.clustering._extrinsic import (
    AVERAGE_METHODS,
    Contingency,
    adjusted_mutual_info_score,
    adjusted_rand_score,
    check_cluster_labels,
    completeness_score,
    contingency,
    contingency_matrix,
    expected_mutual_info,
    fowlkes_mallows_index,
    homogeneity_completeness_v_measure,
    homogeneity_score,
    mutual_info_score,
    normalized_mutual_info_score,
    pair_confusion_matrix,
    rand_score,
    v_measure_score,
)
from torchtally.functional.clustering._intrinsic import (
    calinski_harabasz_score,
    check_cluster_data,
    davies_bouldin_score,
    dunn_index,
)

__all__ = [
    "AVERAGE_METHODS",
    "Contingency",
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "calinski_harabasz_score",
    "check_cluster_data",
    "check_cluster_labels",
    "cluster_accuracy",
    "cluster_accuracy_compute",
    "completeness_score",
    "contingency",
    "contingency_matrix",
    "davies_bouldin_score",
    "dunn_index",
    "expected_mutual_info",
    "fowlkes_mallows_index",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "linear_assignment",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "pair_confusion_matrix",
    "rand_score",
    "v_measure_score",
]
