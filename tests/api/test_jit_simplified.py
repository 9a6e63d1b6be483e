"""jit compiles its trace simplified (`interpreters/cse.py`, as a replayed grad does):
products with a broadcast one dropped, repeats merged, every value bit for bit the
unsimplified program's, in its dtype and shape."""

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert import lax
from inert.api import compiled as jit_module
from inert.core.ir import Literal
from inert.interpreters.cse import cse_jaxpr


def edges(dtype) -> np.ndarray:
    """±0, NaNs of either sign, infinities, the smallest subnormal, the largest number."""
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.5, info.smallest_subnormal,
                     -info.max], dtype)


def sum_of_sines(x):
    return inp.sum(inp.sin(x) * x)


@pytest.fixture
def compiled_programs(monkeypatch):
    """The jaxprs jit's numpy backend compiles, in order."""
    programs = []
    compile_jaxpr = jit_module.compile_jaxpr
    monkeypatch.setattr(jit_module, "compile_jaxpr",
                        lambda jaxpr: programs.append(jaxpr) or compile_jaxpr(jaxpr))
    return programs


def _is_broadcast_one(atom, producers) -> bool:
    eqn = producers.get(atom)
    if eqn is not None and eqn.primitive.name == "broadcast_in_dim":
        atom = eqn.inputs[0]
    return type(atom) is Literal and atom.val == 1


def test_jit_of_grad_multiplies_by_no_broadcast_one(compiled_programs):
    """grad of a sum seeds its backward pass with a broadcast one, which each
    coefficient is multiplied by; the compiled program has neither."""
    x = np.array([0.1, 0.2, 0.3])
    got = inert.jit(inert.grad(sum_of_sines), backend="numpy")(x)
    (program,) = compiled_programs
    producers = {v: e for e in program.eqns for v in e.outputs}
    assert "broadcast_in_dim" not in [e.primitive.name for e in program.eqns]
    assert not [e for e in program.eqns if e.primitive.name == "mul"
                and any(_is_broadcast_one(a, producers) for a in e.inputs)]
    traced = inert.make_jaxpr(inert.grad(sum_of_sines))(x)
    (want,) = inert.eval_jaxpr(traced.jaxpr, traced.consts, [x])  # unsimplified
    assert got.tobytes() == want.tobytes()
    assert len(program.eqns) < len(traced.jaxpr.eqns)


def _products_with_ones(x):
    ones = inp.ones_like(x)
    return x * ones, ones * x, x * 1, x * lax.broadcast_in_dim(1, x.shape, ())


def _broadcasting_products(x, s):
    """A one of another shape or type: the product is not its operand."""
    return (s * inp.ones(x.shape, x.dtype), x * inp.ones((2, *x.shape), x.dtype),
            s * inp.ones((), x.dtype), x * inp.ones(x.shape, np.float64), x * True)


CASES = [
    (inert.grad(sum_of_sines), [edges(np.float64)]),
    (inert.grad(sum_of_sines), [edges(np.float32)]),
    (_products_with_ones, [edges(np.float64)]),
    (_products_with_ones, [edges(np.float16)]),
    (_products_with_ones, [np.array([0, -1, 2**31 - 1, -2**31], np.int32)]),
    (_products_with_ones, [np.array([complex(1, np.inf), complex(-0.0, -0.0), np.nan])]),
    (_broadcasting_products, [edges(np.float32), -0.0]),
    (_broadcasting_products, [edges(np.float32), np.float32(np.nan)]),
    (_broadcasting_products, [np.array([0, -3], np.int8), 7]),
]


@pytest.mark.parametrize("f, args", CASES)
def test_simplified_program_is_the_unsimplified_bit_for_bit(f, args):
    """On ±0, NaNs of either sign, infinities, subnormals and integer extremes: the
    same bits, dtypes and shapes from jit's numpy backend as from the traced program
    interpreted; simplifying keeps each output's aval, weak type included."""
    traced = inert.make_jaxpr(f)(*args)
    simplified = cse_jaxpr(traced.jaxpr)
    assert [v.aval for v in simplified.outvars] == [v.aval for v in traced.jaxpr.outvars]
    wants = inert.eval_jaxpr(traced.jaxpr, traced.consts, list(args))
    gots = as_list(inert.jit(f, backend="numpy")(*args))
    assert len(gots) == len(wants)
    for got, want in zip(gots, wants):
        want = np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert got.tobytes() == want.tobytes()


def as_list(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def test_a_product_dropped_to_an_input_returns_no_view_of_it():
    """`x * ones` compiles to `x`: the caller writing `x` afterwards leaves the result."""
    x = np.array([1.0, -0.0, np.nan])
    out = inert.jit(lambda x: x * inp.ones_like(x), backend="numpy")(x)
    x[:] = 7.0
    assert out.tobytes() == np.array([1.0, -0.0, np.nan]).tobytes()
