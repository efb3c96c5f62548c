"""Operation counting behind `SynapticOperations`: the layer tables, spiking detection, and the
feedforward and recurrent (gate-equation and NeuroBench-compatible) op counts. Private."""
