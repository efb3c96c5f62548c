"""The bad-input matrix: every registered metric × every kind of malformed or unusual input.

Each cell must end in one of two ways:

- a **clear error**: a `MetricValueError` from `compute`, or a `TypeError`/`ValueError`/
  `RuntimeError` (at call or at compute) whose message names the argument in backticks
  (Keras style);
- the **correct number**: the value the metric gives on the equivalent well-formed input (the
  same numbers as a contiguous float32/int64 tensor, or the batch without an ignored row).
  The well-formed values themselves are checked against scikit-learn, TorchMetrics and hand
  computations in each family's own tests; this matrix checks that no input form changes them.

Never a *silent different number* and never an *unexplained exception* from deep inside torch.
Cases whose input is simply wrong (mismatched batch sizes, negative or NaN weights, meta
tensors) accept an error only. Run this file as a script to print the totals:

    PYTHONPATH=src python tests/metrics/test_bad_inputs.py
"""

from __future__ import annotations

import inspect
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor

sys.path.insert(0, str(Path(__file__).parent))

from cases import Args, Case
from test_common import ALL_CASES

from torchtally.metrics import MetricValueError

N = 12
HALF_RTOL = {torch.float16: 1e-2, torch.bfloat16: 5e-2}
#: Cases whose integer labels are graded relevances (any value >= 0 is valid input).
UNBOUNDED_LABELS = ("retrieval-ndcg",)
WEIGHT_NAMES = ("weight", "weights", "sample_weight")
_ARGUMENT_NAMED = re.compile(r"`[^`]+`")


# ------------------------------------------------------------------------------ outcomes


@dataclass
class Outcome:
    case: str
    cell: str
    kind: str  # "error", "number", "silent", "unexplained", "graph"
    detail: str = ""


@dataclass
class Cell:
    """One perturbed input and what a number from it must equal (None: only an error is
    acceptable)."""

    name: str
    args: Args
    expected: Args | Callable[[], Any] | None
    #: A metric may compute in a half-precision input's own dtype (as TorchMetrics does): its
    #: value is then right to that dtype's precision, not to float32's.
    rtol: float = 1e-5


def _run(case: Case, args: Args) -> Any:
    metric = case.make()
    positional, keyword = args
    metric.update(*positional, **keyword)
    return metric.compute(), metric


def _clear(error: BaseException) -> bool:
    if isinstance(error, MetricValueError):
        return True
    return isinstance(error, TypeError | ValueError | RuntimeError) and bool(
        _ARGUMENT_NAMED.search(str(error))
    )


def _equal(actual: Any, expected: Any, rtol: float = 1e-5) -> bool:
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_equal(actual[k], expected[k], rtol) for k in expected)
        )
    if isinstance(expected, tuple | list):
        return (
            isinstance(actual, tuple | list)
            and len(actual) == len(expected)
            and all(_equal(a, e, rtol) for a, e in zip(actual, expected))
        )
    try:
        a = torch.as_tensor(actual).detach().double()
        e = torch.as_tensor(expected).detach().double()
    except (TypeError, ValueError, RuntimeError):
        return bool(actual == expected)
    if a.device.type == "meta" or a.shape != e.shape:
        return False
    return bool(torch.allclose(a, e, rtol=rtol, atol=rtol / 100, equal_nan=True))


def _judge(case: Case, cell: Cell) -> Outcome:
    try:
        value, metric = _run(case, cell.args)
    except Exception as error:
        kind = "error" if _clear(error) else "unexplained"
        return Outcome(case.id, cell.name, kind, f"{type(error).__name__}: {error}"[:300])
    leaked = [n for n, b in metric.named_buffers() if b.requires_grad or b.grad_fn is not None]
    if leaked:
        return Outcome(case.id, cell.name, "graph", f"states joined the autograd graph: {leaked}")
    if cell.expected is None:
        return Outcome(case.id, cell.name, "silent", f"returned {value!r}, expected an error")
    try:
        if callable(cell.expected):
            want = cell.expected()
        else:
            want, _ = _run(case, cell.expected)
    except Exception as error:
        # The well-formed equivalent raises (e.g. a one-sample batch is not enough): the
        # perturbed input must not quietly produce a number then.
        return Outcome(
            case.id,
            cell.name,
            "silent",
            f"{value!r} where equivalent input raises {type(error).__name__}",
        )
    wanted = want.values if isinstance(want, AnyOf) else [want]
    if any(_equal(value, w, cell.rtol) for w in wanted):
        return Outcome(case.id, cell.name, "number")
    return Outcome(case.id, cell.name, "silent", f"returned {value!r}, expected {want!r}")


