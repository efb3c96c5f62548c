"""Writing and reading a run's logs: the CSV/JSONL `FileLogger` and its readers, TensorBoard and
the end-of-run summary table. Private: the public names are re-exported by `torchtally.learn`."""
