"""Common-subexpression elimination (interpreters/cse.py): repeats go, nothing else."""

import attrs
import numpy as np
from numpy.testing import assert_array_equal

import inert
import inert.numpy as inp
from inert import lax
from inert.core.ir import Var
from inert.interpreters.cse import SMALL, cse_jaxpr
from inert.interpreters.eval import eval_jaxpr


def jaxpr_of(f, *args):
    closed = inert.make_jaxpr(f)(*args)
    return closed.jaxpr, closed.consts


def primitives(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def test_a_repeated_equation_is_computed_once_and_its_readers_read_the_first():
    def f(x):
        a, b = x[::2], x[::2]  # the same slice twice
        return a * b + inp.sin(b), inp.sin(a)

    x = np.linspace(0, 1, 6)
    jaxpr, consts = jaxpr_of(f, x)
    simpler = cse_jaxpr(jaxpr)
    assert primitives(simpler) == ["slice", "mul", "sin", "add"]
    for got, want in zip(eval_jaxpr(simpler, consts, [x]), eval_jaxpr(jaxpr, consts, [x])):
        assert_array_equal(got, want)


def test_literals_of_another_type_or_zero_sign_and_other_params_stay_apart():
    def f(x):
        return x * 0.0, x * -0.0, x + 1, x + 1.0, x[::2], x[1::2]

    x = np.array([-1.0, 2.0, 3.0, 4.0])
    jaxpr, consts = jaxpr_of(f, x)
    simpler = cse_jaxpr(jaxpr)
    assert len(simpler.eqns) == len(jaxpr.eqns)
    for got, want in zip(eval_jaxpr(simpler, consts, [x]), eval_jaxpr(jaxpr, consts, [x])):
        assert_array_equal(got, want)
        assert np.signbit(got).tolist() == np.signbit(want).tolist()


def test_reads_of_a_ref_around_a_write_stay_two():
    def f(x):
        r = inert.new_ref(x)
        before = r[...] * 2.0
        r[...] = x + 1.0
        return before + r[...] * 2.0

    x = np.ones(3)
    jaxpr, consts = jaxpr_of(f, x)
    simpler = cse_jaxpr(jaxpr)
    assert primitives(simpler).count("get") == 2
    assert_array_equal(eval_jaxpr(simpler, consts, [x])[0], np.full(3, 6.0))


def test_a_large_value_dead_before_its_repeat_is_made_again():
    """Merging would keep it alive in between, raising the peak; a small one merges."""
    def f(x):
        total = inp.sum(x[::2] * 2.0)  # the slice dies here
        return total + inp.sum(x[::2] * 3.0)

    for n, slices in [(4 * SMALL, 2), (16, 1)]:  # float64: a slice of n/2 * 8 bytes
        x = np.ones(n)
        jaxpr, consts = jaxpr_of(f, x)
        simpler = cse_jaxpr(jaxpr)
        assert primitives(simpler).count("slice") == slices
        assert eval_jaxpr(simpler, consts, [x])[0] == 2.5 * n


def test_a_product_with_a_broadcast_one_is_its_other_operand_bit_for_bit():
    def f(x, s):
        ones = lax.broadcast_in_dim(1.0, x.shape, ())
        twos = lax.broadcast_in_dim(2.0, x.shape, ())
        return x * ones, ones * x, x * twos, s * ones, x * 1  # the last: a literal one

    x = np.array([np.nan, -0.0, np.inf, 3.5])
    jaxpr, consts = jaxpr_of(f, x, 2.0)
    simpler = cse_jaxpr(jaxpr)
    assert primitives(simpler).count("mul") == 2  # x * twos, and the broadcasting s * ones
    assert simpler.outvars[0] is simpler.invars[0] and simpler.outvars[1] is simpler.invars[0]
    args = [x, 2.0]
    for got, want in zip(eval_jaxpr(simpler, consts, args), eval_jaxpr(jaxpr, consts, args)):
        assert_array_equal(got, want)
        assert np.signbit(got).tolist() == np.signbit(want).tolist()


def test_a_complex_product_with_a_one_stays():
    """`(a + bi)(1 + 0i)` is not `a + bi`: `b * 0` is NaN where `b` is infinite, and
    the real part of `-0 - 0i` times one is +0."""
    def f(x):
        return x * lax.broadcast_in_dim(1.0 + 0.0j, x.shape, ()), x * 1.0

    x = np.array([complex(1.0, np.inf), complex(-0.0, -0.0), complex(np.nan, 2.0)])
    jaxpr, consts = jaxpr_of(f, x)
    simpler = cse_jaxpr(jaxpr)
    assert primitives(simpler).count("mul") == 2
    for got, want in zip(eval_jaxpr(simpler, consts, [x]), eval_jaxpr(jaxpr, consts, [x])):
        assert got.tobytes() == want.tobytes() != x.tobytes()


def test_a_loop_that_calls_back_is_never_merged_with_its_repeat():
    """Two equal loops whose body prints print twice (the second equation is the first
    with new outputs: the same body, the same operands)."""
    seen = []

    def f(x):
        def body(i, c):
            inert.debug.callback(seen.append, i)
            return c * 2.0
        return lax.fori_loop(0, 2, body, x)

    x = np.ones(2)
    jaxpr, consts = jaxpr_of(f, x)
    (loop,) = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    again = attrs.evolve(loop, outputs=tuple(Var(v.aval) for v in loop.outputs))
    twice = attrs.evolve(jaxpr, eqns=(*jaxpr.eqns, again),
                         outvars=(*jaxpr.outvars, *again.outputs))
    simpler = cse_jaxpr(twice)
    assert primitives(simpler).count("scan") == 2
    eval_jaxpr(simpler, consts, [x])
    assert len(seen) == 4
