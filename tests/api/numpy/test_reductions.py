"""inert.numpy's reductions and scans against numpy, over shapes, axes (None, int,
negative, tuples), keepdims and dtypes; staged; derivatives."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from numpy_checks import assert_like_numpy, check_like_numpy

import inert
import inert.numpy as inp

REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "any", "all",
              "count_nonzero"]
DTYPES = [np.float64, np.float32, np.int32, np.int64, np.bool_]


@hs.composite
def array_and_axis(draw, dtypes=DTYPES, tuple_axes=True):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dtype = draw(hs.sampled_from(dtypes))
    x = np.random.default_rng(draw(hs.integers(0, 2**16))).uniform(-3, 3, shape).astype(dtype)
    ndim = len(shape)
    single = hs.integers(-ndim, ndim - 1)
    choices = [hs.none(), single]
    if tuple_axes:
        choices.append(hs.lists(hs.integers(0, ndim - 1), unique=True, max_size=ndim)
                       .map(tuple))
    return x, draw(hs.one_of(*choices))


@given(array_and_axis(), hs.sampled_from(REDUCTIONS), hs.booleans())
@settings(max_examples=25, deadline=None)
def test_reductions_like_numpy(x_axis, name, keepdims):
    x, axis = x_axis
    if name in ("var", "std", "mean") and x.dtype == np.bool_:
        x = x.astype(np.int32)
    f = lambda x: getattr(inp, name)(x, axis=axis, keepdims=keepdims)  # noqa: E731
    ref = lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims)  # noqa: E731
    check_like_numpy(f, ref, (x,), rtol=1e-6)


@given(array_and_axis(tuple_axes=False), hs.sampled_from(["argmax", "argmin"]), hs.booleans())
@settings(max_examples=25, deadline=None)
def test_arg_reductions_like_numpy(x_axis, name, keepdims):
    x, axis = x_axis
    check_like_numpy(lambda x: getattr(inp, name)(x, axis, keepdims=keepdims),
                     lambda x: getattr(np, name)(x, axis, keepdims=keepdims), (x,))


@given(array_and_axis(tuple_axes=False), hs.sampled_from(["cumsum", "cumprod"]))
@settings(max_examples=25, deadline=None)
def test_scans_like_numpy(x_axis, name):
    x, axis = x_axis
    check_like_numpy(lambda x: getattr(inp, name)(x, axis), lambda x: getattr(np, name)(x, axis),
                     (x,), rtol=1e-6)


GRAD_CASES = [
    ("sum", {}), ("sum", {"axis": 1}), ("sum", {"axis": (0, 2), "keepdims": True}),
    ("prod", {"axis": -1}), ("max", {"axis": 0}), ("min", {}), ("mean", {"axis": (1, 2)}),
    ("var", {"axis": 1}), ("var", {"ddof": 1}), ("std", {"axis": 0, "keepdims": True}),
    ("cumsum", {"axis": 1}), ("cumprod", {"axis": -1}), ("cumsum", {}),
    ("average", {"axis": 1}),
]


@pytest.mark.parametrize("name, kwargs", GRAD_CASES, ids=[f"{n}-{k}" for n, k in GRAD_CASES])
def test_reduction_grads(name, kwargs, rng):
    x = rng.uniform(0.5, 2.0, (2, 3, 4))
    check_like_numpy(lambda x: getattr(inp, name)(x, **kwargs),
                     lambda x: getattr(np, name)(x, **kwargs), (x,), rng, grad=True)


def test_explicit_dtypes_and_weights(rng):
    x = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    check_like_numpy(lambda x: inp.sum(x, dtype=np.float64), lambda x: np.sum(x, dtype=np.float64),
                     (x,))
    check_like_numpy(lambda x: inp.mean(x, 0), lambda x: np.mean(x, 0), (x,))
    w = rng.uniform(0.5, 2.0, (4,))
    check_like_numpy(lambda x, w: inp.average(x, 1, w), lambda x, w: np.average(x, 1, w),
                     (x.astype(np.float64), w), rng, grad=True)


def test_bad_axis_is_a_shape_error_at_the_callers_line():
    with pytest.raises(inert.errors.ShapeError, match="sum: axis 2") as info:
        inp.sum(np.ones((2, 3)), axis=2)
    assert "test_reductions.py" in str(info.value)
    with pytest.raises(inert.errors.ShapeError, match="repeated axis"):
        inert.make_jaxpr(lambda x: inp.max(x, axis=(0, -2)))(np.ones((2, 3)))


def test_reductions_of_traced_values_are_staged():
    jaxpr = inert.make_jaxpr(lambda x: inp.mean(x, axis=-1, keepdims=True))(np.ones((2, 3)))
    assert "reduce_sum" in str(jaxpr.jaxpr)
    assert_like_numpy(inert.jit(lambda x: x.std(axis=0))(np.arange(6.0).reshape(2, 3)),
                      np.arange(6.0).reshape(2, 3).std(axis=0))


# ---------------------------------------------------------------------------------
# where= and initial=, as numpy and JAX take them

WHERE_CASES = [("sum", {}), ("prod", {}), ("mean", {}), ("var", {"ddof": 0}), ("std", {}),
               ("max", {"initial": -1.0}), ("min", {"initial": 9.0}), ("any", {}), ("all", {})]


@pytest.mark.parametrize("name, kwargs", WHERE_CASES, ids=[c[0] for c in WHERE_CASES])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_with_a_where_mask_match_numpy(name, kwargs, axis):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    mask = np.array([[True, False, True], [True, True, False]])
    operand = x > 2.5 if name in ("any", "all") else x
    got = getattr(inp, name)(operand, axis=axis, where=mask, **kwargs)
    want = getattr(np, name)(operand, axis=axis, where=mask, **kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    jitted = inert.jit(lambda v: getattr(inp, name)(v, axis=axis, where=mask, **kwargs))
    np.testing.assert_allclose(jitted(operand), want, rtol=1e-13)


def test_a_where_mask_gives_masked_elements_no_gradient_and_initial_folds_in():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    mask = x > 2.5
    g = inert.grad(lambda v: inp.mean(v, where=mask))(x)
    np.testing.assert_allclose(g, np.where(mask, 1 / mask.sum(), 0.0))
    np.testing.assert_allclose(inp.sum(x, axis=0, initial=10.0), x.sum(0) + 10.0)
    np.testing.assert_allclose(inp.max(x, initial=100.0), 100.0)
    np.testing.assert_allclose(inp.prod(x, where=mask, initial=2.0), np.prod(x, where=mask,
                                                                             initial=2.0))
    with pytest.raises(ValueError, match="specify 'initial'"):
        inp.max(x, where=mask)
    with pytest.raises(NotImplementedError, match="out= is not supported"):
        inp.sum(x, out=np.empty(()))


def test_promote_integers_false_keeps_the_integer_dtype_and_wraps():
    x = np.full(3, 100, np.int8)
    assert inp.sum(x).dtype == np.int64 and inp.sum(x) == 300
    got = inp.sum(x, promote_integers=False)
    assert got.dtype == np.int8 and got == np.int8(44)  # 300 mod 256
