"""A budgeted loop composes: under `jit` (both backends: its backward pass is one
`revolve_backward` equation, the schedule not unrolled), `vmap` (one schedule for every
lane), grad of grad (the second derivative through the plain scan's backward pass) and
refs, with the gradients of the unbudgeted function; and the backward pass runs exactly
revolve's count of forward steps."""


import numpy as np
import pytest
from harness import assert_allclose

import inert
import inert.numpy as inp
from inert import checkpoint_policies as cp
from inert import lax
from inert.benchmarks.memory import reachable_array_bytes
from inert.interpreters.remat import min_forward_steps


def rnn(w, h0, xs):
    h, ys = lax.scan(lambda h, x: (inp.tanh(w @ h + x), inp.sin(h)), h0, xs)
    return inp.sum(h ** 2) + inp.sum(ys * xs)


def rnn_with_ref(w, h0, xs):
    """The same loop, also summing its states into a ref the body writes."""
    acc = inert.empty_ref(h0.shape)

    def step(h, x):
        h = inp.tanh(w @ h + x)
        acc[...] += h
        return h, None

    h = lax.scan(step, h0, xs)[0]
    return inp.sum(h ** 2) + inp.sum(inert.freeze(acc) ** 2)


BUDGET = 2000  # the weight, the xs and a few carries: the 30 steps' residuals do not fit


@pytest.fixture
def args(rng):
    return (rng.standard_normal((5, 5)) * 0.4, rng.standard_normal(5),
            rng.standard_normal((30, 5)))


def primitive_names(jaxpr) -> list[str]:
    """Every equation's primitive, inside bodies too."""
    names, pending = [], [jaxpr]
    while pending:
        for eqn in pending.pop().eqns:
            names.append(eqn.primitive.name)
            pending.extend(v for v in eqn.params.values() if isinstance(v, inert.core.ir.Jaxpr))
    return names


def budgeted(f):
    return inert.checkpoint(f, policy=cp.memory_budget(BUDGET))


def assert_same(got, want):
    for g, w in zip(got, want):
        assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_under_jit_the_backward_pass_is_one_equation(backend, args):
    grad = inert.grad(budgeted(rnn), argnums=(0, 1, 2))
    names = primitive_names(inert.make_jaxpr(grad)(*args).jaxpr)
    assert names.count("revolve_backward") == 1 and len(names) < 40  # 30 steps: not unrolled
    want = inert.grad(rnn, argnums=(0, 1, 2))(*args)
    assert_same(inert.jit(grad, backend=backend)(*args), want)
    assert_same(inert.grad(inert.jit(budgeted(rnn), backend=backend), argnums=(0, 1, 2))(*args),
                want)


def test_vmap_plays_one_schedule_for_every_lane(args):
    w, h0, xs = args
    ws = np.stack([w, 0.5 * w, -w])
    grad = inert.grad(budgeted(rnn), argnums=(0, 1))
    names = primitive_names(inert.make_jaxpr(inert.vmap(grad, in_axes=(0, None, None)))(
        ws, h0, xs).jaxpr)
    assert names.count("revolve_backward") == 1
    want = inert.vmap(inert.grad(rnn, argnums=(0, 1)), in_axes=(0, None, None))(ws, h0, xs)
    assert_same(inert.vmap(grad, in_axes=(0, None, None))(ws, h0, xs), want)
    # lanes in the xs (moved off the scanned axis) and the carry
    xss, h0s = np.stack([xs, 2 * xs]), np.stack([h0, -h0])
    want = inert.vmap(inert.grad(rnn, argnums=(0, 2)), in_axes=(None, 0, 0))(w, h0s, xss)
    assert_same(inert.vmap(inert.grad(budgeted(rnn), argnums=(0, 2)), in_axes=(None, 0, 0))(
        w, h0s, xss), want)


def test_jacrev_equals_jacfwd(args):
    f = budgeted(lambda w, h0, xs: lax.scan(lambda h, x: (inp.tanh(w @ h + x), None),
                                           h0, xs)[0])
    assert_same([inert.jacrev(f, argnums=1)(*args)], [inert.jacfwd(f, argnums=1)(*args)])


def test_second_derivatives_are_the_unbudgeted_ones(args):
    w, h0, xs = args
    assert_same([inert.hessian(budgeted(rnn), argnums=1)(*args)],
                [inert.hessian(rnn, argnums=1)(*args)])

    def grad_norm(f):
        return lambda w: inp.sum(inert.grad(f, argnums=(0, 1))(w, h0, xs)[0] ** 2)

    assert_same([inert.grad(grad_norm(budgeted(rnn)))(w)], [inert.grad(grad_norm(rnn))(w)])
    tangent = np.ones_like(h0)
    hvp = lambda f: inert.jvp(lambda h: inert.grad(f, argnums=1)(w, h, xs), (h0,), (tangent,))
    assert_same(hvp(budgeted(rnn)), hvp(rnn))


