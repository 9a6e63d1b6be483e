"""grad replays (interpreters/replay.py) where the plain path's behaviour is easy to
miss: weak types of Python scalars lifted after a divergence, rules that use a value
known while linearizing, pytree nodes whose static data is not hashable, and what
the cache must not keep. The plain path is `grad(functools.partial(f))`."""

from __future__ import annotations

import functools
import gc
import weakref

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import inert
import inert.numpy as inp
from inert import lax
from inert.api import replaying
from inert.errors import NonDifferentiableError
from inert.tree_util import Partial, register_pytree_node


@pytest.fixture(autouse=True)
def empty_cache():
    replaying._entries.clear()


def both(make, f, calls, **kwargs):
    """Each call's result through the replay path and through the plain path."""
    replayed, plain = make(f, **kwargs), make(functools.partial(f), **kwargs)
    return [(replayed(*args), plain(*args)) for args in calls]


def assert_same(got, want):
    for g, w in zip(inert.tree_util.tree_leaves(got), inert.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert_array_equal(g, w)


def test_a_python_scalar_lifted_after_a_divergence_stays_weakly_typed():
    """After the closed-over scalar changed, it is a constant input of the new
    recording; the compiled program computes on it as eager code does: `sin(c)` of a
    Python float is weak, so a float32 value stays float32."""
    c = [0.5]
    f = lambda x: inp.sum(x * inp.sin(c[0]))  # noqa: B023
    x = np.ones(3, np.float32)
    for c[0] in [0.5, 0.5, 0.7, 0.9]:
        (value, grad), (want_value, want_grad) = both(inert.value_and_grad, f, [(x,)])[0]
        assert value.dtype == want_value.dtype == np.float32
        assert_same((value, grad), (want_value, want_grad))


def _doubling(y):
    return inp.sum(lax.while_loop(lambda c: c[0] < 10.0, lambda c: c * 2.0, y))


def test_a_branch_not_taken_needs_no_reverse_derivative():
    """With the index known while linearizing, `cond` differentiates only the branch
    it takes, as the plain path does: a `while_loop` in the other one is no error."""
    f = lambda x: lax.cond(x[0] < 100.0, lambda y: inp.sum(inp.sin(y)), _doubling, x)
    xs = [(np.array([0.1, 0.2]) * k,) for k in range(1, 5)]
    for got, want in both(inert.value_and_grad, f, xs):
        assert_same(got, want)
    with pytest.raises(NonDifferentiableError, match="while_loop"):  # when it is taken
        inert.grad(f)(np.array([200.0, 1.0]))


def test_a_conversion_after_a_cond_with_a_known_index():
    """`float(y)` asks whether `y` has a derivative; `cond`'s index (computed before,
    not asked for) is known, so only the branch taken counts, as on the plain path."""
    def f(x):
        taken = x[0] > 100.0
        logged = float(inert.stop_gradient(inp.sin(x))[0])  # analyses `taken`, not its value
        y = lax.cond(taken, lambda w: w * 2.0, inert.stop_gradient, x)
        return float(y[0]) * inp.sum(x) + logged

    for got, want in both(inert.value_and_grad, f, [(np.ones(2) * k,) for k in range(4)]):
        assert_same(got, want)


def test_a_convolution_is_replayed():
    """Its dimension numbers are a namedtuple: plain data, compared by value."""
    f = lambda x: inp.sum(inp.convolve(x, x) ** 2)
    for got, want in both(inert.grad, f, [(np.arange(3.0) * k,) for k in range(4)]):
        assert_same(got, want)
    (entry,) = replaying._entries.values()
    assert entry.compiled is not None and entry.misses == 0


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


def test_wrapped_functions_taking_turns_are_each_replayed():
    """A decorator's wrapper has one code object for every function it wraps: the
    cache tells them apart by the code of what the wrapper closes over too."""
    x = np.ones(3)
    fs = [_logged(lambda x: inp.sum(inp.sin(x))), _logged(lambda x: inp.sum(x * x)),
          inert.jit(lambda x: inp.sum(inp.cos(x)), backend="numpy")]
    second = [inert.grad(lambda s: s ** 3), inert.grad(inp.sin)]  # grad's wrappers
    for _ in range(3):
        for f in fs:
            inert.grad(f)(x)
        for f in second:
            inert.grad(f)(2.0)
    outer = [e for key, e in replaying._entries.items() if key[-1] == 0]  # trace depth 0
    assert [e.misses for e in outer] == [0] * 5
    assert all(e.compiled is not None for e in outer)


def test_a_loop_body_with_a_nan_is_replayed():
    """Each call traces the body anew; its NaN literal is the recording's."""
    def f(x):
        step = lambda c, xi: (inp.where(xi > 0, c * xi, np.nan), None)  # noqa: E731
        return inp.nansum(lax.scan(step, x, x)[0])

    for got, want in both(inert.grad, f, [(np.array([1.0, -2.0, 3.0]) * k,) for k in (1, 2, 3)]):
        assert_same(got, want)
    (entry,) = replaying._entries.values()
    assert entry.compiled is not None and entry.misses == 0


class _Tagged:
    """A pytree node whose static data is a list (neither hashable nor an array)."""

    def __init__(self, value, tags):
        self.value, self.tags = value, tags


register_pytree_node(_Tagged, lambda t: ([t.value], t.tags), lambda tags, c: _Tagged(c[0], tags))


def test_pytree_nodes_with_unhashable_static_data():
    """As an argument, such a node cannot key the cache: the plain path. As an `aux`
    output whose static data cannot be compared (an array), the call is recorded."""
    f = lambda t: inp.sum(t.value * 2.0)
    calls = [(_Tagged(np.ones(2) * k, ["a"]),) for k in range(4)]
    for got, want in both(inert.grad, f, calls):
        assert_same(got.value, want.value)
    g = lambda x: (inp.sum(x * x), _Tagged(x, np.ones(2)))
    for got, want in both(inert.grad, g, [(np.ones(2) * k,) for k in range(4)], has_aux=True):
        assert_same(got[0], want[0])


def test_a_partial_argument_and_what_it_closes_over_are_not_kept():
    """A `Partial`'s function is its pytree node's static data: the cache key holds
    the structure's hash, not the function."""
    big = np.ones(10_000)
    alive = weakref.ref(big)
    scale = _partial_scaling(big)
    g = inert.grad(lambda x, scale: inp.sum(scale(x)))
    for _ in range(3):
        g(np.ones(3), scale)
    del big, scale
    gc.collect()
    assert alive() is None


def _partial_scaling(big):
    return Partial(lambda y: y * big[:3])


def _loss_with_rule(big):
    @inert.custom_jvp
    def scaled(x):
        return inp.sin(x) * big

    scaled.defjvp(lambda p, t: (scaled(p[0]), inp.cos(p[0]) * big * t[0]))
    return lambda x: inp.sum(scaled(x))


@pytest.mark.parametrize("out", [None, (), [1.0]])
def test_no_scalar_output_is_refused_on_every_path(out):
    for _ in range(3):
        with pytest.raises(TypeError, match="real float scalar"):
            inert.grad(lambda x: out)(np.ones(2))  # noqa: B023


def test_user_rules_and_what_they_close_over_are_kept_only_by_their_entry():
    """A custom_jvp's rule is replayed: its recording (the rule, the arrays it closes
    over, which its compiled gradient holds as constants, as `jit`'s would) stays in
    the cache while the entry does, and nowhere else."""
    big = np.ones(10_000)
    alive = weakref.ref(big)
    g = inert.grad(_loss_with_rule(big))
    for _ in range(3):
        np.testing.assert_allclose(g(np.zeros(10_000)), big)
    del big, g
    gc.collect()
    assert alive() is not None
    replaying._entries.clear()
    gc.collect()
    assert alive() is None


def test_a_rule_reading_a_rebound_global_or_closure_is_recorded_afresh():
    """A custom function's rules are traced when a recording is differentiated; a call
    whose rule reads a global or a closed-over value that was rebound since is another
    rule (`origin_of`), so it is recorded and differentiated again."""
    scale = [2.0]

    @inert.custom_vjp
    def f(x):
        return inp.sin(x) * 1.0

    def f_fwd(x):
        return f(x), x

    factor = scale[0]

    def f_bwd(x, ct):
        return (ct * inp.cos(x) * factor,)

    f.defvjp(f_fwd, f_bwd)
    g = inert.grad(lambda x: f(x) * 3.0)
    for k in range(6):
        if k == 4:
            factor = 5.0  # noqa: F841 — read by f_bwd's closure
        want = 3.0 * np.cos(0.3) * (5.0 if k >= 4 else 2.0)
        np.testing.assert_allclose(g(0.3), want, rtol=1e-14)


def _composed(fn, x, n, mode, scale=1):
    for _ in range(n):
        x = fn(x)
    return (inp.sum(x) if mode == "sum" else inp.mean(x)) * scale


def _times(c):
    return lambda t: t * c


def _calling(name):  # one code for every name: the cache key cannot tell them apart
    return lambda t: getattr(inp, name)(t)


def test_arguments_passed_as_they_are_never_replay_a_stale_recording():
    """A function, a Python int, a string given as they are (not differentiated) reach
    the program through the operations they make `f` do: each call that changes one
    gets its own program, whatever the calls before recorded, and calls that repeat
    replay."""
    x = np.array([0.3, 0.7])
    plan = [(inp.sin, 2, "sum"), (inp.sin, 2, "sum"), (inp.cos, 2, "sum"),
            (inp.sin, 2, "sum"), (inp.sin, 3, "sum"), (inp.sin, 2, "mean"),
            (inp.cos, 2, "sum"), (_times(2.0), 2, "sum"), (_times(3.0), 2, "sum"),
            (_times(3), 2, "sum"), (inp.cos, 2, "sum"), (inp.cos, 2, "sum"),
            (_calling("sin"), 2, "sum"), (_calling("sin"), 2, "sum"),
            (_calling("cos"), 2, "sum"), (_calling("sin"), 2, "sum")]
    calls = [(fn, x * (1 + k % 3), n, mode) for k, (fn, n, mode) in enumerate(plan)]
    for got, want in both(inert.value_and_grad, _composed, calls, argnums=1):
        assert_same(got, want)
    g, plain = inert.grad(_composed, 1), inert.grad(functools.partial(_composed), 1)
    for args in [(inp.tanh, x, 2, "sum")] * 4:  # replayed
        assert_same(g(*args), plain(*args))
    assert any(e.hits >= 2 and e.compiled is not None for e in replaying._entries.values())


def test_a_python_float_argument_that_changes_every_call():
    """Passed as it is (a literal), it makes the second recording diverge; from there
    it is a constant input, and the calls after replay that recording."""
    f = lambda x, t: inp.sum(inp.sin(x * t) * t ** 2)
    x = np.array([0.3, 0.7])
    for got, want in both(inert.value_and_grad, f, [(x, 0.1 * k) for k in range(1, 8)]):
        assert_same(got, want)
    (entry,) = replaying._entries.values()
    assert entry.hits >= 3 and entry.compiled is not None


def test_keyword_arguments_that_change_between_calls():
    x = np.array([0.3, 0.7])
    g, plain = inert.grad(_composed, 1), inert.grad(functools.partial(_composed), 1)
    for scale in [2, 2, 3, 3, True, 2.5, 2.5, 2]:
        assert_same(g(inp.sin, x, 1, "sum", scale=scale),
                    plain(inp.sin, x, 1, "sum", scale=scale))


def test_a_conversion_computes_only_what_the_plain_path_computes():
    """`float(stop_gradient(...))` asks which values have a derivative; the analysis
    computes no value a rule does not ask for: a singular `solve` nothing needs raises
    on no path (it did from the second call: every value the new equations read was
    computed first)."""
    def f(x):
        y = inp.linalg.solve(inp.zeros((2, 2)) * x[0], x)  # singular, never needed
        a = float(inert.stop_gradient(x[0] * 2.0))
        unused = y * a  # noqa: F841 — reads the solve's result after the first conversion
        b = float(inert.stop_gradient(x[1] * 3.0))
        return inp.sum(x * a * b)

    for got, want in both(inert.grad, f, [(np.array([1.0, 2.0]) * k,) for k in range(1, 5)]):
        assert_same(got, want)


def test_a_cond_index_from_before_a_conversion_is_computed_when_its_rule_asks():
    """`cond`'s rule asks for its index (known, it differentiates only the branch taken,
    as on the plain path): the index, computed from `h` before the first conversion
    and not computed then, is computed when the rule asks, and `float(y)` of the
    derivative-free branch's result is allowed."""
    def f(x):
        h = inp.sum(x)
        logged = float(inert.stop_gradient(x[0]))
        y = lax.cond(h > 100.0, lambda w: w * 2.0, inert.stop_gradient, x)
        return float(y[0]) * inp.sum(x) + logged

    for got, want in both(inert.value_and_grad, f, [(np.ones(2) * k,) for k in range(4)]):
        assert_same(got, want)
