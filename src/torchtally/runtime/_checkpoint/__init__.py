"""Checkpoints: `save`/`load` of torchtally's HDF5 format and of Cerebras' 2.x layout, their
encoding and hostile-input-safe decoding, and retention. Private: the public names are
re-exported by `torchtally.runtime`."""
