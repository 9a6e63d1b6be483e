"""The indexing family. One table of primitive cases drives values against numpy,
abstract eval against impl (float64, float32, int), jvp against finite differences,
the vjp dot-product test (exact transposes, duplicates included) and second
derivatives; then numpy indexing (`getitem`, `index_update`) against numpy on fixed
and random index expressions, traced indices, masks, residuals and bad inputs."""

from __future__ import annotations

import math
from typing import Callable

import attrs
import numpy as np
import pytest
from harness import check_abstract_eval, check_grads, check_jvp, check_staged, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
from inert.core.trace import Primitive
from inert.errors import ConcretizationError, DTypeError, ShapeError
from inert.primitives.elementwise import sin
from inert.primitives.indexing import dynamic_slices as ds
from inert.primitives.indexing import gather_scatter as ix
from inert.primitives.indexing import scatter_extrema as ext

RNG = np.random.default_rng(1)
X = RNG.standard_normal((5, 6))
X3 = RNG.standard_normal((3, 4, 5))


def _setitem(index):
    def ref(x, updates, *_):
        out = x.copy()
        out[index] = updates
        return out

    return ref


def _at(ufunc, index):
    def ref(x, updates, *_):
        out = x.copy()
        ufunc.at(out, index, updates)
        return out

    return ref


@attrs.frozen
class Case:
    name: str
    prim: Primitive
    operands: tuple  # the float operands first, then the integer index operands
    params: dict
    ref: Callable  # numpy's result, from the operands
    n_float: int = 1
    order: int = 2  # of derivatives checked

    def fn(self, *operands):
        return self.prim.bind(*operands, **self.params)

    def cast(self, dtype) -> tuple:
        return tuple(np.asarray(o).astype(dtype) if i < self.n_float else o
                     for i, o in enumerate(self.operands))


def _wrapped(i, n):
    return np.where(i < 0, i + n, i)


def _clipped(i, n):
    """JAX's clamp: after negative indices wrap, into [0, n - 1]."""
    return np.clip(_wrapped(i, n), 0, n - 1)


def _inside(i, n):
    return (_wrapped(i, n) >= 0) & (_wrapped(i, n) < n)


def _dropping(write, rows):
    """`write` of only the updates whose row is in bounds (a drop scatter on axis 0)."""
    def ref(x, updates, *_):
        keep = _inside(rows, len(x))
        return write(_wrapped(rows, len(x))[keep])(x, updates[keep])

    return ref


def _clipping(write, rows):
    return lambda x, updates, *_: write(_clipped(rows, len(x)))(x, updates)


GATHER, FILL, DROP, CLIP = ({"mode": "clip", "fill_value": None},
                            {"mode": "fill", "fill_value": 7.5}, {"mode": "drop"},
                            {"mode": "clip"})
ROWS_DUP = np.array([1, 3, 1, 1])
ROWS_OUT = np.array([1, 7, -6, 1, -1])  # 7 and -6 are out of bounds for 5 rows
ROWS_OUT_SET = np.array([1, 9, 1, -1, -8])
FAR = np.array([[7, -9], [-1, 2]])
I0, I1, I2 = np.array([[1], [1]]), np.array([[3], [-1]]), np.array([0, 4, 4])
MUL_X, MUL_U = RNG.standard_normal(5), np.array([0.0, 2.0, 0.0, 0.0, 3.0, 1.5, -0.5])
MUL_IDX = np.array([0, 0, 1, 1, 1, 2, 2])  # one zero at 0, two zeros at 1, none at 2

