"""A linear function transposed again and again (`repeated_backward_pass`): from the
second transpose at the same types it runs a compiled program, whose cotangents are
the interpreted backward pass's, bit for bit."""

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.core.errors import InertError, NaNError
from inert.interpreters import transpose
from inert.interpreters.transpose import _CompiledTranspose, backward_pass


def _interpreted(vjp_fn, ct) -> tuple:
    """The cotangents `vjp_fn(ct)` gives, by the interpreter (the reference)."""
    linear = vjp_fn.linear
    cts = [c for c, zero in zip([ct] if not isinstance(ct, tuple) else ct, linear.out_zero)
           if not zero]
    mask = [False] * len(linear.residuals) + [True] * len(linear.in_avals)
    return tuple(backward_pass(linear.jaxpr, (), list(linear.residuals), mask, cts))


def _scan_sum(x):
    return inert.lax.scan(lambda c, xi: (c * xi + inp.sin(c), c), x[0], x)[1].sum()


FUNCTIONS = {
    "a chain": (lambda x: inp.sum(inp.tanh(x * 3.0) * inp.exp(-x)), np.linspace(-2, 2, 7)),
    "where (a masked cotangent)": (lambda x: inp.where(x > 0, inp.sqrt(x), 0.0).sum(),
                                   np.array([-1.0, 0.0, 4.0])),
    "a broadcast and a reduction": (lambda x: (x[:, None] * x[None, :]).max(axis=0),
                                    np.arange(4.0)),
    "a scan": (_scan_sum, np.linspace(0.1, 0.9, 5)),
    "a cond on a residual": (lambda x: inert.lax.cond(x.sum() > 0, inp.sin, inp.cos, x),
                             np.array([0.5, -0.2])),
    "complex": (lambda z: inp.abs(z * (1 + 2j)) ** 2, np.array([1 + 1j, -2 + 0.5j])),
    "float32": (lambda x: inp.sum(inp.log1p(x * x)), np.linspace(-1, 1, 5, dtype=np.float32)),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_vjp_function_called_again_runs_compiled_with_the_interpreters_bits(name):
    f, x = FUNCTIONS[name]
    y, vjp_fn = inert.vjp(f, x)
    ct = np.ones_like(np.asarray(y))
    want = _interpreted(vjp_fn, ct)
    for _ in range(3):  # interpreted, then staged and compiled, then compiled
        (got,) = vjp_fn(ct)
        np.testing.assert_array_equal(got, want[0])
        assert np.asarray(got).dtype == np.asarray(want[0]).dtype
    (program,) = transpose._repeated[vjp_fn.linear.jaxpr].values()
    assert isinstance(program, _CompiledTranspose)


def test_a_replayed_vjp_reuses_its_linear_program_and_its_compiled_transpose():
    def f(x):  # its own function: its replay starts here, whatever ran before
        return inp.sum(inp.tanh(x * 3.0) * inp.exp(-x))

    x = np.linspace(-2, 2, 7)
    linears, results = [], []
    for i in range(5):  # plain, recorded, then replayed: one linear jaxpr from the third
        y, vjp_fn = inert.vjp(f, x + i)
        linears.append(vjp_fn.linear.jaxpr)
        results.append((vjp_fn(1.0)[0], _interpreted(vjp_fn, 1.0)[0]))
    assert linears[2] is linears[3] is linears[4]
    (program,) = transpose._repeated[linears[4]].values()
    assert isinstance(program, _CompiledTranspose)  # the fifth call ran it
    for got, want in results:
        np.testing.assert_array_equal(got, want)


def test_cotangents_of_other_types_are_other_programs():
    """A Python float (weakly typed) and an array of the output's dtype each compile
    their own program; an output with a symbolically zero tangent takes no part."""
    f = lambda x: (inp.sum(x ** 2), inp.sum(x), 3.0)  # noqa: E731
    x = np.arange(3.0)
    _, vjp_fn = inert.vjp(f, x)
    assert vjp_fn.linear.out_zero == (False, False, True)
    for ct in [(1.0, 2.0, 5.0), *[(np.float64(1.0), np.float64(2.0), 5.0)] * 2,
               *[(1.0, 2.0, 5.0)] * 2]:
        (got,) = vjp_fn(ct)
        np.testing.assert_array_equal(got, 2 * x + 2.0)
    assert len(transpose._repeated[vjp_fn.linear.jaxpr]) == 2


def test_under_a_transformation_it_is_interpreted_at_that_level():
    _, vjp_fn = inert.vjp(lambda x: inp.sin(x) * x, np.linspace(0, 1, 4))
    pulled = inert.jit(lambda ct: vjp_fn(ct)[0])
    slope = inert.grad(lambda s: vjp_fn(s * np.ones(4))[0].sum())
    for s in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(pulled(np.full(4, s)), _interpreted(vjp_fn, np.full(4, s))[0])
        np.testing.assert_allclose(slope(s), _interpreted(vjp_fn, np.ones(4))[0].sum())
    assert vjp_fn.linear.jaxpr not in transpose._repeated  # its operations were theirs
    for _ in range(3):
        vjp_fn(np.ones(4))
    assert isinstance(next(iter(transpose._repeated[vjp_fn.linear.jaxpr].values())),
                      _CompiledTranspose)
    np.testing.assert_array_equal(pulled(np.full(4, 2.0)), vjp_fn(np.full(4, 2.0))[0])


def test_a_nan_in_the_compiled_pass_raises_as_the_interpreted_pass_does():
    """Under jax_debug_nans the compiled pass is run again by the interpreter, which
    names the primitive and the user's line."""
    def f(x):
        return inp.sum(inp.sin(x) * 2.0)

    def error(vjp_fn) -> str:
        with inert.debug_nans(True), pytest.raises(NaNError) as caught:
            vjp_fn(np.nan)
        return str(caught.value)

    want = error(inert.vjp(f, np.ones(3))[1])  # a first transpose: interpreted
    _, vjp_fn = inert.vjp(f, np.ones(3))
    for _ in range(3):
        vjp_fn(1.0)
    assert isinstance(next(iter(transpose._repeated[vjp_fn.linear.jaxpr].values())),
                      _CompiledTranspose)
    assert error(vjp_fn) == want and "test_transpose.py" in want


@pytest.mark.parametrize("failure", [InertError("a rule needs a value"),
                                     AttributeError("'StagingTracer' has no 'tobytes'")])
def test_a_pass_that_cannot_be_staged_stays_interpreted(monkeypatch, failure):
    """Whatever staging raises (an inert error, user code calling a numpy method on a
    tracer) the interpreted pass runs instead, at that call and every later one."""
    def refuse(*args, **kwargs):
        raise failure

    _, vjp_fn = inert.vjp(lambda x: inp.sum(inp.exp(x)), np.zeros(2))
    vjp_fn(1.0)
    monkeypatch.setattr(transpose, "stage", refuse)
    for _ in range(3):
        np.testing.assert_array_equal(vjp_fn(1.0)[0], np.ones(2))
    assert list(transpose._repeated[vjp_fn.linear.jaxpr].values()) == [transpose._INTERPRETED]


def test_a_custom_vjp_backward_runs_at_every_pullback():
    """As in JAX: `bwd` is the user's Python, run at each `vjp_fn` call with the state it
    reads then (here a global scale), never staged once and replayed."""
    scale, runs = [1.0], []

    @inert.custom_vjp
    def f(x):
        return inp.sin(x)

    def bwd(cos_x, g):
        runs.append(1)
        return (g * cos_x * scale[0],)

    f.defvjp(lambda x: (inp.sin(x), inp.cos(x)), bwd)
    _, vjp_fn = inert.vjp(lambda x: f(x) * 2.0, np.ones(3))
    for i in range(4):
        scale[0] = i + 1.0
        np.testing.assert_array_equal(vjp_fn(np.ones(3))[0], np.cos(np.ones(3)) * 2.0 * (i + 1))
    assert len(runs) == 4
    assert list(transpose._repeated[vjp_fn.linear.jaxpr].values()) == [transpose._INTERPRETED]
