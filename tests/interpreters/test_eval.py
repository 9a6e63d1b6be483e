"""The eval interpreter's caches hold nothing beyond the programs still in use."""

import gc
import operator
import tracemalloc

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert import lax
from inert.core.trace import impl_rules
from inert.interpreters import eval as eval_interpreter
from inert.primitives.elementwise import piecewise
from inert.primitives.shape.slicing import slice_impl


def test_repeated_grads_of_loops_leak_nothing():
    """Each grad of a loop compiles fresh bodies; they must die with the call (a
    cache entry whose value held its key never did)."""
    xs = np.ones((5, 3))
    f = lambda x: inp.sum(lax.scan(lambda c, y: (inp.sin(c) * y, c), x, xs)[0]
                          + lax.fori_loop(0, 3, lambda i, c: inp.tanh(c) * 1.1, x))
    x = np.ones(3)
    for _ in range(3):  # let every one-off cache fill
        inert.grad(f)(x)
    gc.collect()
    entries, objects = len(eval_interpreter._compiled), len(gc.get_objects())
    for _ in range(20):
        inert.grad(f)(x)
    gc.collect()
    assert len(eval_interpreter._compiled) == entries
    assert len(gc.get_objects()) - objects < 20  # was about 120 per call


def test_values_asked_for_by_python_control_flow_die_with_the_grad_call():
    """`if sum(h) > 0` under grad computes h early and keeps it for the forward pass;
    it must be dropped when the call returns, not when the cyclic collector runs."""
    def f(x):
        h = inp.tanh(x) * 2.0
        return inp.sum(inp.sin(x)) if inp.sum(h) > 0 else inp.sum(inp.cos(x))

    x = np.linspace(0.1, 1.0, 100_000)
    g = inert.grad(f)
    g(x)
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        g(x)
        alive, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert alive < x.nbytes // 4, alive  # h and tanh(x) were 1.6 MB


def test_compiled_code_skips_the_checks_its_staged_program_passed():
    """`checked_impl` re-runs the abstract eval before numpy (which would accept what
    it rejects); a compiled program was checked when staged, so it calls numpy's."""
    (eqn,) = inert.make_jaxpr(lambda x: x[1:3])(np.arange(4.0)).jaxpr.eqns
    assert eval_interpreter.impl_step(eqn).fn.func is slice_impl
    with pytest.raises(inert.errors.ShapeError):  # eagerly, the check runs
        inert.lax.slice(np.arange(4.0), (1,), (9,))


def test_a_weakly_typed_array_does_not_widen_a_float32_array_it_meets():
    """`select_n` of two Python scalars is a weakly typed float64 array (as in a
    rule of cholesky's derivative); beside a float32 array the result is float32, as
    the types say, in the interpreter and in compiled code alike."""
    mask = np.array([True, False, True])
    f = lambda x: x * piecewise.select_n(mask, 1.0, 0.5)
    x = np.ones(3, np.float32)
    closed = inert.make_jaxpr(f)(x)
    assert closed.jaxpr.outvars[0].aval.dtype == np.float32
    for out in (inert.eval_jaxpr(closed.jaxpr, closed.consts, [x])[0], inert.jit(f)(x)):
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, [0.5, 1.0, 0.5])


def test_compiled_code_keeps_python_scalar_inputs_weakly_typed():
    """A weakly typed input holds a Python scalar: an operation on such inputs only
    gives one too, as when the program is interpreted (or the code run eagerly)."""
    f = lambda c, x: x * inp.sin(c)
    x = np.ones(3, np.float32)
    h = lambda c, x: x * inp.sin(c) ** 2
    for backend in ("numpy", "numba"):  # numba: `sin` a scalar kernel's, `mul` numpy's
        assert inert.jit(f, backend=backend)(0.5, x).dtype == f(0.5, x).dtype == np.float32
        assert inert.jit(h, backend=backend)(0.5, x).dtype == np.float32