CASES = [
    Case("dynamic_slice", ds.dynamic_slice_p, (X, 1, 2), {"slice_sizes": (2, 3)},
         lambda x, *_: x[1:3, 2:5]),
    Case("dynamic_slice_clamped", ds.dynamic_slice_p, (X, np.int64(4), np.int32(-3)),
         {"slice_sizes": (3, 2)}, lambda x, *_: x[2:5, 0:2]),
    Case("dynamic_update_slice", ds.dynamic_update_slice_p, (X, X[:2, :3] + 1, 1, 2), {},
         _setitem(np.s_[1:3, 2:5]), n_float=2),
    Case("dynamic_update_slice_clamped", ds.dynamic_update_slice_p, (X, X[:2, :3] + 1, 9, -1),
         {}, _setitem(np.s_[3:5, 0:3]), n_float=2),
    Case("gather_rows", ix.gather_p, (X, np.array([[0, 4], [-1, 2]])),
         {"axes": (0,), **GATHER},
         lambda x, i: x[i]),
    Case("gather_middle_axis_duplicates", ix.gather_p, (X3, np.array([3, 3, 0])),
         {"axes": (1,), **GATHER}, lambda x, i: x[:, i]),
    Case("gather_axes_apart", ix.gather_p, (X3, I0, I2), {"axes": (0, 2), **GATHER},
         lambda x, i, k: x[i, :, k]),
    Case("gather_adjacent_broadcast", ix.gather_p, (X3, I1, I2), {"axes": (1, 2), **GATHER},
         lambda x, j, k: x[:, j, k]),
    Case("gather_scalar_index", ix.gather_p, (X, np.array(-2)), {"axes": (0,), **GATHER},
         lambda x, i: x[i]),
    Case("gather_no_axes", ix.gather_p, (X,), {"axes": (), **GATHER}, lambda x: x),
    Case("gather_clamps_out_of_bounds", ix.gather_p, (X, FAR), {"axes": (0,), **GATHER},
         lambda x, i: x[_clipped(i, 5)]),
    Case("gather_fills_out_of_bounds", ix.gather_p, (X3, np.array([5, -1, -6, 2])),
         {"axes": (1,), **FILL},
         lambda x, i: np.where(_inside(i, 4)[:, None], x[:, _clipped(i, 4)], 7.5)),
    Case("gather_fills_axes_apart", ix.gather_p, (X3, np.array([[1], [4]]), np.array([0, 5, -6])),
         {"axes": (0, 2), **FILL},
         lambda x, i, k: np.where((_inside(i, 3) & _inside(k, 5))[..., None],
                                  x[_clipped(i, 3), :, _clipped(k, 5)], 7.5)),
    Case("scatter_add_duplicates", ix.scatter_add_p, (X, X[:4] * 2, ROWS_DUP),
         {"axes": (0,), **DROP},
         _at(np.add, ROWS_DUP), n_float=2),
    Case("scatter_add_axes_apart", ix.scatter_add_p, (X3, X3[:2, :3, :4], I0, I2),
         {"axes": (0, 2), **DROP}, _at(np.add, (I0, slice(None), I2)), n_float=2),
    Case("scatter_duplicates", ix.scatter_p, (X, X[1:] - 1, ROWS_DUP),
         {"axes": (0,), **DROP},
         _setitem(ROWS_DUP), n_float=2),
    Case("scatter_adjacent_broadcast", ix.scatter_p, (X3, X3[:, :2, :3] * 3, I1, I2),
         {"axes": (1, 2), **DROP}, _setitem((slice(None), I1, I2)), n_float=2),
    Case("scatter_mul_duplicates", ix.scatter_mul_p, (X, X[1:] + 0.5, ROWS_DUP),
         {"axes": (0,), **DROP}, _at(np.multiply, ROWS_DUP), n_float=2),
    Case("scatter_mul_zero_updates", ix.scatter_mul_p, (MUL_X, MUL_U, MUL_IDX),
         {"axes": (0,), **DROP},
         _at(np.multiply, MUL_IDX), n_float=2, order=1),
    Case("scatter_add_drops_out_of_bounds", ix.scatter_add_p, (X, X[:5] * 2, ROWS_OUT),
         {"axes": (0,), **DROP}, _dropping(lambda i: _at(np.add, i), ROWS_OUT), n_float=2),
    Case("scatter_add_clamps_out_of_bounds", ix.scatter_add_p, (X, X[:5] * 2, ROWS_OUT),
         {"axes": (0,), **CLIP}, _clipping(lambda i: _at(np.add, i), ROWS_OUT), n_float=2),
    Case("scatter_drops_out_of_bounds", ix.scatter_p, (X, X[:5] - 1, ROWS_OUT_SET),
         {"axes": (0,), **DROP}, _dropping(_setitem, ROWS_OUT_SET), n_float=2),
    Case("scatter_clamps_out_of_bounds", ix.scatter_p, (X, X[:5] - 1, ROWS_OUT_SET),
         {"axes": (0,), **CLIP}, _clipping(_setitem, ROWS_OUT_SET), n_float=2),
    Case("scatter_mul_drops_out_of_bounds", ix.scatter_mul_p, (X, X[:5] + 0.5, ROWS_OUT),
         {"axes": (0,), **DROP}, _dropping(lambda i: _at(np.multiply, i), ROWS_OUT), n_float=2),
    Case("scatter_mul_clamps_out_of_bounds", ix.scatter_mul_p, (X, X[:5] + 0.5, ROWS_OUT),
         {"axes": (0,), **CLIP}, _clipping(lambda i: _at(np.multiply, i), ROWS_OUT), n_float=2),
    Case("scatter_min_drops_out_of_bounds", ext.scatter_min_p, (X, X[:5] - 0.3, ROWS_OUT),
         {"axes": (0,), **DROP}, _dropping(lambda i: _at(np.minimum, i), ROWS_OUT), n_float=2),
    Case("scatter_max_clamps_out_of_bounds", ext.scatter_max_p, (X, X[:5] + 0.3, ROWS_OUT),
         {"axes": (0,), **CLIP}, _clipping(lambda i: _at(np.maximum, i), ROWS_OUT), n_float=2),
    Case("scatter_min_duplicates", ext.scatter_min_p, (X, X[1:] - 0.3, ROWS_DUP),
         {"axes": (0,), **DROP}, _at(np.minimum, ROWS_DUP), n_float=2),
    Case("scatter_max_axes_apart", ext.scatter_max_p, (X3, X3[:2, :3, :4] + 0.3, I0, I2),
         {"axes": (0, 2), **DROP}, _at(np.maximum, (I0, slice(None), I2)), n_float=2),
]
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_impl_matches_numpy(case):
    np.testing.assert_array_equal(case.fn(*case.operands), case.ref(*case.operands))


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_abstract_eval_matches_impl(case, dtype):
    check_abstract_eval(case.prim, case.cast(dtype), case.params)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives(case, rng):
    """Finite differences, the dot-product test (so the linear ones transpose exactly,
    duplicate indices included) and derivatives of derivatives."""
    check_grads(case.fn, case.operands, rng, order=case.order)
    check_staged(case.fn, case.operands)


