"""Every transformation replays as `grad` does (`api.replaying`): repeated calls give
what a fresh trace gives, a call whose Python takes another branch is recorded afresh,
and a call that repeats one runs the user's function under the replay trace only (no
interpreter traces it, nothing is differentiated, batched or staged again).

The reference is the plain path (`inert_grad_replay` off)."""

import contextlib
import functools

import numpy as np
import pytest
from numpy.testing import assert_allclose

import inert
import inert.numpy as inp
from inert.api import replaying
from inert.core.trace import trace_depth


@pytest.fixture(autouse=True)
def empty_cache():
    replaying._entries.clear()


SEEN: list = []  # the types of the values the user's functions were called with


def branchy(x, y):
    """A branch on a value: a call where `sum(x)` has the other sign takes the other."""
    SEEN.append(type(x).__name__)
    if inp.sum(x) > 0:
        return inp.sin(x) * y + inp.sum(x ** 2)
    return inp.cos(x) * y * 3.0


def scalar(x, y):
    return inp.sum(branchy(x, y) * x)


def by_flag(x, c):
    """vmap's case: the branch is on the unmapped `c` (a mapped value has no value)."""
    SEEN.append(type(x).__name__)
    return inp.tanh(x) * c if inp.sum(c) > 0 else inp.sin(x) - c


V, W = np.array([1.0, -0.5, 2.0]), np.array([0.3, 0.2, -0.1])

CASES = {
    "grad": lambda x, y: inert.grad(scalar, argnums=(0, 1))(x, y),
    "vjp": lambda x, y: (lambda out, fn: (out, fn(V)))(*inert.vjp(branchy, x, y)),
    "jvp": lambda x, y: inert.jvp(branchy, (x, y), (V, W)),
    "linearize": lambda x, y: (lambda out, fn: (out, fn(V, W)))(
        *inert.linearize(branchy, x, y)),
    "jacfwd": lambda x, y: inert.jacfwd(branchy, argnums=(0, 1))(x, y),
    "jacrev": lambda x, y: inert.jacrev(branchy, argnums=(0, 1))(x, y),
    "hessian": lambda x, y: inert.hessian(scalar)(x, y),
    "jvp(grad)": lambda x, y: inert.jvp(inert.grad(scalar), (x, y), (V, W)),
    "grad(grad)": lambda x, y: inert.grad(
        lambda a, b: inp.sum(inert.grad(scalar)(a, b) ** 2))(x, y),
    "vmap": lambda x, y: inert.vmap(by_flag, in_axes=(0, None))(np.stack([y, 2 * y]), x),
    "vmap(grad)": lambda x, y: inert.vmap(
        inert.grad(lambda a, c: inp.sum(by_flag(a, c) * a)), in_axes=(0, None))(
        np.stack([y, 2 * y]), x),
}


def plain(case, x, y):
    """The case on the plain path: what a fresh trace gives."""
    inert.config.update("inert_grad_replay", False)
    try:
        return CASES[case](x, y)
    finally:
        inert.config.update("inert_grad_replay", True)


def assert_same(got, want):
    got_leaves, want_leaves = inert.tree_util.tree_leaves(got), inert.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert_allclose(g, w, rtol=1e-13, atol=1e-14)


@contextlib.contextmanager
def transforming():
    """`log`: per top-level recording, "m" (the call repeated it) or "r"/"d" (recorded,
    from the start or from where it diverged); `work`: how many times a recording was
    transformed (at a call's values, or staged to be compiled)."""
    log, work = [], []
    record, applied, compile_ = (replaying.record, replaying.applied,
                                 replaying.transform_program)

    def logged(fun, leaves, active, out_store, expected, *args, **kwargs):
        out = record(fun, leaves, active, out_store, expected, *args, **kwargs)
        if trace_depth() == 0:
            log.append("m" if out[1] else "d" if expected is not None else "r")
        return out

    def counted(fn):
        def count(*args, **kwargs):
            work.append(fn.__name__)
            return fn(*args, **kwargs)
        return count

    replaying.record, replaying.applied = logged, counted(applied)
    replaying.transform_program = counted(compile_)
    try:
        yield log, work
    finally:
        replaying.record, replaying.applied, replaying.transform_program = \
            record, applied, compile_


POSITIVE = [np.array([0.5, 1.0, -0.2]) * k for k in (1.0, 1.5, 2.0)]
NEGATIVE = [-x for x in POSITIVE]
Y = np.array([0.7, -1.1, 0.4])


