"""The oracle loads the real Cerebras metric classes (the parity tests build on this)."""

import inspect


def test_real_metric_classes_are_loaded(cs_metrics):
    # The class comes from the unpacked wheel, not from torchtally.
    source = inspect.getsourcefile(cs_metrics.AccuracyMetric)
    assert source is not None and "cerebras-2.10.0" in source
    assert {"AccuracyMetric", "FBetaScoreMetric", "PerplexityMetric"} <= set(dir(cs_metrics))
