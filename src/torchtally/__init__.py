"""torchtally: metrics that live inside the compiled step.

`import torchtally as cstorch` gives the Cerebras PyTorch programming model on stock PyTorch;
`torchtally.metrics` holds the metric catalog and `torchtally.functional` its pure functions.
"""

from torchtally import functional, metrics, testing

__version__ = "0.1.0"
__all__ = ["__version__", "functional", "metrics", "testing"]
