"""Refs against JAX 0.10 where JAX supports the case (skipped without JAX, which the
project does not depend on): the same programs, written once for both namespaces."""

from __future__ import annotations

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert import lax as ilax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp, jlax = jax.numpy, jax.lax


def fill(np_, new_ref, freeze):
    def f(x):
        y = new_ref(np_.zeros(3))
        for n in range(3):
            y[n] = np_.sin(np_.cos(np_.exp(x[n])))
        y[0] += y[1] * x[2]
        return np_.sum(freeze(y) ** 2)

    return f


def loop(lax, np_, new_ref):
    def f(x):
        r = new_ref(x)

        def body(i):
            r[...] = r[...] * 1.1 + np_.sin(r[...])
            return i + 1

        lax.while_loop(lambda i: i < 3, body, 0)
        return r[...]

    return f


def test_grad_and_jvp_agree_with_jax():
    x = np.array([0.1, -0.4, 0.7])
    f_jax, f_inert = fill(jnp, jax.new_ref, jax.freeze), fill(inp, inert.new_ref, inert.freeze)
    jax_grad_and_jvp = jax.jit(lambda x: (jax.grad(f_jax)(x),  # one compile, not one per op
                                          jax.jvp(f_jax, (x,), (jnp.ones(3),))[1]))
    want_grad, want_jvp = jax_grad_and_jvp(x)
    np.testing.assert_allclose(inert.grad(f_inert)(x), want_grad, rtol=1e-12)
    np.testing.assert_allclose(inert.jvp(f_inert, (x,), (np.ones(3),))[1], want_jvp,
                               rtol=1e-12)


def test_jvp_through_a_while_loop_agrees_with_jax():
    w_jax, w_inert = loop(jlax, jnp, jax.new_ref), loop(ilax, inp, inert.new_ref)
    np.testing.assert_allclose(inert.jvp(w_inert, (0.3,), (1.0,))[1],
                               jax.jvp(w_jax, (0.3,), (1.0,))[1], rtol=1e-12)
    # JAX's linearize disagrees with its own jvp here; inert's agrees with it
    np.testing.assert_allclose(inert.linearize(w_inert, 0.3)[1](1.0),
                               jax.jvp(w_jax, (0.3,), (1.0,))[1], rtol=1e-12)
