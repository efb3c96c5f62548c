"""The harness: `Benchmark`, the runners that drive metrics over a dataloader, model wrappers,
activation/connection hooks, failures and the results file. Private: the public names are
re-exported by `torchtally.bench`."""