def test_scatter_sends_the_cotangent_only_to_the_update_that_landed():
    x, updates = np.zeros(4), np.array([1.0, 2.0, 3.0])
    _, vjp_fn = inert.vjp(lambda x, u: ix.scatter(x, u, np.array([2, 0, 2]), axes=(0,)),
                          x, updates)
    ct_x, ct_updates = vjp_fn(np.array([10.0, 20.0, 30.0, 40.0]))
    np.testing.assert_array_equal(ct_x, [0.0, 20.0, 0.0, 40.0])
    np.testing.assert_array_equal(ct_updates, [0.0, 10.0, 30.0])


def test_scatter_add_accumulates_duplicates_both_ways():
    f = lambda x, u: ix.scatter_add(x, u, np.array([2, 0, 2]), axes=(0,))  # noqa: E731
    out, vjp_fn = inert.vjp(f, np.zeros(3), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [2.0, 0.0, 4.0])
    np.testing.assert_array_equal(vjp_fn(np.array([10.0, 20.0, 30.0]))[1], [30.0, 10.0, 30.0])


def test_scatter_mul_derivative_at_zero_updates():
    """d/du_j of x * prod(u): the product of the other updates, exact at zeros."""
    _, vjp_fn = inert.vjp(lambda u: ix.scatter_mul(MUL_X, u, MUL_IDX, axes=(0,)), MUL_U)
    (ct,) = vjp_fn(np.ones(5))
    want = [MUL_X[0] * 2.0, 0.0, 0.0, 0.0, 0.0, MUL_X[2] * -0.5, MUL_X[2] * 1.5]
    np.testing.assert_allclose(ct, want, rtol=1e-15)


