"""torchtally: metrics that live inside the compiled step."""

from torchtally import metrics

__version__ = "0.1.0"
__all__ = ["__version__", "metrics"]
