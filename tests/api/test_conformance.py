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
    lambda: inp.stack(inp.split(inp.arange(6.0), np.int64(3))),
    lambda: inp.concatenate(inp.array_split(inp.arange(6.0), np.int64(4))),
])
def test_numpy_integers_are_shapes(make):
    assert int(np.prod(make().shape)) == 6
    assert all(type(d) is int for d in inert.jit(make)().shape)


def test_a_shape_that_is_not_one_is_a_clear_type_error():
    with pytest.raises(TypeError, match="full: a shape must be an integer"):
        inp.zeros("a")
    for make in (lambda n: inp.zeros(n), lambda n: inp.ones((n, 2)), lambda n: inp.arange(n)):
        with pytest.raises(inert.errors.ConcretizationError) as info:
            inert.jit(make)(3)
        assert __file__ in str(info.value)


def test_grad_of_a_complex_output_is_a_type_error():
    with pytest.raises(TypeError, match="requires real-valued outputs.*complex128"):
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


@pytest.mark.parametrize("sublists", [
    ([0, 1], [1, 0]), ([0, 1], "B", [1, 2], [0, 2]), ([Ellipsis, 1], [1, Ellipsis]),
    ([0, 1], "B", [1, 2]), ([Ellipsis, 0], "B", [0, 1], [Ellipsis, 1]),
])
def test_einsum_sublist_form(sublists):
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    args = lambda a, b: [a if s == "A" else b if s == "B" else s for s in ("A", *sublists)]
    np.testing.assert_allclose(inp.einsum(*args(A, B)), np.einsum(*args(A, B)), rtol=1e-12)
    check_grads(lambda a, b: inp.einsum(*args(a, b)), (A, B), rng)
    with pytest.raises(TypeError, match="sublist holds integers"):
        inp.einsum(A, [0, "x"])


def test_indexing_a_constant_with_a_traced_integer():
    t, x = inp.arange(5.0), np.arange(5.0) ** 2
    assert inert.jit(lambda i: t[i])(np.int64(2)) == 2.0
    assert inert.jit(lambda i: t[i, None])(np.int64(-1)) == 4.0
    np.testing.assert_array_equal(inert.vmap(lambda i: t[i])(np.array([3, 0, 1])), [3, 0, 1])
    grad_at = lambda a, i: inert.grad(lambda a: a[i] ** 2)(a)
    np.testing.assert_array_equal(inert.jit(grad_at)(x, 2), [0, 0, 8, 0, 0])
    np.testing.assert_array_equal(inert.vmap(grad_at, (None, 0))(x, np.array([1, 4])),
                                  [[0, 2, 0, 0, 0], [0, 0, 0, 0, 32]])


@pytest.mark.parametrize("shift, axis", [(2, None), (-7, 0), (3, 1), ((1, -2), (0, 1)),
                                         (0, -1)])
def test_roll_by_a_traced_shift(shift, axis):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4))
    s = np.asarray(shift)
    want = np.roll(x, shift, axis)
    np.testing.assert_array_equal(inert.jit(lambda x, s: inp.roll(x, s, axis))(x, s), want)
    check_grads(lambda x: inert.jit(lambda x, s: inp.roll(x, s, axis))(x, s), (x,), rng)
    if s.ndim == 0:
        shifts = np.array([shift, shift + 1])
        got = inert.vmap(lambda s: inp.roll(x, s, axis))(shifts)
        np.testing.assert_array_equal(got, [np.roll(x, k, axis) for k in shifts])


@pytest.mark.parametrize("num, endpoint, axis", [(5, True, 0), (4, False, -1), (1, True, 0),
                                                 (1, False, 1), (0, True, 0)])
