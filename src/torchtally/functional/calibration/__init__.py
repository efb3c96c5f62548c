"""Calibration functionals: ECE, MCE and RMS calibration error with uniform bins, and the
data of a reliability diagram."""

from torchtally.functional.calibration._calibration import (
    NORMS,
    calibration_confidences,
    calibration_error,
    calibration_error_compute,
    calibration_update,
    reliability_diagram,
)

__all__ = [
    "NORMS",
    "calibration_confidences",
    "calibration_error",
    "calibration_error_compute",
    "calibration_update",
    "reliability_diagram",
]
