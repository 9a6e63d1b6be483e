"""custom_jvp: a hand-written derivative rule, used by every transformation."""

import functools

import numpy as np
import pytest
from harness import check_grads

import inert
import inert.numpy as inp
from inert import lax
from inert.errors import NonDifferentiableError


@inert.custom_jvp
def log1pexp(x):
    return inp.log1p(inp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1 - 1 / (1 + inp.exp(x)))


def test_the_rule_replaces_the_body_derivative():
    x = np.array([0.0, 10.0, 1000.0])  # exp(1000) overflows: the body's own jvp is NaN
    with np.errstate(over="ignore"):
        g = inert.grad(lambda x: inp.sum(log1pexp(x)))(x)
        _, t = inert.jvp(log1pexp, (x,), (np.ones(3),))
    np.testing.assert_allclose(g, [0.5, 1 / (1 + np.exp(-10.0)), 1.0])
    np.testing.assert_allclose(t, g)


def test_every_transformation_uses_the_rule(rng):
    x = rng.standard_normal(4)
    want = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(inert.vmap(inert.grad(log1pexp))(x), want)
    np.testing.assert_allclose(inert.grad(lambda x: inp.sum(inert.vmap(log1pexp)(x)))(x), want)
    np.testing.assert_allclose(inert.jit(inert.grad(lambda x: inp.sum(log1pexp(x))))(x), want)
    h = inert.hessian(lambda x: inp.sum(log1pexp(x)))(x)
    np.testing.assert_allclose(h, np.diag(want * (1 - want)), atol=1e-12)
    scanned = lambda c: lax.scan(lambda c, _: (log1pexp(c) * 0.5, None), c, length=3)[0]
    check_grads(scanned, (x,), rng)


def test_a_rule_that_differs_from_the_body_is_what_counts():
    @inert.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, _) = primals, tangents
        return f(x, y), 2.0 * tx  # deliberately not the product rule

    assert inert.grad(f, argnums=(0, 1))(3.0, 4.0) == (2.0, 0.0)


def test_errors():
    @inert.custom_jvp
    def no_rule(x):
        return x

    with pytest.raises(TypeError, match="has no rule"):
        no_rule(1.0)

    def closes_over_active(w):
        @inert.custom_jvp
        def g(x):
            return x * w

        g.defjvp(lambda p, t: (g(*p), t[0] * w))
        return g(2.0)

    with pytest.raises(NonDifferentiableError, match="closes over a value being differentiated"):
        inert.grad(closes_over_active)(3.0)


def test_a_rule_applying_the_function_to_tangents_transposes():
    @inert.custom_jvp
    def double(x):
        return x * 2.0

    @double.defjvp
    def double_jvp(primals, tangents):
        return double(primals[0]), double(tangents[0])

    assert inert.grad(double)(1.0) == 2.0


def test_rules_returning_wrong_tangents_or_closing_over_inner_tracers_are_errors():
    from inert.errors import EscapedTracerError, TypeMismatchError

    @inert.custom_jvp
    def f(x):
        return x * 2.0

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), inp.sum(tangents[0])

    with pytest.raises(TypeMismatchError, match="tangents"):
        inert.jvp(f, (np.ones(3),), (np.ones(3),))

    def closes_over(y, x):
        @inert.custom_jvp
        def g(x):
            return inp.sin(x) * y

        g.defjvp(lambda p, t: (g(p[0]), inp.cos(p[0]) * y * t[0]))
        return g(x)

    ys, xs = np.array([1.0, 2.0]), np.array([0.5, 0.5])
    with pytest.raises(EscapedTracerError, match="pass that value"):
        inert.jvp(lambda x: inert.vmap(closes_over)(ys, x), (xs,), (np.ones(2),))
    with pytest.raises(EscapedTracerError, match="pass that value"):
        inert.grad(inert.jit(closes_over), argnums=1)(2.0, 0.5)
    # the other order is fine: the rule runs inside vmap
    np.testing.assert_allclose(inert.vmap(inert.grad(closes_over, argnums=1))(ys, xs),
                               np.cos(0.5) * ys)


# ---------------------------------------------------------------------------------
# custom_vjp


@inert.custom_vjp
def clip_gradient(x, bound):
    return x


def _clip_fwd(x, bound):
    return x, (bound,)


def _clip_bwd(res, ct):
    (bound,) = res
    return inp.clip(ct, -bound, bound), None


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@inert.custom_vjp
def safe_log(x):
    return inp.log(x)


