"""Collectives over a named vmap axis (`vmap(axis_name=)`, `lax.psum` and kin) against
numpy, nested, under jit, and differentiated (grad of a function of the mapped outputs)."""

import numpy as np
import pytest
from harness import check_vjp

import inert
import inert.lax as lax
import inert.numpy as jnp

X = np.arange(1.0, 5.0)


def test_the_named_axis_reduces_over_its_lanes():
    assert np.allclose(inert.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(X),
                       X / X.sum())
    np.testing.assert_array_equal(inert.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(X),
                                  np.full(4, X.mean()))
    np.testing.assert_array_equal(
        inert.vmap(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i"), axis_name="i")(X), [3.0] * 4)
    np.testing.assert_array_equal(inert.vmap(lambda v: lax.axis_index("i") * v,
                                             axis_name="i")(X), np.arange(4) * X)
    np.testing.assert_array_equal(inert.vmap(lambda v: lax.all_gather(v, "i"),
                                             axis_name="i")(X), np.tile(X, (4, 1)))
    # a value the same in every lane: the sum of n equal lanes
    np.testing.assert_array_equal(inert.vmap(lambda v: lax.psum(2.0, "i"), axis_name="i")(X),
                                  [8.0] * 4)


def test_nested_vmaps_reduce_over_the_axis_named():
    x = np.arange(6.0).reshape(2, 3)

    def over(name):
        return inert.vmap(inert.vmap(lambda v: lax.psum(v, name), axis_name="j"),
                          axis_name="i")(x)

    np.testing.assert_array_equal(over("i"), np.broadcast_to(x.sum(0), (2, 3)))
    np.testing.assert_array_equal(over("j"), np.broadcast_to(x.sum(1)[:, None], (2, 3)))
    gathered = inert.vmap(inert.vmap(lambda v: lax.all_gather(v, "i", axis=0), axis_name="j"),
                          axis_name="i")(x)
    assert gathered.shape == (2, 3, 2)
    np.testing.assert_array_equal(gathered[1, 2], x[:, 2])


def test_under_jit_and_grad():
    normalize = inert.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")
    np.testing.assert_allclose(inert.jit(normalize)(X), X / X.sum(), rtol=1e-15)
    loss = lambda x: jnp.sum(inert.vmap(lambda v: lax.psum(v, "i") ** 2, axis_name="i")(x))
    np.testing.assert_allclose(inert.grad(loss)(X), 2 * 4 * X.sum() * np.ones(4))
    gather = lambda x: jnp.sum(inert.vmap(lambda v: lax.all_gather(v, "i")[0] * v,
                                          axis_name="i")(x))
    np.testing.assert_allclose(inert.grad(gather)(X), [X.sum() + X[0], 1.0, 1.0, 1.0])
    check_vjp(normalize, (X,), np.random.default_rng(0))
    top = lambda x: jnp.sum(inert.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x))
    np.testing.assert_array_equal(inert.grad(top)(X), [0.0, 0.0, 0.0, 4.0])  # reduce_max's
    with pytest.raises(inert.errors.NonDifferentiableError, match="pmax"):
        inert.vmap(inert.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(X)


def test_axis_index_inside_a_function_staged_inside_the_vmap_is_refused_clearly():
    np.testing.assert_allclose(
        inert.vmap(inert.jit(lambda v: v / lax.psum(v, "i")), axis_name="i")(X), X / X.sum())
    with pytest.raises(NotImplementedError, match="pass it in as an argument"):
        inert.vmap(inert.jit(lambda v: v * lax.axis_index("i")), axis_name="i")(X)
    index = inert.vmap(lambda v: lax.axis_index("i"), axis_name="i")(X)
    np.testing.assert_array_equal(index, np.arange(4))


def test_an_unbound_axis_name_is_jaxs_name_error():
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        inert.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(X)
    with pytest.raises(ValueError, match="axis_size=3"):
        inert.vmap(lambda v: v, axis_name="i", axis_size=3)(X)
