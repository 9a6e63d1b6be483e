"""JAX's scalar types convert (traced values too) and stand for numpy's dtypes;
booleans promote in arithmetic; inert arrays hold numbers, never strings."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert.errors import DTypeError

X = np.array([0.25, 1.5, -2.0])
TYPES = [jnp.float16, jnp.float32, jnp.float64, jnp.int8, jnp.int16, jnp.int32, jnp.int64,
         jnp.uint8, jnp.uint16, jnp.uint32, jnp.uint64, jnp.complex64, jnp.complex128,
         jnp.bool_]


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.__name__)
def test_scalar_types_are_dtypes(t):
    numpy_type = getattr(np, t.__name__)
    assert np.dtype(t) == numpy_type and np.zeros(2, t).dtype == numpy_type
    assert jnp.zeros(2, t).dtype == numpy_type and X.astype(t).dtype == numpy_type
    assert jnp.issubdtype(t, np.dtype(numpy_type).type) and isinstance(numpy_type(1), t)
    assert not isinstance(1.5, t)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.__name__)
def test_scalar_types_convert_plain_and_traced_values(t):
    x = np.abs(X)  # a negative float to an unsigned integer is undefined behaviour in C
    eager = t(x)
    assert type(eager) is jnp.Array and eager.dtype == np.dtype(t)
    np.testing.assert_array_equal(eager, x.astype(t))
    np.testing.assert_array_equal(inert.jit(t)(x), x.astype(t))
    assert t(1.0).shape == () and inert.vmap(t)(x).dtype == np.dtype(t)


def test_abstract_classes_are_numpys():
    assert jnp.issubdtype(jnp.float32, jnp.floating) and jnp.issubdtype(jnp.int8, jnp.integer)
    assert not jnp.issubdtype(jnp.int8, jnp.inexact)
    assert np.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.isdtype(jnp.float32, "real floating") and jnp.isdtype(np.dtype("f4"), jnp.float32)
    assert jnp.double is jnp.float64 and jnp.bool is jnp.bool_ and jnp.int_ is jnp.int64


def test_float_conversions_are_differentiable_and_integer_ones_inactive():
    def f(x):
        i, j = x.astype(jnp.int64), jnp.int64(x)
        assert i.dtype == j.dtype == np.int64  # traced, integer: no derivative flows
        return jnp.sum(jnp.float64(x) * i + jnp.float32(x) * j)

    np.testing.assert_allclose(inert.grad(f)(X), 2 * X.astype(np.int64))
    np.testing.assert_allclose(inert.grad(lambda x: jnp.sum(jnp.float32(x) ** 2))(X), 2 * X)


@pytest.mark.parametrize("x", [1.0, np.float64(0.25), X], ids=["python", "numpy scalar", "array"])
def test_bool_arithmetic_promotes(x):
    f = lambda x: jnp.sum((x > 0.5) * x + (x < 2.0) * 3.0 - jnp.logical_not(x > 1) / 2)  # noqa: E731
    expected = np.where(np.asarray(x) > 0.5, 1.0, 0.0)
    np.testing.assert_allclose(inert.grad(f)(x), expected)
    np.testing.assert_allclose(inert.jit(f)(x), f(np.asarray(x)))


@pytest.mark.parametrize("bad", [[1.0, "a"], ["x"], [b"x"], [1, None]])
def test_arrays_of_strings_or_objects_are_refused(bad):
    for make in (jnp.asarray, jnp.array, jnp.sin):
        with pytest.raises(DTypeError, match="numbers and booleans") as info:
            make(bad)
        assert isinstance(info.value, TypeError) and __file__ in str(info.value)
