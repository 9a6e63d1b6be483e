"""What inert returns is an immutable `inert.numpy` Array that shares no buffer the
user can still write: from every transform, eager namespace function, and for
values a transform leaves untraced."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert import lax
from inert.errors import ImmutableArrayError

X = np.array([0.5, 1.5, 2.5])


def _f(x):
    return jnp.sum(jnp.sin(x) * x)


_custom_jvp_sin = inert.custom_jvp(jnp.sin)
_custom_jvp_sin.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.cos(p[0]) * t[0]))
_custom_vjp_sin = inert.custom_vjp(jnp.sin)
_custom_vjp_sin.defvjp(lambda x: (jnp.sin(x), x), lambda x, ct: (jnp.cos(x) * ct,))

RESULTS = {
    "jit": lambda: inert.jit(lambda x: x * 2)(X),
    "jit scalar": lambda: inert.jit(_f)(X),
    "jit constant": lambda: inert.jit(lambda x: np.ones(2))(X),
    "grad": lambda: inert.grad(_f)(X),
    "grad of a scalar": lambda: inert.grad(lambda x: x * x)(1.5),
    "value_and_grad": lambda: inert.value_and_grad(_f)(X),
    "vjp": lambda: inert.vjp(jnp.sin, X)[0],
    "vjp cotangent": lambda: inert.vjp(jnp.sin, X)[1](np.ones(3)),
    "jvp": lambda: inert.jvp(jnp.sin, (X,), (np.ones(3),)),
    "linearize": lambda: inert.linearize(jnp.sin, X)[0],
    "linearize tangent": lambda: inert.linearize(jnp.sin, X)[1](np.ones(3)),
    "linear_transpose": lambda: inert.linear_transpose(lambda x: 2.0 * x, X)(X),
    "vmap": lambda: inert.vmap(jnp.sin)(X),
    "vmap of a constant": lambda: inert.vmap(lambda x: 2.0, out_axes=None)(X),
    "jacfwd": lambda: inert.jacfwd(jnp.sin)(X),
    "jacrev": lambda: inert.jacrev(jnp.sin)(X),
    "hessian": lambda: inert.hessian(_f)(X),
    "numpy": lambda: jnp.cos(X),
    "numpy scalar": lambda: jnp.sum(X),
    "linalg.norm": lambda: jnp.linalg.norm(X),
    "scipy.special": lambda: inert.scipy.special.logsumexp(X),
    "dynamic_slice": lambda: lax.dynamic_slice(X, (1,), (2,)),
    "dynamic_update_slice": lambda: lax.dynamic_update_slice(X, np.zeros(1), (1,)),
    "select_n": lambda: lax.select_n(X > 1, X, -X),
    "cumsum": lambda: lax.cumsum(X),
    "pad": lambda: lax.pad(X, 0.0, [(1, 1, 0)]),
    "broadcast_in_dim": lambda: lax.broadcast_in_dim(X, (2, 3), (1,)),
    "slice": lambda: lax.slice(X, (1,), (3,)),
    "scan": lambda: lax.scan(lambda c, x: (c + x, X), 0.0, X),
    "fori_loop": lambda: lax.fori_loop(0, 2, lambda i, v: v, X),
    "cond": lambda: lax.cond(True, lambda: X, lambda: X),
    "checkpoint": lambda: inert.checkpoint(jnp.sin)(X),
    "custom_jvp": lambda: _custom_jvp_sin(X),
    "custom_vjp": lambda: _custom_vjp_sin(X),
    "stop_gradient": lambda: inert.stop_gradient(X),
    "freeze": lambda: inert.freeze(inert.new_ref(X)),
    "ref get": lambda: inert.ref.get(inert.new_ref(X), slice(1, None)),
    ".at": lambda: jnp.zeros(3).at[0].set(1.0),
}


def _leaves(tree):
    return inert.tree_util.tree_leaves(tree)


@pytest.mark.parametrize("name", RESULTS)
def test_every_returned_value_is_an_immutable_array(name):
    for value in _leaves(RESULTS[name]()):
        assert type(value) is jnp.Array, (name, type(value))
        assert not value.flags.writeable and value.block_until_ready() is value
        with pytest.raises(ImmutableArrayError, match=r"\.at\[idx\]\.set") as info:
            value[...] = 0
        assert isinstance(info.value, TypeError) and __file__ in str(info.value)
        with pytest.raises(ImmutableArrayError, match="full_like"):
            value.fill(0)


def test_scalars_are_0d_arrays_and_python_scalars_stay_weak():
    assert jnp.sum(X).shape == () and float(jnp.sum(X)) == pytest.approx(X.sum())
    assert f"{inert.grad(lambda x: x * x)(1.5):.1f}" == "3.0"
    assert type(jnp.sin(1.0)) is float  # weakly typed: float32 stays float32 with it
    assert jnp.shape(np.ones((2, 3))) == (2, 3) and type(jnp.shape(X)[0]) is int
    assert (np.ones(2, np.float32) * jnp.sin(1.0)).dtype == np.float32


def test_untraced_values_under_a_transform_are_arrays():
    seen = []

    def f(x):
        inner = inert.jit(lambda: np.ones(3))()  # a constant output: not traced
        seen.append(inner)
        return jnp.sum(inner.at[0].set(x))

    assert inert.grad(f)(2.0) == 1.0
    assert type(seen[0]) is jnp.Array


def test_in_place_operators_rebind_and_at_works():
    w = inert.jit(lambda x: x * 2)(X)
    h = [w]
    w -= np.ones(3)
    np.testing.assert_array_equal(h[0], X * 2)
    np.testing.assert_array_equal(w, X * 2 - 1)
    np.testing.assert_array_equal(inert.jit(lambda x: x * 2)(X).at[0].set(0.0), [0, 3, 5])


@pytest.mark.parametrize("make", [
    jnp.asarray, jnp.array, lambda a: jnp.reshape(a, (3,)), lambda a: a.view(jnp.Array),
    inert.jit(lambda x: x), lambda a: inert.vjp(lambda x: x, a)[0],
    lambda a: inert.vjp(lambda x: x, np.zeros(3))[1](a)[0],
    lambda a: inert.jvp(lambda x: x, (np.zeros(3),), (a,))[1],
    lambda a: inert.linearize(lambda x: x, np.zeros(3))[1](a),
    lambda a: inert.linear_transpose(lambda x: x, np.zeros(3))(a)[0],
    lambda a: inert.vmap(lambda x: x)(a), lambda a: inert.jit(lambda: a)(),
    inert.stop_gradient, inert.checkpoint(lambda x: x),
], ids=["asarray", "array", "reshape", "asarray of a user's Array", "jit", "vjp",
        "vjp cotangent", "jvp tangent", "linearize tangent", "linear_transpose", "vmap",
        "jit closure",
        "stop_gradient", "checkpoint"])
def test_no_value_shares_a_buffer_the_user_can_write(make):
    a = np.arange(3.0)
    value = jnp.asarray(make(a))
    a[0] = 99.0
    np.testing.assert_array_equal(value, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("make", [
    lambda c: inert.jvp(lambda x: (x, c), (X,), (X,))[0][1],
    lambda c: inert.vmap(lambda x: c, out_axes=None)(X),
    lambda c: inert.vmap(lambda x: (x, c))(X)[1],
    lambda c: inert.vjp(lambda x: (x, c), X)[0][1],
    lambda c: inert.linearize(lambda x: (x, c), X)[0][1],
    lambda c: inert.jacfwd(lambda x: (x, c), has_aux=True)(X)[1],
    lambda c: inert.grad(lambda x: (jnp.sum(x), c), has_aux=True)(X)[1],
    lambda c: inert.jit(lambda x: (x, c))(X)[1],
], ids=["jvp", "vmap unmapped", "vmap stacked", "vjp", "linearize", "jacfwd aux",
        "grad aux", "jit"])
def test_a_closed_over_array_returned_is_not_shared(make):
    c = np.arange(3.0)
    value = make(c)
    c[0] = 99.0
    np.testing.assert_array_equal(value, np.broadcast_to([0.0, 1.0, 2.0], value.shape))


def test_numpy_functions_work_on_arrays_by_numpys_rules():
    w = inert.jit(lambda x: x * 2)(X)
    for f in (np.mean, np.var, np.std, np.median, np.average, np.nanmean, np.sort):
        np.testing.assert_allclose(f(w), f(X * 2))
    assert np.var(w, axis=0).shape == () and w.std() == np.std(X * 2)
    assert type(w + 1) is jnp.Array and (w + 1).at[0].set(0.0)[0] == 0.0
    assert type(np.concatenate([w, w])) is np.ndarray  # numpy's function, numpy's array
    buffer = np.zeros_like(w)
    buffer[0] = 1.0  # an array numpy made is numpy's: writeable
    np.testing.assert_array_equal(w, X * 2)


def test_arrays_are_not_copied_again():
    w = jnp.ones(3)
    for view in (jnp.asarray(w), jnp.reshape(w, (3, 1)), inert.jit(lambda x: x)(w)):
        assert np.shares_memory(view, w)
