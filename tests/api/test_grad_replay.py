"""grad called again replays the recorded program (interpreters/replay.py): the same
gradients as the plain path, whatever changes between calls, with the user's Python
run every time and no array kept by the cache.

The plain path is `grad(functools.partial(f))`: a callable without a code object is
never replayed. `calls()` records what each call of the replay path did: "r" for a
first recording, "m" for a replay that matched, "d" for one that diverged.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from random_programs import FORWARD_ONLY, INERT, build, programs, uses

import inert
import inert.numpy as inp
from inert.api import replaying
from inert.benchmarks.memory import reachable_array_bytes
from inert.core import trace as core_trace
from inert.core.trace import trace_depth
from inert.errors import ActivityError, ConcretizationError, EscapedTracerError


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with no recording (its functions' code may have run before)."""
    replaying._entries.clear()


@contextlib.contextmanager
def calls():
    log: list[str] = []
    record = replaying.record

    def logged(fun, leaves, active, out_store, expected, *args, **kwargs):
        out = record(fun, leaves, active, out_store, expected, *args, **kwargs)
        if trace_depth() == 0:  # (an inner grad, replaying inside, is not logged)
            log.append("m" if out[1] else "d" if expected is not None else "r")
        return out

    replaying.record = logged
    try:
        yield log
    finally:
        replaying.record = record


def plain(g_of, f):
    return g_of(functools.partial(f))


def check_same(f, arg_lists, argnums=0, has_aux=False):
    """Each call's value and gradient equal the plain path's, to rounding: the same
    primitives run on the same values, but a compiled gradient may add cotangents in
    another order (through a `cond`, 1 ulp in about 1 program of 75)."""
    replayed = inert.value_and_grad(f, argnums=argnums, has_aux=has_aux)
    reference = inert.value_and_grad(functools.partial(f), argnums=argnums, has_aux=has_aux)
    for args in arg_lists:
        got, want = replayed(*args), reference(*args)
        for g, w in zip(inert.tree_util.tree_leaves(got), inert.tree_util.tree_leaves(want)):
            assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def vectors(n, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(k) for _ in range(n)]


@settings(max_examples=25, deadline=None)
@given(programs(max_steps=5), st.integers(0, 2**31 - 1))
def test_random_programs_replay_to_the_plain_gradient(program, seed):
    """Control flow included: scan, cond and checkpoint bodies are traced anew by each
    call and compared as programs; custom_vjp's rule is a new function each call. (Every
    example's function has the same code: the cache is cleared for each.)"""
    n_inputs, steps = program
    assume(not uses(steps, FORWARD_ONLY))
    replaying._entries.clear()
    f = build(program, INERT)
    rng = np.random.default_rng(seed)
    arg_lists = [tuple(rng.standard_normal(3) for _ in range(n_inputs)) for _ in range(3)]
    with calls() as log:
        check_same(f, arg_lists, tuple(range(n_inputs)))
    if uses(steps, {"custom_jvp", "custom_vjp"}):
        # the program makes a new custom function each call: another rule, recorded afresh
        assert log == ["r", "d"]
    else:
        assert log == ["r", "m"]


def test_a_replay_runs_the_users_python_every_call():
    seen = []

    def f(x):
        seen.append(1)
        return inp.sum(inp.sin(x) * x)

    g = inert.grad(f)
    with calls() as log:
        for x in vectors(4):
            assert_allclose(g(x), np.cos(x) * x + np.sin(x), rtol=1e-13)
    assert log == ["r", "m", "m"] and len(seen) == 4


def test_a_branch_that_changes_is_recorded_afresh():
    """Each call takes the branch its values ask for; once calls have diverged more
    often than they matched (three times at least), the function takes the plain path."""
    def f(x):
        y = x * 2.0
        if inp.sum(x) > 0:
            y = inp.sin(y)
        return inp.sum(y * y)

    xs = [np.ones(3), -np.ones(3), np.ones(3), np.ones(3), -np.ones(3), np.ones(3),
          -np.ones(3), np.ones(3)]
    with calls() as log:
        check_same(f, [(x,) for x in xs])
    assert log == ["r", "d", "m", "d", "d"]


def test_closed_over_values_reach_the_program_each_call():
    """A closed-over array (a new one, or the same one written in place) and a
    Python scalar that changes are this call's, not the recording's."""
    x = np.linspace(-1, 1, 5)
    data = np.arange(5.0)
    with calls() as log:
        for t in [0.5, 0.25, 2.0, 3.0]:
            data[0] = t  # in place: the recording must not have kept it
            weights = data * t  # a new array each call
            f = lambda x: inp.sum(inp.sin(x * t) * weights + data * x ** 2)  # noqa: B023
            assert_allclose(inert.grad(f)(x), plain(inert.grad, f)(x), rtol=1e-13)
    assert log == ["r", "d", "m"]


def test_an_array_written_after_use_is_read_as_it_was_used():
    """The compiled gradient runs after `f` returns: a closed-over array `f` writes
    after using it was snapshotted when used, as the plain path does."""
    buffer = np.ones(3)

    def f(x):
        y = inp.sum(x * buffer)
        buffer[:] = 5.0
        return y

    for _ in range(4):
        buffer[:] = 1.0
        assert_allclose(inert.grad(f)(np.zeros(3)), np.ones(3))


