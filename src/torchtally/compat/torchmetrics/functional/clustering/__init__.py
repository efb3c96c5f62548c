"""`torchmetrics.functional.clustering` on torchtally: TorchMetrics 1.9's clustering functions,
its checks and messages over the native scores of `torchtally.functional.clustering`."""

from torchtally.compat.torchmetrics.functional.clustering.adjusted_mutual_info_score import (
    adjusted_mutual_info_score,
)
from torchtally.compat.torchmetrics.functional.clustering.adjusted_rand_score import (
    adjusted_rand_score,
)
from torchtally.compat.torchmetrics.functional.clustering.calinski_harabasz_score import (
    calinski_harabasz_score,
)
from torchtally.compat.torchmetrics.functional.clustering.cluster_accuracy import cluster_accuracy
from torchtally.compat.torchmetrics.functional.clustering.davies_bouldin_score import (
    davies_bouldin_score,
)
from torchtally.compat.torchmetrics.functional.clustering.dunn_index import dunn_index
from torchtally.compat.torchmetrics.functional.clustering.fowlkes_mallows_index import (
    fowlkes_mallows_index,
)
from torchtally.compat.torchmetrics.functional.clustering.homogeneity_completeness_v_measure import (
    completeness_score,
    homogeneity_score,
    v_measure_score,
)
from torchtally.compat.torchmetrics.functional.clustering.mutual_info_score import mutual_info_score
from torchtally.compat.torchmetrics.functional.clustering.normalized_mutual_info_score import (
    normalized_mutual_info_score,
)
from torchtally.compat.torchmetrics.functional.clustering.rand_score import rand_score

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
