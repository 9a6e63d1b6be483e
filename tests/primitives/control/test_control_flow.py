"""cond, switch, scan, while_loop and fori_loop through every interpreter."""

import numpy as np
import pytest
from harness import assert_allclose, check_grads, check_jvp, check_staged, numerical_jvp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp
from inert.benchmarks.memory import reachable_array_bytes
from inert.errors import (
    ConcretizationError,
    DTypeError,
    NonDifferentiableError,
    TypeMismatchError,
)
from inert.primitives.control.cond import cond, switch
from inert.primitives.control.scan import scan
from inert.primitives.control.while_loop import fori_loop, while_loop


def rnn(W, h0, xs):
    def step(h, x):
        h = inp.tanh(W @ h + x)
        return h, h

    return inp.sum(scan(step, h0, xs)[0])


def rnn_numpy(W, h0, xs):
    h = h0
    for x in xs:
        h = np.tanh(W @ h + x)
    return h.sum()


def rnn_args(rng, T=6, H=4):
    return rng.standard_normal((H, H)) / 2, rng.standard_normal(H), rng.standard_normal((T, H))


def test_scan_value_and_grads(rng):
    args = rnn_args(rng)
    np.testing.assert_allclose(rnn(*args), rnn_numpy(*args))
    check_grads(rnn, args, rng, order=2)
    check_staged(rnn, args)


def test_scan_reverse_and_stacked_outputs(rng):
    xs = rng.standard_normal((5, 3))

    def f(c, xs):
        return scan(lambda c, x: (c * x + 1.0, inp.sin(c) * x), c, xs, reverse=True)

    carry, ys = f(np.ones(3), xs)
    c, want = np.ones(3), []
    for x in xs[::-1]:
        want.append(np.sin(c) * x)
        c = c * x + 1.0
    np.testing.assert_allclose(carry, c)
    np.testing.assert_allclose(ys, np.array(want[::-1]))
    check_grads(f, (np.ones(3), xs), rng)


@pytest.mark.parametrize("T,H", [(3, 2), (20, 5)])
def test_rnn_residuals_are_the_analytic_minimum(rng, T, H):
    W, h0, xs = rnn_args(rng, T, H)
    # W inactive: the T per-step tanh outputs, and W once (never T copies of W)
    infos = inert.saved_residuals(rnn, inert.Inactive(W), h0, xs)
    assert sum(r.nbytes for r in infos) == 8 * (T * H + H * H)
    # W active: the carry entering each step is the previous tanh output, not stacked again
    _, vjp_fn = inert.vjp(rnn, W, h0, xs)
    kept = sum(r.nbytes for r in vjp_fn.linear.residual_info)
    assert kept == 8 * ((T + 1) * H + H * H)
    assert reachable_array_bytes(vjp_fn) == kept


def test_loop_invariant_value_computed_once(rng):
    W, h0, xs = rnn_args(rng, 8, 3)

    def f(W, h0, xs):
        def step(h, x):
            return inp.tanh(W.T @ h * 2.0 + x), None  # W.T*2 depends on consts only

        return inp.sum(scan(step, h0, xs)[0])

    infos = inert.saved_residuals(f, inert.Inactive(W), h0, xs)
    assert sum(r.nbytes for r in infos) == 8 * (8 * 3 + 3 * 3)
    check_grads(f, (W, h0, xs), rng)


def test_integer_counter_is_never_saved():
    f = lambda x: fori_loop(0, 6, lambda i, v: v * 1.1 + inp.sin(v) * i, x)
    infos = inert.saved_residuals(f, 0.3)
    assert [r.aval.dtype for r in infos] == [np.float64]  # cos per step; no index stack


def test_long_scan_has_no_recursion_and_linear_residuals():
    def f(x, T):
        return scan(lambda c, _: (inp.sin(c) * 0.5 + 0.1, None), x, length=T)[0]

    for T in (1_000, 10_000, 100_000):
        infos = inert.saved_residuals(lambda x, T=T: f(x, T), 0.3)
        assert sum(r.nbytes for r in infos) == 8 * T
    g = inert.grad(lambda x: f(x, 100_000))(0.3)
    assert np.isfinite(g)


def test_cond_values_grads_and_only_taken_branch_residuals(rng):
    def f(x, y):
        return cond(inp.sum(x) > 0, lambda a, b: inp.sin(a) * b, lambda a, b: a * 2.0 + b, x, y)

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    for sign in (1, -1):
        xs = sign * np.abs(x)
        want = np.sin(xs) * y if sign > 0 else xs * 2 + y
        np.testing.assert_allclose(f(xs, y), want)
        check_grads(f, (xs, y), rng)
    infos = inert.saved_residuals(lambda x, y: inp.sum(f(x, y)), -np.abs(x), y)
    assert infos == []  # the linear branch keeps nothing


