"""Indices out of bounds, as JAX defines them: reads clamp (or fill, asked to), writes
drop (or clamp, asked to), eagerly, under jit (both backends), vmap and grad. The
expected values are numpy's with the clamping or masking written out."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_grads

import inert
import inert.numpy as jnp
from inert import lax

X = np.arange(3.0) + 0.5
M = np.random.default_rng(3).standard_normal((4, 3))
IDX = np.array([5, -10, -1, 1, -4])  # 5, -10 and -4 are out of bounds for 3


def clipped(i, n):
    """JAX's clamp: negative indices wrap first, then [0, n - 1]."""
    i = np.asarray(i)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


def inside(i, n):
    i = np.asarray(i)
    wrapped = np.where(i < 0, i + n, i)
    return (wrapped >= 0) & (wrapped < n)


def test_reads_clamp_eagerly_as_jax_does():
    x = jnp.asarray(X)
    assert jnp.arange(3.0)[5] == 2.0
    assert [x[5], x[-10], x[-1]] == [X[2], X[0], X[2]]
    np.testing.assert_array_equal(x[IDX], X[clipped(IDX, 3)])
    np.testing.assert_array_equal(jnp.asarray(M)[7, -9], M[3, 0])
    np.testing.assert_array_equal(jnp.asarray(M)[:, [4, -5]], M[:, [2, 0]])


def test_reads_clamp_under_jit_and_vmap():
    f = inert.jit(lambda x, i: x[i])
    for i in IDX:
        assert f(X, i) == X[clipped(i, 3)]
    np.testing.assert_array_equal(inert.vmap(lambda i: jnp.asarray(X)[i])(IDX),
                                  X[clipped(IDX, 3)])
    np.testing.assert_array_equal(inert.vmap(lambda x, i: x[i])(M, np.array([3, -4, 9, 0])),
                                  M[np.arange(4), clipped([3, -4, 9, 0], 3)])


def test_updates_drop_out_of_bounds_by_default():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x.at[5].set(1.0), X)
    np.testing.assert_array_equal(x.at[-10].add(1.0), X)
    np.testing.assert_array_equal(x.at[-1].set(9.0), [*X[:2], 9.0])
    keep = inside(IDX, 3)
    for method, ufunc in [("add", np.add), ("multiply", np.multiply), ("min", np.minimum),
                          ("max", np.maximum)]:
        want = X.copy()
        ufunc.at(want, clipped(IDX, 3)[keep], (IDX * 1.5)[keep])
        np.testing.assert_array_equal(getattr(x.at[IDX], method)(IDX * 1.5), want)
        got = inert.jit(lambda x, i, m=method: getattr(x.at[i], m)(i * 1.5))(X, IDX)
        np.testing.assert_array_equal(got, want)


def test_updates_clamp_with_mode_clip():
    want = X.copy()
    np.add.at(want, clipped(IDX, 3), IDX * 1.5)
    np.testing.assert_array_equal(jnp.asarray(X).at[IDX].add(IDX * 1.5, mode="clip"), want)
    np.testing.assert_array_equal(jnp.asarray(X).at[7].set(0.0, mode="clip"), [*X[:2], 0.0])
    np.testing.assert_array_equal(jnp.asarray(X).at[7].set(0.0, mode="promise_in_bounds"), X)


@pytest.mark.parametrize("dtype, default", [(np.float32, np.nan), (np.int32, -2**31),
                                            (np.uint8, 255), (np.bool_, True)])
def test_get_fills_with_jax_defaults(dtype, default):
    x = jnp.asarray(np.ones(3, dtype))
    got = x.at[IDX].get(mode="fill")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.where(inside(IDX, 3), np.ones(5, dtype), default))


def test_get_modes():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(x.at[IDX].get(mode="fill", fill_value=-7.0),
                                  np.where(inside(IDX, 3), X[clipped(IDX, 3)], -7.0))
    for mode in (None, "clip", "promise_in_bounds"):
        np.testing.assert_array_equal(x.at[IDX].get(mode=mode), X[clipped(IDX, 3)])
    with pytest.raises(ValueError, match="unknown indexing mode"):
        x.at[0].get(mode="wrap")


def test_take_modes_as_jax():
    """take's default fills (after negative indices wrap); its "clip" clamps the
    raw index (no wrap), "wrap" is modular."""
    filled = np.where(inside(IDX, 3), X[clipped(IDX, 3)], np.nan)
    np.testing.assert_array_equal(jnp.take(X, IDX), filled)
    np.testing.assert_array_equal(jnp.take(X, IDX, mode="fill", fill_value=0.0),
                                  np.nan_to_num(filled))
    np.testing.assert_array_equal(jnp.take(X, IDX, mode="clip"), X[np.clip(IDX, 0, 2)])
    np.testing.assert_array_equal(jnp.take(X, IDX, mode="wrap"), X[IDX % 3])
    np.testing.assert_array_equal(jnp.take(M, np.array([3, 1]), axis=1, mode="clip"),
                                  M[:, [2, 1]])
    with pytest.raises(ValueError, match="'raise' is not supported"):
        jnp.take(X, IDX, mode="raise")
    rows = np.array([[0, 5, -1]])
    np.testing.assert_array_equal(jnp.take_along_axis(M, rows, axis=0),
                                  np.where(inside(rows, 4), M[clipped(rows, 4), [0, 1, 2]],
                                           np.nan))
    np.testing.assert_array_equal(jnp.take_along_axis(M, rows, axis=0, mode="clip"),
                                  M[clipped(rows, 4), [0, 1, 2]])