def test_a_lossy_conversion_of_an_active_value_is_refused_in_replays_too():
    def f(x, flag):
        y = inp.sin(x)
        if flag:
            return float(inp.sum(y)) * inp.sum(x)  # loses y's derivative
        return float(inp.stop_gradient(inp.sum(y))) * inp.sum(x)  # says so

    g = inert.grad(f)
    x = np.ones(3)
    for _ in range(3):
        assert_allclose(g(x, False), np.full(3, 3 * np.sin(1.0)), rtol=1e-13)
    with pytest.raises(ConcretizationError, match="lose its derivative"):
        g(x, True)
    assert core_trace.trace_depth() == 0 and core_trace._thread.state.direct is None


def test_has_aux_argnums_pytrees_and_inactive_arguments():
    def f(params, data, scale):
        w, b = params["w"], params["b"]
        out = inp.tanh(data @ w + b) * scale
        return inp.sum(out ** 2), {"mean": inp.mean(out), "n": 3}

    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((4, 2)), "b": rng.standard_normal(2)}
    arg_lists = [(params, rng.standard_normal((3, 4)), float(s)) for s in (1.0, 2.0, 3.0, 4.0)]
    check_same(f, arg_lists, argnums=0, has_aux=True)
    inactive_lists = [(p, inert.Inactive(d), s) for p, d, s in arg_lists]
    check_same(f, inactive_lists, argnums=(0, 1), has_aux=True)


def test_nested_derivatives_and_transformations_inside():
    def f(x):
        inner = inert.grad(lambda y: inp.sum(inp.sin(y) * y))(x)
        batched = inert.vmap(lambda r: inp.dot(r, r))(inp.outer(x, x))
        return inp.sum(inner * x) + inp.sum(batched) + inert.jit(inp.cos)(x[0])

    with calls() as log:
        check_same(f, [(x,) for x in vectors(4)])
    assert log == ["r", "m", "m"]
    hessian_row = lambda x: inert.grad(lambda y: inert.grad(f)(y)[0])(x)
    for x in vectors(3, seed=2):
        assert_allclose(hessian_row(x), plain(inert.grad, lambda y: plain(inert.grad, f)(y)[0])(x),
                        rtol=1e-12)


def test_the_cache_keeps_no_array_of_the_user():
    big = np.ones(100_000)
    f = lambda x: inp.sum(inp.sin(x) * big) + inp.sum(x * x)
    x = np.ones(100_000)
    for _ in range(4):
        inert.grad(f)(x)
    assert reachable_array_bytes(replaying._entries) < 1000


def test_a_tracer_kept_from_a_replayed_call_cannot_be_used():
    kept = []

    def f(x):
        kept.append(x * 2.0)
        return inp.sum(x)

    for _ in range(3):
        inert.grad(f)(np.ones(2))
    with pytest.raises(EscapedTracerError):
        inert.grad(lambda x: inp.sum(x * kept[-1]))(np.ones(2))


def test_an_error_in_a_replay_leaves_no_trace_state():
    def f(x, fail):
        y = inp.sum(inp.exp(x))
        if fail:
            raise RuntimeError("user error")
        return y

    for _ in range(3):
        inert.grad(f)(np.ones(2), False)
    with pytest.raises(RuntimeError, match="user error"):
        inert.grad(f)(np.ones(2), True)
    assert core_trace.trace_depth() == 0 and core_trace._thread.state.direct is None
    assert_allclose(inert.grad(f)(np.ones(2), False), np.exp(np.ones(2)))


def test_a_non_scalar_output_is_refused_on_every_path():
    f = lambda x: x * 2.0
    for _ in range(3):
        with pytest.raises(TypeError, match="real float scalar"):
            inert.grad(f)(np.ones(2))


def test_refs_take_the_plain_path():
    def f(x):
        acc = inert.new_ref(inp.zeros(3))
        acc[...] += inp.sin(x)
        return inp.sum(acc[...] ** 2)

    with calls() as log:
        check_same(f, [(x,) for x in vectors(4)])
    assert log == ["r"]


def test_a_long_recording_is_not_kept(monkeypatch):
    monkeypatch.setattr(replaying, "_MAX_EQNS", 3)
    short = lambda x: inp.sum(x * x)
    long = lambda x: inp.sum(inp.sin(inp.cos(x * x)))
    for f, expected in [(short, ["r", "m", "m"]), (long, ["r"])]:
        with calls() as log:
            check_same(f, [(x,) for x in vectors(4)])
        assert log == expected


def test_writing_an_active_value_into_an_outside_ref_is_refused_when_recording_too():
    log = inert.new_ref(np.zeros(3))

    def f(x, active):
        log[...] = x * 2.0 if active else inert.lax.stop_gradient(x * 2.0)
        return inp.sum(x ** 2)

    x = np.ones(3)
    with calls() as record_calls:
        for _ in range(2):  # the plain path, then the recording
            with pytest.raises(ActivityError, match="the grad differentiates the value"):
                inert.grad(f)(x, True)
    assert record_calls == []  # it raised inside `record`, before logging
    assert_allclose(inert.grad(f)(x, False), 2 * x)
    assert_allclose(log[...], 2 * x)


def test_replaying_can_be_switched_off():
    f = lambda x: inp.sum(inp.sin(x))
    inert.config.update("inert_grad_replay", False)
    try:
        with calls() as log:
            check_same(f, [(x,) for x in vectors(4)])
        assert log == []
    finally:
        inert.config.update("inert_grad_replay", True)
    with calls() as log:
        check_same(f, [(x,) for x in vectors(3)])
    assert log == ["r", "m"]
