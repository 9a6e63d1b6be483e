"""numpy's own functions on traced values run inert.numpy's (NEP 13 and NEP 18), and
any other is refused by name."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert.errors import InertError, NumpyFunctionError

X = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])

# each case written once, run with `m` as numpy and as inert.numpy
CASES = [
    lambda m, x: m.sum(x),
    lambda m, x: m.prod(x, axis=0),
    lambda m, x: m.max(x, axis=1),
    lambda m, x: m.min(x),
    lambda m, x: m.mean(x, axis=1, keepdims=True),
    lambda m, x: m.sin(x) * m.exp(x),
    lambda m, x: m.where(x > 0, x, 0.0),
    lambda m, x: m.concatenate([x, m.ones((1, 3))]),
    lambda m, x: m.ones(3) * x - m.arange(3.0) ** x[0],
    lambda m, x: m.linalg.norm(x, axis=1),
    lambda m, x: m.reshape(x, (3, 2)).T @ m.eye(3),
]


@pytest.mark.parametrize("case", CASES)
def test_numpy_functions_on_tracers_are_inert_numpys(case):
    with_numpy, with_inert = (lambda x: case(np, x)), (lambda x: case(jnp, x))
    loss = lambda f: lambda x: jnp.sum(jnp.tanh(f(x)))  # noqa: E731
    np.testing.assert_allclose(inert.jit(with_numpy)(X), with_inert(X))
    np.testing.assert_allclose(inert.grad(loss(with_numpy))(X), inert.grad(loss(with_inert))(X))
    np.testing.assert_allclose(inert.vmap(with_numpy)(X[None]), inert.vmap(with_inert)(X[None]))


def test_numpy_sin_differentiates_and_none_keywords_mean_not_given():
    np.testing.assert_allclose(inert.grad(lambda x: np.sum(np.sin(x)))(X), np.cos(X))
    f = lambda x: np.sum(np.mean(x, axis=0, dtype=None, out=None), out=None)  # noqa: E731
    np.testing.assert_allclose(inert.grad(f)(X), np.full(X.shape, 0.5))


@pytest.mark.parametrize("call, match", [
    (lambda x: np.sum(x, out=np.zeros(())), r"numpy.sum\(\.\.\., out=\.\.\.\).*immutable"),
    (lambda x: np.sin(x, out=np.zeros((2, 3))), r"numpy.sin\(\.\.\., out=\.\.\.\)"),
    (lambda x: np.var(x, correction=1), r"numpy.var .* no keyword argument correction"),
    (lambda x: np.fft.fft(x), r"numpy.fft.fft was called .* which inert.numpy does not cover"),
    (lambda x: np.spacing(x), r"numpy.spacing was called on a traced value"),
    (lambda x: np.add.reduce(x), r"numpy.add.reduce was called on a traced value"),
])
def test_other_numpy_functions_are_refused_by_name(call, match):
    with pytest.raises(NumpyFunctionError, match=match) as info:
        inert.jit(call)(X)
    assert isinstance(info.value, TypeError) and __file__ in str(info.value)
    assert "inert.numpy" in str(info.value)


def test_an_inert_function_that_is_numpys_own_does_not_call_itself():
    """inert.numpy's linspace is numpy's (at this writing): numpy's code runs on the
    tracer, which either works or raises inert's clear error, never a RecursionError."""
    for f in (np.linspace, jnp.linspace):
        try:
            out = inert.jit(lambda x: f(0.0, x, 3))(2.0)  # noqa: B023
        except InertError:
            continue
        np.testing.assert_allclose(out, [0.0, 1.0, 2.0])
