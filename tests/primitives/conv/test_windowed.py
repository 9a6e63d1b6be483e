"""Windowed reductions: one table of window geometries (1-d to 3-d; strides, padding,
base and window dilation) drives, for sum, max and min, values against a loop over
windows, jvp against finite differences, the dot-product test, jacfwd == jacrev,
vmap == a loop and jit == eager; then the tie rule of max, residuals and errors."""

from __future__ import annotations

import itertools

import attrs
import numpy as np
import pytest
from harness import assert_allclose, check_abstract_eval, check_jvp, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp
from inert import lax
from inert.errors import DTypeError, ShapeError
from inert.primitives.conv.windowed import (
    reduce_window_argmax_p,
    window_gather,
    window_params,
    window_scatter_add,
)


@attrs.frozen
class Geometry:
    name: str
    shape: tuple
    window: tuple
    strides: tuple
    padding: object
    base_dilation: tuple | None = None
    window_dilation: tuple | None = None


GEOMETRIES = [
    Geometry("1d", (7,), (3,), (1,), "VALID"),
    Geometry("1d_strided_padded", (8,), (3,), (2,), ((1, 2),)),
    Geometry("2d_pool", (2, 3, 6, 6), (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
    Geometry("2d_overlapping_same", (2, 5, 5), (1, 3, 3), (1, 2, 1), "SAME"),
    Geometry("2d_window_dilation", (6, 7), (2, 3), (1, 2), ((1, 0), (0, 1)), None, (2, 2)),
    Geometry("2d_base_dilation", (3, 4), (2, 2), (1, 1), ((1, 1), (0, 1)), (2, 3)),
    Geometry("2d_negative_padding", (6, 6), (2, 2), (2, 1), ((-1, 0), (1, -2))),
    Geometry("3d", (3, 4, 5), (2, 2, 3), (1, 2, 2), "SAME"),
]
IDS = [g.name for g in GEOMETRIES]
REDUCTIONS = {"sum": (lax.add, 0.0, np.sum), "max": (lax.max, -np.inf, np.max),
              "min": (lax.min, np.inf, np.min)}


def pool(kind: str, g: Geometry):
    computation, init, _ = REDUCTIONS[kind]
    return lambda x: lax.reduce_window(x, init, computation, g.window, g.strides, g.padding,
                                       g.base_dilation, g.window_dilation)


def _pads(g: Geometry, shape):
    if not isinstance(g.padding, str):
        return g.padding
    bd, wd = g.base_dilation or (1,) * len(shape), g.window_dilation or (1,) * len(shape)
    return lax.padtype_to_pads([(n - 1) * d + 1 for n, d in zip(shape, bd)],
                               [(w - 1) * d + 1 for w, d in zip(g.window, wd)], g.strides,
                               g.padding)


def window_elements(x, g: Geometry, out_shape, fill):
    """For each window (row-major), its elements in row-major window order: the
    operand's where the window element lands on one, `fill` elsewhere."""
    bd, wd = g.base_dilation or (1,) * x.ndim, g.window_dilation or (1,) * x.ndim
    lows = [lo for lo, _ in _pads(g, x.shape)]
    for p in itertools.product(*map(range, out_shape)):
        values, sources = [], []
        for k in itertools.product(*map(range, g.window)):
            q = [pi * s + ki * d - lo for pi, ki, s, d, lo in zip(p, k, g.strides, wd, lows)]
            inside = all(0 <= qi < (n - 1) * b + 1 and qi % b == 0
                         for qi, n, b in zip(q, x.shape, bd))
            src = tuple(qi // b for qi, b in zip(q, bd)) if inside else None
            values.append(x[src] if inside else fill)
            sources.append(src)
        yield p, np.array(values), sources


@pytest.mark.parametrize("g", GEOMETRIES, ids=IDS)
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_values_against_a_loop(kind, g, rng):
    x = rng.standard_normal(g.shape)
    out = pool(kind, g)(x)
    _, init, reduce = REDUCTIONS[kind]
    want = np.empty(out.shape)
    for p, values, _ in window_elements(x, g, out.shape, init):
        want[p] = reduce(values)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert out.dtype == x.dtype
    assert_allclose(inert.jit(pool(kind, g))(x), out, rtol=1e-12, atol=1e-12)
    assert lax.reduce_window_shape_tuple(x.shape, g.window, g.strides, _pads(g, x.shape),
                                         g.base_dilation, g.window_dilation) == out.shape


@pytest.mark.parametrize("g", GEOMETRIES, ids=IDS)
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_derivatives(kind, g, rng):
    f = pool(kind, g)
    x = rng.standard_normal(g.shape)
    if np.all(np.isfinite(f(x))):  # not where a window holds only padding and holes
        check_jvp(f, (x,), rng)
    check_vjp(f, (x,), rng)
    np.testing.assert_allclose(inert.jacfwd(f)(x), inert.jacrev(f)(x), rtol=1e-12)


@pytest.mark.parametrize("g", GEOMETRIES, ids=IDS)
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_vmap_equals_a_loop(kind, g, rng):
    f = pool(kind, g)
    xs = rng.standard_normal((3, *g.shape))
    moved = np.moveaxis(xs, 0, -1)
    np.testing.assert_allclose(inert.vmap(f, -1)(moved), np.stack([f(x) for x in xs]),
                               rtol=1e-12)
    grads = inert.vmap(inert.grad(lambda x: inp.sum(f(x) ** 2)))(xs)
    np.testing.assert_allclose(grads, np.stack([inert.grad(lambda x: inp.sum(f(x) ** 2))(x)
                                                for x in xs]), rtol=1e-12)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("g", GEOMETRIES[:5], ids=IDS[:5])
def test_ties_go_to_the_first_extremum_of_each_window(kind, g, rng):
    """As XLA's select_and_scatter_add: within a window, the first (row-major) of
    equal extrema gets the whole cotangent; overlapping windows add up."""
    x = rng.integers(0, 3, g.shape).astype(float)
    f = pool(kind, g)
    out = f(x)
    ct = rng.standard_normal(out.shape)
    (got,) = inert.vjp(f, x)[1](ct)
    want = np.zeros(x.shape)
    _, init, reduce = REDUCTIONS[kind]
    for p, values, sources in window_elements(x, g, out.shape, init):
        first = int(np.flatnonzero(values == reduce(values))[0])
        if sources[first] is not None:
            want[sources[first]] += ct[p]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_max_pool_keeps_an_index_per_window_not_the_input(rng):
    x = rng.standard_normal((4, 3, 8, 8))
    f = lambda x: inp.sum(lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),  # noqa: E731
                                            "VALID") ** 2)
    kept = inert.saved_residuals(f, x)
    assert sorted((r.aval.dtype.name, r.nbytes) for r in kept) == [
        ("float64", x.nbytes // 4), ("int8", x.size // 4)]


def test_sum_pool_keeps_nothing(rng):
    x = rng.standard_normal((2, 6, 6))
    f = lambda x: inp.sum(lax.reduce_window(x, 0.0, lax.add, (1, 3, 3), (1, 2, 2), "SAME"))  # noqa: E731
    assert inert.saved_residuals(f, x) == []


def test_gather_and_scatter_are_each_others_transposes(rng):
    """The dot-product test of the two linear maps, with an index into a padded,
    dilated operand (some windows pick padding, whose value is zero)."""
    x = rng.standard_normal((5, 4))
    params = window_params(2, (2, 3), (2, 1), ((1, 1), (2, 0)), (1, 2), (1, 1))
    index = rng.integers(0, 6, lax.reduce_window_shape_tuple(x.shape, **params))
    check_vjp(lambda x: window_gather(x, index, **params), (x,), rng)
    ct = rng.standard_normal(index.shape)
    check_vjp(lambda ct: window_scatter_add(ct, index, operand_shape=x.shape, **params),
              (ct,), rng)
    check_abstract_eval(reduce_window_argmax_p, (x,), params)


def test_non_identity_init_value(rng):
    x = rng.standard_normal((6,))
    out = lax.reduce_window(x, 0.5, lax.max, (2,), (2,), "VALID")
    np.testing.assert_allclose(out, np.maximum(x.reshape(3, 2).max(1), 0.5))
    with pytest.raises(NotImplementedError, match="init_value 0"):
        lax.reduce_window(x, 1.0, lax.add, (2,), (2,), "VALID")
    with pytest.raises(NotImplementedError, match="only add, max and min"):
        lax.reduce_window(x, 1.0, lax.mul, (2,), (2,), "VALID")


def test_integer_operands(rng):
    x = rng.integers(-5, 5, (4, 6)).astype(np.int32)
    out = lax.reduce_window(x, 0, lax.add, (2, 3), (2, 3), "VALID")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x.reshape(2, 2, 2, 3).sum((1, 3)))
    np.testing.assert_array_equal(
        lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 3), (2, 3), "VALID"),
        x.reshape(2, 2, 2, 3).max((1, 3)))


