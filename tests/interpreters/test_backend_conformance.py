"""Backend conformance: every fused primitive computes numpy's bits on every backend.

A long-running program lands on jit's numba backend (`jit`'s default switches after a
second), so its fused translations must compute what eager numpy computes: the same
dtype and the same bits, a NaN compared as NaN (its payload is excused). The exceptions:
the transcendental functions (`TRANSCENDENTAL`), where libm's and numpy's SIMD loops
round differently, within `ULPS` units in the last place (their zeros, infinities and
NaNs still exact), and what `excused` lists, where numpy's own result is not one to
match. Where numpy raises, every backend raises the same error type. (Sums of floats
over more than two elements are not in the matrix: kernels reassociate them.)

The matrix is generated from `fusion_rules`, so a newly fused primitive fails
`test_every_fused_primitive_is_in_the_matrix` until it has a row in `CASES`. Each row
runs each dtype of `DTYPES` its abstract eval accepts (same-dtype operands, plus `MIXED` pairs for
binary primitives) on edge values (signed zeros, infinities, NaN, subnormals, integer
extremes, integers beyond 2**53, exponents and divisors of both signs), all pairs of
them for a binary primitive, and a binary primitive with weakly typed `LITERALS`:

* as arrays, through numba's loop kernels: one kernel per primitive, holding each
  dtype's equation (so a kernel has at least two: a lone equation stays numpy's);
  data movement reads its result through `stop_gradient`, which keeps its bits;
* as 0-d values, through the scalar kernels compiled to LLVM (`scalar_kernels`): one
  kernel per primitive, called once per value (where the translation refuses a
  dtype, the full matrix runs numba's 0-d kernel: the array kernel's expressions);
* on the numpy backend, on arrays and on 0-d values (its impls reach Python's
  operators on numpy scalars).

Compiling is most of the time (numba types a kernel's expressions at about 25 ms
each): the suite runs the representative `DTYPES`, `MIXED` and `EXPONENTS`;
`INERT_CONFORMANCE=full` runs all eleven dtypes, more pairs and exponents, the 0-d
numba kernels and every raising element (3 minutes).
"""

from __future__ import annotations

import itertools
import os
from typing import Callable, NamedTuple

import numpy as np
import pytest

import inert
from inert.core.trace import get_aval
from inert.interpreters import fusion, scalar_kernels
from inert.interpreters.eval import compile_jaxpr
from inert.interpreters.fusion import (
    Cluster,
    fusion_rules,
    kernel_source,
    plan,
    used_outside_clusters,
)
from inert.primitives.elementwise.piecewise import stop_gradient
from inert.primitives.shape import slicing, structural

FULL = os.environ.get("INERT_CONFORMANCE") == "full"
ALL_DTYPES = [np.dtype(d) for d in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                    np.uint16, np.uint32, np.uint64, np.float32, np.float64)]
DTYPES = ALL_DTYPES if FULL else [np.dtype(d) for d in (  # (int8 and uint8 in MIXED)
    bool, np.int64, np.uint64, np.float32, np.float64)]
MIXED = [(np.int64, np.float64), (np.uint64, np.int64), (np.int8, np.uint8), (bool, np.float32)]
MIXED += [(np.float32, np.int64), (np.float32, np.float64)] if FULL else []
MIXED = [(np.dtype(a), np.dtype(b)) for a, b in MIXED]
EXPONENTS = (0, 1, 2, 3, 4, 5, 7, 22, 63, -1, -2, -3) if FULL else (0, 2, 3, 5, 22, -1)

TRANSCENDENTAL = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
                  "tanh", "asinh", "acosh", "atanh", "exp", "exp2", "expm1", "log", "log1p",
                  "logistic", "cbrt", "pow", "integer_pow"}  # (of floats: products or pow)
ULPS = 2  # vector_math's tanh (2); libm against numpy's SIMD loops: 1 on this matrix