def test_switch_clamps_the_index(rng):
    branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: inp.sin(x)]
    x = rng.standard_normal(2)
    for i, want in [(-3, x + 1), (1, 2 * x), (7, np.sin(x))]:
        got = inert.jit(lambda i, x: switch(i, branches, x))(np.int32(i), x)
        np.testing.assert_allclose(got, want)


def test_cond_inside_scan_grads(rng):
    def g(xs):
        def step(c, x):
            c = cond(x > 0, lambda c: c * x, lambda c: c + inp.sin(x), c)
            return c, c

        return scan(step, 1.0, xs)[0]

    check_grads(g, (rng.standard_normal(6),), rng)


def test_while_loop_forward_mode_and_reverse_mode_error():
    f = lambda x: while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1 + inp.sin(c[1])),
                             (0, x))[1]
    _, t = inert.jvp(f, (0.3,), (1.0,))
    eps = 1e-6
    np.testing.assert_allclose(t, (f(0.3 + eps) - f(0.3 - eps)) / (2 * eps), rtol=1e-6)
    with pytest.raises(NonDifferentiableError, match="while_loop.*scan") as info:
        inert.grad(f)(0.3)
    assert __file__ in str(info.value)


def test_while_loop_linearizes_in_forward_mode(rng):
    """Only transposing needs the trip count: linearize (and jvp under jit, and jacfwd)
    of a while loop work, and agree with finite differences."""
    def f(x, w):
        def body(c):
            i, v = c
            return i + 1, inp.sin(v) * w + v * 0.5

        return while_loop(lambda c: (c[0] < 4) & (inp.sum(c[1]) < 50.0), body, (0, x))[1]

    x, w = rng.standard_normal(3), rng.standard_normal(3)
    check_jvp(f, (x, w), rng)
    tx, tw = rng.standard_normal(3), rng.standard_normal(3)
    out, f_jvp = inert.linearize(f, x, w)
    assert_allclose(out, f(x, w), rtol=1e-12)
    want = numerical_jvp(f, (x, w), (tx, tw))
    assert_allclose(f_jvp(tx, tw), want, rtol=1e-6, atol=1e-8)
    assert_allclose(inert.jit(lambda x, w: inert.jvp(f, (x, w), (tx, tw))[1])(x, w), want,
                    rtol=1e-6, atol=1e-8)
    assert_allclose(inert.jacfwd(f)(x, w), inert.jacfwd(lambda x: f(x, w))(x), rtol=1e-12)
    _, f_jvp = inert.linearize(lambda x: f(x, inert.stop_gradient(w)), x)  # w inactive
    assert_allclose(f_jvp(tx), numerical_jvp(lambda x: f(x, w), (x,), (tx,)), rtol=1e-6,
                    atol=1e-8)


def test_while_loop_inside_a_scan_linearizes():
    f = lambda xs: scan(lambda c, x: (fori_loop(0, np.int64(2) + 0 * c.astype(np.int64),
                                                lambda i, v: v * x + 1.0, c), None),
                        0.5, xs)[0]
    xs = np.array([0.3, -0.4, 0.8])
    _, f_jvp = inert.linearize(f, xs)
    t = np.array([1.0, 0.5, -2.0])
    assert_allclose(f_jvp(t), numerical_jvp(f, (xs,), (t,)), rtol=1e-6, atol=1e-8)
    with pytest.raises(NonDifferentiableError, match="while_loop.*linearize"):
        inert.grad(f)(xs)


def test_fori_loop_with_traced_bounds_is_a_while_loop():
    f = lambda n, x: fori_loop(0, n, lambda i, v: v * 2.0, x)
    np.testing.assert_allclose(inert.jit(f)(np.int64(3), 1.5), 12.0)
    with pytest.raises(NonDifferentiableError):
        inert.grad(lambda x: inert.jit(f)(np.int64(3), x))(1.5)


