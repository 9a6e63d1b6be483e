"""The check every `inert.numpy` test applies: the same value *and dtype* as numpy,
evaluated eagerly and from a staged jaxpr, and (for float inputs) correct jvp and
vjp."""

from __future__ import annotations

import numpy as np
from harness import check_grads

import inert
from inert.core.check import check_jaxpr
from inert.tree_util import tree_flatten, tree_unflatten


def assert_like_numpy(got, want, rtol=1e-7, atol=1e-10):
    """Same pytree structure, and leaf by leaf the same shape, dtype and values."""
    got_leaves, got_tree = tree_flatten(got)
    want_leaves, want_tree = tree_flatten(want)
    assert got_tree == want_tree, f"structures differ: {got_tree} vs {want_tree}"
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"shape {g.shape}, numpy's {w.shape}"
        assert g.dtype == w.dtype, f"dtype {g.dtype}, numpy's {w.dtype}"
        if w.dtype.kind in "fc":
            tol = max(rtol, 10 * np.finfo(w.dtype).eps)
            np.testing.assert_allclose(g, w, rtol=tol, atol=max(atol, tol))
        else:
            np.testing.assert_array_equal(g, w)


def staged(f, *args):
    """`f(*args)` computed by evaluating its checked jaxpr."""
    closed = inert.make_jaxpr(f)(*args)
    check_jaxpr(closed)
    leaves, _ = tree_flatten(args)
    _, out_tree = tree_flatten(f(*args))
    return tree_unflatten(out_tree, inert.eval_jaxpr(closed.jaxpr, closed.consts, leaves))


def check_like_numpy(f, reference, args, rng=None, grad=False, rtol=1e-7):
    """`f` agrees with `reference` (numpy) eagerly and staged; with `grad`, its jvp and
    vjp are checked against finite differences and each other."""
    want = reference(*args)
    assert_like_numpy(f(*args), want, rtol)
    assert_like_numpy(staged(f, *args), want, rtol)
    if grad:
        check_grads(f, args, rng)


def _differentiable_positions(args) -> list[int]:
    """The positions of float64 array arguments (or lists of arrays): the ones a case
    differentiates; the rest are closed over."""
    def is_array(a):
        return isinstance(a, np.ndarray) and a.dtype.kind == "f" or (
            isinstance(a, list) and all(isinstance(x, np.ndarray) for x in a))
    return [i for i, a in enumerate(args) if is_array(a)]


def check_numpy_case(name, args, kwargs, rng, namespace):
    """`namespace.name(*args, **kwargs)` against numpy's function of that name, with
    derivatives in its float64 array arguments."""
    positions = _differentiable_positions(args)

    def call(fn):
        def f(*arrays):
            full = list(args)
            for i, a in zip(positions, arrays):
                full[i] = a
            return fn(*full, **kwargs)
        return f

    arrays = tuple(args[i] for i in positions)
    leaves = tree_flatten(arrays)[0]
    outputs = tree_flatten(call(getattr(np, name))(*arrays))[0]
    grad = bool(leaves) and all(a.dtype == np.float64 for a in leaves) and all(
        np.asarray(o).dtype.kind == "f" for o in outputs)  # integer results: values only
    check_like_numpy(call(getattr(namespace, name)), call(getattr(np, name)), arrays, rng, grad)
