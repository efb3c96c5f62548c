"""torchtally's benchmarks: `python -m benchmarks run [--quick]` (see README, Performance)."""