def test_traced_start_indices(rng):
    x = rng.standard_normal(6)
    f = inert.jit(lambda x, i: ds.dynamic_slice(x, (i,), (2,)))
    np.testing.assert_array_equal(f(x, 3), x[3:5])
    np.testing.assert_array_equal(f(x, 5), x[4:6])  # clamped
    g = inert.grad(lambda x, i: ds.dynamic_slice(x, (i,), (2,)).sum())(x, 1)
    np.testing.assert_array_equal(g, [0, 1, 1, 0, 0, 0])


# ---------------------------------------------------------------------------------
# numpy indexing

INDEX_EXPRESSIONS = [
    np.s_[1], np.s_[-1, ::2], np.s_[::-1, 1:4, None], np.s_[..., [0, 2, -1]],
    np.s_[[0, 1], :, [2, 3]], np.s_[:, [0, 1], None, [2, 3]], np.s_[0, :, [1, 2]],
    np.s_[:, 1:3, [[0], [1]]], np.s_[None, ..., None], np.s_[[[0, 1]], 2:0:-1, np.array([1, 2])],
    np.s_[[]], np.s_[X3[..., 0] > 0], np.s_[1:2, X3[0, :, 0] > 0], np.s_[[2, 2, 0]],
    np.s_[..., ::-2], np.s_[np.int32(1), -3:], np.s_[:, :, 4:1:-1], (), np.s_[2:2],
    np.s_[[1, 0], ..., [-1, 1]], np.array([2, -1, 2]), np.array([[0], [1]]),
    # an Ellipsis of no axes between index arrays separates them: their dimensions first
    np.s_[:, [0, 1], ..., 0], np.s_[[1, 0], 2, ..., [-1, 1]], np.s_[None, 1, :, ..., [0]],
    np.s_[..., [0, 1], 1, 2],
]
EXPR_IDS = [str(i) for i in range(len(INDEX_EXPRESSIONS))]


@pytest.mark.parametrize("idx", INDEX_EXPRESSIONS, ids=EXPR_IDS)
def test_getitem_matches_numpy(idx, rng):
    f = lambda x: ix.getitem(x, idx)  # noqa: E731
    np.testing.assert_array_equal(f(X3), X3[idx])
    np.testing.assert_array_equal(inert.jit(f)(X3), X3[idx])
    check_grads(f, (X3,), rng, order=1)


@pytest.mark.parametrize("idx", INDEX_EXPRESSIONS, ids=EXPR_IDS)
@pytest.mark.parametrize("mode", ["set", "add", "multiply"])
def test_index_update_matches_numpy(idx, mode, rng):
    values = rng.standard_normal(X3[idx].shape)
    np.testing.assert_allclose(ix.index_update(X3, idx, values, mode),
                               _numpy_update(X3, idx, values, mode), rtol=1e-15)
    check_vjp(lambda x, v: ix.index_update(x, idx, v, mode), (X3, values), rng)


def _numpy_update(x, idx, values, mode):
    out = x.copy()
    if mode == "set":
        out[idx] = values
    else:
        {"add": np.add, "multiply": np.multiply}[mode].at(out, idx, values)
    return out


def test_index_update_broadcasts_and_casts_values():
    x = np.zeros((3, 4), np.float32)
    out = ix.index_update(x, np.s_[:, [1, 3]], [1, 2], "set")
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[0, 1, 0, 2]] * 3)
    out = ix.index_update(x, 1, np.ones((1, 1, 4)), "add")  # numpy drops leading unit axes
    np.testing.assert_array_equal(out[1], np.ones(4))


def test_traced_integer_scalars_index_like_numpy(rng):
    f = inert.jit(lambda x, i, j: ix.getitem(x, (i, slice(1, None), j)))
    for i, j in [(0, 0), (-1, 2), (2, -5)]:
        np.testing.assert_array_equal(f(X3, i, j), X3[i, 1:, j])
    g = inert.grad(lambda x, i: ix.getitem(x, i).sum())(X3, -1)
    np.testing.assert_array_equal(g, np.eye(3)[-1][:, None, None] * np.ones((3, 4, 5)))
    jaxpr = inert.make_jaxpr(lambda x, i: ix.getitem(x, i))(X3, 1)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["gather"]


