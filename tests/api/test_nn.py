"""inert.nn and inert.nn.initializers: values against numpy/scipy, derivatives against
finite differences, JAX's derivatives at kinks, stability far out, and initializer
statistics."""

import numpy as np
import pytest
import scipy.special as sc
from harness import check_jvp, check_vjp

import inert
from inert import nn
from inert import random as jr
from inert.nn import initializers as init

X = np.array([-3.1, -1.2, -0.4, 0.3, 0.9, 2.2, 6.5])

ACTIVATIONS = [
    (nn.relu, lambda x: np.maximum(x, 0)),
    (nn.relu6, lambda x: np.clip(x, 0, 6)),
    (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    (nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 *
                                                      np.expm1(x))),
    (lambda x: nn.celu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5))),
    (lambda x: nn.gelu(x, approximate=False), lambda x: x * sc.ndtr(x)),
    (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    (nn.silu, lambda x: x * sc.expit(x)),
    (nn.sigmoid, sc.expit),
    (nn.log_sigmoid, sc.log_expit),
    (nn.softplus, lambda x: np.log1p(np.exp(x))),
    (nn.soft_sign, lambda x: x / (1 + np.abs(x))),
    (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    (nn.glu, lambda x: x[:3] * sc.expit(x[3:6])),
    (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0))),
    (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    (nn.softmax, sc.softmax),
    (nn.log_softmax, sc.log_softmax),
    (nn.logsumexp, sc.logsumexp),
    (nn.standardize, lambda x: (x - x.mean()) / np.sqrt(x.var() + 1e-5)),
]


@pytest.mark.parametrize("f, reference", ACTIVATIONS, ids=range(len(ACTIVATIONS)))
def test_values_and_derivatives(f, reference, rng):
    x = X[:6] if f is nn.glu else X
    np.testing.assert_allclose(f(x), reference(x), rtol=1e-12, atol=1e-14)
    check_jvp(f, (x,), rng)
    check_vjp(f, (x,), rng)
    np.testing.assert_allclose(inert.jit(f)(x), f(x), rtol=1e-15)


@pytest.mark.parametrize("f, at, slope", [
    (nn.relu, 0.0, 0.0), (nn.relu6, 0.0, 0.0), (nn.relu6, 6.0, 0.0),
    (nn.leaky_relu, 0.0, 1.0), (nn.hard_tanh, 1.0, 1.0), (nn.hard_tanh, -1.0, 1.0),
    (nn.elu, 0.0, 1.0), (nn.celu, 0.0, 1.0),
])
def test_derivatives_at_kinks_are_jaxs(f, at, slope):
    assert inert.grad(f)(at) == slope


def test_far_out_nothing_overflows_and_no_derivative_is_nan():
    big = np.array([-1e4, -800.0, 0.0, 800.0, 1e4])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow is benign
        np.testing.assert_allclose(nn.softplus(big), [0, 0, np.log(2), 800, 1e4])
        np.testing.assert_allclose(inert.vmap(inert.grad(nn.softplus))(big), sc.expit(big))
        np.testing.assert_allclose(nn.log_sigmoid(big), sc.log_expit(big))
        np.testing.assert_allclose(nn.log_softmax(big), big - 1e4)
        g = inert.grad(lambda x: nn.log_softmax(x)[0])(big)
        np.testing.assert_allclose(g, [1, 0, 0, 0, -1])
        for f in (nn.elu, nn.selu, nn.celu, nn.silu):
            assert np.all(np.isfinite(f(big)))
            assert np.all(np.isfinite(inert.vmap(inert.grad(f))(big)))


def test_one_hot_and_softmax_axes():
    np.testing.assert_array_equal(nn.one_hot(np.array([0, 2, 3]), 3),
                                  [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert nn.one_hot(np.array([1, 0]), 4, axis=0, dtype=np.float32).shape == (4, 2)
    assert nn.one_hot(np.array([1]), 2, dtype=np.float32).dtype == np.float32
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(nn.softmax(m, axis=0), sc.softmax(m, axis=0))
    np.testing.assert_allclose(nn.softmax(m), sc.softmax(m, axis=-1))
    with pytest.raises(ValueError, match="glu"):
        nn.glu(np.ones(3))


# ---------------------------------------------------------------------------------
# Initializers

KEY = jr.PRNGKey(3)
SHAPE = (200, 300)  # fan_in 200, fan_out 300


@pytest.mark.parametrize("make, variance, bound", [
    (init.glorot_normal, 2 / 500, 2 * np.sqrt(2 / 500) / 0.87962566103423978),
    (init.glorot_uniform, 2 / 500, np.sqrt(6 / 500)),
    (init.he_normal, 2 / 200, 2 * np.sqrt(2 / 200) / 0.87962566103423978),
    (init.he_uniform, 2 / 200, np.sqrt(6 / 200)),
    (init.lecun_normal, 1 / 200, 2 * np.sqrt(1 / 200) / 0.87962566103423978),
    (init.lecun_uniform, 1 / 200, np.sqrt(3 / 200)),
])
def test_variance_scaling_schemes_have_their_variance_and_bounds(make, variance, bound):
    w = make()(KEY, SHAPE)
    assert w.shape == SHAPE and w.dtype == np.float64
    assert abs(w.var() / variance - 1) < 0.02 and abs(w.mean()) < 0.01 * np.sqrt(variance) * 5
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    np.testing.assert_array_equal(inert.jit(lambda k: make()(k, SHAPE))(KEY), w)


def test_convolution_fans_count_the_receptive_field():
    w = init.variance_scaling(1.0, "fan_in", "normal")(KEY, (5, 5, 40, 8))
    assert abs(w.var() * (5 * 5 * 40) - 1) < 0.03
    w = init.variance_scaling(1.0, "fan_out", "normal", in_axis=0, out_axis=1)(KEY, (40, 8, 5, 5))
    assert abs(w.var() * (8 * 25) - 1) < 0.03


def test_simple_initializers():
    assert np.all(init.zeros(KEY, (2, 3)) == 0) and np.all(init.ones(KEY, (2,)) == 1)
    assert np.all(init.constant(0.5)(KEY, (3,), np.float32) == np.float32(0.5))
    u = init.uniform(0.5)(KEY, (10_000,))
    assert 0 <= u.min() and u.max() < 0.5 and abs(u.mean() - 0.25) < 0.01
    assert abs(init.normal(0.1)(KEY, (10_000,)).std() - 0.1) < 0.003
    assert init.glorot_normal(dtype=np.float32)(KEY, (4, 4)).dtype == np.float32
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="2 axes"):
        init.he_normal()(KEY, (3,))


@pytest.mark.parametrize("shape, axis", [((6, 4), -1), ((4, 6), -1), ((3, 2, 5), 0)])
def test_orthogonal_initializer_has_orthonormal_columns_or_rows(shape, axis):
    w = init.orthogonal(scale=2.0, column_axis=axis)(KEY, shape)
    assert w.shape == shape
    m = np.moveaxis(np.asarray(w), axis, -1).reshape(-1, shape[axis]) / 2.0
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-12)
    np.testing.assert_array_equal(inert.jit(lambda k: init.orthogonal()(k, shape))(KEY),
                                  init.orthogonal()(KEY, shape))
