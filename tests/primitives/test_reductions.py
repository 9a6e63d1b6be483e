"""The reductions and scans: one table of cases drives values against numpy, abstract
eval against the impl, staging, jvp against finite differences and vjp by the
dot-product test (to second order); then derivatives where x has zeros or ties, what
the backward pass keeps, properties over random shapes, and errors."""

import numpy as np
import pytest
from harness import check_abstract_eval, check_grads, check_staged, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as hs

import inert
from inert.errors import DTypeError, ShapeError
from inert.primitives import reductions as rd

R = np.random.default_rng(2)


def normal(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def ints(*shape, dtype=np.int32):
    return R.integers(-5, 5, shape).astype(dtype)


def with_zeros(*shape):
    x = normal(*shape)
    x.flat[::3] = 0.0  # several zeros per row: the product of the others is often 0
    x.flat[1] = 0.0
    return x


def scan_reference(accumulate, axis, reverse=False):
    if not reverse:
        return lambda x: accumulate(x, axis=axis)
    return lambda x: np.flip(accumulate(np.flip(x, axis), axis=axis), axis)


# (id, primitive, params, args, numpy reference)
CASES = [
    ("reduce_max", rd.reduce_max_p, dict(axes=(1,)), (normal(3, 4, 5),),
     lambda x: np.max(x, 1)),
    ("reduce_max-2axes", rd.reduce_max_p, dict(axes=(0, 2)), (normal(3, 4, 5),),
     lambda x: np.max(x, (0, 2))),
    ("reduce_max-f32", rd.reduce_max_p, dict(axes=(0,)), (normal(4, dtype=np.float32),), np.max),
    ("reduce_max-i32", rd.reduce_max_p, dict(axes=(1,)), (ints(3, 4),), lambda x: np.max(x, 1)),
    ("reduce_max-bool", rd.reduce_max_p, dict(axes=(0,)), (normal(3, 2) > 0,),
     lambda x: np.max(x, 0)),
    ("reduce_max-scalar", rd.reduce_max_p, dict(axes=()), (1.5,), np.max),
    ("reduce_min", rd.reduce_min_p, dict(axes=(0, 1)), (normal(3, 4),), np.min),
    ("reduce_min-i32", rd.reduce_min_p, dict(axes=(0,)), (ints(3, 4),), lambda x: np.min(x, 0)),
    ("reduce_prod", rd.reduce_prod_p, dict(axes=(1, 2)), (normal(2, 3, 4),),
     lambda x: np.prod(x, (1, 2))),
    ("reduce_prod-zeros", rd.reduce_prod_p, dict(axes=(0,)), (with_zeros(4, 3),),
     lambda x: np.prod(x, 0)),
    ("reduce_prod-zeros-all", rd.reduce_prod_p, dict(axes=(0, 1)), (with_zeros(3, 4),),
     np.prod),
    ("reduce_prod-no-axes", rd.reduce_prod_p, dict(axes=()), (normal(3),),
     lambda x: np.prod(x, ())),
    ("reduce_prod-f32", rd.reduce_prod_p, dict(axes=(0,)), (normal(3, dtype=np.float32),),
     np.prod),
    ("reduce_prod-i32", rd.reduce_prod_p, dict(axes=(1,)), (ints(2, 3),),
     lambda x: np.prod(x, 1)),
    ("argmax", rd.argmax_p, dict(axis=1, index_dtype=np.dtype(np.int32)), (normal(3, 4),),
     lambda x: np.argmax(x, 1).astype(np.int32)),
    ("argmax-i32", rd.argmax_p, dict(axis=0, index_dtype=np.dtype(np.int64)), (ints(5, 2),),
     lambda x: np.argmax(x, 0)),
    ("argmin", rd.argmin_p, dict(axis=0, index_dtype=np.dtype(np.int64)),
     (normal(4, 3, dtype=np.float32),), lambda x: np.argmin(x, 0)),
    ("reduce_and", rd.reduce_and_p, dict(axes=(1,)), (normal(3, 2) > -1,),
     lambda x: np.all(x, 1)),
    ("reduce_or", rd.reduce_or_p, dict(axes=(0, 1)), (normal(3, 2) > 1,), np.any),
    ("cumsum", rd.cumsum_p, dict(axis=1, reverse=False), (normal(3, 4),),
     scan_reference(np.cumsum, 1)),
    ("cumsum-reverse", rd.cumsum_p, dict(axis=0, reverse=True), (normal(3, 4),),
     scan_reference(np.cumsum, 0, True)),
    ("cumsum-f32", rd.cumsum_p, dict(axis=0, reverse=False), (normal(5, dtype=np.float32),),
     scan_reference(np.cumsum, 0)),
    ("cumsum-i32", rd.cumsum_p, dict(axis=0, reverse=True), (ints(5),),
     scan_reference(np.cumsum, 0, True)),
    ("cumsum-bool", rd.cumsum_p, dict(axis=0, reverse=False), (normal(5) > 0,),
     scan_reference(np.cumsum, 0)),
    ("cumprod", rd.cumprod_p, dict(axis=1, reverse=False), (normal(2, 7),),
     scan_reference(np.cumprod, 1)),
    ("cumprod-reverse-zeros", rd.cumprod_p, dict(axis=0, reverse=True), (with_zeros(6, 2),),
     scan_reference(np.cumprod, 0, True)),
    ("cumprod-zeros", rd.cumprod_p, dict(axis=1, reverse=False), (with_zeros(2, 9),),
     scan_reference(np.cumprod, 1)),
    ("cumprod-i32", rd.cumprod_p, dict(axis=0, reverse=False), (ints(4),),
     scan_reference(np.cumprod, 0)),
    ("cummax", rd.cummax_p, dict(axis=1, reverse=False), (normal(3, 6),),
     scan_reference(np.maximum.accumulate, 1)),
    ("cummax-reverse", rd.cummax_p, dict(axis=0, reverse=True), (normal(7, 2),),
     scan_reference(np.maximum.accumulate, 0, True)),
    ("cummax-i32", rd.cummax_p, dict(axis=0, reverse=False), (ints(6),),
     scan_reference(np.maximum.accumulate, 0)),
    ("cummin", rd.cummin_p, dict(axis=0, reverse=False), (normal(5, 3),),
     scan_reference(np.minimum.accumulate, 0)),
    ("cummin-reverse-f32", rd.cummin_p, dict(axis=0, reverse=True),
     (normal(5, dtype=np.float32),), scan_reference(np.minimum.accumulate, 0, True)),
]
IDS = [c[0] for c in CASES]


def apply(prim, params):
    return lambda *args: prim.bind(*args, **params)


def is_differentiable(args, reference):
    """Float64 in and out: finite differences are too coarse in float32."""
    return all(np.asarray(a).dtype == np.float64 for a in (*args, reference(*args)))


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_matches_numpy(name, prim, params, args, reference):
    got, want = apply(prim, params)(*args), reference(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_abstract_eval_matches_impl(name, prim, params, args, reference):
    check_abstract_eval(prim, args, params)


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_staged(name, prim, params, args, reference):
    check_staged(apply(prim, params), args)


DIFFERENTIABLE = [c for c in CASES if is_differentiable(c[3], c[4])]


@pytest.mark.parametrize("name, prim, params, args, reference", DIFFERENTIABLE,
                         ids=[c[0] for c in DIFFERENTIABLE])
def test_derivatives(name, prim, params, args, reference, rng):
    """jvp against finite differences and vjp by the dot-product test, to second
    order: the rules are made of differentiable primitives, zeros included."""
    check_grads(apply(prim, params), args, rng, order=2)


# ---------------------------------------------------------------------------------
# Zeros, ties and integer results


@pytest.mark.parametrize("x, want", [([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),
                                     ([0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
                                     ([2.0, 4.0, 3.0], [12.0, 6.0, 8.0])])
def test_reduce_prod_gradient_with_zeros(x, want):
    grad = inert.grad(lambda x: rd.reduce_prod(x, (0,)))(np.array(x))
    np.testing.assert_array_equal(grad, want)


def test_reduce_prod_hessian_with_a_zero():
    """Forward over reverse: H[i, j] is the product of all elements but i and j."""
    x = np.array([2.0, 0.0, 3.0, 0.5])
    grad = inert.grad(lambda x: rd.reduce_prod(x, (0,)))
    hessian = np.stack([inert.jvp(grad, (x,), (e,))[1] for e in np.eye(4)])
    want = np.array([[np.prod(np.delete(x, [i, j])) if i != j else 0.0 for j in range(4)]
                     for i in range(4)])
    np.testing.assert_allclose(hessian, want, atol=1e-15)


def test_cumprod_jacobian_with_zeros():
    """Row k of the Jacobian holds the products of the first k+1 elements but one."""
    x = np.array([2.0, 0.0, 3.0, 0.5])
    _, vjp_fn = inert.vjp(lambda x: rd.cumprod(x, 0), x)
    jac = np.stack([vjp_fn(row)[0] for row in np.eye(4)])
    want = np.array([[1, 0, 0, 0], [0, 2, 0, 0], [0, 6, 0, 0], [0, 3, 0, 0]], float)
    np.testing.assert_allclose(jac, want, atol=1e-15)


def test_extremum_ties_share_the_derivative_like_jax():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, -1.0, 0.0, 0.0]])
    grad = inert.grad(lambda x: rd.reduce_sum(rd.reduce_max(x, (1,)), (0,)))(x)
    np.testing.assert_array_equal(grad, [[0, 0.5, 0.5, 0], [1 / 3, 0, 1 / 3, 1 / 3]])
    grad = inert.grad(lambda x: rd.reduce_sum(rd.reduce_min(x, (0,)), (0,)))(x)
    np.testing.assert_array_equal(grad, [[0, 0, 0, 0], [1, 1, 1, 1]])


def test_running_extremum_tangent_follows_the_latest_position():
    x = np.array([1.0, 3.0, 3.0, 2.0, 5.0])
    _, t = inert.jvp(lambda x: rd.cummax(x, 0), (x,), (np.arange(1.0, 6.0),))
    np.testing.assert_array_equal(t, [1, 2, 3, 3, 5])
    _, t = inert.jvp(lambda x: rd.cummin(x, 0, reverse=True), (x,), (np.arange(1.0, 6.0),))
    np.testing.assert_array_equal(t, [1, 4, 4, 4, 5])


def test_integer_results_have_float0_tangents():
    x = normal(3, 4)
    _, t = inert.jvp(lambda x: rd.argmax(x, 1), (x,), (np.ones((3, 4)),))
    assert t.dtype == inert.float0 and t.shape == (3,)


def test_wrappers_canonicalize_negative_axes():
    x = normal(2, 3)
    np.testing.assert_array_equal(rd.reduce_max(x, (-1,)), x.max(-1))
    np.testing.assert_array_equal(rd.argmin(x, -1), x.argmin(-1))
    np.testing.assert_array_equal(rd.cumsum(x, -1), x.cumsum(-1))
    jaxpr = inert.make_jaxpr(lambda x: rd.reduce_prod(x, (-1, 0)))(x)
    assert jaxpr.jaxpr.eqns[0].params == {"axes": (0, 1)}


# ---------------------------------------------------------------------------------
# What the backward pass keeps


def test_reduce_max_keeps_a_boolean_mask_and_the_counts():
    kept = inert.saved_residuals(lambda x: rd.reduce_max(x, (1,)), normal(3, 50))
    assert sorted((r.aval.dtype.name, r.aval.shape) for r in kept) == [
        ("bool", (3, 50)), ("float64", (3,))]


def test_reduce_prod_keeps_one_array_of_products():
    kept = inert.saved_residuals(lambda x: rd.reduce_prod(x, (0,)), with_zeros(40, 3))
    assert [(r.aval.dtype.name, r.aval.shape) for r in kept] == [("float64", (40, 3))]


def test_cumsum_keeps_nothing():
    assert inert.saved_residuals(lambda x: rd.cumsum(x, 0), normal(5)) == []


# ---------------------------------------------------------------------------------
# Properties over random shapes, axes and zeros

FEW = settings(max_examples=25, deadline=None)
SHAPES = hs.lists(hs.integers(1, 4), min_size=1, max_size=3).map(tuple)


@FEW
@given(hs.data())
def test_reductions_over_random_axes(data):
    shape = data.draw(SHAPES)
    axes = tuple(sorted(data.draw(hs.sets(hs.integers(0, len(shape) - 1)))))
    x = normal(*shape)
    x[tuple(data.draw(hs.integers(0, n - 1)) for n in shape)] = 0.0
    for reduce, reference in [(rd.reduce_max, np.max), (rd.reduce_min, np.min),
                              (rd.reduce_prod, np.prod)]:
        np.testing.assert_allclose(reduce(x, axes), reference(x, axis=axes), rtol=1e-12)
    check_abstract_eval(rd.reduce_prod_p, (x,), dict(axes=axes))
    rng = np.random.default_rng(0)
    check_grads(lambda x: rd.reduce_prod(x, axes), (x,), rng)
    check_grads(lambda x: rd.reduce_max(x, axes), (x,), rng)


@FEW
@given(hs.data())
def test_scans_over_random_axes(data):
    shape = data.draw(SHAPES)
    axis = data.draw(hs.integers(0, len(shape) - 1))
    reverse = data.draw(hs.booleans())
    x = normal(*shape)
    for scan, accumulate in [(rd.cumsum, np.cumsum), (rd.cumprod, np.cumprod),
                             (rd.cummax, np.maximum.accumulate)]:
        np.testing.assert_allclose(scan(x, axis, reverse),
                                   scan_reference(accumulate, axis, reverse)(x), rtol=1e-12)
    rng = np.random.default_rng(0)
    check_vjp(lambda x: rd.cumsum(x, axis, reverse), (x,), rng, rtol=1e-12)
    check_grads(lambda x: rd.cumprod(x, axis, reverse), (x,), rng)
    check_grads(lambda x: rd.cummin(x, axis, reverse), (x,), rng)


# ---------------------------------------------------------------------------------
# Bad parameters: errors that name the primitive, eagerly and when staged

BAD = [
    (ShapeError, "^reduce_max", lambda x: rd.reduce_max(x, (2,))),
    (ShapeError, "^reduce_min", lambda x: rd.reduce_min(x, (0, 0))),
    (ShapeError, "^reduce_prod", lambda x: rd.reduce_prod(x, (3,))),
    (ShapeError, "^reduce_max", lambda x: rd.reduce_max(np.zeros((0, 2)), (0,))),
    (ShapeError, "^argmax", lambda x: rd.argmax(x, 2)),
    (ShapeError, "^argmin", lambda x: rd.argmin(np.zeros((2, 0)), 1)),
    (DTypeError, "^argmax", lambda x: rd.argmax(x, 0, np.float64)),
    (DTypeError, "^reduce_and", lambda x: rd.reduce_and(x, (0,))),
    (DTypeError, "^reduce_or", lambda x: rd.reduce_or(x, (0,))),
    (ShapeError, "^reduce_or", lambda x: rd.reduce_or(np.ones(2, bool), (1,))),
    (ShapeError, "^cumsum", lambda x: rd.cumsum(x, 2)),
    (ShapeError, "^cumprod", lambda x: rd.cumprod(np.float64(1.0), 0)),
    (ShapeError, "^cummax", lambda x: rd.cummax(x, 5)),
]


@pytest.mark.parametrize("error, match, f", BAD)
def test_bad_parameters(error, match, f):
    x = normal(3, 4)
    with pytest.raises(error, match=match):
        f(x)
    with pytest.raises(error, match=match):
        inert.make_jaxpr(f)(x)
