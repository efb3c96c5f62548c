"""Interpreter start-up hook for the suite runner (on PYTHONPATH only while `run.py` runs).

Installs the `torchmetrics` redirection in every Python process of a run, including those that
TorchMetrics' DDP tests spawn, which never load the pytest plugin.
"""

import os

if os.environ.get("TM_SUITE_TARGET") == "torchtally":
    import tm_suite_redirect  # noqa: F401
