"""Refs under the transforms: grad, jvp, vjp, linearize, jacfwd/jacrev/hessian, vmap and
grad-of-grad through refs created inside the differentiated function and through loops
that write them; refs as arguments; activity per level and every `ActivityError`.

The cases JAX 0.10 gets wrong or rejects are marked "JAX 0.10:"; they are checked
against finite differences (or the analytic derivative where a stop_gradient makes
finite differences disagree by design)."""

from __future__ import annotations

import numpy as np
import pytest
from harness import assert_allclose, check_grads, numerical_jvp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp
from inert import lax
from inert.errors import ActivityError


def fill_python(x):
    y = inert.new_ref(inp.zeros(x.shape))
    for n in range(x.shape[0]):
        y[n] = inp.sin(inp.cos(inp.exp(x[n])))
    y[1:] += y[:-1] * x[0]  # a read-modify-write of overlapping slices
    return inert.freeze(y)


def fill_fori(x):
    xs, y = inert.new_ref(x), inert.empty_ref(x.shape)

    def body(n, total):
        y[n] = inp.sin(inp.cos(inp.exp(xs[n]))) * total
        return total + y[n]

    total = lax.fori_loop(0, x.shape[0], body, 1.0)
    return inert.freeze(y) * total


def fill_scan(x):
    y = inert.new_ref(x)

    def step(c, n):
        y[n] = y[n] * c + inp.tanh(y[(n + 1) % 4])
        return c * 0.9, None

    lax.scan(step, 1.5, np.arange(4))
    return inert.freeze(y)


@pytest.mark.parametrize("f", [fill_python, fill_fori, fill_scan])
def test_derivatives_through_refs_and_loops_writing_them(f, rng):
    x = rng.uniform(-1, 1, 4)
    check_grads(f, (x,), rng, order=2)  # jvp and vjp, and of the jvp
    assert_allclose(inert.jacfwd(f)(x), inert.jacrev(f)(x), rtol=1e-10, atol=1e-12)
    assert_allclose(inert.jit(f)(x), f(x), rtol=1e-12, atol=1e-12)


def test_grad_of_grad_through_indexed_writes(rng):
    """JAX 0.10: crashes with an AttributeError."""
    def f(x):
        y = inert.new_ref(inp.zeros(3))
        y[0] = x[0] * x[1]
        y[np.array([1, 2])] = inp.sin(x[1:]) ** 2
        y[2] += y[0] * x[2]
        return inp.sum(inert.freeze(y) ** 2)

    x = rng.uniform(-1, 1, 3)
    grad = inert.grad(f)
    g = lambda x: inp.sum(grad(x) * x)  # noqa: E731
    assert_allclose(inert.grad(g)(x), np.array([numerical_jvp(g, (x,), (e,))
                                                for e in np.eye(3)]), rtol=1e-5, atol=1e-6)
    assert_allclose(inert.hessian(f)(x), np.array(
        [numerical_jvp(grad, (x,), (e,)) for e in np.eye(3)]), rtol=1e-5, atol=1e-6)


def test_writing_constants_and_stop_gradient_values_into_an_active_ref():
    """JAX 0.10: grad crashes (AttributeError) while jvp works. The overwritten slots
    have zero derivative from then on."""
    def f(x):
        r = inert.new_ref(x)
        r[0] = 1.0
        r[1] = inert.stop_gradient(x[1] * 2.0)
        r[2] = inp.sin(x[2]) * x[0]
        return inp.sum(inert.freeze(r) * x)

    x = np.array([0.3, 0.5, 0.7])
    # by hand: f = x0 + c*x1 + sin(x2)*x0*x2 + x3... with c = 2*x1 held constant
    want = np.array([1 + np.sin(x[2]) * x[2], 2 * x[1],
                     np.cos(x[2]) * x[0] * x[2] + np.sin(x[2]) * x[0]])
    assert_allclose(inert.grad(f)(x), want, rtol=1e-12)
    assert_allclose(inert.jvp(f, (x,), (np.ones(3),))[1], want.sum(), rtol=1e-12)
    assert_allclose(inert.jit(inert.grad(f))(x), want, rtol=1e-12)


