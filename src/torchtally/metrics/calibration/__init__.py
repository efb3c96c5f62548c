"""Calibration metrics: ECE, MCE and RMS calibration error, with reliability-diagram data."""

from torchtally.metrics.calibration._calibration import CalibrationErrorMetric

__all__ = ["CalibrationErrorMetric"]