@pytest.mark.parametrize("read", [
    lambda x, i: x[i], lambda x, i: x.at[i].get(mode="fill", fill_value=0.0),
    lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=2.0),
    lambda x, i: x.at[:, i].add(x[:, :1] * 3.0), lambda x, i: x.at[i].set(x[0] * 2.0, mode="clip"),
    lambda x, i: x.at[i].multiply(x[1]), lambda x, i: x.at[i].max(x[2] - 1.0),
], ids=["get", "fill", "take", "add", "set-clip", "multiply", "max"])
def test_derivatives_and_vmap_of_every_mode(read, rng):
    """Finite differences, the dot-product test (check_grads) and vmap against a loop,
    with indices out of bounds on both sides."""
    i = np.array([5, -1, -9])
    check_grads(lambda x: read(jnp.asarray(x), i), (M,), rng, order=2)
    xs, idx = rng.standard_normal((3, 4, 3)), np.array([[5, 0, -9], [1, 7, -1], [-4, 2, 3]])
    want = np.stack([read(jnp.asarray(x), j) for x, j in zip(xs, idx)])
    np.testing.assert_allclose(inert.vmap(read)(jnp.asarray(xs), idx), want, rtol=1e-15)
    np.testing.assert_allclose(inert.vmap(read, in_axes=(None, 0))(jnp.asarray(xs[0]), idx),
                               np.stack([read(jnp.asarray(xs[0]), j) for j in idx]), rtol=1e-15)


def test_the_transpose_of_a_clamped_read_adds_at_the_clamped_index():
    g = inert.grad(lambda x: jnp.sum(x[IDX] * np.arange(5.0)))(X)
    want = np.zeros(3)
    np.add.at(want, clipped(IDX, 3), np.arange(5.0))
    np.testing.assert_array_equal(g, want)
    g = inert.grad(lambda x: jnp.sum(x.at[IDX].get(mode="fill", fill_value=1.0) ** 2))(X)
    want = np.zeros(3)
    np.add.at(want, clipped(IDX, 3)[inside(IDX, 3)], 2 * X[clipped(IDX, 3)[inside(IDX, 3)]])
    np.testing.assert_array_equal(g, want)
    g = inert.grad(lambda u: jnp.sum(jnp.asarray(X).at[IDX].set(u) ** 2))(np.ones(5))
    np.testing.assert_array_equal(g, [0.0, 0.0, 2.0, 2.0, 0.0])  # dropped: no cotangent


def test_dynamic_slice_clamps_under_vmap():
    starts = np.array([2, -3, 9])
    want = np.stack([M[np.clip(s, 0, 2):np.clip(s, 0, 2) + 2, :] for s in starts])
    got = inert.vmap(lambda s: lax.dynamic_slice(M, (s, 0), (2, 3)))(starts)
    np.testing.assert_array_equal(got, want)


def test_a_receding_horizon_reads_past_the_reference_end_as_mpc_does(rng):
    """The pattern of an MPC loop: the horizon's reference `r[t + k]` runs past the end
    of the trajectory and reads its last point (JAX's clamp); the plan shifted by one
    step writes its last entry past the end, which is dropped. Under scan and jit, with
    its gradient against numpy with the clamping written out."""
    r, horizon = rng.standard_normal(6), 4

    def cost(u):
        def step(plan, t):
            ahead = t + jnp.arange(horizon)
            err = plan - jnp.asarray(r)[ahead]
            shifted = jnp.zeros(horizon).at[jnp.arange(1, horizon + 1)].set(plan)
            return shifted + 0.5 * err, jnp.sum(err ** 2)

        return jnp.sum(lax.scan(step, u, jnp.arange(len(r)))[1])

    def cost_np(u):
        total = 0.0
        for t in range(len(r)):
            err = u - r[np.minimum(t + np.arange(horizon), len(r) - 1)]
            total += np.sum(err ** 2)
            u = np.concatenate([[0.0], u[:-1]]) + 0.5 * err
        return total

    u = rng.standard_normal(horizon)
    np.testing.assert_allclose(inert.jit(cost)(u), cost_np(u), rtol=1e-12)
    eps = 1e-6
    fd = [(cost_np(u + eps * e) - cost_np(u - eps * e)) / (2 * eps) for e in np.eye(horizon)]
    np.testing.assert_allclose(inert.jit(inert.grad(cost))(u), fd, rtol=1e-6)