def test_nested_loops_and_grad_inside_a_body(rng):
    def inner(c, x):
        return scan(lambda d, y: (d * y + inp.sin(d), None), c, x)[0], None

    def f(c, xs):
        return scan(inner, c, xs)[0]

    check_grads(f, (0.4, rng.standard_normal((3, 4)) * 0.5), rng)

    def with_grad(x):
        step = lambda c, y: (c + inert.grad(lambda z: inp.sin(z * y))(c), None)
        return scan(step, x, np.array([0.5, 1.5]))[0]

    check_grads(with_grad, (0.3,), rng)
    scaled = lambda x: rnn(x * np.eye(2), np.ones(2), np.ones((3, 2)))
    eps = 1e-5
    fd = (inert.grad(scaled)(0.3 + eps) - inert.grad(scaled)(0.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(inert.grad(inert.grad(scaled))(0.3), fd, rtol=1e-5)


def test_inactive_and_stop_gradient_inside_bodies(rng):
    W, h0, xs = rnn_args(rng)
    g = inert.grad(rnn, argnums=1)(inert.Inactive(W), h0, xs)
    assert_allclose(g, inert.grad(rnn, argnums=1)(W, h0, xs))
    f = lambda x: scan(lambda c, _: (inert.stop_gradient(c) * c, None), x, length=3)[0]
    # c -> s*c with s = c frozen: each step multiplies the derivative by c's value (2, 4, 16)
    assert inert.grad(f)(2.0) == pytest.approx(2.0 * 4.0 * 16.0)


def test_bad_carry_and_branch_types():
    """Mismatches are TypeErrors, as in JAX, naming the shapes and the user's line."""
    with pytest.raises(TypeMismatchError, match="scan carry.*changes shape") as info:
        scan(lambda c, x: (inp.sum(c), x), np.ones(3), np.ones((2, 3)))
    assert __file__ in str(info.value)
    with pytest.raises(TypeMismatchError, match="changes dtype"):
        scan(lambda c, x: (c * 1.5, x), np.int64(1), np.ones(2))
    with pytest.raises(TypeMismatchError, match=r"while_loop carry.*f64\[2\] to f64\[3\]"):
        while_loop(lambda c: c[0] < 3, lambda c: inp.zeros(3), np.zeros(2))
    with pytest.raises(TypeMismatchError, match="cond branch outputs.*changes shape"):
        inert.make_jaxpr(lambda p, x: cond(p, lambda x: x, lambda x: inp.sum(x), x))(True,
                                                                                   np.ones(3))
    with pytest.raises(TypeMismatchError, match="cond: branches return different structures"):
        inert.jit(lambda p, x: cond(p, lambda x: x, lambda x: (x, x), x))(True, 1.0)
    with pytest.raises(DTypeError, match="switch: the index must be an integer"):
        switch(1.7, [lambda x: x, lambda x: 2 * x], 1.0)
    assert issubclass(TypeMismatchError, TypeError)


def test_a_concrete_predicate_still_checks_both_branches():
    with pytest.raises(TypeMismatchError, match=r"changes shape from f64\[3\] to f64\[\]") as info:
        cond(True, lambda a: a, lambda a: inp.zeros(3), 1.0)
    assert __file__ in str(info.value)
    with pytest.raises(TypeMismatchError, match="structures"):
        switch(0, [lambda a: a, lambda a: (a, a)], 1.0)


def test_branches_of_different_strong_dtypes_are_refused_not_cast():
    f = lambda x: cond(x > 0, lambda a: a, lambda a: (a > 1).astype(inp.int32), x)
    for g in (inert.jit(f), f):
        with pytest.raises(TypeMismatchError, match=r"value 0 .*i32\[\], f64\[\]"):
            g(1.7)


def test_a_weakly_typed_initial_carry_takes_the_body_dtype():
    """As in JAX: `fori_loop(0, n, lambda i, c: c + 1.5, 0)` is a float loop."""
    assert fori_loop(0, 3, lambda i, c: c + 1.5, 0) == 4.5
    x = np.float32(1.5)
    for f in (lambda x: scan(lambda c, _: (c + x, None), 1, None, length=3)[0],
              lambda x: while_loop(lambda c: c < 3, lambda c: c + x, 0),
              lambda x: fori_loop(0, 3, lambda i, c: c * x, 1.0)):
        out = inert.jit(f)(x)
        assert out.dtype == np.float32 and out == f(x)
    assert inert.grad(lambda x: fori_loop(0, 3, lambda i, c: c * x + 1.0, 1))(2.0) == 17.0
    with pytest.raises(TypeMismatchError, match="changes dtype"):  # a strong one stays
        fori_loop(0, 3, lambda i, c: c + 1.5, np.int64(0))


def test_a_loop_over_a_python_float_stays_weakly_typed_as_in_jax():
    """A carry that starts as a Python float and stays weakly typed through the body is
    weakly typed after the loop: a float32 array times it is float32 (JAX's dtypes),
    eagerly, under jit on either backend and in the staged types. A strong body result
    makes the carry strong."""
    x = np.ones(3, np.float32)
    cases = [
        (lambda c, x: x * while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 1.0, c),
         np.float32),
        (lambda c, x: x * fori_loop(0, 3, lambda i, v: v * 2.0, inp.sin(c)), np.float32),
        (lambda c, x: x * scan(lambda v, _: (v * 2.0, None), c, length=3)[0], np.float32),
        (lambda c, x: x * fori_loop(0, 3, lambda i, v: v * np.float64(2.0), c), np.float64),
    ]
    for f, want in cases:
        staged = inert.make_jaxpr(f)(0.5, x).jaxpr.outvars[0].aval.dtype
        dtypes = {f(0.5, x).dtype, staged, *(inert.jit(f, backend=backend)(0.5, x).dtype
                                             for backend in ("numpy", "numba"))}
        assert dtypes == {np.dtype(want)}


def test_eager_cond_hands_branches_arrays():
    seen = []
    cond(True, lambda a: seen.append(a) or a, lambda a: a, 1.0)
    switch(1, [lambda a: a, lambda a: seen.append(a) or a], 2)
    assert all(hasattr(a, "shape") and hasattr(a, "dtype") for a in seen) and len(seen) == 2


def test_weakly_typed_branch_outputs_take_the_other_branch_type():
    f = inert.jit(lambda w: inert.lax.cond(w > 0, lambda: w, lambda: 2.0))
    for w in (np.float32(0.7), np.float32(-0.7)):
        out = f(w)
        assert out.dtype == np.float32 and out == (w if w > 0 else 2.0)


def test_python_if_on_traced_value_names_cond():
    def f(x):
        return x if x > 0 else -x

    with pytest.raises(ConcretizationError, match="cond"):
        inert.make_jaxpr(f)(1.0)


_BODY_OPS = [lambda c, x: c * x, lambda c, x: inp.sin(c) + x, lambda c, x: inp.tanh(c * 0.5),
             lambda c, x: c * c * 0.1 + x, lambda c, x: inp.where(c > 0, c, x * c)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, len(_BODY_OPS) - 1), min_size=1, max_size=3),
       st.integers(1, 5), st.booleans(), st.integers(0, 2**31 - 1))