# ---------------------------------------------------------------------------- the inputs


def _map(args: Args, fn: Callable[[str, Any], Any]) -> Args:
    positional, keyword = args
    return (
        tuple(fn(f"#{i}", v) for i, v in enumerate(positional)),
        {k: fn(k, v) for k, v in keyword.items()},
    )


def _tensors(args: Args) -> list[tuple[str, Tensor]]:
    positional, keyword = args
    found = [(f"#{i}", v) for i, v in enumerate(positional) if isinstance(v, Tensor)]
    return found + [(k, v) for k, v in keyword.items() if isinstance(v, Tensor)]


def _batched(args: Args) -> list[str]:
    return [k for k, v in _tensors(args) if v.dim() and v.shape[0] == N]


def _replace(args: Args, key: str, value: Any) -> Args:
    return _map(args, lambda k, v: value if k == key else v)


def _update_parameters(case: Case) -> list[str]:
    return list(inspect.signature(case.make().update).parameters)


def _scores(args: Args) -> list[str]:
    return [
        k
        for k, v in _tensors(args)
        if v.is_floating_point() and k not in WEIGHT_NAMES and v.dim() and v.shape[0] == N
    ]


def _labels(args: Args) -> list[str]:
    return [
        k
        for k, v in _tensors(args)
        if not v.is_floating_point() and v.dtype != torch.bool and v.dim() and v.shape[0] == N
    ]


def _weight_key(case: Case, args: Args) -> str | None:
    _, keyword = args
    for name in WEIGHT_NAMES:
        if name in keyword and isinstance(keyword[name], Tensor):
            return name
    for name in WEIGHT_NAMES:
        if name in _update_parameters(case):
            return name
    return None


def _non_contiguous(x: Tensor) -> Tensor:
    return torch.stack([x, x], dim=-1)[..., 0] if x.dim() else x


