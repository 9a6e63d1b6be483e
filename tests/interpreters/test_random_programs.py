"""Hypothesis generates programs: random DAGs of primitives over several inputs, some
passed Inactive, checked by finite differences, the dot-product test, and staging."""

import numpy as np
from harness import check_grads, check_staged
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp

UNARY = [inp.sin, inp.tanh, lambda x: inp.exp(-x * x), lambda x: x * 0.5 - 1.0,
         lambda x: inp.sqrt(x * x + 1.0), lambda x: inp.where(x > 0, x, 0.1 * x),
         lambda x: inp.cumsum(x), lambda x: x[::-1], lambda x: inp.sum(x) + x * 0.0]
BINARY = [lambda x, y: x * y, lambda x, y: x + y, lambda x, y: x - y * 2.0,
          lambda x, y: x / (y * y + 1.0), lambda x, y: inp.maximum(x, y),
          lambda x, y: inp.outer(x, y) @ y]


@st.composite
def programs(draw):
    """A list of steps; step k reads earlier values by index."""
    n_inputs = draw(st.integers(1, 3))
    steps = []
    for k in range(draw(st.integers(1, 6))):
        available = n_inputs + k
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)),
                          draw(st.integers(0, available - 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, available - 1)),
                          draw(st.integers(0, available - 1))))
    return n_inputs, steps


def run(steps, *inputs):
    values = list(inputs)
    for step in steps:
        if step[0] == "u":
            values.append(UNARY[step[1]](values[step[2]]))
        else:
            values.append(BINARY[step[1]](values[step[2]], values[step[3]]))
    return inp.sum(values[-1] * values[-1]) + values[-1]


@settings(max_examples=40, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1))
def test_random_programs_differentiate_correctly(program, seed):
    n_inputs, steps = program
    rng = np.random.default_rng(seed)
    args = tuple(rng.standard_normal(3) for _ in range(n_inputs))
    f = lambda *xs: run(steps, *xs)
    check_grads(f, args, rng)
    check_staged(f, args)


@settings(max_examples=25, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1), st.data())
def test_inactive_inputs_change_nothing_but_what_is_kept(program, seed, data):
    n_inputs, steps = program
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
