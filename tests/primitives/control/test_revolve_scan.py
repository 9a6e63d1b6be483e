"""A scan inside a budgeted checkpoint whose stacked residuals do not fit reverses by
binomial checkpointing: gradients unchanged, memory bounded by snapshots."""

import pytest
from harness import assert_allclose

import inert
import inert.numpy as inp
from inert import checkpoint_policies as cp
from inert import lax
from inert.benchmarks.memory import peak_bytes, reachable_array_bytes


def rnn(w, h0, xs, reverse=False):
    h, ys = lax.scan(lambda h, x: (inp.tanh(w @ h + x), inp.sin(h)), h0, xs, reverse=reverse)
    return inp.sum(h ** 2) + inp.sum(ys * xs)


def fori(w, h0):
    return inp.sum(lax.fori_loop(0, 40, lambda i, h: inp.tanh(w @ h) * 1.1, h0) ** 2)


def revolve_eqns(f, *args):
    _, vjp_fn = inert.vjp(f, *args)
    bodies = [e.params["jaxpr"] for e in vjp_fn.linear.jaxpr.eqns if "jaxpr" in e.params]
    return [e for b in bodies for e in b.eqns if e.primitive.name == "revolve_scan"]


def revolving(f, *args):
    """Whether the backward pass of `f` holds a revolve_scan."""
    return bool(revolve_eqns(f, *args))


def test_the_budget_sets_the_snapshots(rng):
    """A budget of the weight, one step's residual and 21 carries leaves 20 snapshots
    besides the initial carry; a fori_loop's counter (an iota, recomputed) costs none."""
    w, h0 = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4)
    f = lambda h0: inp.sum(lax.fori_loop(0, 500, lambda i, h: inp.tanh(w @ h), h0))
    (eqn,) = revolve_eqns(inert.checkpoint(f, policy=cp.memory_budget(w.nbytes + 22 * 32)),
                          h0)
    assert eqn.params["snapshots"] == 21


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients_are_unchanged(reverse, rng):
    w, h0, xs = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal(5), \
        rng.standard_normal((30, 5))
    f = lambda w, h0, xs: rnn(w, h0, xs, reverse)
    tight = inert.checkpoint(f, policy=cp.memory_budget(2000))
    assert revolving(tight, w, h0, xs)
    assert not revolving(inert.checkpoint(f, policy=cp.memory_budget(10 ** 6)), w, h0, xs)
    want = inert.grad(f, argnums=(0, 1, 2))(w, h0, xs)
    for got, expected in zip(inert.grad(tight, argnums=(0, 1, 2))(w, h0, xs), want):
        assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("budget", [300, 400, 1000])
def test_fori_loop_gradients_are_unchanged_for_any_snapshot_count(budget, rng):
    w, h0 = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4)
    tight = inert.checkpoint(fori, policy=cp.memory_budget(budget))
    assert revolving(tight, w, h0)
    want = inert.grad(fori, argnums=(0, 1))(w, h0)
    for got, expected in zip(inert.grad(tight, argnums=(0, 1))(w, h0), want):
        assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    _, vjp_fn = inert.vjp(tight, w, h0)
    assert_allclose(vjp_fn(1.0)[0], want[0], rtol=1e-12, atol=1e-12)


def test_the_backward_pass_keeps_snapshots_not_stacks(rng):
    n, steps = 4096, 300
    a, h0 = rng.uniform(0.5, 1.0, n), rng.standard_normal(n)
    f = lambda h0: inp.sum(lax.fori_loop(0, steps, lambda i, h: inp.tanh(a * h + 0.1), h0))
    carry = n * 8
    budget = 23 * carry  # a's bytes, one step's residual and 21 carries
    tight = inert.checkpoint(f, policy=cp.memory_budget(budget))
    assert revolving(tight, h0)
    _, vjp_fn = inert.vjp(tight, h0)
    assert reachable_array_bytes(vjp_fn) <= budget
    plain = peak_bytes(lambda: inert.grad(f)(h0))
    revolved = peak_bytes(lambda: inert.grad(tight)(h0))
    # the plain backward pass stacks a carry per step (300 of them); revolve keeps at most
    # 21 snapshots, one step's residuals, the cotangents and the step's temporaries (31
    # carries measured, in and out of the suite)
    assert plain > steps * carry and revolved < 34 * carry
    assert_allclose(inert.grad(tight)(h0), inert.grad(f)(h0), rtol=1e-12, atol=1e-12)
