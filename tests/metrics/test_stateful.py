"""Differential, stateful test of the metric machinery (issue 25).

Every registry case (`cases_*.py`) and a few collections of registry metrics that share
statistics run random sequences of operations, drawn by hypothesis' rule-based state machine.
The system under test (SUT) uses every mechanism: held (coalesced) small batches, the compute
cache, `compile_update`, collections with shared and derived state, pickling, copies,
`state_dict` round trips, merges and device moves. Its reference is a plain metric fed the same
data with every mechanism off: `coalesce_updates(False)`, never compiled, never in a
collection, never copied or moved. Any difference in value, error or state is a failure.

`make test` runs a bounded number of steps per case, seeded by the case (the same sequences on
every run); `TORCHTALLY_STATEFUL_STEPS` sets the steps per case, draws random sequences and
lets every case compile. A long run over the whole registry, printing the steps run and the differences found
(one process per core with `--shard 0/2` and `--shard 1/2`; `--no-shrink` reports failing
sequences as found instead of minimal ones, faster):

    PYTHONPATH=src python tests/metrics/test_stateful.py --steps 100000
"""

from __future__ import annotations

import argparse
import copy
import inspect
import io
import os
import pickle
import sys
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import cases_classification
import cases_core
import cases_ranking
import pytest
import torch
from cases import Args, Case
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)
from test_common import ALL_CASES
from torch import Tensor

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    DiceCoefficientMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MAEMetric,
    MeanIOUMetric,
    MeanPerClassAccuracyMetric,
    Metric,
    MetricCollection,
    MSEMetric,
    PrecisionMetric,
    R2ScoreMetric,
    RecallMetric,
    SMAPEMetric,
    TopKAccuracyMetric,
)
from torchtally.metrics.ranking import AUCMetric, AUROCMetric

# ------------------------------------------------------------------------------ budget

#: Steps per registry case (and per collection); the default keeps the whole file near two
#: minutes on two cores. A long run sets it high, e.g. 1,500 (about 100,000 over the registry).
STEPS = int(os.environ.get("TORCHTALLY_STATEFUL_STEPS", "0")) or None
STEPS_PER_EXAMPLE = 25
#: Compiling costs about a second a metric on a CPU: by default one sequence in 4 of every 6th
#: case and of the collections may switch `compile_update` on; a long run compiles everywhere.
COMPILE_EVERY = 1 if STEPS else 6
COMPILE_ONE_IN = 4

#: Shrinking a failing sequence replays it hundreds of times (minutes with compiling): off in
#: `make test`, where the first failing sequence is reported as found; on for a long run or
#: with TORCHTALLY_STATEFUL_SHRINK=1, to get minimal repros.
SHRINK = bool(os.environ.get("TORCHTALLY_STATEFUL_SHRINK"))

#: Counts of steps run (by rule), read by the long run.
STEP_COUNTS: Counter[str] = Counter()


def fixed_seed(machine: type, name: str) -> type:
    """Seed a machine by its case's name in `make test`: the same sequences on every run
    (with no example database), different ones for each case; random in a long run."""
    if STEPS is None:
        machine._hypothesis_internal_use_seed = zlib.crc32(name.encode())  # as @seed sets it
    return machine


