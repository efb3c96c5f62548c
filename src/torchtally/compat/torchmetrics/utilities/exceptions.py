"""`torchmetrics.utilities.exceptions`: the error and warning classes TorchMetrics raises."""

__all__ = ["TorchMetricsUserError", "TorchMetricsUserWarning"]


class TorchMetricsUserError(Exception):
    """A combination of `Metric` API calls TorchMetrics refuses (`forward` on a synced metric)."""


class TorchMetricsUserWarning(Warning):
    """A warning about how the `Metric` API is used."""