safe_log.defvjp(lambda x: (safe_log(x), (x,)), lambda res, ct: (ct / res[0],))


def test_custom_vjp_uses_bwd_and_keeps_what_fwd_returns():
    f = lambda x: inp.sum(clip_gradient(x, 0.5) * np.array([1.0, 2.0, -3.0]))
    np.testing.assert_array_equal(inert.grad(f)(np.ones(3)), [0.5, 0.5, -0.5])
    infos = inert.saved_residuals(f, np.ones(3))
    assert sum(r.nbytes for r in infos) == 24  # the weights of the product; bwd needs no x


def test_custom_vjp_under_every_reverse_transformation():
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(inert.grad(lambda x: inp.sum(safe_log(x)))(x), 1 / x)
    np.testing.assert_allclose(inert.vmap(inert.grad(safe_log))(x), 1 / x)
    np.testing.assert_allclose(inert.grad(lambda x: inp.sum(inert.vmap(safe_log)(x)))(x), 1 / x)
    np.testing.assert_allclose(inert.jacrev(safe_log)(x), np.diag(1 / x))
    np.testing.assert_allclose(inert.jit(inert.grad(lambda x: inp.sum(safe_log(x))))(x), 1 / x)
    assert inert.grad(inert.grad(safe_log))(2.0) == pytest.approx(-0.25)
    w = np.array([1.0, 2.0])
    g = inert.grad(lambda w: inp.sum(inert.vmap(lambda xi: safe_log(xi * w[0]))(x)))(w)
    np.testing.assert_allclose(g, [3.0, 0.0])  # an unbatched argument sums its lanes


def test_custom_vjp_refuses_forward_mode_and_missing_rules():
    with pytest.raises(TypeError, match="forward-mode"):
        inert.jvp(safe_log, (np.ones(2),), (np.ones(2),))

    @inert.custom_vjp
    def no_rule(x):
        return x

    with pytest.raises(TypeError, match="has no rule"):
        no_rule(1.0)


def _sign_flip(x):
    if x > 0:  # Python control flow on the input: fine when nothing traces it
        return x
    return -x


def test_called_with_no_transformation_the_function_just_runs():
    f = inert.custom_jvp(_sign_flip)
    f.defjvp(lambda p, t: (f(p[0]), t[0]))
    g = inert.custom_vjp(_sign_flip)
    g.defvjp(lambda x: (g(x), None), lambda res, ct: (ct,))
    for h in (f, g):
        assert h(2.0) == 2.0 and h(-3.0) == 3.0


def _custom_vjp_with_bwd(bwd):
    @inert.custom_vjp
    def h(x, n):
        return x * 2.0

    h.defvjp(lambda x, n: (h(x, n), None), bwd)
    return lambda x: inp.sum(h(x, 1))


@pytest.mark.parametrize("bwd, error, message", [
    (lambda r, c: (inp.ones(4), None), "ShapeError",
     r"bwd <lambda> \(defined at .*\): the cotangent of argument 0 has shape f64\[4\], "
     r"but the argument is f64\[3\]"),
    (lambda r, c: (1.0, None), "ShapeError", r"argument 0 has shape f64\[\]"),
    (lambda r, c: (inp.ones(3, np.int32), None), "DTypeError", r"i32\[3\], not a float"),
    (lambda r, c: (inp.ones(3),), "TypeMismatchError", "a tuple of 2 cotangents"),
    (lambda r, c: ((inp.ones(3), 1.0), None), "TypeMismatchError", "argument 0 has structure"),
])
def test_custom_vjp_bwd_outputs_are_checked(bwd, error, message):
    with pytest.raises(getattr(inert.errors, error), match=message) as info:
        inert.grad(_custom_vjp_with_bwd(bwd))(np.ones(3))
    assert __file__ in str(info.value)


def test_custom_vjp_bwd_float_cotangents_take_the_argument_dtype():
    f = _custom_vjp_with_bwd(lambda r, c: (inp.ones(3, np.float32) * 2.0, 7.0))
    g = inert.grad(f)(np.ones(3))
    assert g.dtype == np.float64 and np.all(g == 2.0)
    np.testing.assert_allclose(inert.vmap(inert.grad(f))(np.ones((2, 3))), np.full((2, 3), 2.0))


# ---------------------------------------------------------------------------------
# defjvps and nondiff_argnums


@inert.custom_jvp
def scaled_sin(x, y):
    return x * inp.sin(y)


