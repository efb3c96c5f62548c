"""Rendering a run on a terminal: the live `Dashboard` (rich), the `PlainRenderer` fallback and
their shared run state, key reader, output capture and braille plots. Private: the public names
are re-exported by `torchtally.learn`."""
