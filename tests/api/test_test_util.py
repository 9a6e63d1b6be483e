"""check_grads: it passes right derivatives to every order and names the worst
mismatch of a wrong one."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert.test_util import check_grads


def f(x, y):
    return {"a": jnp.sin(x) * y, "b": jnp.sum(jnp.exp(x / 3) * y**2)}


X, Y = np.linspace(-1, 1, 4), np.linspace(0.5, 1.5, 4)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev")])
def test_right_derivatives_pass_to_order_three(modes):
    check_grads(f, (X, Y), order=3, modes=modes)


def test_integer_arguments_are_left_alone():
    check_grads(lambda x, n: x ** n, (1.3, 3), order=2)


@inert.custom_jvp
def wrong_sin(x):
    return jnp.sin(x)


@wrong_sin.defjvp
def _wrong_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), jnp.cos(x) * t * jnp.where(jnp.arange(4) == 2, 1.5, 1.0)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_wrong_derivative_fails_naming_the_worst_mismatch(mode):
    with pytest.raises(AssertionError, match=f"{mode} \\(order 1\\)") as info:
        check_grads(lambda x: {"out": wrong_sin(x)}, (X,), order=1, modes=(mode,))
    if mode == "fwd":
        assert "['out'] at index (2,)" in str(info.value)


def test_a_wrong_second_derivative_fails_at_order_two():
    @inert.custom_jvp
    def h(x):
        return x ** 3

    @h.defjvp
    def h_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        slope = inert.lax.stop_gradient(3 * x ** 2)  # its own derivative is lost
        return x ** 3, slope * t

    check_grads(h, (1.2,), order=1)
    with pytest.raises(AssertionError, match="order 2"):
        check_grads(h, (1.2,), order=2)


def test_bad_modes_are_an_error():
    with pytest.raises(ValueError, match="modes"):
        check_grads(f, (X, Y), order=1, modes=("sideways",))
