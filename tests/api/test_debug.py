"""inert.debug.print and callback: the values a program computes, printed while it runs,
in program order, under every transform, as jax.debug's are."""

import numpy as np

import inert
import inert.numpy as jnp


def f(x):
    inert.debug.print("x={x}", x=x)
    y = jnp.sin(x)
    inert.debug.print("y={}", y)
    return jnp.sum(y)


def _printed(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


X = np.array([0.0, 1.0])
LINES = ["x=[0. 1.]", f"y={np.sin(X)}"]


def test_eagerly_and_under_jit_each_call_prints_in_program_order(capsys):
    f(X)
    assert _printed(capsys) == LINES
    jitted = inert.jit(f)
    jitted(X)
    jitted(X)
    assert _printed(capsys) == LINES * 2  # at run time only, never while tracing
    inert.make_jaxpr(f)(X)
    assert _printed(capsys) == []


def test_under_grad_it_sees_the_primal_values_once(capsys):
    g = inert.grad(f)
    for _ in range(3):  # the first call, the recording, the replays: each prints
        np.testing.assert_allclose(g(X), np.cos(X))
    assert _printed(capsys) == LINES * 3
    inert.jit(inert.grad(f))(X)
    inert.grad(inert.jit(f))(X)
    inert.grad(lambda x: inert.grad(lambda x: f(x) * x)(x))(1.0)
    assert _printed(capsys) == LINES * 2 + ["x=1.0", f"y={np.sin(1.0)}"]


def test_under_vmap_each_lane_prints(capsys):
    inert.vmap(f)(np.array([[0.0, 1.0], [2.0, 3.0]]))
    assert _printed(capsys) == ["x=[0. 1.]", "x=[2. 3.]", f"y={np.sin([0.0, 1.0])}",
                                f"y={np.sin([2.0, 3.0])}"]


def body(i, c):
    inert.debug.print("i={} c={}", i, c)
    return c * 2.0


def test_inside_loops_each_iteration_prints_even_when_nothing_reads_the_loop(capsys):
    inert.lax.fori_loop(0, 2, body, 1.0)
    inert.jit(lambda c: inert.lax.fori_loop(0, 2, body, c))(1.0)
    assert _printed(capsys) == ["i=0 c=1.0", "i=1 c=2.0"] * 2

    def unused_loop(x):
        inert.lax.fori_loop(0, 2, body, 1.0)
        return x * 2.0

    assert inert.grad(unused_loop)(1.0) == 2.0
    inert.jit(unused_loop)(1.0)
    assert _printed(capsys) == ["i=0 c=1.0", "i=1 c=2.0"] * 2

    def scanned(c):
        return inert.lax.scan(lambda c, x: (body(0, c) * x, None), c, np.arange(1.0, 3.0))[0]

    assert inert.grad(scanned)(1.0) == 8.0
    inert.jit(inert.grad(scanned))(1.0)
    assert _printed(capsys) == ["i=0 c=1.0", "i=0 c=2.0"] * 2


def test_a_loop_body_printing_before_a_nonlinear_step_prints_once_a_step_under_grad(capsys):
    """The loop's residuals computed once outside it (from its constants only) leave the
    body's callbacks in the loop, and its final carry, read from the stacked residuals,
    is defined once."""
    w = np.array([[0.5, -0.2], [0.1, 0.4]])

    def f(h):
        def step(i, h):
            inert.debug.print("step {}", i)
            return jnp.tanh(w @ h)
        return jnp.sum(inert.lax.fori_loop(0, 3, step, h))

    h = np.array([0.3, -0.7])
    np.testing.assert_allclose(inert.grad(f)(h), inert.jacrev(f)(h))
    assert _printed(capsys) == ["step 0", "step 1", "step 2"] * 2


def test_callback_gets_immutable_arrays_and_keywords():
    seen = []
    inert.jit(lambda x: inert.debug.callback(lambda a, scale: seen.append((a, scale)), x,
                                             scale=x * 2))(X)
    (a, scale), = seen
    assert isinstance(a, inert.Array) and not a.flags.writeable
    np.testing.assert_array_equal(scale, X * 2)
