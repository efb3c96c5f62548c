"""Plots and the HTML report drawn from a log directory (matplotlib). Private: the public names
are re-exported by `torchtally.learn`."""
