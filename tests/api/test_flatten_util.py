"""ravel_pytree: round trips, dtypes, and derivatives through the unravel function."""

import numpy as np
import pytest
from harness import check_jvp, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as jnp
from inert.flatten_util import ravel_pytree

TREE = {"w": np.arange(6.0).reshape(2, 3), "b": (np.float64(7.0), np.ones(2)), "none": None}


def test_ravel_round_trips_and_orders_leaves_as_tree_leaves():
    flat, unravel = ravel_pytree(TREE)
    assert flat.shape == (9,)
    np.testing.assert_array_equal(flat, np.concatenate(
        [np.ravel(x) for x in inert.tree_util.tree_leaves(TREE)]))
    back = unravel(flat)
    assert inert.tree_util.tree_structure(back) == inert.tree_util.tree_structure(TREE)
    np.testing.assert_array_equal(back["w"], TREE["w"])
    assert back["b"][0].shape == ()


def test_mixed_dtypes_promote_and_come_back():
    flat, unravel = ravel_pytree([np.ones(2, np.float32), np.arange(3)])
    assert flat.dtype == np.float64
    a, b = unravel(flat)
    assert a.dtype == np.float32 and b.dtype == np.int64
    empty, unravel_empty = ravel_pytree({})
    assert empty.shape == (0,) and unravel_empty(empty) == {}


def test_derivatives_flow_through_unravel(rng):
    _, unravel = ravel_pytree(TREE)

    def loss(v):
        p = unravel(v)
        return jnp.sum(jnp.tanh(p["w"]) * p["b"][0]) + jnp.sum(p["b"][1] ** 2)

    v = rng.standard_normal(9)
    check_jvp(loss, (v,), rng)
    check_vjp(loss, (v,), rng)
    grad_tree = inert.grad(lambda t: loss(ravel_pytree(t)[0]))(unravel(v))
    np.testing.assert_allclose(ravel_pytree(grad_tree)[0], inert.grad(loss)(v))
    np.testing.assert_allclose(inert.jit(inert.grad(loss))(v), inert.grad(loss)(v))


def test_unravel_rejects_a_vector_of_the_wrong_size():
    _, unravel = ravel_pytree(TREE)
    with pytest.raises(ValueError, match="9"):
        unravel(np.ones(8))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), max_size=4))
def test_ravel_round_trips_random_trees(shapes):
    rng = np.random.default_rng(len(shapes))
    tree = {f"k{i}": rng.standard_normal(shape) for i, shape in enumerate(shapes)}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (sum(a * b for a, b in shapes),)
    back = unravel(flat)
    for k in tree:
        np.testing.assert_array_equal(back[k], tree[k])