@pytest.mark.parametrize("kwargs, message", [
    ({"window_dimensions": (2,)}, "window_dimensions (2,) must be 2 positive"),
    ({"window_strides": (1, 0)}, "window_strides (1, 0) must be 2 positive"),
    ({"padding": ((0, 0),)}, "padding ((0, 0),) needs one (low, high) pair per axis"),
    ({"padding": "FULL"}, "padding must be 'SAME'"),
])
def test_bad_windows_raise_shape_error(kwargs, message):
    args = {"window_dimensions": (2, 2), "window_strides": (1, 1), "padding": "VALID", **kwargs}
    with pytest.raises(ShapeError, match="reduce_window") as info:
        lax.reduce_window(np.ones((3, 3)), -np.inf, lax.max, **args)
    assert message in str(info.value)
    assert "test_windowed.py" in str(info.value)


@pytest.mark.parametrize("computation, init, reduce", [
    (np.add, 0.0, np.sum), (inp.add, 0.0, np.sum), (max, -np.inf, np.max),
    (inp.maximum, -np.inf, np.max), (np.minimum, np.inf, np.min), (lax.min, np.inf, np.min),
])
def test_computations_spelled_as_numpy_or_python(computation, init, reduce, rng):
    x = rng.standard_normal((4, 6))
    out = lax.reduce_window(x, init, computation, (2, 3), (2, 3), "VALID")
    np.testing.assert_allclose(out, reduce(x.reshape(2, 2, 2, 3), axis=(1, 3)), rtol=1e-12)