def machine_settings(steps: int) -> settings:
    return settings(
        max_examples=max(1, steps // STEPS_PER_EXAMPLE),
        stateful_step_count=STEPS_PER_EXAMPLE,
        deadline=None,
        database=None,
        print_blob=False,
        report_multiple_bugs=False,
        phases=[p for p in Phase if SHRINK or p not in (Phase.shrink, Phase.explain)],
        suppress_health_check=list(HealthCheck),
    )


# ------------------------------------------------------------------------ comparisons


@dataclass(frozen=True)
class Raised:
    """The outcome of a call that raised: what is compared is the type and the message."""

    type: type
    message: str


def attempt(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The call's result, or `Raised` for the exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warnings (once-per-metric) are not the outcome
            return call(*args, **kwargs)
    except Exception as error:
        return Raised(type(error), str(error))


def _float_mismatch(sut: Tensor, ref: Tensor) -> Tensor:
    """Where two floating tensors of one dtype differ by more than the allowed amount.

    float64: a relative 1e-12, or 1e-13 absolutely (a sum cancelling to near zero in another
    order, as held batches summed together are). Narrower types: exact or 1 ulp (their values
    are rounded from float64 states, so a last-bit difference of the float64 may flip it)."""
    a, b = sut.detach().double(), ref.detach().double()
    equal = (a == b) | (a.isnan() & b.isnan())
    if ref.dtype == torch.float64:
        allowed = 1e-12 * torch.maximum(a.abs(), b.abs()) + 1e-13
    else:
        largest = torch.maximum(sut.detach().abs(), ref.detach().abs())
        allowed = (torch.nextafter(largest, largest.new_tensor(float("inf"))) - largest).double()
    return ~(equal | ((a - b).abs() <= allowed))


def assert_same(sut: Any, ref: Any, where: str) -> None:
    """Values equal: integers exactly, floats as `_float_mismatch` allows, same types."""
    if isinstance(ref, Raised) or isinstance(sut, Raised):
        assert sut == ref, f"{where}: the SUT gave {sut!r}, the reference {ref!r}"
    elif isinstance(ref, Tensor):
        assert isinstance(sut, Tensor), f"{where}: {type(sut).__name__} instead of a tensor"
        assert (sut.dtype, sut.shape, sut.device) == (ref.dtype, ref.shape, ref.device), (
            f"{where}: {sut.dtype} {tuple(sut.shape)} on {sut.device} instead of "
            f"{ref.dtype} {tuple(ref.shape)} on {ref.device}"
        )
        if ref.is_floating_point() or ref.is_complex():
            bad = _float_mismatch(sut, ref)
            assert not bad.any(), f"{where}: {sut[bad].tolist()} instead of {ref[bad].tolist()}"
        else:
            assert torch.equal(sut, ref), f"{where}: {sut} instead of {ref}"
    elif isinstance(ref, dict):
        assert isinstance(sut, dict) and list(sut) == list(ref), f"{where}: keys {list(sut)}"
        for key in ref:
            assert_same(sut[key], ref[key], f"{where}[{key!r}]")
    elif isinstance(ref, tuple | list):
        assert type(sut) is type(ref) and len(sut) == len(ref), f"{where}: {sut!r} vs {ref!r}"
        for i, (s, r) in enumerate(zip(sut, ref)):
            assert_same(s, r, f"{where}[{i}]")
    elif isinstance(ref, float):
        assert type(sut) is float, f"{where}: {type(sut).__name__} instead of float"
        as_tensor = torch.tensor(sut, dtype=torch.float64), torch.tensor(ref, dtype=torch.float64)
        assert_same(*as_tensor, where)
    else:
        assert type(sut) is type(ref) and sut == ref, f"{where}: {sut!r} instead of {ref!r}"


def metric_state(metric: Metric) -> dict[str, Any]:
    """Everything a metric's value depends on, bookkeeping included, as plain values.

    The rows of `cat` states are a multiset: their order follows the path that appended them
    (a compiled update and held eager batches interleave) and the exact AUROC's compute sorts
    them in place, ties in any order. So they are put in one canonical order, the rows of the
    states appended together (same fill) kept paired: a row changed, lost or doubled, or a
    pairing broken, is still a difference."""
    state = {"num_updates": metric.num_updates, **metric.state_dict_all()}
    groups: dict[int, list[str]] = {}
    for name, _, reduction in metric.states():
        if reduction == "cat":
            groups.setdefault(state[name].shape[0], []).append(name)
    for rows, names in groups.items():
        flat = [state[n].reshape(rows, -1).tolist() for n in names]
        order = sorted(range(rows), key=lambda i: repr([part[i] for part in flat]))
        for n in names:
            state[n] = state[n][order]
    return state


def assert_same_state(sut: Metric, ref: Metric, where: str) -> None:
    assert_same(attempt(metric_state, sut), attempt(metric_state, ref), f"{where} state")


def scribble_on(value: Any) -> None:
    """Change a returned value in place, as a caller may (`value.mul_(100)` for percent)."""
    if isinstance(value, Tensor):
        if value.dtype == torch.bool:
            value.logical_not_()
        else:
            value.add_(1)
    elif isinstance(value, dict):
        for item in value.values():
            scribble_on(item)
    elif isinstance(value, tuple | list):
        for item in value:
            scribble_on(item)


# --------------------------------------------------------------------------- batches

#: Small sizes are held back by coalescing on a CPU; "large" is past the holding limit, "past
#: cap" past the metric's own (`max_held_elements`; 100 rows for a metric without one).
SIZES = (0, 1, 2, 3, 5, 8, 13, 32, 100, "past cap", "large")
FLOAT_DTYPES = (None, torch.float32, torch.float64, torch.float16)
INT_DTYPES = (None, torch.int64, torch.int32)
WEIGHT_NAMES = ("weight", "weights")


@dataclass(frozen=True)
class BatchSpec:
    """How to draw one batch from a case's generator (printed in a failing sequence)."""

    seed: int
    size: int | str
    weights: str  # "keep" (as the case gives them), "drop", "scalar" or "positional"
    floats: torch.dtype | None  # cast every floating tensor to it
    ints: torch.dtype | None  # cast every integer tensor to it
    output_dtype: torch.dtype | None = None  # cstorch's `update(..., dtype=)`
    scribble: bool = False  # overwrite the SUT's input tensors after the call


batch_specs = st.builds(
    BatchSpec,
    seed=st.integers(0, 2**16),
    size=st.sampled_from(SIZES),
    weights=st.sampled_from(("keep", "drop", "scalar", "positional")),
    floats=st.sampled_from(FLOAT_DTYPES),
    ints=st.sampled_from(INT_DTYPES),
    output_dtype=st.sampled_from((None, None, None, torch.float64, torch.float16)),
    scribble=st.booleans(),
)
#: Batches for a merged-in metric: small and plain, so that they are held.
small_specs = batch_specs.map(
    lambda s: replace(s, size=s.size if s.size not in ("large", "past cap") else 4)
)


def _large_size(batch: Callable[[torch.Generator, int], Args]) -> int:
    """Rows of a batch just past the 65,536 elements that coalescing holds back."""
    positional, keyword = batch(torch.Generator().manual_seed(0), 1)
    per_row = sum(t.numel() for t in (*positional, *keyword.values()) if isinstance(t, Tensor))
    return 65_536 // max(per_row, 1) + 1


def _past_cap_size(batch: Callable[[torch.Generator, int], Args], cap: int | None) -> int:
    """Rows of a batch whose widest input is just past `cap` elements (100 rows for None)."""
    if cap is None:
        return 100
    positional, keyword = batch(torch.Generator().manual_seed(0), 1)
    widest = max(
        (t.numel() for t in (*positional, *keyword.values()) if isinstance(t, Tensor)), default=1
    )
    return cap // max(widest, 1) + 1


def _cast(value: Any, spec: BatchSpec) -> Any:
    if not isinstance(value, Tensor):
        return value
    if value.is_floating_point() and spec.floats is not None:
        return value.to(spec.floats)
    if not value.is_floating_point() and value.dtype != torch.bool and spec.ints is not None:
        return value.to(spec.ints)
    return value


def make_batch(
    batch: Callable[[torch.Generator, int], Args],
    update: Callable[..., Any],
    spec: BatchSpec,
    cap: int | None = None,
) -> Args:
    """The (args, kwargs) that `spec` describes, for a metric whose update is `update` and
    whose held batches are capped at `cap` elements."""
    if spec.size == "large":
        size = _large_size(batch)
    elif spec.size == "past cap":
        size = _past_cap_size(batch, cap)
    else:
        size = spec.size
    positional, keyword = batch(torch.Generator().manual_seed(spec.seed), int(size))
    positional = tuple(_cast(a, spec) for a in positional)
    keyword = {k: _cast(v, spec) for k, v in keyword.items()}
    if spec.weights == "drop":
        keyword = {k: v for k, v in keyword.items() if k not in WEIGHT_NAMES}
    elif spec.weights == "scalar":  # one weight for the batch, broadcast against its values
        keyword = {
            k: v.flatten()[0] if k in WEIGHT_NAMES and isinstance(v, Tensor) and v.numel() else v
            for k, v in keyword.items()
        }
    elif spec.weights == "positional":
        # Weights given positionally keep the call keyword-free, the calls coalescing holds.
        names = list(inspect.signature(update).parameters)
        while len(positional) < len(names) and names[len(positional)] in keyword:
            positional = (*positional, keyword.pop(names[len(positional)]))
    if spec.output_dtype is not None:
        keyword["dtype"] = spec.output_dtype
    return positional, keyword


def cloned(args: Args) -> Args:
    """A copy of the inputs for the reference, which must never see what the SUT does to its own."""

    def clone(x: Any) -> Any:
        return x.clone() if isinstance(x, Tensor) else x

    positional, keyword = args
    return tuple(clone(a) for a in positional), {k: clone(v) for k, v in keyword.items()}


def scribble_on_inputs(args: Args) -> None:
    """Overwrite the caller's tensors after the call, as a loop reusing its buffers does."""
    positional, keyword = args
    for x in (*positional, *keyword.values()):
        if isinstance(x, Tensor) and x.numel():
            x.copy_(torch.full_like(x, 3 if x.dtype != torch.bool else 1))


MALFORMED = ("mismatched", "extra_dim", "not_a_tensor", "unknown_keyword", "missing_argument")


def malformed(args: Args, kind: str) -> Args:
    """A batch that the plain update may refuse at the call (what the SUT must then do too)."""
    positional, keyword = args
    if kind == "mismatched":  # one row short in the last tensor argument
        index = max(
            (i for i, a in enumerate(positional) if isinstance(a, Tensor) and a.dim()), default=0
        )
        cut = (
            positional[index][:-1]
            if isinstance(positional[index], Tensor) and positional[index].dim()
            else positional[index]
        )
        positional = (*positional[:index], cut, *positional[index + 1 :])
    elif kind == "extra_dim":
        first = positional[0]
        positional = (first.unsqueeze(-1) if isinstance(first, Tensor) else first, *positional[1:])
    elif kind == "not_a_tensor":
        positional = ("labels", *positional[1:])
    elif kind == "unknown_keyword":
        keyword = {**keyword, "no_such_argument": 1}
    else:
        positional = positional[:-1]
    return positional, keyword


# ------------------------------------------------------------- one metric, one reference


class PlainHistory:
    """What the reference was fed since its last reset, replayable into a fresh metric: a
    second reference with no cache at all, checked at the end of every sequence."""

    def __init__(self, make: Callable[[], Metric], check_values: bool) -> None:
        self.make = make
        self.steps: list[tuple[str, Any]] = [("check_values", check_values)]

    def replay(self) -> Metric:
        metric = self.make().coalesce_updates(False)
        for kind, item in self.steps:
            if kind == "check_values":
                metric.check_values = item
            elif kind == "update":
                attempt(metric.update, *item[0], **item[1])
            else:
                attempt(metric.merge_state, [other.replay() for other in item])
        return metric


class MetricMachine(RuleBasedStateMachine):
    """One registry case: the SUT metric against a plain reference in lockstep."""

    case: Case
    may_compile: bool  # whether this case's sequences may compile at all

    def __init__(self) -> None:
        super().__init__()
        self.compiles = False
        #: cstorch's `dtype=` of the last update that went in: a per-call setting, not state
        #: (as in cstorch, a checkpoint does not carry it).
        self.last_dtype: torch.dtype | None = None
        self.sut = self.case.make()
        self.ref = self.case.make().coalesce_updates(False)
        self.history = PlainHistory(self.case.make, self.ref.check_values)
        self.update_function = type(self.ref).update

    def _batch(self, spec: BatchSpec) -> Args:
        return make_batch(
            self.case.batch, self.update_function, spec, type(self.ref).max_held_elements
        )

    def _feed(self, args: Args, scribble: bool, forward: bool = False) -> None:
        """The same call on both; outcomes (value or exception) must agree."""
        for_ref = cloned(args)
        method = "forward" if forward else "update"
        ref_outcome = attempt(getattr(self.ref, method), *for_ref[0], **for_ref[1])
        sut_outcome = attempt(getattr(self.sut, method), *args[0], **args[1])
        if not isinstance(ref_outcome, Raised):
            self.last_dtype = args[1].get("dtype")
        self.history.steps.append(("update", for_ref))
        if scribble:
            scribble_on_inputs(args)
        assert_same(sut_outcome, ref_outcome, method)

    def _compare(self, where: str) -> Any:
        sut_value, ref_value = attempt(self.sut.compute), attempt(self.ref.compute)
        assert_same(sut_value, ref_value, where)
        if not isinstance(ref_value, Raised):
            # A metric holding invalid data raises its error at every compute (compared just
            # above, counts included); what it stored for the invalid rows is unspecified
            # (the exact AUROC's in-place append codes an invalid label otherwise).
            assert_same_state(self.sut, self.ref, where)
        return sut_value

    # --- data

    @rule(spec=batch_specs, forward=st.booleans())
    def update(self, spec: BatchSpec, forward: bool) -> None:
        STEP_COUNTS["update"] += 1
        self._feed(self._batch(spec), spec.scribble, forward)

    @rule(spec=small_specs)
    def update_held(self, spec: BatchSpec) -> None:
        """A small keyword-free batch, the kind coalescing holds back (rules are drawn evenly:
        this one makes updates a larger share of the steps)."""
        STEP_COUNTS["update_held"] += 1
        plain = replace(spec, weights=spec.weights if spec.weights != "keep" else "positional")
        self._feed(self._batch(replace(plain, output_dtype=None)), spec.scribble)

    @precondition(lambda self: bool(self.case.bad))
    @rule(index=st.integers(0, 99))
    def update_bad(self, index: int) -> None:
        STEP_COUNTS["update_bad"] += 1
        positional, keyword, _ = self.case.bad[index % len(self.case.bad)]
        self._feed((positional, keyword), scribble=False)

    @rule(spec=small_specs, kind=st.sampled_from(MALFORMED))
    def update_malformed(self, spec: BatchSpec, kind: str) -> None:
        STEP_COUNTS["update_malformed"] += 1
        self._feed(malformed(self._batch(replace(spec, scribble=False)), kind), scribble=False)

    @rule()
    def compute(self) -> None:
        STEP_COUNTS["compute"] += 1
        value = self._compare("compute")
        scribble_on(value)
        self._compare("compute after changing the returned value")

    # --- lifecycle

    @rule()
    def reset(self) -> None:
        STEP_COUNTS["reset"] += 1
        self.sut.reset()
        self.ref.reset()
        self.last_dtype = None
        self.history = PlainHistory(self.case.make, self.ref.check_values)

    @rule(flag=st.booleans())
    def check_values(self, flag: bool) -> None:
        STEP_COUNTS["check_values"] += 1
        self.sut.check_values = self.ref.check_values = flag
        self.history.steps.append(("check_values", flag))

    @rule(specs=st.lists(small_specs, max_size=3), bad=st.booleans(), two=st.booleans())
    def merge_state(self, specs: list[BatchSpec], bad: bool, two: bool) -> None:
        """Merge metrics configured like the SUT (holding their batches) into it, and plain
        ones fed the same into the reference."""
        STEP_COUNTS["merge_state"] += 1
        others, plain_others, histories = [], [], []
        for _ in range(2 if two else 1):
            other = self.case.make()
            other.check_values = self.sut.check_values
            plain = self.case.make().coalesce_updates(False)
            plain.check_values = self.ref.check_values
            history = PlainHistory(self.case.make, plain.check_values)
            batches = [self._batch(replace(s, scribble=False)) for s in specs]
            if bad and self.case.bad:
                batches.append(self.case.bad[len(specs) % len(self.case.bad)][:2])
            for positional, keyword in batches:
                attempt(other.update, *positional, **keyword)
                attempt(plain.update, *positional, **keyword)
                history.steps.append(("update", (positional, keyword)))
            others.append(other)
            plain_others.append(plain)
            histories.append(history)
        ref_outcome = attempt(self.ref.merge_state, plain_others)
        sut_outcome = attempt(self.sut.merge_state, others if two else others[0])
        self.history.steps.append(("merge", histories))
        assert (type(sut_outcome) is Raised) == (type(ref_outcome) is Raised), (
            f"merge_state: the SUT gave {sut_outcome!r}, the reference {ref_outcome!r}"
        )

    # --- round trips and mechanisms (the SUT only)

    @rule()
    def pickle_round_trip(self) -> None:
        STEP_COUNTS["pickle"] += 1
        self.sut = pickle.loads(pickle.dumps(self.sut))

    @rule()
    def deepcopy(self) -> None:
        STEP_COUNTS["deepcopy"] += 1
        self.sut = copy.deepcopy(self.sut)

    @rule(through_file=st.booleans(), everything=st.booleans())
    @precondition(lambda self: self.last_dtype is None)  # not state: a checkpoint drops it
    def state_dict_round_trip(self, through_file: bool, everything: bool) -> None:
        """Restore into a fresh metric configured as the SUT, by `state_dict` or
        `state_dict_all`, optionally through `torch.save`."""
        STEP_COUNTS["state_dict"] += 1
        fresh = self.case.make()
        fresh.check_values = self.sut.check_values
        saved = self.sut.state_dict_all() if everything else self.sut.persistent().state_dict()
        if through_file:
            buffer = io.BytesIO()
            torch.save(saved, buffer)
            buffer.seek(0)
            saved = torch.load(buffer)
        if everything:
            fresh.load_state_dict_all(saved)
        else:
            fresh.persistent().load_state_dict(saved)
        self.sut = fresh

    @rule()
    def to_cpu(self) -> None:
        STEP_COUNTS["to"] += 1
        self.sut = self.sut.to("cpu")

    @rule(flag=st.booleans())
    def coalesce_updates(self, flag: bool) -> None:
        STEP_COUNTS["coalesce_updates"] += 1
        self.sut.coalesce_updates(flag)

    @rule()
    def flush(self) -> None:
        STEP_COUNTS["flush"] += 1
        self.sut.flush()

    @initialize(lottery=st.integers(0, COMPILE_ONE_IN - 1))
    def draw_compiling(self, lottery: int) -> None:
        """Whether this sequence compiles (from its start, then switched by the rule below):
        drawn, so that a replayed sequence decides alike."""
        self.compiles = self.may_compile and lottery == 0
        if self.compiles:
            self.compile_update(True)

    @precondition(lambda self: self.compiles)
    @rule(flag=st.booleans())
    def compile_update(self, flag: bool) -> None:
        STEP_COUNTS["compile_update"] += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a metric that cannot compile says so and stays eager
            self.sut.compile_update(flag, backend="eager")

    def teardown(self) -> None:
        # The reference itself, against a fresh metric fed its whole history (no cache).
        assert_same(attempt(self.history.replay().compute), attempt(self.ref.compute), "reference")


def run_case(case: Case, steps: int, may_compile: bool) -> None:
    machine = type(
        f"Machine_{case.id}", (MetricMachine,), {"case": case, "may_compile": may_compile}
    )
    fixed_seed(machine, case.id)
    run_state_machine_as_test(machine, settings=machine_settings(steps))


#: Cases whose every step costs tens of milliseconds (images, calibration, at-k): fewer steps.
SLOW_CASES = {"ssim", "calibration-mce-multiclass-logits", "calibration-rms-multiclass-ignore"}


def _default_steps(case_id: str) -> int:
    return 50 if case_id in SLOW_CASES else 125


@pytest.mark.parametrize("index", range(len(ALL_CASES)), ids=[c.id for c in ALL_CASES])
def test_a_metric_with_every_mechanism_equals_the_plain_metric(index: int) -> None:
    case = ALL_CASES[index]
    run_case(case, STEPS or _default_steps(case.id), index % COMPILE_EVERY == 0)


# ------------------------------------------------------------------------ collections


@dataclass(frozen=True)
class CollectionCase:
    """Registry metrics over the same inputs, several sharing or deriving their statistic."""

    id: str
    members: Callable[[], dict[str, Metric]]
    batch: Callable[[torch.Generator, int], Args]
    bad: list[tuple[tuple[Any, ...], dict[str, Any], str]]


COLLECTIONS = [
    CollectionCase(
        "multiclass-4-indices",
        lambda: {
            "precision": PrecisionMetric(4, "macro"),
            "recall": RecallMetric(4, "weighted"),
            "f1": F1ScoreMetric(4, "micro"),
            "per_class": MeanPerClassAccuracyMetric(4),
            "matrix": ConfusionMatrixMetric(4),
            "accuracy": AccuracyMetric(num_classes=4),
            "iou": MeanIOUMetric(4),
            "dice": DiceCoefficientMetric(4),
        },
        cases_classification._multiclass_indices(4),
        cases_classification._multiclass_bad(4),
    ),
    CollectionCase(
        "multiclass-4-scores",
        lambda: {
            "accuracy": AccuracyMetric(),
            "fbeta": FBetaScoreMetric(4, beta=0.5, average_type="none"),
            "matrix": ConfusionMatrixMetric(4),
            "precision": PrecisionMetric(4, "macro"),
            "top2": TopKAccuracyMetric(2),
            "auroc": AUROCMetric(num_classes=4, capacity=256),
            "auroc_binned": AUROCMetric(num_classes=4, num_bins=8, score_range=(-4.0, 4.0)),
        },
        lambda g, n: cases_ranking._multiclass(g, n, 4, torch.float32),
        cases_classification._multiclass_bad(4),
    ),
    CollectionCase(
        "binary-scores",
        lambda: {
            "precision": PrecisionMetric(),
            "recall": RecallMetric(),
            "f1": F1ScoreMetric(),
            "accuracy": AccuracyMetric(),
            "auroc": AUROCMetric(capacity=256),
            "auroc_binned": AUROCMetric(num_bins=16),
            "auc_pr": AUCMetric(50, "PR"),
        },
        cases_ranking._binary,
        cases_classification._binary_bad(),
    ),
    CollectionCase(
        "regression",
        lambda: {
            "mse": MSEMetric(),
            "mae": MAEMetric(),
            "smape": SMAPEMetric(),
            "r2": R2ScoreMetric(),
        },
        cases_core._regression,
        cases_core._regression_bad(),
    ),
    CollectionCase(
        "multilabel-3",
        lambda: {
            "f1": F1ScoreMetric(3, "macro", multilabel=True),
            "precision": PrecisionMetric(3, "weighted", multilabel=True),
            "recall": RecallMetric(3, "micro", multilabel=True),
        },
        cases_classification._multilabel(3, scores=True),
        cases_classification._multilabel_bad(),
    ),
]

member_names = st.integers(0, 99)


class CollectionMachine(RuleBasedStateMachine):
    """A `MetricCollection` whose members are also used on their own, against one plain
    metric per member fed exactly what that member was fed."""

    spec: CollectionCase
    may_compile: bool

    def __init__(self) -> None:
        super().__init__()
        self.compiles = False
        self.sut = MetricCollection(self.spec.members())
        self.refs = {n: m.coalesce_updates(False) for n, m in self.spec.members().items()}
        self.names = list(self.refs)
        #: Each member's `dtype=` of its last update that went in (not state: see above).
        self.last_dtypes: dict[str, torch.dtype | None] = dict.fromkeys(self.names)
        self.update_function = type(next(iter(self.refs.values()))).update

    def _name(self, index: int) -> str:
        return self.names[index % len(self.names)]

    def _batch(self, spec: BatchSpec) -> Args:
        return make_batch(self.spec.batch, self.update_function, spec)

    def _refuses_weights(self, keyword: dict[str, Any]) -> bool:
        """A collection deriving a member that cannot express weights refuses them (by design,
        with a clear error, before touching any state)."""
        return keyword.get("weights") is not None and any(
            not self.sut[n].derived_supports_weights for n in self.sut.derived
        )

    def _compare_member(self, name: str, where: str) -> Any:
        value = attempt(self.sut[name].compute)
        assert_same(value, attempt(self.refs[name].compute), f"{where} {name}")
        return value

    # --- data

    @rule(spec=batch_specs)
    def update_collection(self, spec: BatchSpec) -> None:
        STEP_COUNTS["collection update"] += 1
        self._update_collection(self._batch(spec), spec.scribble)

    @rule(index=st.integers(0, 99))
    def update_collection_bad(self, index: int) -> None:
        STEP_COUNTS["collection update_bad"] += 1
        positional, keyword, _ = self.spec.bad[index % len(self.spec.bad)]
        self._update_collection((positional, keyword), scribble=False)

    @rule(spec=small_specs, kind=st.sampled_from(MALFORMED))
    def update_collection_malformed(self, spec: BatchSpec, kind: str) -> None:
        STEP_COUNTS["collection update_malformed"] += 1
        args = malformed(self._batch(replace(spec, scribble=False)), kind)
        self._update_collection(args, scribble=False)

    def _update_collection(self, args: Args, scribble: bool) -> None:
        sut_outcome = attempt(self.sut.update, *args[0], **args[1])
        if self._refuses_weights(args[1]):
            assert isinstance(sut_outcome, Raised) and sut_outcome.type is ValueError, (
                f"update with weights: {sut_outcome!r} instead of the refusal"
            )
            return
        refs = {
            n: attempt(r.update, *cloned(args)[0], **cloned(args)[1]) for n, r in self.refs.items()
        }
        if scribble:
            scribble_on_inputs(args)
        errors = [o for o in refs.values() if isinstance(o, Raised)]
        for name, outcome in refs.items():
            if not isinstance(outcome, Raised):
                self.last_dtypes[name] = args[1].get("dtype")
        if errors:
            assert sut_outcome in errors, f"update: the SUT gave {sut_outcome!r}, members {refs}"
        else:
            assert sut_outcome is None, f"update: the SUT raised {sut_outcome!r}"

    @rule(index=member_names, spec=batch_specs)
    def update_member(self, index: int, spec: BatchSpec) -> None:
        STEP_COUNTS["collection update_member"] += 1
        name = self._name(index)
        args = self._batch(spec)
        ref_outcome = attempt(self.refs[name].update, *cloned(args)[0], **cloned(args)[1])
        sut_outcome = attempt(self.sut[name].update, *args[0], **args[1])
        if not isinstance(ref_outcome, Raised):
            self.last_dtypes[name] = args[1].get("dtype")
        if spec.scribble:
            scribble_on_inputs(args)
        assert_same(sut_outcome, ref_outcome, f"update of {name} alone")

    # --- values

    @rule()
    def compute_collection(self) -> None:
        STEP_COUNTS["collection compute"] += 1
        values = self._compute_collection()
        if not isinstance(values, Raised):
            scribble_on(values)
            self._compute_collection()

    def _compute_collection(self) -> Any:
        values = attempt(self.sut.compute)
        refs = {n: attempt(r.compute) for n, r in self.refs.items()}
        errors = [o for o in refs.values() if isinstance(o, Raised)]
        if errors:
            assert values in errors, f"compute: the collection gave {values!r}, members {refs}"
            return values
        assert_same(values, refs, "collection compute")
        for name in self.names:  # derived members are filled now: every state must agree
            assert_same_state(self.sut[name], self.refs[name], f"collection compute {name}")
        return values

    @rule(index=member_names)
    def compute_member(self, index: int) -> None:
        STEP_COUNTS["collection compute_member"] += 1
        name = self._name(index)
        scribble_on(self._compare_member(name, "compute of"))
        self._compare_member(name, "compute after changing the returned value of")

    # --- lifecycle

    @rule()
    def reset_collection(self) -> None:
        STEP_COUNTS["collection reset"] += 1
        self.sut.reset()
        for ref in self.refs.values():
            ref.reset()
        self.last_dtypes = dict.fromkeys(self.names)

    @rule(index=member_names)
    def reset_member(self, index: int) -> None:
        STEP_COUNTS["collection reset_member"] += 1
        name = self._name(index)
        self.sut[name].reset()
        self.refs[name].reset()
        self.last_dtypes[name] = None

    @rule(index=member_names, flag=st.booleans())
    def check_values_of_member(self, index: int, flag: bool) -> None:
        STEP_COUNTS["collection check_values"] += 1
        name = self._name(index)
        self.sut[name].check_values = self.refs[name].check_values = flag

    @rule(index=member_names, specs=st.lists(small_specs, max_size=3))
    def merge_into_member(self, index: int, specs: list[BatchSpec]) -> None:
        STEP_COUNTS["collection merge_state"] += 1
        name = self._name(index)
        other, plain = self.spec.members()[name], self.spec.members()[name]
        plain.coalesce_updates(False)
        for spec in specs:
            positional, keyword = self._batch(replace(spec, scribble=False))
            attempt(other.update, *positional, **keyword)
            attempt(plain.update, *positional, **keyword)
        ref_outcome = attempt(self.refs[name].merge_state, plain)
        sut_outcome = attempt(self.sut[name].merge_state, other)
        assert (type(sut_outcome) is Raised) == (type(ref_outcome) is Raised), (
            f"merge_state: the SUT gave {sut_outcome!r}, the reference {ref_outcome!r}"
        )

    # --- round trips and mechanisms (the SUT only)

    @rule()
    def pickle_round_trip(self) -> None:
        STEP_COUNTS["collection pickle"] += 1
        self.sut = pickle.loads(pickle.dumps(self.sut))

    @rule()
    def deepcopy(self) -> None:
        STEP_COUNTS["collection deepcopy"] += 1
        self.sut = copy.deepcopy(self.sut)

    @rule()
    @precondition(lambda self: not any(self.last_dtypes.values()))  # not state
    def state_dict_round_trip(self) -> None:
        STEP_COUNTS["collection state_dict"] += 1
        fresh = MetricCollection(self.spec.members()).persistent()
        for name in self.names:
            fresh[name].check_values = self.sut[name].check_values
        fresh.load_state_dict(self.sut.persistent().state_dict())
        self.sut = fresh

    @rule()
    def to_cpu(self) -> None:
        STEP_COUNTS["collection to"] += 1
        self.sut = self.sut.to("cpu")

    @rule(index=member_names, flag=st.booleans())
    def coalesce_member(self, index: int, flag: bool) -> None:
        STEP_COUNTS["collection coalesce_updates"] += 1
        self.sut[self._name(index)].coalesce_updates(flag)

    @initialize(lottery=st.integers(0, COMPILE_ONE_IN - 1))
    def draw_compiling(self, lottery: int) -> None:
        self.compiles = self.may_compile and lottery == 0
        if self.compiles:
            self.compile_collection(True)

    @precondition(lambda self: self.compiles)
    @rule(flag=st.booleans())
    def compile_collection(self, flag: bool) -> None:
        STEP_COUNTS["collection compile_update"] += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.sut.compile_update(flag, backend="eager")


def run_collection(spec: CollectionCase, steps: int) -> None:
    machine = type(
        f"Collection_{spec.id}", (CollectionMachine,), {"spec": spec, "may_compile": True}
    )
    fixed_seed(machine, spec.id)
    run_state_machine_as_test(machine, settings=machine_settings(steps))


@pytest.mark.parametrize("spec", COLLECTIONS, ids=[c.id for c in COLLECTIONS])
def test_a_collection_used_with_its_members_alone_equals_plain_metrics(
    spec: CollectionCase,
) -> None:
    run_collection(spec, STEPS or 200)


# -------------------------------------------------------------------------- long run


def main() -> int:
    """Run every case and collection, in rounds of fresh random sequences, until `--steps`
    steps have run; print the count of steps and of differences (each with its sequence)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("-k", default="", help="only the cases whose id contains this")
    parser.add_argument("--shard", default="0/1", help="i/n: every n-th case from the i-th")
    parser.add_argument(
        "--shrink", action=argparse.BooleanOptionalAction, default=True, help="minimal repros"
    )
    options = parser.parse_args()
    global SHRINK
    SHRINK = options.shrink
    shard, shards = (int(x) for x in options.shard.split("/"))
    jobs: list[tuple[str, Callable[[int], None]]] = [
        (c.id, lambda steps, c=c: run_case(c, steps, may_compile=True)) for c in ALL_CASES
    ]
    jobs += [(c.id, lambda steps, c=c: run_collection(c, steps)) for c in COLLECTIONS]
    jobs = [job for job in jobs[shard::shards] if options.k in job[0]]
    # Hypothesis ends many sequences before their last step: a round runs about half of what
    # it is given, so rounds repeat (each with new random sequences) until the count is met.
    per_round = max(STEPS_PER_EXAMPLE, options.steps // max(len(jobs), 1))
    differences: dict[str, str] = {}
    start = time.monotonic()
    while jobs and sum(STEP_COUNTS.values()) < options.steps:
        for name, job in jobs:
            before = sum(STEP_COUNTS.values())
            try:
                job(per_round)
                outcome = "ok"
            except Exception as error:  # a difference, with the sequence that shows it
                outcome = f"DIFFERENCE {type(error).__name__}: {str(error).splitlines()[0]}"
                outcome += "".join(f"\n    {note}" for note in getattr(error, "__notes__", []))
                differences[name] = outcome
            steps = sum(STEP_COUNTS.values()) - before
            print(f"{name:45s} {steps:7d} steps  {outcome}", flush=True)
        jobs = [job for job in jobs if job[0] not in differences]  # reported once
    total = sum(STEP_COUNTS.values())
    print(f"{total} steps in {time.monotonic() - start:.0f} s; {len(differences)} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    # A long run: compiling everywhere, random sequences (not derandomized), shrunk failures.
    STEPS = STEPS or 1
    sys.exit(main())