def edge_values(dtype: np.dtype) -> np.ndarray:
    """The values every primitive meets in the matrix, in `dtype`; the first few (the
    zeros, one, NaN or the extremes) also bound `clamp` and select its cases."""
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "f":
        info = np.finfo(dtype)
        values = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 1.5, -2.5, 2.0,
                  3.0, -3.0, 5.0, 0.1, -0.3, 22.0, info.max, -info.max, info.tiny,
                  info.smallest_subnormal, -info.smallest_subnormal, 2.0 ** 53 + 2, 2.0 ** 63]
        return np.array(values, dtype)
    info = np.iinfo(dtype)
    values = [0, 1, -1, info.min, info.max, 2, -2, 3, 5, 7, 22, -5, 200, info.min + 1,
              info.max - 1, 2 ** 53 + 1, -(2 ** 53 + 1), 2 ** 63 + 1, 2 ** 31 + 3]
    return np.array(list(dict.fromkeys(v for v in values if info.min <= v <= info.max)), dtype)


def grid(*dtypes: np.dtype, short: tuple = ()) -> list[np.ndarray]:
    """Every combination of the dtypes' edge values, flattened; operand k in `short`
    takes only the first six of its edge values."""
    values = [edge_values(d)[:6] if k in short else edge_values(d) for k, d in enumerate(dtypes)]
    return [a.ravel() for a in np.meshgrid(*values, indexing="ij")]


class Case(NamedTuple):
    """One equation of the matrix: `call(*prepare(operands))`, `operands` 1-d arrays of
    edge values (of one length, which a kernel's cases are cycled to)."""

    label: str
    call: Callable
    operands: list
    prepare: Callable = list  # arrays of the operands' values, in the shapes `call` takes
    elementwise: bool = True  # also run on 0-d values


def bound(prim, **params) -> Callable:
    return lambda *xs: prim.bind(*xs, **params)


def unary(prim, **params):
    return [Case(f"{d}", bound(prim, **params), grid(d)) for d in DTYPES]


def binary(prim):
    pairs = [(d, d) for d in DTYPES] + MIXED
    return [Case(f"{a},{b}", bound(prim), grid(a, b)) for a, b in pairs] + [
        Case(f"{d},{y!r}", lambda x, y=y: prim.bind(x, y), grid(np.dtype(d)))
        for d, y in LITERALS]


# weakly typed Python numbers as literals of the kernel, which yield to the array's dtype
LITERALS = [(np.float32, 0.1), (np.int8, -1)] + ([
    (np.float64, -0.0), (np.float32, float("-inf")), (np.uint64, 3), (np.int64, 2 ** 53 + 1),
    (np.uint8, 0), (bool, 1.5)] if FULL else [])


def clamp(prim):
    return [Case(f"{d}", bound(prim), grid(d, d, d, short=(0, 2))) for d in DTYPES]


def select_n(prim):
    return [Case(f"{d}", bound(prim), grid(np.dtype(bool), d, d, short=(1,)))
            for d in DTYPES]


def converts(prim):
    return [Case(f"{d}->{to}", bound(prim, new_dtype=to), grid(d))
            for d in DTYPES for to in DTYPES]


def rounds(prim):
    return [Case(f"{d},{method}", bound(prim, rounding_method=method), grid(d))
            for d in DTYPES for method in inert.lax.RoundingMethod]


def integer_pows(prim):
    return [Case(f"{d},{y}", bound(prim, y=y), grid(d))
            for d in DTYPES for y in EXPONENTS]


def reduction(prim):
    """Rows of two edge values reduced along axis 1: each result is one pair's."""
    return [Case(f"{d}", bound(prim, axes=(1,)), grid(d, d), _rows, False) for d in DTYPES]


def _rows(operands) -> list[np.ndarray]:
    return [np.stack(operands, 1)]


def moved(move, prepare=list):
    """Data movement of an array of edge values, read through `stop_gradient`."""
    return lambda prim: [Case(f"{d}", lambda x: stop_gradient(move(x)), grid(d), prepare,
                              False) for d in DTYPES]