def test_max_needs_a_window_and_numbers():
    with pytest.raises(ShapeError, match="reduce_window_max: needs at least one window"):
        lax.reduce_window(np.ones(2), -np.inf, lax.max, (3,), (1,), "VALID")
    with pytest.raises(DTypeError, match="reduce_window_max: operand bool"):
        lax.reduce_window(np.ones(2, bool), False, lax.max, (1,), (1,), "VALID")


@st.composite
def geometries(draw):
    ndim = draw(st.integers(1, 2))
    ints = lambda lo, hi: tuple(draw(st.integers(lo, hi)) for _ in range(ndim))  # noqa: E731
    window = ints(1, 3)
    shape = tuple(w + draw(st.integers(0, 3)) for w in window)
    padding = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(ndim))
    return Geometry("random", shape, window, ints(1, 3), padding, ints(1, 2), ints(1, 2))


@settings(max_examples=25, deadline=None)
@given(geometries(), st.sampled_from(sorted(REDUCTIONS)))
def test_random_windows(g, kind):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(g.shape)
    try:
        out = pool(kind, g)(x)
    except ShapeError:  # max and min of no window at all
        assert kind != "sum"
        return
    _, init, reduce = REDUCTIONS[kind]
    want = np.empty(out.shape)
    for p, values, _ in window_elements(x, g, out.shape, init):
        want[p] = reduce(values)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    if out.size:
        check_vjp(pool(kind, g), (x,), rng)