def test_linspace_of_traced_bounds(num, endpoint, axis):
    rng = np.random.default_rng(3)
    start, stop = rng.standard_normal(2), rng.standard_normal(2) + 2.0
    f = lambda a, b: inp.linspace(a, b, num, endpoint=endpoint, axis=axis)
    np.testing.assert_allclose(inert.jit(f)(start, stop), f(start, stop), rtol=1e-14)
    got, step = inert.jit(lambda a: inp.linspace(a, 4.0, num, endpoint, retstep=True))(1.0)
    want, want_step = np.linspace(1.0, 4.0, num, endpoint, retstep=True)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(step, want_step, rtol=1e-14)
    if num > 1:
        check_grads(f, (start, stop), rng)
        assert inert.grad(lambda x: inp.sum(inp.linspace(0.0, x, 5)))(2.0) == 2.5
        np.testing.assert_allclose(inert.vmap(lambda b: f(start, b))(np.stack([stop, stop])),
                                   [f(start, stop)] * 2)
    assert inert.jit(lambda a: inp.linspace(a, 4.0, 3, dtype=np.int32))(1.0).dtype == np.int32


def test_a_traced_linspace_length_points_at_the_users_line():
    with pytest.raises(inert.errors.ConcretizationError) as info:
        inert.jit(lambda n: inp.linspace(0.0, 1.0, n))(3)
    assert __file__ in str(info.value)


def _at_updates(x, v):
    x, i = inp.asarray(x), np.array([0, 2, 0])
    return (x.at[i].multiply(v, unique_indices=False, indices_are_sorted=False),
            x.at[i].divide(v), x.at[1:].power(v, mode="promise_in_bounds"),
            x.at[i].add(v, unique_indices=True), x.at[i].set(v, indices_are_sorted=True),
            x.at[i].get(unique_indices=True) * v)


def test_index_updates_accept_jax_keywords_and_divide_and_power():
    x, v = np.array([1.5, 2.0, 3.0]), 2.0
    want = [x * [4, 1, 2], x / [4, 1, 2], x ** np.array([1, 2, 2]), x + [4, 0, 2],
            np.array([2.0, 2.0, 2.0]), x[[0, 2, 0]] * v]
    for got in (_at_updates(x, v), inert.jit(_at_updates)(x, v)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-14)
    rng = np.random.default_rng(4)
    check_grads(_at_updates, (x, v), rng)
    with pytest.raises(ValueError, match="unknown indexing mode 'wrap'"):
        inp.zeros(3).at[0].get(mode="wrap")


def test_grad_of_grad_through_a_scatter_of_a_product():
    """Found by tests/test_differential.py: the inner backward pass's zero for the
    overwritten update was taken for a linear value by the outer transpose, which then
    met a product of two linear values."""
    f = lambda x, y: inp.sum(inp.zeros(3).at[1].set((x * y)[0]) ** 2)
    g = lambda x, y: inp.vdot(inert.grad(f)(x, y), np.array([0.3, 0.2, 0.1]))
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    gx, gy = inert.grad(g, argnums=(0, 1))(x, y)  # g = 0.6 x0 y0^2
    np.testing.assert_allclose(gx, [0.6 * y[0] ** 2, 0, 0])
    np.testing.assert_allclose(gy, [1.2 * x[0] * y[0], 0, 0])
    check_grads(g, (x, y), np.random.default_rng(5))


@pytest.mark.parametrize("method, ufunc", [("min", np.minimum), ("max", np.maximum)])
def test_index_min_and_max(method, ufunc):
    rng = np.random.default_rng(6)
    x, u = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    i = np.array([0, 2, 0, 1])
    f = lambda x, u: getattr(inp.asarray(x).at[i], method)(u, unique_indices=False)
    want = x.copy()
    ufunc.at(want, i, u)
    np.testing.assert_array_equal(f(x, u), want)
    np.testing.assert_array_equal(inert.jit(f)(x, u), want)
    check_grads(f, (x, u), rng)
    np.testing.assert_allclose(inert.vmap(f, (None, 0))(x, np.stack([u, -u])),
                               [f(x, u), f(x, -u)])
    # a tie shares the derivative, as JAX does: x[0] and u[0] both attain the extremum
    tie = lambda x, u: inp.sum(getattr(inp.asarray(x).at[0], method)(u))
    assert inert.grad(tie, argnums=(0, 1))(np.array([1.0, 2.0]), 1.0)[1] == 0.5