def _cells(case: Case) -> Iterator[Cell]:
    base = case.batch(torch.Generator().manual_seed(11), N)
    batched = _batched(base)
    empty = case.make().compute

    # rank: a batched argument with an extra trailing or leading dimension
    if batched:
        key = batched[0]
        value = dict(_tensors(base))[key]
        yield Cell("rank+1 (trailing)", _replace(base, key, value.unsqueeze(-1)), base)
        yield Cell("rank+1 (leading)", _replace(base, key, value.unsqueeze(0)), base)
    # mismatched batch sizes between arguments
    if len(batched) >= 2:
        key = batched[-1]
        yield Cell("mismatched batch", _replace(base, key, dict(_tensors(base))[key][:-1]), None)
    # labels out of range: must be an error, or (ignore semantics) the batch without that row
    for key in _labels(base)[:1]:
        rest = _map(base, lambda k, v: v[1:] if isinstance(v, Tensor) and k in batched else v)
        unbounded = case.id.startswith(UNBOUNDED_LABELS)
        classes = getattr(case.make(), "num_classes", None)
        exact = (classes,) if isinstance(classes, int) and not unbounded else ()
        for bad in (-1, -100, *exact) if unbounded else (-1, -100, *exact, 10**6):
            labels = dict(_tensors(base))[key].clone()
            labels.view(-1)[0] = bad
            perturbed = _replace(base, key, labels)
            yield Cell(f"label {bad}", perturbed, _either(case, base, rest))
        # a fractional label is no class index and no relevance grade: only an error is right
        if not unbounded:
            fractional = dict(_tensors(base))[key].double()
            fractional.view(-1)[0] = 0.5
            yield Cell(
                "label 0.5",
                _replace(base, key, fractional.float()),
                _label_unread(case, base, key),
            )
        # bool labels are the classes 0 and 1: their value, or an error
        as_bool = dict(_tensors(base))[key] != 0
        yield Cell(
            "labels as bool",
            _replace(base, key, as_bool),
            _replace(base, key, as_bool.to(dict(_tensors(base))[key].dtype)),
        )
    # non-finite scores
    for key in _scores(base)[:1]:
        for bad, finite in ((float("nan"), None), (torch.inf, 1e30), (-torch.inf, -1e30)):
            scores = dict(_tensors(base))[key].clone()
            scores.view(-1)[0] = bad
            if finite is None:
                expected = _position_free(case, base, key)
            else:
                same = scores.clone()
                same.view(-1)[0] = finite
                expected = _replace(base, key, same)
            yield Cell(f"score {bad}", _replace(base, key, scores), expected)
    # negative and NaN weights
    weight_key = _weight_key(case, base)
    if weight_key is not None:
        _, keyword = base
        current = keyword.get(weight_key)
        weights = current.clone() if isinstance(current, Tensor) else torch.ones(N)
        for bad in (-1.0, float("nan")):
            w = weights.clone()
            w.view(-1)[0] = bad
            yield Cell(f"weight {bad}", (base[0], {**keyword, weight_key: w}), None)
        yield Cell(f"{weight_key}=-1.0 (Python)", (base[0], {**keyword, weight_key: -1.0}), None)
        if weights.dim() == 1 and weights.shape[0] == N:
            # (N, 1) may be read as one weight per sample (the (N,) value); (N - 1,) cannot
            per_sample = (base[0], {**keyword, weight_key: weights})
            yield Cell(
                f"{weight_key} (N, 1)",
                (base[0], {**keyword, weight_key: weights[:, None]}),
                per_sample,
            )
            yield Cell(
                f"{weight_key} (N - 1,)", (base[0], {**keyword, weight_key: weights[:-1]}), None
            )
    # empty batch: the value of no data, or an error
    if batched:
        cut = _map(base, lambda k, v: v[:0] if k in batched else v)
        yield Cell("empty batch", cut, empty)
    # dtypes: the same numbers in another dtype give the same value
    for key in _scores(base)[:2]:
        value = dict(_tensors(base))[key]
        for dtype in (torch.float16, torch.bfloat16, torch.float64, torch.int64):
            rounded = value.to(dtype).to(value.dtype)
            yield Cell(
                f"{key} as {dtype}".replace("torch.", ""),
                _replace(base, key, value.to(dtype)),
                _replace(base, key, rounded),
                rtol=HALF_RTOL.get(dtype, 1e-5),
            )
    for key in _labels(base)[:1]:
        value = dict(_tensors(base))[key]
        for dtype in (torch.int32, torch.uint8, torch.float32):
            if dtype == torch.uint8 and bool((value < 0).any()):
                continue
            yield Cell(
                f"{key} as {dtype}".replace("torch.", ""),
                _replace(base, key, value.to(dtype)),
                base,
            )
    # layouts
    if batched:
        yield Cell(
            "non-contiguous",
            _map(base, lambda k, v: _non_contiguous(v) if k in batched else v),
            base,
        )
        expanded = _map(base, lambda k, v: v[:1].expand_as(v) if k in batched else v)
        yield Cell(
            "expanded (stride 0)",
            expanded,
            _map(expanded, lambda k, v: v.contiguous() if isinstance(v, Tensor) else v),
        )
    # requires_grad: same value, and no state joins the graph
    grad = _map(
        base,
        lambda k, v: (
            (v.clone() * 1.0).requires_grad_()
            if isinstance(v, Tensor) and v.is_floating_point()
            else v
        ),
    )
    yield Cell("requires_grad", grad, base)
    # 0-d: a single sample without its batch dimension
    if batched:
        zero_d = _map(base, lambda k, v: v[0] if k in batched else v)
        one = _map(base, lambda k, v: v[:1] if k in batched else v)
        yield Cell("0-d", zero_d, one)
    # Python lists and numpy arrays
    yield Cell("lists", _map(base, lambda k, v: v.tolist() if isinstance(v, Tensor) else v), base)
    yield Cell("numpy", _map(base, lambda k, v: v.numpy() if isinstance(v, Tensor) else v), base)
    # meta tensors have no values: an error
    yield Cell("meta", _map(base, lambda k, v: v.to("meta") if isinstance(v, Tensor) else v), None)


def _position_free(case: Case, base: Args, key: str) -> Callable[[], Any]:
    """A NaN where the metric reads nothing (a masked or padded entry) may be ignored: it is
    ignored when two different finite values there give the same value. Else only an error
    is right."""

    def expected() -> AnyOf:
        values = []
        for fill in (0.125, 0.875):
            scores = dict(_tensors(base))[key].clone()
            scores.view(-1)[0] = fill
            values.append(_run(case, _replace(base, key, scores))[0])
        return AnyOf(values[:1] if _equal(values[0], values[1], 1e-12) else [])

    return expected