scaled_sin.defjvps(lambda tx, out, x, y: tx * inp.sin(y),
                   lambda ty, out, x, y: ty * x * inp.cos(y))


def test_defjvps_sums_one_rule_per_argument(rng):
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    check_grads(scaled_sin, (x, y), rng, order=2)
    gx = inert.grad(lambda x: inp.sum(scaled_sin(x, y)))(x)
    np.testing.assert_allclose(gx, np.sin(y))


def test_defjvps_with_a_none_rule_gives_that_argument_no_tangent():
    @inert.custom_jvp
    def f(x, n):
        return x * n

    f.defjvps(lambda t, out, x, n: t * n, None)
    assert inert.grad(f, argnums=(0, 1))(2.0, 3.0) == (3.0, 0.0)


def test_custom_jvp_nondiff_argnums_pass_functions_to_the_rule():
    @functools.partial(inert.custom_jvp, nondiff_argnums=(0,))
    def apply(f, x):
        return f(x)

    @apply.defjvp
    def apply_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t  # deliberately not f's derivative, to see the rule is used

    assert inert.grad(lambda x: apply(inp.sin, x))(0.3) == 2.0
    assert inert.jit(inert.grad(lambda x: apply(inp.sin, x)))(0.3) == 2.0
    np.testing.assert_allclose(inert.vmap(inert.grad(lambda x: apply(inp.sin, x)))(np.ones(3)),
                               2.0)


def test_custom_vjp_nondiff_argnums_reach_bwd_first():
    @functools.partial(inert.custom_vjp, nondiff_argnums=(1,))
    def clip_gradient(x, bound):
        return x

    def fwd(x, bound):
        return x, None

    def bwd(bound, res, g):
        return (inp.clip(g, -bound, bound),)

    clip_gradient.defvjp(fwd, bwd)
    f = lambda x: inp.sum(5.0 * clip_gradient(x, 1.0))  # noqa: E731
    np.testing.assert_allclose(inert.grad(f)(np.ones(3)), 1.0)
    np.testing.assert_allclose(inert.jit(inert.grad(f))(np.ones(3)), 1.0)
    assert inert.grad(lambda x: 0.5 * clip_gradient(x, 1.0))(2.0) == 0.5


# ---------------------------------------------------------------------------------
# What the backward pass keeps


@inert.custom_vjp
def _scaled_sin(x, w):
    return inp.sin(x) * w


_scaled_sin.defvjp(lambda x, w: (_scaled_sin(x, w), (inp.cos(x), w)),
                   lambda res, ct: (ct * res[0] * res[1], None))


def test_print_saved_residuals_lists_what_fwd_returns(capsys):
    x, w = np.ones(100), np.full(100, 2.0)
    infos = inert.saved_residuals(lambda x: inp.sum(_scaled_sin(x, w)), x)
    assert sorted(r.origin for r in infos) == ["constant", "cos"]  # cos(x) and w, not x
    assert sum(r.nbytes for r in infos) == 1600
    inert.print_saved_residuals(lambda x: inp.sum(_scaled_sin(x, w)), x)
    assert "2 residuals, 1,600 bytes" in capsys.readouterr().out


def test_an_inactive_custom_call_keeps_nothing_and_calls_no_rule():
    ran = []

    @inert.custom_jvp
    def f(x):
        return inp.exp(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        ran.append("f_jvp")
        return f(primals[0]), f(primals[0]) * tangents[0]

    x, w = np.ones(100), np.full(100, 2.0)
    loss = lambda x, w: inp.sum(x * 3.0 + f(w))  # noqa: E731
    assert inert.saved_residuals(loss, x, inert.Inactive(w)) == []
    np.testing.assert_allclose(inert.grad(loss)(x, w), 3.0)
    assert ran == []


def test_a_rule_and_body_may_close_over_a_constant_made_inside_the_function():
    def loss(x):
        c = inp.ones(3) * 2.0  # known while linearizing, computed lazily

        @inert.custom_jvp
        def g(y):
            return y * c

        g.defjvp(lambda p, t: (g(p[0]), t[0] * c))
        return inp.sum(g(x))

    np.testing.assert_allclose(inert.grad(loss)(np.ones(3)), 2.0)
    np.testing.assert_allclose(inert.jit(inert.grad(loss))(np.ones(3)), 2.0)
    np.testing.assert_allclose(inert.vmap(inert.grad(loss))(np.ones((2, 3))), 2.0)
