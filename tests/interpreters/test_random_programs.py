"""Hypothesis generates programs: random DAGs of operations over several inputs (the
unary and binary steps of tests/random_programs.py), some passed Inactive, checked by
finite differences, the dot-product test, and staging. tests/test_differential.py
adds control flow and transform stacks."""

import numpy as np
from harness import check_grads, check_staged
from hypothesis import given, settings
from hypothesis import strategies as st
from random_programs import INERT, SIMPLE, programs, run_steps

import inert
import inert.numpy as inp
from inert.api import replaying


def run(steps, *inputs):
    """The program's last value, made a vector function of its inputs."""
    v = run_steps(INERT, steps, [inp.asarray(x) for x in inputs])[-1]
    return inp.sum(v * v) + v


@settings(max_examples=40, deadline=None)
@given(programs(max_steps=6, kinds=SIMPLE), st.integers(0, 2**31 - 1))
def test_random_programs_differentiate_correctly(program, seed):
    n_inputs, steps = program
    rng = np.random.default_rng(seed)
    args = tuple(rng.standard_normal(3) for _ in range(n_inputs))
    f = lambda *xs: run(steps, *xs)
    check_grads(f, args, rng)
    check_staged(f, args)


@settings(max_examples=25, deadline=None)
@given(programs(max_steps=6, kinds=SIMPLE), st.integers(0, 2**31 - 1), st.data())
def test_inactive_inputs_change_nothing_but_what_is_kept(program, seed, data):
    n_inputs, steps = program
    # what activity keeps on the plain path: every example's lambda has one code object,
    # and a replay diverging between examples keeps its scalars as inputs (design.md)
    replaying._entries.clear()
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(3) for _ in range(n_inputs)]
    inactive = data.draw(st.lists(st.booleans(), min_size=n_inputs, max_size=n_inputs))
    scalar = lambda *xs: inp.sum(run(steps, *xs))
    wrapped = [inert.Inactive(a) if i else a for a, i in zip(args, inactive)]
    argnums = tuple(k for k, i in enumerate(inactive) if not i) or (0,)
    full = inert.grad(scalar, argnums=tuple(range(n_inputs)))(*args)
    if any(not i for i in inactive):
        partial = inert.grad(scalar, argnums=argnums)(*wrapped)
        for k, g in zip(argnums, partial):
            np.testing.assert_allclose(g, full[k], rtol=1e-12, atol=1e-12)
    kept_all = sum(r.nbytes for r in inert.saved_residuals(scalar, *args))
    kept_some = sum(r.nbytes for r in inert.saved_residuals(scalar, *wrapped))
    assert kept_some <= kept_all


@settings(max_examples=30, deadline=None)
@given(programs(max_steps=8, kinds=SIMPLE), st.integers(0, 2**31 - 1))
def test_random_programs_writing_results_into_dead_buffers_compute_the_same(
        program, seed):
    """Every buffer reusable, however small: the compiled gradient still equals the
    interpreted one, and leaves its inputs as they were. (On numpy's backend: numba's
    would compile kernels for every program; its fresh kernel results are reused in
    tests/interpreters/test_eval.py.)"""
    from inert.interpreters import eval as eval_interpreter  # noqa: PLC0415

    n_inputs, steps = program
    rng = np.random.default_rng(seed)
    args = tuple(rng.standard_normal(3) for _ in range(n_inputs))
    copies = [a.copy() for a in args]
    f = inert.value_and_grad(lambda *xs: inp.sum(run(steps, *xs)),
                             argnums=tuple(range(n_inputs)))
    want = f(*args)
    reused, eval_interpreter.REUSED_BYTES = eval_interpreter.REUSED_BYTES, 0
    try:
        got = inert.jit(f, backend="numpy")(*args)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for g, w in zip(got[1], want[1]):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    finally:
        eval_interpreter.REUSED_BYTES = reused
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)
