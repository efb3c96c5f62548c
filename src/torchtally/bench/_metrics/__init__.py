"""NeuroBench's metric definitions: the static/workload/accumulated metric types and the static,
task, sparsity, neuron and synaptic-operation metrics. Private: the public names are re-exported
by `torchtally.bench`."""