def test_jacfwd_and_hessian_through_a_ref(rng):
    """JAX 0.10: fail in vmap. The primal ref of jacfwd stays one array; the tangent
    ref gets one value per basis vector when the first tangent is written."""
    def f(x):
        r = inert.new_ref(x)
        r[1] = x[0] * x[2]
        r[0] += inp.exp(r[1])
        return inert.freeze(r)

    x = rng.uniform(-1, 1, 3)
    jac = np.array([numerical_jvp(f, (x,), (e,)) for e in np.eye(3)]).T
    assert_allclose(inert.jacfwd(f)(x), jac, rtol=1e-6, atol=1e-8)
    assert_allclose(inert.jacrev(f)(x), jac, rtol=1e-6, atol=1e-8)
    g = lambda x: inp.sum(f(x) ** 2)  # noqa: E731
    hess = np.array([numerical_jvp(inert.grad(g), (x,), (e,)) for e in np.eye(3)])
    assert_allclose(inert.hessian(g)(x), hess, rtol=1e-5, atol=1e-7)


def test_a_ref_as_a_differentiated_vjp_argument(rng):
    """JAX 0.10: fails in the backward pass. Here a ref argument is differentiated as
    its contents: its cotangent is an array (the gradient with respect to what it
    held at the call), and the function's writes are applied to it."""
    def f(r, x):
        r[0] = r[0] * x
        r[1:] = inp.sin(r[1:]) + r[0]
        return inp.sum(r[...] ** 2)

    contents, x = rng.uniform(-1, 1, 3), 0.7
    as_array = lambda c, x: f(inert.new_ref(c), x)  # noqa: E731
    ref = inert.new_ref(contents)
    out, vjp_fn = inert.vjp(f, ref, x)
    ct_ref, ct_x = vjp_fn(1.0)
    assert isinstance(ct_ref, np.ndarray) and ct_ref.shape == (3,)
    assert_allclose(out, as_array(contents, x), rtol=1e-12)
    want_ref, want_x = inert.grad(as_array, argnums=(0, 1))(contents, x)
    assert_allclose((ct_ref, ct_x), (want_ref, want_x), rtol=1e-12)
    assert_allclose(want_ref, np.array([numerical_jvp(lambda c: as_array(c, x), (contents,),
                                                      (e,)) for e in np.eye(3)]), rtol=1e-6)
    written = inert.new_ref(contents)
    f(written, x)
    assert_allclose(inert.freeze(ref), inert.freeze(written), rtol=1e-15)  # writes applied
    assert_allclose(inert.grad(f)(inert.new_ref(contents), x), want_ref, rtol=1e-12)
    tangent = rng.standard_normal(3)
    _, t_out = inert.jvp(f, (inert.new_ref(contents), x), (tangent, 0.0))
    assert_allclose(t_out, want_ref @ tangent, rtol=1e-10)


def test_vmap_of_a_cond_whose_branches_write_a_ref():
    """JAX 0.10: not implemented. The index differs between lanes, so each lane
    selects its branch's writes."""
    def f(x):
        r = inert.new_ref(inp.zeros(2))

        def positive(x):
            r[0] = x * 2.0
            return x

        def negative(x):
            r[1] = x + 1.0
            return -x

        y = lax.cond(x > 0, positive, negative, x)
        return inert.freeze(r), y

    xs = np.array([1.0, -2.0, 3.0])
    got = inert.vmap(f)(xs)
    want = [inert.jit(f)(x) for x in xs]
    assert_allclose(got, (np.stack([w[0] for w in want]), np.array([w[1] for w in want])))
    assert_allclose(inert.vmap(inert.grad(lambda x: inp.sum(f(x)[0])))(xs),
                    np.array([2.0, 1.0, 2.0]))


def test_linearize_through_a_while_loop_that_updates_a_ref():
    """JAX 0.10: linearize gives 1.54 where jvp and finite differences give 2.71."""
    def f(x):
        r = inert.new_ref(x)

        def body(i):
            r[...] = r[...] * 1.1 + inp.sin(r[...])
            return i + 1

        lax.while_loop(lambda i: i < 3, body, 0)
        return r[...]

    want = numerical_jvp(f, (0.3,), (1.0,))
    assert_allclose(inert.jvp(f, (0.3,), (1.0,))[1], want, rtol=1e-6)
    y, f_jvp = inert.linearize(f, 0.3)
    assert_allclose((y, f_jvp(1.0)), (f(0.3), want), rtol=1e-6)
    with pytest.raises(inert.errors.NonDifferentiableError, match="while_loop.*scan"):
        inert.grad(f)(0.3)