def _rewritten_primitives(f, *args) -> list[str]:
    """The primitives whose compiled step writes its result into an operand."""
    jaxpr = inert.make_jaxpr(f)(*args).jaxpr
    steps = [eval_interpreter.impl_step(e) for e in jaxpr.eqns]
    return [e.primitive.name for e, s, r in zip(
        jaxpr.eqns, steps, eval_interpreter.reusing_buffers(jaxpr, steps)) if r.fn is not s.fn]


def test_an_elementwise_step_writes_into_a_large_intermediate_it_reads_last():
    x, w, b = np.ones((256, 512)), np.ones((512, 512)) / 512, np.ones(512)
    layer = lambda x, w, b: inp.tanh(x @ w + b)
    assert _rewritten_primitives(layer, x, w, b) == ["add", "tanh"]
    assert _rewritten_primitives(layer, x[:8], w[:, :8], b[:8]) == []  # small: no gain
    assert _rewritten_primitives(lambda x: inp.tanh(x + 1.0), x) == ["tanh"]  # never x
    h_twice = lambda x, w: (lambda h: inp.tanh(h) * h.T.T)(x @ w)  # h read again
    assert _rewritten_primitives(h_twice, x, w) == ["mul"]
    h_returned = lambda x, w: (lambda h: (h, inp.tanh(h)))(x @ w)
    assert _rewritten_primitives(h_returned, x, w) == []
    got = inert.jit(layer)(x, w, b)
    np.testing.assert_array_equal(got, np.tanh(x @ w + b))
    assert np.all(x == 1) and np.all(b == 1)


OPERAND_PAIRS = [  # an array beside each kind of operand the impl tells apart
    (np.array([1.5, -0.0, np.inf]), np.array([2.0, 3.0, np.inf])),
    (np.array([1.5, -0.0, np.inf], np.float32), 2.0),  # a Python number, weakly typed
    (np.float64(-0.0), np.array([3.0, np.nan])),  # a numpy float scalar
    (np.array([100, -128], np.int8), np.int8(3)),  # a numpy integer scalar: wraps
    (np.array(2.5), np.array([[1.0], [0.0]])),  # a 0-d array
]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("x, y", OPERAND_PAIRS)
def test_an_arithmetic_step_with_an_array_result_calls_the_operator_as_its_impl_would(op, x, y):
    """The impl picks numpy's scalar arithmetic or the ufunc per call; a step whose
    result has a shape calls Python's operator, the impl's choice there, directly: the
    same bits, dtype and type as the interpreter's."""
    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
         "mul": lambda x, y: x * y, "div": lambda x, y: x / y}[op]
    closed = inert.make_jaxpr(f)(x, y)
    (eqn,) = closed.jaxpr.eqns
    assert eval_interpreter.impl_step(eqn).fn is getattr(operator, "truediv" if op == "div"
                                                         else op)
    (want,) = inert.eval_jaxpr(closed.jaxpr, closed.consts, [x, y])
    (got,) = eval_interpreter.compile_jaxpr(closed.jaxpr)(closed.consts, [x, y])
    assert (type(got), got.dtype, got.tobytes()) == (type(want), want.dtype, want.tobytes())


def test_an_arithmetic_step_with_a_scalar_result_keeps_its_impl():
    """Two numpy scalars: the impl chooses per call (a numpy integer's operator warns
    on overflow, where the ufunc wraps), so the step calls the impl."""
    closed = inert.make_jaxpr(lambda x, y: x * y)(np.int8(100), np.int8(3))
    (eqn,) = closed.jaxpr.eqns
    assert eval_interpreter.impl_step(eqn).fn is impl_rules[eqn.primitive]
    (got,) = eval_interpreter.compile_jaxpr(closed.jaxpr)(closed.consts, [np.int8(100),
                                                                          np.int8(3)])
    assert got == np.int8(44) and got.dtype == np.int8