def test_traced_index_update_in_a_loop_body(rng):
    def f(x, i):
        return ix.index_update(x, (i, slice(None)), ix.getitem(x, i) * 2.0, "set")

    np.testing.assert_array_equal(inert.jit(f)(X, 2), np.where(np.arange(5)[:, None] == 2,
                                                                2 * X, X))
    check_grads(lambda x: f(x, np.int64(2)), (X,), rng)


def test_second_derivatives_through_indexing(rng):
    def f(x):
        y = ix.getitem(x, np.s_[:, [2, 0, 2], ::-1])
        return ix.index_update(x, np.s_[1:, [0, 0], 1], sin(y[1:, :2, 1]) * y[1:, 1:, 0], "add")

    check_grads(f, (X3,), rng, order=2)


def test_boolean_mask_of_a_traced_array():
    """A mask must be concrete: it is under grad (the primal is known), not when
    staged, where the error says what to do instead."""
    g = inert.grad(lambda x: ix.getitem(x, x > 0).sum())(X)
    np.testing.assert_array_equal(g, (X > 0).astype(float))
    with pytest.raises(ConcretizationError, match="boolean-mask indexing.*where"):
        inert.make_jaxpr(lambda x: ix.getitem(x, x > 0))(X)


def test_residuals_are_indices_not_values():
    """The backward pass of indexing needs where, not what: a slice keeps nothing,
    a gather keeps only its integer indices."""
    assert inert.saved_residuals(lambda x: ix.getitem(x, np.s_[1:, ::-2]), X3) == []
    kept = inert.saved_residuals(lambda x: ix.getitem(x, np.s_[:, [0, 2]]), X3)
    assert [(r.aval.shape, r.aval.dtype) for r in kept] == [((2,), np.dtype(np.int64))]


@pytest.mark.parametrize("idx, message", [
    (1.5, "only integers, slices"), (np.array([0.0, 1.0]), "only integers, slices"),
    (True, "boolean scalar"), (np.s_[0, 0, 0, 0], "too many indices"),
    (np.s_[..., 0, ...], "single ellipsis"), (np.array([True, False]), "boolean index"),
    (np.s_[[0, 1], [0, 1, 2]], "could not be broadcast"),
])
def test_bad_indices_raise_index_error(idx, message):
    with pytest.raises(IndexError, match=message):
        ix.getitem(X3, idx)


@pytest.mark.parametrize("idx", [np.s_[:, :, 0], np.s_[..., [0]]], ids=["int", "array"])
def test_an_axis_of_size_zero_takes_no_index(idx):
    """Out of bounds clamps (test_bounds.py), but into nothing it cannot."""
    with pytest.raises(IndexError, match="out of bounds for axis 2 with size 0"):
        ix.getitem(np.zeros((2, 3, 0)), idx)


