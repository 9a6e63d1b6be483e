"""jax.lax's compositions of primitives: `map`, `associative_scan`, `top_k` and the
`dynamic_*_in_dim` slices, against numpy and by their derivatives."""

import harness
import numpy as np
import pytest

import inert
import inert.lax as lax
import inert.numpy as jnp


@pytest.mark.parametrize("n", range(0, 10))
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_of_add_is_cumsum_at_every_length(n, reverse):
    x = np.arange(1.0, n + 1)
    want = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    np.testing.assert_allclose(lax.associative_scan(jnp.add, x, reverse=reverse), want)


def test_associative_scan_keeps_the_order_of_a_non_commutative_operation(rng):
    a = rng.normal(size=(7, 2, 2))
    want = [a[0]]
    for m in a[1:]:
        want.append(want[-1] @ m)
    np.testing.assert_allclose(lax.associative_scan(jnp.matmul, a), want, rtol=1e-12)


def test_associative_scan_over_a_pytree_along_an_axis(rng):
    """A linear recurrence h_t = a_t h_{t-1} + b_t as a scan of (a, b) pairs."""
    a, b = rng.uniform(0.5, 1, (3, 6)), rng.normal(size=(3, 6))

    def compose(first, second):
        return first[0] * second[0], second[0] * first[1] + second[1]

    _, h = lax.associative_scan(compose, (a, b), axis=-1)
    want, state = [], np.zeros(3)
    for t in range(6):
        state = a[:, t] * state + b[:, t]
        want.append(state)
    np.testing.assert_allclose(h, np.stack(want, 1), rtol=1e-12)
    with pytest.raises(ValueError, match="different lengths"):
        lax.associative_scan(compose, (a, b[:, :5]), axis=1)


def test_associative_scan_is_differentiable_and_batches(rng):
    x = rng.uniform(0.5, 2, 6)
    harness.check_grads(lambda x: lax.associative_scan(jnp.multiply, x), (x,), rng, order=2)
    xs = rng.normal(size=(4, 5))
    np.testing.assert_allclose(inert.vmap(lambda v: lax.associative_scan(jnp.add, v))(xs),
                               np.cumsum(xs, 1), rtol=1e-12)


@pytest.mark.parametrize("batch_size", [None, 1, 2, 5, 8])
def test_map_applies_f_to_each_leading_slice(batch_size, rng):
    xs = {"a": rng.normal(size=(5, 3)), "b": np.arange(5.0)}
    out = lax.map(lambda d: (jnp.sum(d["a"]) * d["b"], d["a"] * 2), xs, batch_size=batch_size)
    np.testing.assert_allclose(out[0], xs["a"].sum(1) * xs["b"], rtol=1e-12)
    np.testing.assert_allclose(out[1], xs["a"] * 2)
    g = inert.grad(lambda a: jnp.sum(lax.map(jnp.sin, a, batch_size=batch_size)))(xs["a"])
    np.testing.assert_allclose(g, np.cos(xs["a"]), rtol=1e-12)


def test_top_k_gives_the_largest_values_first_and_ties_in_order():
    x = np.array([[3.0, 1.0, 3.0, 5.0, -np.inf], [0.0, 2.0, 2.0, 1.0, 7.0]])
    values, indices = lax.top_k(x, 3)
    np.testing.assert_array_equal(values, [[5.0, 3.0, 3.0], [7.0, 2.0, 2.0]])
    np.testing.assert_array_equal(indices, [[3, 0, 2], [4, 1, 2]])
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(inert.grad(lambda v: jnp.sum(lax.top_k(v, 2)[0]))(x[0]),
                                  [1.0, 0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(inert.jit(lambda v: lax.top_k(v, 1)[1])(x), [[3], [4]])
    with pytest.raises(ValueError, match="k=6"):
        lax.top_k(x, 6)


def test_dynamic_slices_in_one_dimension_clamp_their_start_as_jax_does():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 3, 2, axis=1), x[:, 2:])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 1), x[1:2])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 2, 1, keepdims=False), x[:, 2])
    updated = lax.dynamic_update_slice_in_dim(x, -np.ones((3, 2)), 1, axis=1)
    want = x.copy()
    want[:, 1:3] = -1
    np.testing.assert_array_equal(updated, want)
    f = inert.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 2) * 2.0)
    np.testing.assert_array_equal(f(x, 5), x[1:] * 2)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_div_of_integers_rounds_towards_zero_as_jax_does(dtype):
    x = np.array([7, -7, 7, -7, 6, 0, 1, -1], np.int64)
    y = np.array([2, 2, -2, -2, -4, 3, 5, -5], np.int64)
    if np.dtype(dtype).kind == "u":
        x, y = np.abs(x), np.abs(y)
    x, y = x.astype(dtype), y.astype(dtype)
    want = (np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
            * np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64))).astype(dtype)
    for f in [lax.div, inert.jit(lax.div, backend="numpy"), inert.jit(lax.div, backend="numba")]:
        got = f(x, y)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


def test_div_of_floats_divides_truly_and_differentiates():
    x, y = np.array([7.0, -7.0]), np.array([2.0, 4.0])
    np.testing.assert_array_equal(lax.div(x, y), x / y)
    np.testing.assert_allclose(inert.grad(lambda a: jnp.sum(lax.div(a, y)))(x), 1 / y)