def test_refs_inside_and_around_a_budgeted_loop(args):
    w, h0, xs = args
    inside = budgeted(rnn_with_ref)
    _, vjp_fn = inert.vjp(inside, *args)
    assert "revolve_scan" in primitive_names(vjp_fn.linear.jaxpr)
    assert_same(inert.grad(inside, argnums=(0, 1, 2))(*args),
                inert.grad(rnn_with_ref, argnums=(0, 1, 2))(*args))

    def around(f):
        def g(w, h0, xs):
            total = inert.empty_ref(())
            total[...] += f(w, h0, xs)
            total[...] += inp.sum(h0 ** 2)
            return inert.freeze(total)
        return g

    assert_same(inert.grad(around(budgeted(rnn)), argnums=(0, 1, 2))(*args),
                inert.grad(around(rnn), argnums=(0, 1, 2))(*args))


@pytest.mark.parametrize("steps", [10, 37])
@pytest.mark.parametrize("snapshots", [1, 2, 4])
def test_the_backward_pass_runs_revolves_count_of_forward_steps(steps, snapshots, rng):
    """Each step calls back once when it runs: the forward pass `steps` times, the
    backward pass once per reversed step (for its residuals) and once per step
    recomputed, which must be revolve's optimum t(steps, snapshots)."""
    w, h0 = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4)
    runs = []

    def f(h0):
        def step(i, h):
            inert.debug.callback(lambda: runs.append(i))
            return inp.tanh(w @ h)
        return inp.sum(lax.fori_loop(0, steps, step, h0))

    # the weight, the initial carry, one step's residual (a tanh output) and the
    # snapshots besides the initial carry
    budget = w.nbytes + h0.nbytes + h0.nbytes + (snapshots - 1) * h0.nbytes
    _, vjp_fn = inert.vjp(inert.checkpoint(f, policy=cp.memory_budget(budget)), h0)
    (eqn,) = [e for b in vjp_fn.linear.jaxpr.eqns for e in b.params["jaxpr"].eqns
              if e.primitive.name == "revolve_scan"]
    assert eqn.params["snapshots"] == snapshots
    assert len(runs) == steps
    runs.clear()
    got = vjp_fn(1.0)[0]
    assert len(runs) == steps + min_forward_steps(steps, snapshots)
    runs.clear()
    assert_allclose(got, inert.grad(f)(h0), rtol=1e-12, atol=1e-12)
    assert len(runs) == steps  # the plain gradient's forward loop, each step once


def test_the_tangent_map_runs_forward_under_vmap_and_jvp(args):
    """`linearize`'s tangent function evaluates the budgeted loop's tangent map forwards,
    as the scan it stands for."""
    w, h0, xs = args
    _, f_jvp = inert.linearize(lambda h: budgeted(rnn)(w, h, xs), h0)
    _, want_jvp = inert.linearize(lambda h: rnn(w, h, xs), h0)
    tangents = np.eye(5)
    assert_same([inert.vmap(f_jvp)(tangents)], [inert.vmap(want_jvp)(tangents)])
    assert_same(inert.jvp(f_jvp, (h0,), (h0,)), inert.jvp(want_jvp, (h0,), (h0,)))


def test_a_loops_smallest_budget_is_named_and_is_feasible(args):
    """Below every plan the error names the smallest budget; that budget is kept (the
    loop revolving with one snapshot) and gives the unbudgeted gradients."""
    with pytest.raises(inert.errors.MemoryBudgetError) as e:
        inert.grad(inert.checkpoint(rnn, policy=cp.memory_budget(100)))(*args)
    smallest = e.value.smallest
    assert f"the smallest feasible budget is {smallest:,} bytes" in str(e.value)
    tight = inert.checkpoint(rnn, policy=cp.memory_budget(smallest))
    _, vjp_fn = inert.vjp(tight, *args)
    assert reachable_array_bytes(vjp_fn) <= smallest
    assert "revolve_scan" in primitive_names(vjp_fn.linear.jaxpr)
    assert_same(inert.grad(tight, argnums=(0, 1, 2))(*args),
                inert.grad(rnn, argnums=(0, 1, 2))(*args))


def test_the_reported_recomputation_counts_revolves_steps(rng):
    """print_saved_residuals' cost of a revolving loop: its step's, once per reversed step
    and once per forward step recomputed (besides what the body recomputes outside the
    loop): linear in revolve's count."""
    w, h0 = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4)
    f = lambda h0: inp.sum(lax.fori_loop(0, 40, lambda i, h: inp.tanh(w @ h), h0))
    costs = {}
    for snapshots in (1, 3, 6):
        budget = w.nbytes + h0.nbytes + h0.nbytes + (snapshots - 1) * h0.nbytes
        costs[snapshots] = inert.saved_residuals(
            inert.checkpoint(f, policy=cp.memory_budget(budget)), h0).recomputed.flops
    runs = {c: 40 + min_forward_steps(40, c) for c in costs}
    per_step = (costs[1] - costs[3]) / (runs[1] - runs[3])
    assert per_step > 0 and costs[3] - costs[6] == per_step * (runs[3] - runs[6])