def _label_unread(case: Case, base: Args, key: str) -> Callable[[], Any]:
    """A fractional label where the metric reads no label (a masked candidate) may give the
    unchanged value: it is unread when the labels 0 and 1 there give the same value. Else
    only an error is right."""

    def expected() -> AnyOf:
        values = []
        for fill in (0, 1):
            labels = dict(_tensors(base))[key].clone()
            labels.view(-1)[0] = fill
            values.append(_run(case, _replace(base, key, labels))[0])
        return AnyOf(values[:1] if _equal(values[0], values[1], 1e-12) else [])

    return expected


@dataclass
class AnyOf:
    values: list[Any]


def _either(case: Case, base: Args, rest: Args) -> Callable[[], Any]:
    """An out-of-range label may be ignored (the value of the batch without that row), or
    the metric may not read label values at all (the value of the unchanged batch)."""

    def expected() -> AnyOf:
        return AnyOf([_run(case, rest)[0], _run(case, base)[0]])

    return expected


_OUTCOMES: dict[str, list[Outcome]] = {}


def outcomes_of(case: Case) -> list[Outcome]:
    """The case's row of the matrix, judged once per session (the totals test reuses it)."""
    if case.id not in _OUTCOMES:
        _OUTCOMES[case.id] = [_judge(case, cell) for cell in _cells(case)]
    return _OUTCOMES[case.id]


def matrix(cases: list[Case]) -> list[Outcome]:
    return [outcome for case in cases for outcome in outcomes_of(case)]


def totals(outcomes: list[Outcome]) -> Counter[str]:
    counts: Counter[str] = Counter(o.kind for o in outcomes)
    counts["cases"] = len(outcomes)
    return counts


# --------------------------------------------------------------------------------- tests


#: Cells that still fail, in code owned elsewhere (classification input semantics, curves,
#: calibration, histogram, wrappers), each fixed by its owner. The test fails both when a cell
#: not listed here fails and when a listed one starts passing (then delete its line), so this
#: list only ever shrinks and every gap stays counted in the totals.
KNOWN_GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_bad_inputs_give_a_clear_error_or_the_right_number(case: Case) -> None:
    outcomes = outcomes_of(case)
    bad = [
        o
        for o in outcomes
        if o.kind not in ("error", "number") and (case.id, o.cell) not in KNOWN_GAPS
    ]
    assert not bad, "\n".join(f"{o.cell}: {o.kind}: {o.detail}" for o in bad)
    fixed = [
        o.cell
        for o in outcomes
        if o.kind in ("error", "number") and (case.id, o.cell) in KNOWN_GAPS
    ]
    assert not fixed, f"now correct, delete from KNOWN_GAPS: {fixed}"


def test_every_registered_case_gets_at_least_the_generic_cells() -> None:
    # requires_grad, lists, numpy and meta apply to every metric whatever its inputs
    for case in ALL_CASES:
        names = {cell.name for cell in _cells(case)}
        assert {"requires_grad", "lists", "numpy", "meta"} <= names, case.id


def test_matrix_totals(capsys: pytest.CaptureFixture[str]) -> None:
    """The figures the README quotes: every cell is a clear error or the right number; the
    only exceptions are the listed gaps owned elsewhere. Shown with `pytest -s`."""
    results = matrix(ALL_CASES)
    counts = totals(results)
    known = sum(1 for o in results if (o.case, o.cell) in KNOWN_GAPS)
    with capsys.disabled():
        print(
            f"\nbad-input matrix: {len(ALL_CASES)} metric cases, {counts['cases']} cells: "
            f"{counts['error']} clear errors, {counts['number']} correct numbers, "
            f"{counts['silent']} silent, {counts['unexplained']} unexplained, "
            f"{counts['graph']} graph leaks ({known} known gaps owned elsewhere)"
        )
    assert counts["error"] + counts["number"] + known == counts["cases"]
    assert counts["unexplained"] == counts["graph"] == 0
    assert counts["silent"] <= known
    assert counts["cases"] >= 2000  # every kind of input, over every registered metric


if __name__ == "__main__":
    results = matrix(ALL_CASES)
    for outcome in results:
        if outcome.kind not in ("error", "number"):
            print(f"{outcome.case:32} {outcome.cell:24} {outcome.kind:12} {outcome.detail}")
    counts = totals(results)
    known = sum(1 for o in results if (o.case, o.cell) in KNOWN_GAPS)
    print(dict(counts), f"known gaps owned elsewhere: {known}")