@pytest.mark.parametrize("case", sorted(CASES))
def test_repeated_calls_give_a_fresh_traces_values_and_a_branch_is_recorded_afresh(case):
    with transforming() as (log, _):
        for x in [*POSITIVE, NEGATIVE[0], NEGATIVE[1], POSITIVE[0]]:
            got = CASES[case](x, Y)
            with transforming():  # (not logged)
                assert_same(got, plain(case, x, Y))
    assert log == ["r", "m", "d", "m", "d"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_that_repeats_the_recording_does_not_trace_again(case):
    """From the fourth call on the function runs only under the replay trace and no
    recording is transformed again: the compiled program runs."""
    for x in POSITIVE:
        CASES[case](x, Y)
    SEEN.clear()
    with transforming() as (log, work):
        got = CASES[case](POSITIVE[0] * 3.0, Y)
    assert set(SEEN) == {"ReplayTracer"} and work == [] and log == ["m"]
    assert_same(got, plain(case, POSITIVE[0] * 3.0, Y))


def test_a_replayed_vjp_keeps_what_the_plain_path_keeps():
    """Numpy scalars are literals in the recording, as staging makes them (an index
    `x.at[1]`, a closed-over `np.float64`): not residuals a fresh trace does not keep."""
    c = np.float64(3.0)

    def f(x):
        return inp.sum(x.at[1].set(x[0] * c) * x)

    x = POSITIVE[0]
    with transforming() as (log, _):
        kept = [[(r.aval, r.nbytes) for r in inert.saved_residuals(f, x)] for _ in range(4)]
    assert log[-1] == "m" and kept[1:] == kept[:1] * 3
    c = np.float64(4.0)  # another value: recorded afresh, as a Python number's would be
    assert_allclose(inert.grad(f)(x), plain_grad(f, x))


def plain_grad(f, x):
    inert.config.update("inert_grad_replay", False)
    try:
        return inert.grad(f)(x)
    finally:
        inert.config.update("inert_grad_replay", True)


def test_changed_static_values_and_shapes_get_their_own_recordings():
    def f(x, n, mode):
        SEEN.append(type(x).__name__)
        for _ in range(n):
            x = inp.sin(x) if mode == "sin" else inp.cos(x)
        return x

    jac = inert.jacfwd(f)
    ref = inert.jacfwd(functools.partial(f))
    for x in [np.ones(2), np.ones(2), np.ones(3), np.ones(2) * 0.5, np.ones(3)]:
        for n, mode in [(2, "sin"), (3, "sin"), (2, "cos")]:
            assert_allclose(jac(x, n, mode), ref(x, n, mode), rtol=1e-14)


def test_a_closure_over_a_changing_global_is_seen_by_each_call():
    scale = {"k": 1.0}

    def f(x):
        return inp.sin(x) * np.full(3, scale["k"])  # a new constant array each call

    for k in range(5):
        scale["k"] = float(k)
        out, tangent = inert.jvp(f, (V,), (W,))
        assert_allclose(out, np.sin(V) * k)
        assert_allclose(tangent, np.cos(V) * W * k)


def test_vmap_refuses_a_mapped_value_on_every_call():
    def f(x):
        return x if inp.sum(x) > 0 else -x

    for _ in range(3):
        with pytest.raises(inert.errors.ConcretizationError, match="one value per lane"):
            inert.vmap(f)(np.ones((2, 3)))


def test_vmap_allows_on_every_call_a_value_plain_vmap_leaves_unmapped():
    def f(x, p):  # the cond's output ignores the mapped operand: one value for all lanes
        return x * float(inert.lax.cond(p > 0, lambda a: 1.0, lambda a: 2.0, x))

    for _ in range(4):
        assert_allclose(inert.vmap(f, in_axes=(0, None))(np.arange(3.0), np.float64(1.0)),
                        np.arange(3.0))


def test_custom_vjp_replays_and_keeps_its_rule():
    @inert.custom_vjp
    def clipped(x):
        return inp.tanh(x)

    clipped.defvjp(lambda x: (inp.tanh(x), x),
                   lambda x, ct: (ct * inp.clip(1 - inp.tanh(x) ** 2, 0.5, 1.0),))
    g = inert.grad(lambda x: inp.sum(clipped(x) * x))
    x = np.linspace(-2, 2, 5)
    want = np.tanh(x) + x * np.clip(1 - np.tanh(x) ** 2, 0.5, 1.0)
    with transforming() as (log, _):
        for _ in range(4):
            assert_allclose(g(x), want, rtol=1e-14)
    assert log == ["r", "m", "m"]


SCALE = np.array([2.0])  # read by a custom rule, written in place between calls


def test_a_custom_rule_reading_an_array_written_in_place_sees_each_calls_contents():
    @inert.custom_vjp
    def double(x):
        return x * 2.0

    double.defvjp(lambda x: (double(x), None), lambda _, g: (g * SCALE,))
    closed = np.array([1.0])

    @inert.custom_vjp
    def triple(x):
        return x * 3.0

    triple.defvjp(lambda x: (triple(x), None), lambda _, g: (g * closed,))
    @inert.custom_vjp
    def helped(x):
        return x * 2.0

    helped.defvjp(lambda x: (helped(x), None), lambda _, g: (scaled(g),))
    for k in range(6):
        SCALE[0], closed[0] = k, -k
        assert inert.grad(lambda x: inp.sum(double(x) + triple(x)))(np.ones(3))[0] == 0.0
        assert inert.grad(lambda x: inp.sum(double(x)))(np.ones(3))[0] == k
        assert inert.grad(lambda x: inp.sum(helped(x)))(np.ones(3))[0] == k


def scaled(g):  # a helper of a rule, reading the global array
    return g * SCALE


def test_an_inner_function_closing_over_an_outer_value_replays_too():
    """`grad(lambda x: f(x, y))` inside a jvp in `y`: the outer value is a constant of
    the inner recording, passed on each call."""
    def h(y):
        return inert.grad(lambda x: inp.sum(inp.sin(x) * y ** 2))(np.full(3, 0.5))

    ys = [np.linspace(0, 1, 3) * k for k in range(1, 6)]
    got = [inert.jvp(h, (y,), (V,)) for y in ys]
    assert all(e.misses == 0 and e.hits >= 2 for e in replaying._entries.values())
    for g, y in zip(got, ys):
        assert_allclose(g[0], np.cos(0.5) * y ** 2, rtol=1e-14)
        assert_allclose(g[1], np.cos(0.5) * 2 * y * V, rtol=1e-14)