# ---------------------------------------------------------------------------------
# vmap and jit


def test_vmap_of_refs_inside_and_of_ref_arguments(rng):
    xs = rng.uniform(-1, 1, (5, 4))
    assert_allclose(inert.vmap(fill_python)(xs), np.stack([fill_python(x) for x in xs]),
                    rtol=1e-12)
    assert_allclose(inert.vmap(fill_fori)(xs), np.stack([inert.jit(fill_fori)(x)
                                                         for x in xs]), rtol=1e-12)

    def scale(r, a):
        r[1:] = r[1:] * a
        return r[0] + a

    refs = inert.new_ref(xs)
    out = inert.vmap(scale)(refs, np.arange(5.0))  # the ref mapped along axis 0
    want = xs.copy()
    want[:, 1:] *= np.arange(5.0)[:, None]
    assert_allclose((out, inert.freeze(refs)), (xs[:, 0] + np.arange(5.0), want))
    refs = inert.new_ref(xs.T)
    out = inert.vmap(scale, in_axes=(1, 0))(refs, np.arange(5.0))  # along axis 1
    assert_allclose((out, inert.freeze(refs)), (xs[:, 0] + np.arange(5.0), want.T))


def test_jit_of_grad_and_grad_of_jit_with_refs(rng):
    x = rng.uniform(-1, 1, 4)
    loss = lambda x: inp.sum(fill_fori(x))  # noqa: E731
    want = inert.grad(loss)(x)
    assert_allclose(inert.jit(inert.grad(loss))(x), want, rtol=1e-12)
    assert_allclose(inert.grad(inert.jit(loss))(x), want, rtol=1e-12)


# ---------------------------------------------------------------------------------
# Memory


def naive_map(x):
    y = inert.empty_ref(x.shape)
    for n in range(x.shape[0]):
        y[n] = inp.sin(inp.cos(inp.exp(x[n])))
    return inp.sum(inert.freeze(y))


def naive_map_fori(x):
    y, xs = inert.empty_ref(x.shape), inert.new_ref(x)

    def body(n, carry):
        y[n] = inp.sin(inp.cos(inp.exp(xs[n])))
        return carry

    lax.fori_loop(0, x.shape[0], body, 0)
    return inp.sum(inert.freeze(y))


@pytest.mark.parametrize("f", [naive_map, naive_map_fori])
def test_an_element_by_element_loop_keeps_one_scalar_per_nonlinear_op(f):
    """Never a copy of the buffer per write: exp, cos and sin keep one scalar each."""
    for n in (4, 16):
        x = np.linspace(-1, 1, n)
        kept = sum(r.nbytes for r in inert.saved_residuals(f, x))
        assert kept == 3 * 8 * n
        e = np.exp(x)
        assert_allclose(inert.grad(f)(x), -np.cos(np.cos(e)) * np.sin(e) * e, rtol=1e-12)


def test_reading_an_inactive_ref_keeps_nothing_and_does_no_tangent_work():
    table = inert.new_ref(np.array([2.0, 3.0]))  # from outside: inactive under the grad
    f = lambda x: x + table[0] * table[1]  # noqa: E731
    assert inert.saved_residuals(f, 1.5) == []
    assert inert.grad(f)(1.5) == 1.0
    _, vjp_fn = inert.vjp(f, 1.5)
    assert not vjp_fn.linear.jaxpr.eqns  # the tangent program is the identity


# ---------------------------------------------------------------------------------
# Activity per level: ActivityError


outside = inert.new_ref(np.zeros(2))  # created before any transform: inactive in all


def write_active(x):
    outside[0] = x * 2.0
    return x * x


def _check_message(error, level: str, write_fn):
    message = str(error.value)
    assert message.startswith(f"{level} differentiates the value written here")
    assert f"{__file__}:" in message and "created outside" in message
    assert f"({write_fn})" in message  # the line of the write, in the user's function
    assert "fix: pass the ref to" in message and "inert.stop_gradient" in message


