"""The training loop: `Learner` and its parts (step loop, metrics per split, checkpoints and
their retention, model selection, curves, signals). Private: the public names are re-exported
by `torchtally.learn`."""