CASES = {
    **dict.fromkeys(["neg", "sign", "floor", "ceil", "not", "is_finite", "stop_gradient",
                     "square", "abs", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin",
                     "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                     "exp", "exp2", "expm1", "log", "log1p", "logistic"], unary),
    **dict.fromkeys(["add", "add_any", "sub", "mul", "div", "rem", "floor_divide", "pow",
                     "max", "min", "atan2", "nextafter", "eq", "ne", "lt", "le", "gt", "ge",
                     "and", "or", "xor"], binary),
    "clamp": clamp, "select_n": select_n, "convert_element_type": converts,
    "round": rounds, "integer_pow": integer_pows,
    **dict.fromkeys(["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"], reduction),
    "broadcast_in_dim": moved(lambda x: structural.broadcast_in_dim(
        x, (2, *get_aval(x).shape), (1,))),
    "transpose": moved(lambda x: structural.transpose(x, (1, 0)),
                       lambda xs: [np.stack([xs[0], xs[0][::-1]], 1)]),
    "squeeze": moved(lambda x: structural.squeeze(x, (0,)), lambda xs: [xs[0][None]]),
    "expand_dims": moved(lambda x: structural.expand_dims(x, (0,))),
    "rev": moved(lambda x: structural.rev(x, (0,))),
    "pad": moved(lambda x: slicing.pad(x, _fill(x), ((2, 1, 1),))),
    "slice": moved(lambda x: slicing.slice(x, (1,), (get_aval(x).shape[0],), (2,))),
}


def _fill(x):
    """A pad's value: the dtype's first edge value after zero (-0.0 for floats)."""
    return np.asarray(edge_values(get_aval(x).dtype)[1])


def test_every_fused_primitive_is_in_the_matrix():
    assert sorted(p.name for p in fusion_rules if p.name not in CASES) == []


def _primitive(name: str):
    (prim,) = [p for p in fusion_rules if p.name == name]
    return prim


def _accepts(case: Case) -> bool:
    """Whether the primitive's abstract eval accepts the case's operand dtypes."""
    try:
        inert.make_jaxpr(case.call)(*case.prepare([x[:1] for x in case.operands]))
    except (TypeError, ValueError):  # DTypeError, ShapeError ...
        return False
    return True


# ---------------------------------------------------------------------------------
# Comparing


def numpy_result(case: Case, operands) -> tuple[np.ndarray | None, BaseException | None]:
    """Eager inert's result (the primitive's numpy impl) on the arrays, or its error."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(case.call(*case.prepare(operands))), None
    except (ValueError, ArithmeticError, TypeError) as e:
        return None, e


def mismatches(got, want, name: str) -> np.ndarray:
    """The indices where `got` is not `want`: bitwise (NaN as NaN), or beyond `ULPS`
    for a transcendental function away from zeros, infinities and NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, numpy's {want.dtype}"
    bits = np.dtype(f"u{want.dtype.itemsize}") if want.dtype != np.bool_ else np.dtype(bool)
    same = got.view(bits) == want.view(bits)
    if want.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
        if name in TRANSCENDENTAL:
            finite = np.isfinite(want) & (want != 0) & (np.signbit(got) == np.signbit(want))
            distance = np.abs(got.view(bits).astype(np.int64) - want.view(bits).astype(np.int64))
            same |= finite & (distance <= ULPS)
    return np.flatnonzero(~same.ravel())


def excused(name: str, backend: str, c: Checked) -> np.ndarray:
    """Where numpy's own result is not one to match: a float cast to an integer that
    cannot hold it (NaN, an infinity, out of range: numpy warns "invalid value", its
    result is C's undefined one), and `x ** 0.5` on 0-d values, which numpy computes
    as sqrt (sqrt(-0.0) is -0.0, pow's +0.0; sqrt(-inf) is NaN, pow's inf)."""
    operands = [x[:c.own] for x in c.operands]
    if name == "convert_element_type" and c.want.dtype.kind in "iu" and \
            operands[0].dtype.kind == "f":
        info = np.iinfo(c.want.dtype)
        with np.errstate(all="ignore"):
            return ~(np.isfinite(operands[0]) & (info.min <= np.trunc(operands[0]))
                     & (np.trunc(operands[0]) <= info.max))
    if name == "pow" and backend == "numpy 0-d" and len(operands) == 2:
        return operands[1] == 0.5
    return np.zeros(c.own, bool)


def report(name, case, backend, got, want, operands, wrong) -> str:
    operands = case.prepare(operands)
    rows = [x.reshape(np.size(want), -1) if x.size % np.size(want) == 0 else None
            for x in operands]
    shown = [f"  {tuple(None if x is None else x[i] for x in rows)}: {np.ravel(got)[i]!r}, "
             f"numpy {np.ravel(want)[i]!r}" for i in wrong[:4]]
    return f"{name}({case.label}) on {backend}: {len(wrong)} wrong\n" + "\n".join(shown)


def without_errors(case: Case):
    """The case's operands with the elements numpy raises on replaced by a valid one,
    those raising elements' operands, and numpy's result (None where every element
    raises: `x ** -1` of integers) and its error."""
    want, error = numpy_result(case, case.operands)
    if error is None:
        return case.operands, [], want, None
    raising = [i for i in range(case.operands[0].shape[0])
               if numpy_result(case, [x[i:i + 1] for x in case.operands])[1] is not None]
    valid = next((i for i in range(case.operands[0].shape[0]) if i not in raising), None)
    if valid is None:
        return case.operands, [[x[0] for x in case.operands]], None, error
    operands = [x.copy() for x in case.operands]
    for x in operands:
        x[raising] = x[valid]
    want, _ = numpy_result(case, operands)
    return operands, [[x[i] for x in case.operands] for i in raising], want, error


# ---------------------------------------------------------------------------------
# Running


class Checked(NamedTuple):
    """A case ready to run: operands without raising elements, numpy's result, and
    the raising elements with numpy's error."""

    name: str  # the primitive's
    case: Case
    operands: list
    want: np.ndarray
    raising: list
    error: BaseException | None
    own: int  # the case's own values come first; the rest repeat them


def checked(name: str, case: Case, length: int) -> Checked:
    operands, raising, want, error = without_errors(case)
    own = operands[0].shape[0]
    operands = [x[np.arange(length) % own] for x in operands]
    if want is not None:
        want = numpy_result(case, operands)[0]
    return Checked(name, case, operands, want, raising if FULL else raising[:1], error, own)


def kernel_program(cases: list[Checked], row: int | None = None):
    """The closed jaxpr computing every case, its flat arguments (the arrays, or with a
    `row` each case's 0-d values there) and where each case's arguments start."""
    arguments = [c.case.prepare(c.operands) if row is None else scalars(c, row) for c in cases]
    starts = list(itertools.accumulate([0, *map(len, arguments)]))

    def program(*xs):
        return [c.case.call(*xs[s:e]) for c, s, e in zip(cases, starts, starts[1:])]

    args = [a for xs in arguments for a in xs]
    return inert.make_jaxpr(program)(*args), args, starts


def scalars(c: Checked, row: int) -> list:
    return [x[row % c.own] for x in c.operands]


def run_arrays(cases: list[Checked]) -> list[tuple[str, str]]:
    """Every case as one array kernel (and on the numpy backend): their failures, each
    with its primitive's name."""
    closed, args, starts = kernel_program(cases)
    jaxpr = closed.jaxpr
    steps = fusion.numba_steps(jaxpr)
    fused = sum(fusion.iteration_shape(e) is not None for e in jaxpr.eqns)
    assert fused < 2 or sum(not s.warns for s in steps) >= 1, "no kernel"
    backends = {"numba": fusion.compile_steps(jaxpr, steps), "numpy": compile_jaxpr(jaxpr)}
    failures = []
    for backend, run in backends.items():
        outs = run(closed.consts, args)
        for c, got in zip(cases, outs):
            wrong = mismatches(got, c.want, c.name)
            if c.case.elementwise:
                wrong = wrong[(wrong < c.own)]
                wrong = wrong[~excused(c.name, backend, c)[wrong]]
            if len(wrong):
                failures.append((c.name, report(c.name, c.case, f"{backend} arrays", got,
                                                c.want, c.operands, wrong)))
        for k, c in enumerate(cases):
            for element in c.raising:
                failures += [(c.name, f) for f in raised(
                    c.name, c, f"{backend} arrays", run, closed.consts,
                    _with_element(args, starts, k, c, element))]
    return failures


def run_always_raising(c: Checked) -> list[str]:
    """A case numpy raises on whatever its values, twice in a program (a kernel holds
    two equations at least): every backend must raise, on arrays and on 0-d values."""
    arrays, args, _ = kernel_program([c, c])
    value = inert.make_jaxpr(c.case.call)(*scalars(c, 0))
    runs = {"numba arrays": (fusion.compile_jaxpr_numba, arrays, args),
            "numpy arrays": (compile_jaxpr, arrays, args),
            "0-d kernel": (fusion.compile_jaxpr_numba, value, scalars(c, 0)),
            "numpy 0-d": (compile_jaxpr, value, scalars(c, 0))}
    return [f for backend, (compile_for, closed, xs) in runs.items()
            for f in raised(c.name, c, backend, compile_for(closed.jaxpr), closed.consts, xs)]


def _with_element(args, starts, k, c: Checked, element) -> list:
    """`args` with case `k`'s first element replaced by `element`."""
    operands = [x.copy() for x in c.operands]
    for x, v in zip(operands, element):
        x[0] = v
    prepared = c.case.prepare(operands)
    return [*args[:starts[k]], *prepared, *args[starts[k] + len(prepared):]]


def raised(name, c: Checked, backend: str, run, *args) -> list[str]:
    """The failure, if `run(*args)` does not raise numpy's error."""
    try:
        with np.errstate(all="ignore"):
            run(*args)
    except type(c.error):
        return []
    except Exception as e:  # noqa: BLE001 — reported
        return [f"{name}({c.case.label}) on {backend}: raised {e!r}, numpy {c.error!r}"]
    return [f"{name}({c.case.label}) on {backend}: no error, numpy raises {c.error!r}"]


def run_scalars(name: str, cases: list[Checked]) -> list[str]:
    """The elementwise cases on 0-d values, all in one program called once per value:
    on the numpy backend, through one scalar kernel (those the translation covers) and,
    in the full matrix, one numba kernel (the others)."""
    covered = [translates(*kernel_program([c], 0)[:1]) for c in cases]
    groups = {"numpy 0-d": (cases, compile_jaxpr),
              "scalar kernel": ([c for c, t in zip(cases, covered) if t],
                                fusion.compile_jaxpr_numba),
              "numba 0-d": ([c for c, t in zip(cases, covered) if t is False] if FULL else [],
                            fusion.compile_jaxpr_numba)}
    failures = []
    for backend, (group, compile_for) in groups.items():
        if not group:
            continue
        closed, _, starts = kernel_program(group, 0)
        assert backend != "scalar kernel" or translates(closed), "one kernel covers all"
        run = compile_for(closed.jaxpr)
        with np.errstate(all="ignore"):
            rows = [run(closed.consts, [a for c in group for a in scalars(c, i)])
                    for i in range(max(c.own for c in group))]
        for k, c in enumerate(group):
            got = np.array([r[k] for r in rows[:c.own]])
            wrong = mismatches(got, c.want[:c.own], name)
            wrong = wrong[~excused(name, backend, c)[wrong]]
            if len(wrong):
                failures.append(report(name, c.case, backend, got, c.want, c.operands, wrong))
            first = [a for c in group for a in scalars(c, 0)]
            for element in c.raising:
                failures += raised(name, c, backend, run, closed.consts,
                                   [*first[:starts[k]], *element, *first[starts[k + 1]:]])
    return failures


def translates(closed) -> bool | None:
    """Whether the scalar translation covers the 0-d kernel of `closed` (None: nothing
    fuses), found by translating it without compiling."""
    steps = plan(closed.jaxpr)
    clusters = [s for s in steps if isinstance(s, Cluster)]
    if not clusters:
        return None
    (cluster,) = clusters
    return _translated(kernel_source(cluster, used_outside_clusters(closed.jaxpr, steps)))


def _translated(source) -> bool:
    try:
        list(scalar_kernels.translated(source.text(), source.types())[1])
    except scalar_kernels.Unsupported:
        return False
    return True


MAX_CASES = 48  # per kernel (fusion.MAX_CLUSTER_EQNS is 64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backends_compute_numpys_bits(name, monkeypatch):
    """(A kernel per primitive: numba types a kernel holding several primitives' cases
    more slowly than their kernels one by one.)"""
    monkeypatch.setattr(fusion, "MAX_NEW_KERNEL_COST", 10 ** 6)  # every kernel compiles
    cases = [case for case in CASES[name](_primitive(name)) if _accepts(case)]
    length = max(case.operands[0].shape[0] for case in cases)
    ready = [checked(name, case, length) for case in cases]
    failures = [f for c in ready if c.want is None for f in run_always_raising(c)]
    ready = [c for c in ready if c.want is not None]
    failures += [failure for start in range(0, len(ready), MAX_CASES)
                 for _, failure in run_arrays(ready[start:start + MAX_CASES])]
    failures += run_scalars(name, [c for c in ready if c.case.elementwise])
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------------
# The cases issue 24 reported, through `jit`: numba's backend, and the default one
# after its switch from numpy's code to numba's, compute eager numpy's bits


def _floor_divide(x, y):
    return (x * 1.0) // y


def _power(x, y):
    return (x + 0) ** y  # (+ 0: a cluster of two equations is a kernel, a lone one numpy's)


REPORTED = {
    "float floor_divide": (_floor_divide, np.array([1.0, 3.0, 5.0]),
                           np.array([0.1, -0.3, -np.inf])),
    "0-d float floor_divide": (_floor_divide, np.float64(1.0), np.float64(0.1)),
    "integer power": (_power, np.array([2049, 7]), np.array([5, 22])),
    "0-d integer power": (_power, np.int64(2049), np.int64(5)),
    "unsigned sign": (lambda x: inert.lax.sign(x * np.uint8(1)), np.array([200, 0], np.uint8)),
    "0-d unsigned sign": (inert.lax.sign, np.uint8(200)),
    "clamp of -0.0": (lambda x: 1 / inert.lax.clamp(0.0, x, 1.0), np.array([-0.0, 0.0])),
    "0-d clamp of -0.0": (lambda x: 1 / inert.lax.clamp(0.0, x, 1.0), np.float64(-0.0)),
    "max of signed zeros": (lambda x: 1 / inert.numpy.max(x * 1.0), np.array([-0.0, 0.0])),
    "max of zeros, -0.0 last": (lambda x: 1 / inert.numpy.max(x * 1.0), np.array([0.0, -0.0])),
    "min of signed zeros": (lambda x: 1 / inert.numpy.min(x * 1.0), np.array([0.0, -0.0])),
    "sign of -0.0": (lambda x: 1 / inert.lax.sign(x * 1.0), np.array([-0.0, 1.0])),
    "0-d sign of -0.0": (lambda x: 1 / inert.lax.sign(x), np.float64(-0.0)),
    "round of an integer": (lambda x: inert.lax.round(x + 0), np.array([2 ** 53 + 1, -3])),
    "0-d round of an integer": (inert.lax.round, np.int64(2 ** 53 + 1)),
    "floor of an integer": (lambda x: inert.numpy.floor(x + 0), np.array([2 ** 53 + 1, -3])),
}


def _same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("backend", ["numba", "auto"])
@pytest.mark.parametrize("name", REPORTED)
def test_the_reported_cases_compute_numpys_bits(name, backend, monkeypatch):
    monkeypatch.setattr(inert.api.compiled, "HOT_SECONDS", 0.0)  # auto: numba's from call 2
    f, *args = REPORTED[name]
    with np.errstate(divide="ignore"):
        want = f(*args)
        g = inert.jit(f, backend=backend)
        for _ in range(2):  # the first call of "auto" runs numpy's code, then compiles
            assert _same_bits(g(*args), want), (g(*args), want)
            inert.block_until_compiled()


@pytest.mark.parametrize("backend", ["numba", "auto"])
@pytest.mark.parametrize("exponent", [np.array([2, -1]), np.int64(-1)])
def test_a_negative_integer_exponent_raises_numpys_error(exponent, backend, monkeypatch):
    monkeypatch.setattr(inert.api.compiled, "HOT_SECONDS", 0.0)
    base = np.full(np.shape(exponent), 3)[()]
    g = inert.jit(_power, backend=backend)
    g(base, np.abs(exponent))
    inert.block_until_compiled()
    g(base, np.abs(exponent))  # "auto" runs numba's code now
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        _power(base, exponent)
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        g(base, exponent)
