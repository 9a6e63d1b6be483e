"""Shared checks for tests: values against numpy, derivatives against finite
differences, transposes by the inner-product identity `<J v, u> = <v, Jᵀ u>`."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import inert
from inert.core.check import check_jaxpr
from inert.core.trace import get_aval
from inert.tree_util import tree_flatten, tree_map, tree_unflatten

EPS = 1e-6


def random_like(x, rng):
    """Standard normal values of x's shape and dtype (complex: both parts random, so a
    tangent moves along the real and the imaginary directions at once)."""
    aval = get_aval(x)
    values = rng.standard_normal(aval.shape)
    if aval.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(aval.shape)
    return values.astype(aval.dtype)


def _wide(x) -> np.ndarray:
    """x in float64, or complex128 if it is complex."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def is_float_leaf(x) -> bool:
    return np.issubdtype(get_aval(x).dtype, np.inexact)


def numerical_jvp(f, args, tangents, eps=EPS):
    """Central differences of f (pytree in/out) at args along tangents."""
    plus = tree_map(lambda x, t: x + eps * t if is_float_leaf(x) else x, args, tangents)
    minus = tree_map(lambda x, t: x - eps * t if is_float_leaf(x) else x, args, tangents)
    return tree_map(lambda a, b: (_wide(a) - b) / (2 * eps),
                    f(*plus), f(*minus))


def _float_tangents(args, rng):
    return tuple(tree_map(lambda x: random_like(x, rng) if is_float_leaf(x) else
                          np.zeros(np.shape(x), inert.float0), a) for a in args)


def assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=""):
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb, f"structures differ: {ta} vs {tb}"
    for x, y in zip(la, lb):
        np.testing.assert_allclose(_wide(x), _wide(y),
                                   rtol=rtol, atol=atol, err_msg=err_msg)


def check_jvp(f, args, rng, rtol=1e-5, atol=1e-5):
    """jvp against central finite differences, and its primal against f."""
    tangents = _float_tangents(args, rng)
    out, out_t = inert.jvp(f, args, tangents)
    assert_allclose(out, f(*args), rtol=1e-12, atol=1e-12)
    assert_allclose(out_t, numerical_jvp(f, args, tangents), rtol=rtol, atol=atol)


def _inner(a, b) -> float:
    """Sum of elementwise products of matching leaves (a None cotangent counts 0); of
    complex ones the real part, with no conjugation: the pairing for which inert's (and
    JAX's) transposes are transposes."""
    la, _ = tree_flatten(a, is_leaf=lambda x: x is None)
    lb, _ = tree_flatten(b, is_leaf=lambda x: x is None)
    return float(sum(np.real(np.sum(_wide(x) * _wide(y)))
                     for x, y in zip(la, lb) if x is not None and y is not None
                     and np.asarray(x).dtype != inert.float0))


def check_vjp(f, args, rng, rtol=1e-7, atol=1e-9):
    """The dot-product test: <J v, u> computed by jvp equals <v, Jᵀ u> by vjp."""
    tangents = _float_tangents(args, rng)
    out, out_t = inert.jvp(f, args, tangents)
    out2, vjp_fn = inert.vjp(f, *args)
    assert_allclose(out2, out, rtol=1e-12, atol=1e-12)
    u = tree_map(lambda y: random_like(y, rng) if is_float_leaf(y) else
                 np.zeros(np.shape(y), inert.float0), out)
    cts = vjp_fn(u)
    _check_types_like(cts, args, "cotangent")
    _check_types_like(out_t, out, "tangent")
    lhs = _inner(out_t, u)
    rhs = _inner(tangents, cts)
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol)