def test_writing_an_active_value_into_a_ref_from_outside():
    with pytest.raises(ActivityError) as error:
        inert.grad(write_active)(1.0)
    _check_message(error, "the grad", "write_active")
    assert f"{__file__}:{_line_of('outside = inert.new_ref')}" in str(error.value)
    for transform in (lambda f: inert.jvp(f, (1.0,), (1.0,)), lambda f: inert.vjp(f, 1.0),
                      lambda f: inert.jacfwd(f)(1.0), lambda f: inert.linearize(f, 1.0)):
        with pytest.raises(ActivityError):
            transform(write_active)


def test_the_fix_stop_gradient_or_an_argument():
    def fixed(x):
        outside[0] = inert.stop_gradient(x) * 2.0  # the value's derivative is dropped
        return x * x

    assert inert.grad(fixed)(3.0) == 6.0 and outside[0] == 6.0

    def as_argument(r, x):
        r[0] = x * 2.0
        return x * r[0]

    g_ref, g_x = inert.grad(as_argument, argnums=(0, 1))(outside, 3.0)
    assert outside[0] == 6.0 and g_x == 12.0
    np.testing.assert_array_equal(g_ref, [0.0, 0.0])  # overwritten before any read


def test_a_ref_passed_inactive_or_outside_argnums_is_inactive():
    def f(r, x):
        r[0] = x
        return x * 2.0

    for call in (lambda: inert.grad(f, argnums=1)(outside, 1.0),
                 lambda: inert.grad(lambda x, r: f(r, x))(1.0, inert.Inactive(outside))):
        with pytest.raises(ActivityError, match="the grad differentiates"):
            call()
    # reading it, or writing inactive values into it, is fine
    inert.grad(lambda r, x: (inert.ref.set(r, 1, 5.0), x * r[1])[1], argnums=1)(outside, 1.0)
    assert outside[1] == 5.0


def test_nested_grads_a_ref_is_active_for_the_level_that_created_it():
    def outer(x):
        y = inert.new_ref(inp.zeros(2))

        def inner(z):
            y[0] = x * 3.0  # active for the outer grad only: fine
            return z * z

        return inert.grad(inner)(x) + y[0] * x

    assert_allclose(inert.grad(outer)(2.0), 2.0 + 6.0 * 2.0)  # d(2x + 3x²)/dx

    def outer_bad(x):
        y = inert.new_ref(inp.zeros(2))

        def inner_bad(z):
            y[0] = z * 3.0  # active for the inner grad, which did not create y
            return z * z

        return inert.grad(inner_bad)(x)

    with pytest.raises(ActivityError) as error:
        inert.grad(outer_bad)(2.0)
    _check_message(error, "the inner grad", "inner_bad")
    assert "(outer_bad)" in str(error.value)  # where y was created


def test_a_loop_writing_an_outside_ref_inside_grad():
    def f(x):
        lax.fori_loop(0, 2, lambda i, c: (outside.__setitem__(i, x * c), c)[1], 1.0)
        return x

    with pytest.raises(ActivityError, match="the grad differentiates"):
        inert.grad(f)(1.0)


def test_vmap_of_a_batched_write_into_an_outside_ref():
    with pytest.raises(ActivityError) as error:
        inert.vmap(lambda x: write_active(x))(np.ones(2))
    message = str(error.value)
    assert message.startswith("the vmap maps the value written here")
    assert "create the ref inside the function vmap maps" in message


def _line_of(text: str) -> int:
    with open(__file__) as source:
        return next(i for i, line in enumerate(source, 1) if line.startswith(text))


def test_jacobians_and_hessian_of_a_ref_argument():
    def f(r, x):
        r[0] = r[0] * x
        return inp.sin(r[...]) * x

    contents = np.array([0.3, 0.4])
    as_array = lambda c, x: f(inert.new_ref(c), x)  # noqa: E731
    want = inert.jacfwd(as_array)(contents, 0.5)
    assert_allclose(inert.jacrev(f)(inert.new_ref(contents), 0.5), want, rtol=1e-12)
    assert_allclose(inert.jacfwd(f)(inert.new_ref(contents), 0.5), want, rtol=1e-12)
    g = lambda c, x: inp.sum(as_array(c, x))  # noqa: E731
    assert_allclose(inert.hessian(lambda r, x: inp.sum(f(r, x)))(inert.new_ref(contents), 0.5),
                    inert.hessian(g)(contents, 0.5), rtol=1e-12)


