"""Learning-rate schedulers in closed form (the `cstorch.optim.lr_scheduler` API).

Each scheduler computes its rate as a formula of a step-count tensor and writes it into the
optimizer's learning-rate tensors in place, so `scheduler.step()` can run inside a compiled
step with no host sync and no recompilation.
"""

from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._composite import ChainedScheduler, SequentialLR
from torchtally.optim.lr_scheduler._configure import SCHEDULERS, configure_lr_scheduler
from torchtally.optim.lr_scheduler._constant import ConstantLR
from torchtally.optim.lr_scheduler._cosine import CosineAnnealingLR, CosineDecayLR
from torchtally.optim.lr_scheduler._cyclic import CyclicLR
from torchtally.optim.lr_scheduler._exponential import ExponentialLR
from torchtally.optim.lr_scheduler._inverse_time import (
    InverseExponentialTimeDecayLR,
    InverseSquareRootDecayLR,
)
from torchtally.optim.lr_scheduler._lambda import LambdaLR, MultiplicativeLR
from torchtally.optim.lr_scheduler._one_cycle import OneCycleLR
from torchtally.optim.lr_scheduler._polynomial import LinearLR, PolynomialLR
from torchtally.optim.lr_scheduler._scale_per_param import ScalePerParamLR
from torchtally.optim.lr_scheduler._step import MultiStepLR, PiecewiseConstantLR, StepLR
from torchtally.optim.lr_scheduler._warm_restarts import CosineAnnealingWarmRestarts

#: cstorch 2.x's name of `ChainedScheduler` (the same product of the schedules' factors).
ChainedLR = ChainedScheduler

__all__ = [
    "SCHEDULERS",
    "ChainedLR",
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CosineDecayLR",
    "CyclicLR",
    "ExponentialLR",
    "InverseExponentialTimeDecayLR",
    "InverseSquareRootDecayLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PiecewiseConstantLR",
    "PolynomialLR",
    "ScalePerParamLR",
    "SequentialLR",
    "StepLR",
    "configure_lr_scheduler",
]
