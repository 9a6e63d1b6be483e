"""Refs: eager and jit semantics, the IR (types, effects, check_jaxpr, dce), the
primitives' rules (abstract eval against impl, batching against a loop), discharge,
and control-flow bodies that close over refs."""

from __future__ import annotations

import numpy as np
import pytest
from harness import assert_allclose, check_abstract_eval, check_staged

import inert
import inert.numpy as inp
from inert import lax
from inert.core.avals import AbstractRef, Ref, ShapedArray
from inert.core.check import JaxprTypeError, check_jaxpr
from inert.core.ir import Jaxpr, JaxprEqn, Var
from inert.errors import DTypeError, ShapeError
from inert.primitives.control.scan import scan_p
from inert.primitives.state import refs as st
from inert.primitives.state.discharge import discharge_jaxpr


def fill(x):
    """`y[n] = sin(x[n])` one slot at a time, then a read-modify-write and an add."""
    y = inert.new_ref(inp.zeros(x.shape))
    for n in range(x.shape[0]):
        y[n] = inp.sin(x[n])
    y[0] += 2.0 * y[1]
    inert.ref.addupdate(y, 1, x[0])
    return inert.freeze(y)


def fill_numpy(x):
    y = np.sin(x)
    y[0] += 2.0 * y[1]
    y[1] += x[0]
    return y


# ---------------------------------------------------------------------------------
# Eager semantics


@pytest.mark.parametrize("idx, value", [
    (1, 5.0), (-1, 5.0), (slice(1, 3), [7.0, 8.0]), ((Ellipsis, 0), 3.0), (np.array([2, 0]),
                                                                            [1.0, 2.0]),
    ((slice(None), np.array([1, 1])), 4.0), ((), 9.0), (slice(None, None, -2), [1.0, 2.0]),
])
def test_reads_and_writes_index_like_numpy(idx, value):
    base = np.arange(12.0).reshape(3, 4) if isinstance(idx, tuple) and idx else \
        np.arange(4.0)
    ref, want = inert.new_ref(base), base.copy()
    np.testing.assert_array_equal(ref[idx], want[idx])
    ref[idx] = value
    want[idx] = value
    np.testing.assert_array_equal(inert.freeze(ref), want)
    np.testing.assert_array_equal(inert.ref.get(ref, idx), want[idx])


def test_ref_api_functions():
    ref = inert.new_ref(np.array([1.0, 2.0, 3.0]))
    old = inert.ref.swap(ref, 0, 10.0)
    assert old == 1.0 and ref[0] == 10.0
    inert.ref.set(ref, slice(1, None), 0.5)
    inert.ref.addupdate(ref, np.array([2, 2]), 1.0)  # duplicates accumulate
    np.testing.assert_array_equal(inert.freeze(ref), [10.0, 0.5, 2.5])
    np.testing.assert_array_equal(inert.ref.get(ref), [10.0, 0.5, 2.5])
    empty = inert.empty_ref((2, 3), np.float32)
    assert (empty.shape, empty.dtype, empty.ndim, len(empty)) == ((2, 3), np.float32, 2, 2)
    assert "Ref(" in repr(empty)


def test_reads_are_copies_and_new_ref_copies_its_value():
    x = np.array([1.0, 2.0])
    ref = inert.new_ref(x)
    before = ref[...]
    frozen = inert.freeze(ref)
    ref[0] = 5.0
    assert x[0] == 1.0 and before[0] == 1.0 and frozen[0] == 1.0


def test_eager_jit_and_make_jaxpr_agree():
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(fill(x), fill_numpy(x))
    np.testing.assert_allclose(inert.jit(fill)(x), fill_numpy(x))
    check_staged(fill, (x,))


def test_jit_writes_to_a_ref_argument_and_to_a_closed_over_ref():
    counter = inert.new_ref(np.zeros(()))

    @inert.jit
    def step(r, x):
        r[...] = r[...] * 2 + x
        counter[...] += 1.0
        return r[0]

    r = inert.new_ref(np.array([1.0, 1.0]))
    step(r, 1.0)
    out = step(r, 1.0)  # the cached program sees the ref's current contents
    np.testing.assert_array_equal(inert.freeze(r), [7.0, 7.0])
    assert out == 7.0 and counter[...] == 2.0


# ---------------------------------------------------------------------------------
# The IR


def test_jaxpr_shows_ref_types_and_effects():
    def f(r, x):
        r[0] = x
        return r[1]

    closed = inert.make_jaxpr(f)(inert.new_ref(np.zeros(3)), 1.0)
    text = str(closed)
    assert "a:Ref{f64[3]}" in text
    assert "effects: State(write a, read a)" in text
    assert [e.primitive.name for e in closed.jaxpr.eqns if e.primitive.effect] == ["swap", "get"]


def test_dce_keeps_writes_nobody_reads():
    closed = inert.jit(lambda r: inert.ref.set(r, 0, 1.0))
    r = inert.new_ref(np.zeros(2))
    closed(r)
    assert r[0] == 1.0


def test_check_jaxpr_rejects_refs_left_in_a_sub_jaxpr():
    scalar = ShapedArray((), np.float64)
    x, y, ref = Var(scalar), Var(scalar), Var(AbstractRef(scalar))
    body = Jaxpr((), (x,), (JaxprEqn(st.new_ref_p, (x,), (ref,), {}),
                            JaxprEqn(st.get_p, (ref,), (y,), {"axes": ()})), (y,))
    outer = Jaxpr((), (x,), (JaxprEqn(scan_p, (x,), (Var(scalar),), dict(
        jaxpr=body, num_consts=0, num_carry=1, length=1, reverse=False)),), ())
    with pytest.raises(JaxprTypeError, match="sub-jaxpr of scan has refs"):
        check_jaxpr(outer)


