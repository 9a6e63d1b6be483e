"""Operators, indexing and methods on traced values behave as numpy's do on arrays.

Each case is written once: run eagerly on numpy arrays it *is* the numpy reference,
and traced it uses the methods installed on `Tracer`."""

import numpy as np
import pytest
from harness import check_grads
from numpy_checks import assert_like_numpy, check_like_numpy

import inert

R = np.random.default_rng(0)
X = R.uniform(0.5, 2.0, (3, 4))
Y = R.uniform(0.5, 2.0, (4,))
N = R.integers(1, 6, (3, 4))
B = R.integers(0, 2, (3, 4)).astype(bool)

OPERATORS = {
    "neg": lambda x, y: -x, "pos": lambda x, y: +x, "abs": lambda x, y: abs(x - 1),
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "truediv": lambda x, y: x / y, "floordiv": lambda x, y: (3 * x) // y,
    "mod": lambda x, y: (3 * x) % y, "pow_int": lambda x, y: x ** 3,
    "pow_neg_int": lambda x, y: x ** -2, "pow_float": lambda x, y: x ** 1.5,
    "pow": lambda x, y: x ** y, "rpow": lambda x, y: 2.0 ** x, "matmul": lambda x, y: x @ y,
    "radd": lambda x, y: 2 + x, "rsub": lambda x, y: 2.0 - x, "rmul": lambda x, y: 3 * x,
    "rtruediv": lambda x, y: 1 / x, "rmod": lambda x, y: 7.0 % x,
    "rfloordiv": lambda x, y: 7.0 // x, "rmatmul": lambda x, y: np.ones((2, 3)) @ x,
    "ndarray_left": lambda x, y: np.arange(4.0) * x + np.ones(4) - x / np.full(4, 2.0),
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= 1.0, "gt": lambda x, y: 1.0 > x,
    "ge": lambda x, y: x >= y, "eq": lambda x, y: x == x, "ne": lambda x, y: x != y,
}
NO_GRAD = {"floordiv", "rfloordiv", "lt", "le", "gt", "ge", "eq", "ne"}


@pytest.mark.parametrize("name", OPERATORS)
def test_float_operators(name, rng):
    f = OPERATORS[name]
    check_like_numpy(f, f, (X, Y), rng, grad=name not in NO_GRAD)


@pytest.mark.parametrize("f", [lambda n, b: n & 6, lambda n, b: n | 1, lambda n, b: n ^ n.T.T,
                               lambda n, b: ~n, lambda n, b: b & (n > 2), lambda n, b: ~b,
                               lambda n, b: 5 | n, lambda n, b: b ^ True, lambda n, b: n // 2,
                               lambda n, b: n % 3, lambda n, b: n ** 2, lambda n, b: -n])
def test_integer_and_boolean_operators(f):
    check_like_numpy(f, f, (N, B))


def test_builtin_round():
    """numpy arrays have no `__round__`; traced values have one, like JAX arrays."""
    assert_like_numpy(inert.jit(lambda x: round(x * 3))(X), np.round(X * 3))
    assert_like_numpy(inert.jit(lambda x: round(x, 1))(X), np.round(X, 1))


def test_integer_exponent_is_integer_pow():
    jaxpr = inert.make_jaxpr(lambda x: x ** 2)(X)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["integer_pow"]


INDEXING = [
    lambda x: x[0], lambda x: x[-1, 1:], lambda x: x[::-1], lambda x: x[:, None, ::2],
    lambda x: x[..., 1], lambda x: x[np.array([2, 0, 0])], lambda x: x[:, [3, 1]],
    lambda x: x[np.array([0, 2]), np.array([1, 3])], lambda x: x[np.array([True, False, True])],
    lambda x: x[1:, np.array([[0], [2]])], lambda x: x.T[1], lambda x: x.mT,
]


@pytest.mark.parametrize("f", INDEXING)
def test_getitem(f, rng):
    check_like_numpy(f, f, (X,), rng, grad=True)


def test_traced_integer_index(rng):
    f = lambda x, i: x[i] * x[i + 1, 2]  # noqa: E731
    check_like_numpy(f, f, (X, np.int64(1)), rng, grad=True)


def test_iteration_over_the_leading_axis(rng):
    def f(x):
        first, *rest = x
        total = first
        for row in rest:
            total = total * row
        return total + sum(x)

    check_like_numpy(f, f, (X,), rng, grad=True)
    with pytest.raises(TypeError, match="0-d"):
        inert.make_jaxpr(lambda x: list(x))(1.0)


AT_CASES = [
    (lambda x: x.at[0].set(0.0), lambda x: _updated(x, 0, "set", 0.0)),
    (lambda x: x.at[:, 1].add(x[:, 2]), lambda x: _updated(x, (slice(None), 1), "add", x[:, 2])),
    (lambda x: x.at[np.array([0, 0, 2])].add(1.0),
     lambda x: _add_at(x, np.array([0, 0, 2]), 1.0)),
    (lambda x: x.at[1:, ::2].multiply(x[:2, 1:3]),
     lambda x: _updated(x, (slice(1, None), slice(None, None, 2)), "multiply", x[:2, 1:3])),
    (lambda x: x.at[2].get() + x.at[..., 0].set(x[:, 1])[0],
     lambda x: x[2] + _updated(x, (Ellipsis, 0), "set", x[:, 1])[0]),
]


def _updated(x, idx, mode, v):
    out = np.array(x)
    out[idx] = {"set": v, "add": out[idx] + v, "multiply": out[idx] * v}[mode]
    return out


def _add_at(x, idx, v):
    out = np.array(x)
    np.add.at(out, idx, v)
    return out


@pytest.mark.parametrize("f, ref", AT_CASES)
def test_at_updates(f, ref, rng):
    """`.at` exists on traced values only, so the reference is written with numpy."""
    assert_like_numpy(inert.jit(f)(X), ref(X))
    check_grads(inert.jit(f), (X,), rng)


METHODS = [
    lambda x: x.sum(), lambda x: x.sum(axis=0), lambda x: x.sum(1, keepdims=True),
    lambda x: x.mean(), lambda x: x.mean(axis=-1), lambda x: x.max(0), lambda x: x.min(),
    lambda x: x.prod(axis=1), lambda x: x.argmax(), lambda x: x.argmin(axis=0),
    lambda x: x.reshape(2, 6), lambda x: x.reshape((6, -1)), lambda x: x.reshape(-1),
    lambda x: x.transpose(), lambda x: x.transpose(1, 0), lambda x: x.transpose((1, 0)),
    lambda x: x.T, lambda x: x.astype(np.float32), lambda x: x[:1].squeeze(),
    lambda x: x[:, :1].squeeze(axis=1), lambda x: x.ravel(), lambda x: x.flatten(),
    lambda x: x.dot(x.T), lambda x: x.clip(0.8, 1.5), lambda x: x.clip(max=1.0),
    lambda x: (x > 1).any(), lambda x: (x > 1).all(axis=0), lambda x: x.std(),
    lambda x: x.var(axis=0, ddof=1), lambda x: x.cumsum(axis=1), lambda x: x.cumprod(),
    lambda x: x.round(1), lambda x: x.swapaxes(0, 1), lambda x: x.diagonal(),
    lambda x: x.trace(), lambda x: x.take(np.array([5, 0])),
    lambda x: x.shape[0] * x.ndim * x.size * x,
]


@pytest.mark.parametrize("f", METHODS)
def test_methods(f, rng):
    out = f(X)
    grad = np.asarray(out).dtype == np.float64 and f is not METHODS[31]
    check_like_numpy(f, f, (X,), rng, grad=grad)
