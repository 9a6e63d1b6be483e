"""The iLQR workload (benchmarks/ilqr.py) computes the same controls under jit, on both
backends, as un-jitted and as JAX (where installed). Its loops compile whole on numba's
backend: every equation of the program has a native form, its solves included."""

import functools

import numpy as np
import pytest

import inert
from inert.benchmarks import ilqr as I
from inert.benchmarks.jax_column import jax_available, jax_port
from inert.interpreters import fusion

HORIZON, ITERATIONS = 6, 2  # (numba's compile does not depend on them)
program = functools.partial(I.ilqr, iterations=ITERATIONS)


@pytest.fixture(scope="module")
def args():
    return I.ilqr_args(HORIZON)


@pytest.fixture(scope="module")
def want(args):
    return program(*args)


def test_each_iteration_lowers_the_cost(args):
    x0, us = args
    costs = [float(I.ilqr(x0, us, iterations=n)[2]) for n in range(3)]
    assert costs[0] > costs[1] > costs[2]
    assert np.isclose(costs[0], I.cost(I.rollout(x0, us), us))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_jit_computes_the_unjitted_controls(backend, args, want):
    got = inert.jit(program, backend=backend)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


def test_the_whole_program_is_one_native_function(args):
    assert len(fusion.numba_steps(inert.make_jaxpr(program)(*args).jaxpr)) == 1


def jax_controls(args):
    import jax  # noqa: PLC0415 — optional

    return jax.jit(functools.partial(jax_port(I.ilqr), iterations=ITERATIONS))(*args)


@pytest.mark.skipif(not jax_available(), reason="jax is not installed")
def test_jax_computes_the_same_controls(args, want):
    for g, w in zip(jax_controls(args), want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-9)
