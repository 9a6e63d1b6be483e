"""checkpoint: the backward pass recomputes what the forward pass would have kept."""

import numpy as np
import pytest
from harness import assert_allclose, check_grads, check_staged

import inert
import inert.numpy as inp
from inert import lax
from inert.benchmarks.memory import reachable_array_bytes


def block(x, w):
    return inp.tanh(inp.tanh(x @ w) @ w)


def loss(w, x, checkpointed):
    layer = inert.checkpoint(block) if checkpointed else block
    return inp.sum(layer(layer(x, w), w) ** 2)


def test_residuals_are_the_inputs_of_the_checkpointed_blocks(rng):
    w, x = rng.standard_normal((8, 8)), rng.standard_normal((4, 8))
    plain = inert.saved_residuals(lambda w, x: loss(w, x, False), w, x)
    ck = inert.saved_residuals(lambda w, x: loss(w, x, True), w, x)
    assert sum(r.nbytes for r in ck) == w.nbytes + 3 * x.nbytes  # w, x, block 1 out, 2 out
    assert sum(r.nbytes for r in ck) < sum(r.nbytes for r in plain)
    _, vjp_fn = inert.vjp(lambda w, x: loss(w, x, True), w, x)
    assert reachable_array_bytes(vjp_fn) == sum(r.nbytes for r in ck)


def test_derivatives_equal_the_plain_ones(rng):
    w, x = rng.standard_normal((5, 5)) * 0.5, rng.standard_normal((3, 5))
    for argnums in (0, 1, (0, 1)):
        got = inert.grad(loss, argnums=argnums)(w, x, True)
        want = inert.grad(loss, argnums=argnums)(w, x, False)
        assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_grads(lambda w, x: loss(w, x, True), (w, x), rng, order=2)
    check_staged(lambda w, x: loss(w, x, True), (w, x))


def test_inactive_inputs_are_not_kept(rng):
    w, x = rng.standard_normal((6, 6)), rng.standard_normal((2, 6))
    f = inert.checkpoint(lambda w, x: inp.sum(inp.sin(w) * 3.0) + inp.sum(x * x))
    infos = inert.saved_residuals(f, inert.Inactive(w), x)
    assert [r.origin for r in infos] == ["input 1"]


def test_checkpoint_in_scan_vmap_and_hessian(rng):
    w, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((5, 3))
    step = inert.checkpoint(lambda h, x: (inp.tanh(w @ h + x), None))
    f = lambda h0: inp.sum(lax.scan(step, h0, xs)[0])
    check_grads(f, (rng.standard_normal(3),), rng)
    g = inert.vmap(inert.grad(lambda x: inp.sum(inert.checkpoint(inp.sin)(x) ** 2)))
    xs2 = rng.standard_normal((4, 3))
    np.testing.assert_allclose(g(xs2), 2 * np.sin(xs2) * np.cos(xs2), rtol=1e-12)
    h = inert.hessian(lambda x: inp.sum(inert.checkpoint(inp.tanh)(x) * x))(xs2[0])
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)


# checkpoint around control flow: the jvp of a `cond`/`scan` inside the body computes
# primal and tangent outputs in one equation; both partial evaluation (which outputs
# are known) and the transpose must split it with the control-flow rules.
CONTROL_FLOW_BODIES = {
    "cond": lambda x: lax.cond(inp.sum(x) > 0, lambda a: inp.sin(a) * a, inp.cos, x),
    "switch": lambda x: lax.switch(1, [inp.sin, lambda a: inp.tanh(a) * a, inp.exp], x),
    "traced switch": lambda x: lax.switch((inp.sum(x) > 0).astype(inp.int32),
                                          [inp.sin, lambda a: inp.tanh(a) * a], x),
    "scan": lambda x: lax.scan(lambda c, y: (inp.sin(c) * y, c * c), x, x * 0.5 + 1.0),
    "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, c: inp.tanh(c) * 1.5, x),
}


def _scalar_loss(body, wrap):
    def loss(x):
        out = wrap(body)(x)
        leaves = inert.tree_util.tree_leaves(out)
        return sum(inp.sum(leaf ** 2) for leaf in leaves)

    return loss


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW_BODIES))
def test_checkpoint_around_control_flow_in_reverse_mode(rng, name):
    body = CONTROL_FLOW_BODIES[name]
    x = rng.standard_normal(3) * 0.5
    check_grads(inert.checkpoint(body), (x,), rng, order=2)  # jvp, vjp and their jvp/vjp
    loss, plain = _scalar_loss(body, inert.checkpoint), _scalar_loss(body, lambda f: f)
    assert_allclose(inert.grad(loss)(x), inert.grad(plain)(x), rtol=1e-12, atol=1e-12)
    _, f_jvp = inert.linearize(loss, x)
    assert_allclose(f_jvp(np.ones(3)), inert.jvp(plain, (x,), (np.ones(3),))[1], rtol=1e-12)
    assert_allclose(inert.jacrev(inert.checkpoint(body))(x), inert.jacfwd(body)(x),
                    rtol=1e-10, atol=1e-12)
    assert_allclose(inert.hessian(loss)(x), inert.hessian(plain)(x), rtol=1e-9, atol=1e-12)
    grad_of_grad = inert.grad(lambda a: inp.sum(inert.grad(loss)(a) ** 2))
    assert_allclose(grad_of_grad(x), inert.grad(lambda a: inp.sum(inert.grad(plain)(a) ** 2))(x),
                    rtol=1e-9, atol=1e-12)