def test_abstract_eval_agrees_with_impl():
    buf = Ref(np.arange(12.0).reshape(3, 4))
    i, k = np.array([0, 2]), np.array([[1], [3]])
    check_abstract_eval(st.get_p, [buf, i, k], dict(axes=(0, 1)))
    check_abstract_eval(st.get_p, [buf], dict(axes=()))
    check_abstract_eval(st.swap_p, [buf, np.ones(4), np.int64(1)], dict(axes=(0,)))
    check_abstract_eval(st.freeze_p, [buf], {})


def test_bad_operands_name_the_primitive():
    ref = inert.new_ref(np.zeros((2, 3)))
    with pytest.raises(ShapeError, match="values of shape \\(2,\\)"):
        ref[0] = np.ones(2)
    with pytest.raises(DTypeError, match="get: operand 0 must be a ref"):
        st.get(np.zeros(3))
    with pytest.raises(DTypeError, match="sin: operand 0 is a ref Ref\\{f64\\[2,3\\]\\}"):
        inert.jit(lambda r: inp.sin(r))(ref)
    with pytest.raises(DTypeError, match="sin: operand 0 is a ref Ref\\{f64\\[3\\]\\}"):
        inert.grad(lambda x: inp.sum(inp.sin(inert.new_ref(x))))(np.ones(3))  # discharged
    with pytest.raises(TypeError, match="traced array f64\\[3\\] is immutable"):
        inert.jit(lambda x: x.__setitem__(0, 1.0))(np.zeros(3))


def test_discharge_turns_reads_and_writes_into_gathers_and_scatters():
    closed = inert.make_jaxpr(lambda r, x: (inert.ref.set(r, 1, x), r[0])[1])(
        inert.new_ref(np.zeros(3)), 2.0)
    functional, consts = discharge_jaxpr(closed.jaxpr)
    names = [e.primitive.name for e in functional.eqns]
    assert "scatter" in names and "gather" in names and not any(
        e.primitive.effect for e in functional.eqns)
    out, final = inert.eval_jaxpr(functional, consts, [np.array([1.0, 0.0, 0.0]), 2.0])
    assert out == 1.0
    np.testing.assert_array_equal(final, [1.0, 2.0, 0.0])


# ---------------------------------------------------------------------------------
# Control flow closing over refs: the refs' contents become carries and outputs


def test_scan_and_fori_loop_write_a_closed_over_ref():
    x = np.linspace(0.0, 1.0, 5)

    def f(x):
        xs, y = inert.new_ref(x), inert.empty_ref(x.shape)  # a ref reads at a traced index
        total = inert.new_ref(0.0)

        def body(n, carry):
            y[n] = inp.sin(xs[n]) * carry
            total[...] += y[n]
            return carry + 1.0

        lax.fori_loop(0, 5, body, 1.0)
        return inert.freeze(y), total[...]

    want = np.sin(x) * np.arange(1, 6)
    for g in (inert.jit(f), f):
        y, total = g(x)
        np.testing.assert_allclose(y, want)
        np.testing.assert_allclose(total, want.sum())
    jaxpr = inert.make_jaxpr(f)(x).jaxpr
    scan_eqn = next(e for e in jaxpr.eqns if e.primitive is scan_p)
    # y and total are carried, xs (only read) is a loop invariant
    assert (scan_eqn.params["num_carry"], scan_eqn.params["num_consts"]) == (3, 1)


def test_cond_branches_write_different_refs_and_while_reads_in_cond():
    def f(x):
        a, b = inert.new_ref(0.0), inert.new_ref(0.0)

        def yes(x):
            a[...] = x

        def no(x):
            b[...] = -x

        def count(i):
            b[...] += 1.0
            return i + 1

        lax.cond(x > 0, yes, no, x)
        n = lax.while_loop(lambda i: i < 3, count, 0)
        m = lax.while_loop(lambda i: i < b[...], lambda i: i + 1, 0)  # cond_fun reads b
        return a[...], b[...], n, m

    for x in (2.0, -2.0):
        b = max(-x, 0.0) + 3
        assert_allclose(inert.jit(f)(x), (max(x, 0.0), b, 3, np.ceil(b)))


def test_refs_may_not_be_carries_and_cond_fun_may_not_write():
    ref = inert.new_ref(np.zeros(2))
    with pytest.raises(TypeError, match="scan: a ref Ref\\{f64\\[2\\]\\} cannot be"):
        lax.scan(lambda c, x: (c, x), ref, np.zeros(3))
    with pytest.raises(TypeError, match="cond_fun writes to a ref"):
        inert.jit(lambda x: lax.while_loop(
            lambda i: (ref.__setitem__(0, 1.0), i < x)[1], lambda i: i + 1, 0))(3)
    with pytest.raises(TypeError, match="checkpoint: the function closes over a ref"):
        inert.jit(inert.checkpoint(lambda x: ref[0] * x))(1.0)


def test_refs_local_to_a_body_are_discharged():
    def f(xs):
        def step(c, x):
            r = inert.new_ref(c)
            r[...] = r[...] * x
            return inert.freeze(r), r[...]

        return lax.scan(step, 1.0, xs)

    xs = np.array([2.0, 3.0, 4.0])
    assert_allclose(inert.jit(f)(xs), (24.0, np.array([2.0, 6.0, 24.0])))
    body = next(e for e in inert.make_jaxpr(f)(xs).jaxpr.eqns if e.primitive is scan_p)
    assert not any(e.primitive.effect for e in body.params["jaxpr"].eqns)