# ---------------------------------------------------------------------------------
# Random programs: a ref written and read at random places, against the same program
# written functionally with `.at` (values, jit, and gradients)

N_SLOTS = 4
INDICES = [0, -1, 2, slice(1, 3), slice(None, None, -2), np.array([3, 0]), np.array([1, 1])]
op_strategy = st.tuples(st.sampled_from(["set", "add", "read"]), st.integers(0, len(INDICES) - 1),
                        st.integers(0, N_SLOTS - 1), st.floats(-2.0, 2.0))


def _value(x, j, c):
    return inp.sin(x[j] * c) + c


def run_with_ref(ops, x):
    ref, total = inert.new_ref(x * 0.5), 0.0
    for kind, i, j, c in ops:
        idx = INDICES[i]
        if kind == "set":
            ref[idx] = _value(x, j, c)
        elif kind == "add":
            inert.ref.addupdate(ref, idx, _value(x, j, c))
        else:
            total = total + inp.sum(ref[idx] ** 2)
    return inp.sum(inert.freeze(ref) * x) + total


def run_functionally(ops, x):
    y, total = inp.asarray(x) * 0.5, 0.0
    for kind, i, j, c in ops:
        idx = INDICES[i]
        if kind == "set":
            y = y.at[idx].set(_value(x, j, c))
        elif kind == "add":
            y = y.at[idx].add(_value(x, j, c))
        else:
            total = total + inp.sum(y[idx] ** 2)
    return inp.sum(y * x) + total


@settings(max_examples=25, deadline=None)
@given(st.lists(op_strategy, max_size=6))
def test_random_ref_programs_match_their_functional_version(ops):
    x = np.linspace(-0.8, 0.9, N_SLOTS)
    with_ref = lambda x: run_with_ref(ops, x)  # noqa: E731
    functional = lambda x: run_functionally(ops, x)  # noqa: E731
    assert_allclose(with_ref(x), functional(x), rtol=1e-12, atol=1e-12)
    assert_allclose(inert.jit(with_ref)(x), functional(x), rtol=1e-12, atol=1e-12)
    assert_allclose(inert.grad(with_ref)(x), inert.grad(functional)(x), rtol=1e-12,
                    atol=1e-12)


def test_a_ref_cannot_leave_a_differentiated_function():
    with pytest.raises(inert.errors.DTypeError, match="return inert.freeze\\(ref\\)"):
        inert.vjp(lambda x: inert.new_ref(x), 1.0)


def test_print_activity_follows_values_through_a_ref():
    def f(x):
        r = inert.new_ref(x)
        r[0] = inp.sin(r[1]) * r[0]  # read later by freeze: active
        dead = inert.new_ref(x)
        dead[0] = inp.cos(x[0])  # never read again: not active
        return inp.sum(inert.freeze(r) ** 2)

    closed, active = inert.activity_jaxpr(f, np.array([0.3, 0.5]))
    names = {e.primitive.name: e for e in closed.jaxpr.eqns}
    assert names["sin"].outputs[0] in active and names["mul"].outputs[0] in active
    assert names["cos"].outputs[0] not in active


def test_a_custom_jvp_rule_may_use_refs():
    """Code a trace's rule runs creates its refs below that trace (bind's ceiling): the
    rule's ref is an ordinary value of the level the rule computes at."""
    @inert.custom_jvp
    def f(x):
        return inp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        factors = inert.new_ref(inp.zeros(2))
        factors[0], factors[1] = inp.cos(x), inp.sin(x)
        return factors[1], factors[0] * t

    assert_allclose(inert.grad(f)(0.3), np.cos(0.3), rtol=1e-12)
    assert_allclose(inert.grad(inert.grad(f))(0.3), -np.sin(0.3), rtol=1e-12)
    assert_allclose(inert.vmap(inert.grad(f))(np.array([0.3, 0.4])), np.cos([0.3, 0.4]),
                    rtol=1e-12)
