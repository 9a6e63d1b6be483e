"""Programs that run in JAX run in inert with the same values (or fail as JAX does,
with a clear error): regressions from running real programs (issue 10)."""

import numpy as np
import pytest
from harness import check_grads

import inert
import inert.numpy as inp


@pytest.mark.parametrize("make", [
    lambda: inp.zeros(np.int64(6)), lambda: inp.ones((np.int64(2), 3)),
    lambda: inp.full(np.int64(6), 1.0), lambda: inp.empty(np.int32(6)),
    lambda: inp.broadcast_to(1.0, (np.int64(6),)), lambda: inp.zeros(np.array(6)),
    lambda: inp.reshape(inp.arange(6.0), (np.int64(2), np.int64(3))),
    lambda: inp.tile(inp.arange(2.0), np.int64(3)), lambda: inp.eye(np.int64(2), np.int64(3)),
    lambda: inp.zeros_like(inp.ones(2), shape=np.int64(6)),
])
def test_numpy_integers_are_shapes(make):
    assert int(np.prod(make().shape)) == 6
    assert all(type(d) is int for d in inert.jit(make)().shape)


def test_a_shape_that_is_not_one_is_a_clear_type_error():
    with pytest.raises(TypeError, match="full: a shape must be an integer"):
        inp.zeros("a")


def test_grad_of_a_complex_output_is_a_type_error():
    with pytest.raises(TypeError, match="real float scalar.*c128"):
        inert.grad(lambda x: x * 1j)(1.0)


@pytest.mark.parametrize("x", [0.0, 2.0])
def test_power_zero_has_derivative_zero(x):
    assert inert.grad(lambda x: x ** 0.0)(x) == 0.0
    assert inert.jvp(lambda x: x ** 0.0, (x,), (1.0,))[1] == 0.0
    assert inert.grad(lambda x, y: x ** y)(x, 0.0) == 0.0
    assert inert.grad(inert.grad(lambda x: x ** 1.0))(x) == 0.0


def test_power_at_zero_base_as_jax_defines_it():
    grads = lambda x, y: inert.grad(lambda x, y: x ** y, argnums=(0, 1))(x, y)
    assert grads(0.0, 1.0) == (1.0, 0.0)  # 0**0 = 1; d/dy at x = 0 is 0, not 0 * -inf
    assert grads(0.0, 2.0) == (0.0, 0.0)
    assert grads(0.0, 0.0) == (0.0, 0.0)
    check_grads(lambda x, y: x ** y, (np.array([0.5, 2.0]), np.array([0.0, 1.5])),
                np.random.default_rng(0))