def _check_types_like(derivatives, primals, what: str) -> None:
    """Each float primal's (co)tangent has its shape and dtype."""
    ds, _ = tree_flatten(derivatives, is_leaf=lambda x: x is None)
    ps, _ = tree_flatten(primals)
    for d, p in zip(ds, ps):
        if d is None or not is_float_leaf(p):
            continue
        want, got = get_aval(p), get_aval(d)
        assert got.shape == want.shape, f"{what} shape {got.shape}, primal {want.shape}"
        assert got.dtype == want.dtype or want.weak_type, \
            f"{what} dtype {got.dtype}, primal {want.dtype}"


def check_staged(f, args, rtol=1e-12, atol=1e-12):
    """make_jaxpr gives a well-typed jaxpr that evaluates to f's value."""
    closed = inert.make_jaxpr(f)(*args)
    check_jaxpr(closed)
    leaves, _ = tree_flatten(args)
    got = inert.eval_jaxpr(closed.jaxpr, closed.consts, leaves)
    want, tree = tree_flatten(f(*args))
    assert_allclose(tree_unflatten(tree, got), tree_unflatten(tree, want), rtol=rtol,
                    atol=atol)


def check_abstract_eval(prim, args, params):
    """The primitive's abstract eval agrees with its impl on shape and dtype."""
    from inert.core.trace import abstract_eval, impl_rules  # noqa: PLC0415

    out = impl_rules[prim](*args, **params)
    outs = out if prim.multiple_results else [out]
    avals = abstract_eval(prim, [get_aval(a) for a in args], params)
    for o, a in zip(outs, avals):
        o = np.asarray(o)
        assert o.shape == tuple(a.shape), f"{prim}: impl shape {o.shape}, abstract {a.shape}"
        assert o.dtype == a.dtype, f"{prim}: impl dtype {o.dtype}, abstract {a.dtype}"


def check_grads(f, args, rng, order=1, rtol=1e-5, atol=1e-5):
    """jvp and vjp of f (and, for order 2, of its jvp and vjp) are right."""
    check_jvp(f, args, rng, rtol=rtol, atol=atol)
    check_vjp(f, args, rng)
    if order > 1:
        tangents = _float_tangents(args, rng)
        df = lambda *xs: inert.jvp(f, xs, tangents)[1]  # noqa: E731
        check_grads(df, args, rng, order - 1, rtol=rtol * 10, atol=atol * 10)


def check_jit_backends(f, args, rtol=None):
    """`jit(f)` gives f's value with each backend: the same dtypes and shapes, values to
    1e-12 relative in float64 (1e-5 in float32), or to `rtol` (0: bit for bit), NaN
    where numpy has NaN."""
    want = tree_flatten(f(*args))[0]
    for backend in ("numpy", "numba"):
        got = tree_flatten(inert.jit(f, backend=backend)(*args))[0]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape, (backend, g.dtype, w.dtype)
            tol = (1e-5 if g.dtype in (np.float32,) else 1e-12) if rtol is None else rtol
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"jit backend {backend}")


def printed_by_a_new_process(script: str, cache_dir) -> list[str]:
    """The words `script` prints, run by a new Python with its kernel cache in
    `cache_dir`: what a second process finds there."""
    env = dict(os.environ, INERT_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", script], env=env, check=True,
                          capture_output=True, text=True).stdout.split()


def checkpoint_policies(cp) -> dict:
    """Every checkpoint policy, by a name, from `cp` (inert's `checkpoint_policies` or
    JAX's): the table the policy tests share."""
    return {
        "nothing_saveable": cp.nothing_saveable,
        "everything_saveable": cp.everything_saveable,
        "dots_saveable": cp.dots_saveable,
        "dots_with_no_batch_dims_saveable": cp.dots_with_no_batch_dims_saveable,
        "save_only_these_names('a')": cp.save_only_these_names("a"),
        "save_any_names_but_these('a')": cp.save_any_names_but_these("a"),
        "save_anything_except_these_names('a')": cp.save_anything_except_these_names("a"),
        "both(dots_with_no_batch_dims, only('b'))": cp.save_from_both_policies(
            cp.dots_with_no_batch_dims_saveable, cp.save_only_these_names("b")),
    }
