"""Optimizers and learning-rate schedulers for traced steps (the `cstorch.optim` API).

Every optimizer allocates its state when built and steps with tensor operations only, so
`optimizer.step()` traces into one graph under `torch.compile(fullgraph=True)` and replays
under CUDA graphs. Learning rates are 0-dim tensors that a scheduler from
`torchtally.optim.lr_scheduler` rewrites in place each step.

Defaults and update rules are those of `cerebras.pytorch.optim` 2.10 (checked step for step
against the real classes in tests/cstorch_oracle). Compatibility surface kept for cstorch
code: `state_names_to_sparsify()` on every optimizer (the state shaped like its parameter),
parameter groups' `tags` with the schedulers' `param_group_tags`, and groups'
`adjust_learning_rate` factors with `ScalePerParamLR`. Options that select torch's form where
Cerebras differs: `Adam(W)(eps_placement="torch")`, `NAdam(momentum_product="torch")`,
`Lamb(bias_correction=True)`,
`Adafactor(algorithm="torch")`; `Muon(keep_momentum=False)` reproduces Cerebras 2.10, whose
momentum buffer is never stored.
"""

from torchtally.optim import lr_scheduler, weight_decay_scheduler
from torchtally.optim._adadelta import Adadelta
from torchtally.optim._adafactor import Adafactor
from torchtally.optim._adagrad import Adagrad
from torchtally.optim._adam import Adam, AdamW
from torchtally.optim._adamax import Adamax
from torchtally.optim._asgd import ASGD
from torchtally.optim._base import Optimizer
from torchtally.optim._configure import OPTIMIZERS, configure_optimizer
from torchtally.optim._lamb import Lamb
from torchtally.optim._lion import Lion
from torchtally.optim._muon import Muon
from torchtally.optim._nadam import NAdam
from torchtally.optim._param_groups import configure_param_groups
from torchtally.optim._radam import RAdam
from torchtally.optim._rmsprop import RMSprop
from torchtally.optim._rprop import Rprop
from torchtally.optim._sgd import SGD
from torchtally.optim.lr_scheduler import configure_lr_scheduler

__all__ = [
    "ASGD",
    "OPTIMIZERS",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Lamb",
    "Lion",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "configure_lr_scheduler",
    "configure_optimizer",
    "configure_param_groups",
    "lr_scheduler",
    "weight_decay_scheduler",
]