def test_bad_operands_raise_errors_naming_the_primitive():
    with pytest.raises(DTypeError, match="gather: index arrays must have an integer dtype"):
        ix.gather(X, np.array([0.0]), axes=(0,))
    with pytest.raises(DTypeError, match="gather"):
        inert.make_jaxpr(lambda x, i: ix.gather(x, i, axes=(0,)))(X, np.array([1.0]))
    with pytest.raises(ShapeError, match=r"gather: axes \(1, 0\) must be increasing"):
        ix.gather(X, np.array([0]), np.array([0]), axes=(1, 0))
    with pytest.raises(ShapeError, match=r"scatter_add: updates f64\[3,6\] do not have the "
                                         r"shape \(4, 6\)"):
        ix.scatter_add(X, X[:3], ROWS_DUP, axes=(0,))
    with pytest.raises(DTypeError, match="scatter: updates f32"):
        ix.scatter(X, X[:4].astype(np.float32), ROWS_DUP, axes=(0,))
    with pytest.raises(ShapeError, match="dynamic_slice: 1 start indices for the 2 axes"):
        ds.dynamic_slice(X, (0,), (1, 1))
    with pytest.raises(DTypeError, match="dynamic_slice: start indices must be integer"):
        ds.dynamic_slice(X, (0, 1.0), (1, 1))
    with pytest.raises(DTypeError, match="dynamic_update_slice: update i64"):
        ds.dynamic_update_slice(X, np.ones((1, 1), np.int64), (0, 0))
    with pytest.raises(ShapeError, match=r"index_update: values of shape \(3,\)"):
        ix.index_update(X, np.s_[:2], np.ones(3), "set")
    with pytest.raises(ValueError, match="kind must be one of"):
        ix.index_update(X, 0, 1.0, "divide")
    with pytest.raises(ValueError, match="gather: mode must be one of"):
        ix.gather_p.bind(X, np.array([0]), axes=(0,), mode="drop", fill_value=None)
    with pytest.raises(ValueError, match="scatter_add: mode must be one of"):
        ix.scatter_add_p.bind(X, X[:1], np.array([0]), axes=(0,), mode="fill")


# ---------------------------------------------------------------------------------
# Random index expressions


@st.composite
def index_expressions(draw):
    """A shape and an index into it mixing ints, slices, None, Ellipsis, integer arrays
    (broadcasting together) and boolean masks."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    group = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    kinds = st.sampled_from(["int", "slice", "array", "array", "full", "none", "mask"])
    items = []
    for n in shape[:draw(st.integers(0, len(shape)))]:
        kind = draw(kinds)
        if kind == "none":
            items.append(None)
        items.append(_index_item(draw, kind, n, group))
    if draw(st.booleans()) and not any(isinstance(i, np.ndarray) and i.dtype == bool
                                       for i in items):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return shape, tuple(items)


def _index_item(draw, kind, n, group):
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "slice":
        bound = st.none() | st.integers(-n - 1, n + 1)
        return slice(draw(bound), draw(bound), draw(st.sampled_from([None, -3, -1, 1, 2])))
    if kind == "array":
        sub = group[draw(st.integers(0, len(group))):]
        values = draw(st.lists(st.integers(-n, n - 1), min_size=math.prod(sub),
                               max_size=math.prod(sub)))
        return np.array(values, np.int64).reshape(sub)
    if kind == "mask":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    return slice(None)


def _with_traced_arrays(idx):
    """The index arrays of `idx`, and a function rebuilding `idx` from (traced) ones."""
    is_array = [isinstance(i, np.ndarray) and i.dtype != bool for i in idx]
    arrays = [i for i, a in zip(idx, is_array) if a]

    def rebuild(traced):
        it = iter(traced)
        return tuple(next(it) if a else i for i, a in zip(idx, is_array))

    return arrays, rebuild


@settings(max_examples=25, deadline=None)
@given(index_expressions(), st.sampled_from(["set", "add", "multiply"]))
def test_random_index_expressions(problem, mode):
    shape, idx = problem
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    try:
        want = x[idx]
    except IndexError as error:  # a mask's positions do not broadcast with the arrays
        if "out of bounds" in str(error):  # an int beside an Ellipsis: inert clamps it
            return  # as JAX does (tests/primitives/indexing/test_bounds.py)
        with pytest.raises(IndexError):
            ix.getitem(x, idx)
        return
    np.testing.assert_array_equal(ix.getitem(x, idx), want)
    arrays, rebuild = _with_traced_arrays(idx)
    staged = inert.jit(lambda x, *arrays: ix.getitem(x, rebuild(arrays)))
    np.testing.assert_array_equal(staged(x, *arrays), want)
    check_vjp(lambda x: ix.getitem(x, idx), (x,), rng)
    values = rng.standard_normal(want.shape)
    np.testing.assert_allclose(ix.index_update(x, idx, values, mode),
                               _numpy_update(x, idx, values, mode), rtol=1e-15)
    check_jvp(lambda x, v: ix.index_update(x, idx, v, mode), (x, values), rng)
