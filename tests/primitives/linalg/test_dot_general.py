"""dot_general: one table of cases drives values against np.einsum, abstract eval
against impl, jvp against finite differences, the vjp dot-product test and second
derivatives; then dtypes, residuals, bad inputs and random dimension numbers."""

from __future__ import annotations

import string

import attrs
import numpy as np
import pytest
from harness import check_abstract_eval, check_grads, check_jvp, check_staged, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
from inert.errors import ShapeError
from inert.primitives.linalg.dot_general import dot_general, dot_general_p, free_dims

MATMUL = (((1,), (0,)), ((), ()))


@attrs.frozen
class Case:
    name: str
    lhs_shape: tuple
    rhs_shape: tuple
    dims: tuple

    def operands(self, rng, dtypes=(np.float64, np.float64)):
        return tuple(_sample(s, d, rng) for s, d in zip((self.lhs_shape, self.rhs_shape), dtypes))


def _sample(shape, dtype, rng):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    Case("matmul", (3, 4), (4, 5), MATMUL),
    Case("matvec", (3, 4), (4,), MATMUL),
    Case("vecmat", (4,), (4, 5), (((0,), (0,)), ((), ()))),
    Case("inner", (4,), (4,), (((0,), (0,)), ((), ()))),
    Case("outer", (3,), (4,), (((), ()), ((), ()))),
    Case("scalar_times_matrix", (), (3, 2), (((), ()), ((), ()))),
    Case("both_transposed", (4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    Case("batched", (2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    Case("batch_not_leading", (3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    Case("two_contracting_permuted", (2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ()))),
    Case("two_batch_swapped", (2, 3, 4, 5), (3, 2, 5, 6), (((3,), (2,)), ((0, 1), (1, 0)))),
    Case("batch_only", (2, 3), (2, 4), (((), ()), ((0,), (0,)))),
    Case("full_contraction", (2, 3), (2, 3), (((0, 1), (0, 1)), ((), ()))),
    Case("empty_contraction", (3, 0), (0, 2), MATMUL),
]
IDS = [c.name for c in CASES]


def einsum_reference(x, y, dims):
    """dot_general's definition, spelled as an einsum."""
    (lc, rc), (lb, rb) = dims
    letters = iter(string.ascii_letters)
    xs = [next(letters) for _ in range(np.ndim(x))]
    ys = [None] * np.ndim(y)
    for left, right in zip(lc + lb, rc + rb):
        ys[right] = xs[left]
    ys = [c or next(letters) for c in ys]
    out = ([xs[d] for d in lb] + [xs[d] for d in free_dims(np.ndim(x), lc, lb)]
           + [ys[d] for d in free_dims(np.ndim(y), rc, rb)])
    return np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.int32, np.float32),
                                    (np.int64, np.int64)], ids=str)
def test_impl_and_abstract_eval(case, dtypes, rng):
    x, y = case.operands(rng, dtypes)
    out = dot_general(x, y, case.dims)
    want = einsum_reference(x, y, case.dims)
    assert out.dtype == np.result_type(*dtypes)
    np.testing.assert_allclose(out, want, rtol=1e-5 if np.float32 in dtypes else 1e-12,
                               atol=1e-5)
    check_abstract_eval(dot_general_p, (x, y), {"dimension_numbers": case.dims,
                                                "preferred_element_type": None})


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives(case, rng):
    """jvp against finite differences, the dot-product test (the transposes are
    exact), second derivatives, and the staged program."""
    f = lambda x, y: dot_general(x, y, case.dims)  # noqa: E731
    args = case.operands(rng)
    check_grads(f, args, rng, order=2)
    check_staged(f, args)


def test_mixed_precision_cotangents_keep_operand_dtypes(rng):
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2))
    _, vjp_fn = inert.vjp(lambda x, y: dot_general(x, y, MATMUL), x, y)
    ct_x, ct_y = vjp_fn(np.ones((3, 2)))
    assert ct_x.dtype == np.float32 and ct_y.dtype == np.float64
    check_vjp(lambda x, y: dot_general(x, y, MATMUL), (x, y), rng, rtol=1e-5)