def test_random_loop_bodies(ops, T, reverse, seed):
    rng = np.random.default_rng(seed)

    def f(c, xs):
        def step(c, x):
            for i in ops:
                c = _BODY_OPS[i](c, x)
            return c, c * x

        return scan(step, c, xs, reverse=reverse)

    check_grads(f, (rng.standard_normal(2) * 0.5, rng.standard_normal((T, 2)) * 0.5), rng)


def test_scan_whose_next_carry_is_a_scanned_input(rng):
    def loss(w, xs):
        return inp.sum(inert.lax.scan(lambda c, x: (x, c * w + x * w), 0.5, xs)[1])

    assert inert.grad(loss)(2.0, np.arange(1.0, 5.0)) == pytest.approx(16.5)
    check_grads(loss, (2.0, rng.standard_normal(4)), rng)


def test_empty_scan_differentiates():
    f = lambda w: inp.sum(scan(lambda c, x: (inp.tanh(c * w), inp.tanh(c * w)), w, None,
                               length=0)[1])
    assert inert.grad(f)(0.7) == 0.0


def test_final_carry_is_not_kept_twice(rng):
    W, h0, xs = rnn_args(rng, 7, 3)

    def loss(W, h0, xs):
        h_T = scan(lambda h, x: (inp.tanh(W @ h + x), None), h0, xs)[0]
        return inp.sum(h_T ** 2)

    infos = inert.saved_residuals(loss, inert.Inactive(W), h0, xs)
    assert sum(r.nbytes for r in infos) == 8 * (7 * 3 + 3 * 3)
    check_grads(loss, (W, h0, xs), rng)


def test_reverse_mode_under_jit_with_cond():
    f = lambda x: inert.lax.cond(x > 0, lambda y: inp.sin(y) * y, lambda y: inp.cos(y), x)
    for x in (0.5, -0.5):
        np.testing.assert_allclose(inert.jit(inert.grad(f))(x), inert.grad(f)(x))
    np.testing.assert_allclose(inert.jit(inert.grad(f))(0.5), np.cos(0.5) * 0.5 + np.sin(0.5))