def test_python_scalar_operand_is_weak(rng):
    y = rng.standard_normal(3).astype(np.float32)
    f = lambda y: dot_general(2.0, y, (((), ()), ((), ())))  # noqa: E731
    assert f(y).dtype == np.float32
    assert inert.make_jaxpr(f)(y).out_avals[0].dtype == np.float32
    check_jvp(f, (y.astype(np.float64),), rng)  # finite differences need float64


def test_preferred_element_type(rng):
    x, y = rng.integers(0, 5, (2, 3)), rng.integers(0, 5, (3, 2))
    params = {"dimension_numbers": MATMUL, "preferred_element_type": np.dtype(np.float32)}
    check_abstract_eval(dot_general_p, (x, y), params)
    out = dot_general(x, y, MATMUL, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x @ y)


def test_an_inactive_operand_is_the_only_residual(rng):
    """Bilinear: the derivative in x reads only y, and the other way round."""
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    f = lambda x, y: dot_general(x, y, MATMUL).sum()  # noqa: E731
    kept = inert.saved_residuals(f, x, inert.Inactive(y))
    assert [r.aval.shape for r in kept] == [(4, 5)]
    kept = inert.saved_residuals(f, inert.Inactive(x), y)
    assert [r.aval.shape for r in kept] == [(3, 4)]


def test_grad_of_matmul_matches_closed_form(rng):
    x, y, ct = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((3, 5))
    _, vjp_fn = inert.vjp(lambda x, y: dot_general(x, y, MATMUL), x, y)
    ct_x, ct_y = vjp_fn(ct)
    np.testing.assert_allclose(ct_x, ct @ y.T, rtol=1e-12)
    np.testing.assert_allclose(ct_y, x.T @ ct, rtol=1e-12)


@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
@pytest.mark.parametrize("shapes, dims, message", [
    (((3, 4), (5, 2)), MATMUL, "contracting dimensions (1,) of lhs f64[3,4] and (0,) of rhs "
                               "f64[5,2] have sizes (4,) and (5,)"),
    (((2, 3), (3, 2)), (((0, 1), (0, 1)), ((), ())), "sizes (2, 3) and (3, 2)"),
    (((2, 3, 4), (3, 4, 5)), (((2,), (1,)), ((0,), (0,))), "batch dimensions (0,) of lhs"),
    (((3, 4), (4, 5)), (((2,), (0,)), ((), ())), "must be distinct and in range"),
    (((3, 4), (4, 5)), (((1, 1), (0, 0)), ((), ())), "must be distinct and in range"),
], ids=["matmul", "equal_products", "batch", "out_of_range", "repeated"])
def test_bad_dimensions_raise_shape_error(shapes, dims, message, staged):
    x, y = (np.ones(s) for s in shapes)
    f = lambda x, y: dot_general(x, y, dims)  # noqa: E731
    with pytest.raises(ShapeError, match="dot_general") as info:
        (inert.make_jaxpr(f) if staged else f)(x, y)
    assert message in str(info.value)


@st.composite
def dot_problems(draw):
    """Random sizes for batch, contracting and free dimensions, laid out in each
    operand in a random order."""
    sizes = st.lists(st.integers(1, 3), max_size=2)
    batch, contract, lfree, rfree = (draw(sizes) for _ in range(4))
    lhs = ([("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))]
           + [("l", i) for i in range(len(lfree))])
    rhs = ([("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))]
           + [("r", i) for i in range(len(rfree))])
    lhs, rhs = draw(st.permutations(lhs)), draw(st.permutations(rhs))
    size = {"b": batch, "c": contract, "l": lfree, "r": rfree}
    where = lambda axes, kind: tuple(axes.index((kind, i)) for i in range(len(size[kind])))  # noqa: E731
    dims = ((where(lhs, "c"), where(rhs, "c")), (where(lhs, "b"), where(rhs, "b")))
    return [size[k][i] for k, i in lhs], [size[k][i] for k, i in rhs], dims


@settings(max_examples=25, deadline=None)
@given(dot_problems())
def test_random_dimension_numbers(problem):
    lhs_shape, rhs_shape, dims = problem
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    np.testing.assert_allclose(dot_general(x, y, dims), einsum_reference(x, y, dims),
                               rtol=1e-12, atol=1e-12)
    check_vjp(lambda x, y: dot_general(x, y, dims), (x, y), rng)
