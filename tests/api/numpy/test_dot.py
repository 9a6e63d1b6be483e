"""inert.numpy's products (dot, matmul, tensordot, inner, outer, vdot, trace, einsum)
and inert.numpy.linalg.norm against numpy; staged; derivatives."""

import importlib

import numpy as np
import pytest
from numpy_checks import check_like_numpy

import inert
import inert.numpy as inp

R = np.random.default_rng(0)


def normal(*shape):
    return R.standard_normal(shape)


PRODUCTS = [
    ("dot", normal(3), normal(3)), ("dot", normal(2, 3), normal(3)),
    ("dot", normal(2, 3), normal(3, 4)), ("dot", normal(2, 3, 4), normal(4, 5)),
    ("dot", normal(2, 3), normal(4, 3, 5)), ("dot", normal(), normal(3)),
    ("matmul", normal(3), normal(3, 4)), ("matmul", normal(2, 3), normal(3)),
    ("matmul", normal(5, 2, 3), normal(3, 4)), ("matmul", normal(2, 3), normal(5, 3, 4)),
    ("matmul", normal(5, 1, 2, 3), normal(4, 3, 2)), ("matmul", normal(3), normal(3)),
    ("matmul", normal(4, 3), R.integers(-3, 3, (3, 2)).astype(np.int32)),
    ("inner", normal(2, 3), normal(4, 3)), ("inner", normal(3), normal(3)),
    ("inner", normal(), normal(2)), ("outer", normal(3), normal(2, 2)),
    ("vdot", normal(2, 3), normal(6)),
]


@pytest.mark.parametrize("name, x, y", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_products(name, x, y, rng):
    grad = x.dtype == y.dtype == np.float64
    check_like_numpy(getattr(inp, name), getattr(np, name), (x, y), rng, grad=grad)


def test_matmul_operator(rng):
    check_like_numpy(lambda x, y: x @ y, lambda x, y: x @ y, (normal(5, 2, 3), normal(3, 4)),
                     rng, grad=True)


@pytest.mark.parametrize("axes, b_shape", [(1, (4, 3)), (2, (3, 4, 2)), (0, (2,)),
                                           (([1, 0], [0, 2]), (3, 5, 2)), (([-1], [0]), (4,))])
def test_tensordot(axes, b_shape, rng):
    check_like_numpy(lambda x, y: inp.tensordot(x, y, axes),
                     lambda x, y: np.tensordot(x, y, axes), (normal(2, 3, 4), normal(*b_shape)),
                     rng, grad=True)


@pytest.mark.parametrize("args", [(), (1,), (-1,), (0, 0, 2)])
def test_trace(args, rng):
    x = normal(3, 4) if len(args) < 3 else normal(3, 2, 3)
    check_like_numpy(lambda x: inp.trace(x, *args), lambda x: np.trace(x, *args), (x,),
                     rng, grad=True)


EINSUMS = [
    ("ij,jk->ik", (3, 4), (4, 2)), ("ij,jk", (3, 4), (4, 2)), ("i,i->", (3,), (3,)),
    ("i,i", (3,), (3,)), ("i,j->ij", (3,), (2,)), ("ii->", (3, 3)), ("ii->i", (3, 3)),
    ("ii", (3, 3)), ("ij->ji", (3, 4)), ("ij->", (3, 4)), ("ij", (3, 4)), ("ji", (3, 4)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
    ("ij,ij->i", (3, 4), (3, 4)), ("i,ij,j->", (3,), (3, 4), (4,)),
    ("ijk,kl->il", (2, 3, 4), (4, 5)), ("ab,cd->dacb", (2, 3), (4, 1)),
    ("ij,jk,kl->li", (2, 3), (3, 4), (4, 2)), ("i j , j -> i", (3, 4), (4,)),
    ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)), ("...i,...i->...", (2, 3), (2, 3)),
    ("iij->j", (3, 3, 2)),
    # size-1 axes broadcast, as numpy's and JAX's do
    ("mnd,mdo->mno", (1, 4, 1), (3, 1, 2)), ("ij,ij->ij", (1, 3), (4, 1)),
    ("...ij,...jk->...ik", (1, 3, 4), (2, 4, 5)), ("i,i->", (1,), (3,)),
    ("ij,jk->ik", (3, 1), (4, 2)),
]


@pytest.mark.parametrize("case", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(case, rng):
    subscripts, *shapes = case
    args = tuple(normal(*s) for s in shapes)
    check_like_numpy(lambda *xs: inp.einsum(subscripts, *xs),
                     lambda *xs: np.einsum(subscripts, *xs), args, rng, grad=True)


def test_einsum_promotes_dtypes():
    x, n = normal(3, 4).astype(np.float32), R.integers(0, 3, (4,))
    check_like_numpy(lambda x, n: inp.einsum("ij,j->i", x, n),
                     lambda x, n: np.einsum("ij,j->i", x, n), (x, n))


@pytest.mark.parametrize("precision", [None, "highest", "bfloat16", "tensorfloat32",
                                       ("default", "float32")])
def test_precision_is_accepted_and_changes_nothing(precision):
    """As JAX on CPU: every product is computed in the operands' dtype, and the
    jaxpr is the same as without `precision`."""
    x, y = normal(3, 4).astype(np.float32), normal(4, 2).astype(np.float32)
    calls = [lambda p: inp.dot(x, y, precision=p), lambda p: inp.matmul(x, y, precision=p),
             lambda p: inp.einsum("ij,jk->ik", x, y, precision=p),
             lambda p: inp.tensordot(x, y, 1, precision=p),
             lambda p: inert.lax.dot(x, y, precision=p),
             lambda p: inert.lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision=p)]
    for call in calls:
        np.testing.assert_array_equal(call(precision), x @ y)
        assert str(inert.make_jaxpr(lambda c=call: c(precision))()) == str(
            inert.make_jaxpr(lambda c=call: c(None))())


def test_precision_enum_as_jax():
    P = inert.lax.Precision
    assert [P("default"), P("high"), P("highest")] == [P.DEFAULT, P.HIGH, P.HIGHEST]
    assert [P("bfloat16"), P("tensorfloat32"), P("float32")] == [P.DEFAULT, P.HIGH, P.HIGHEST]
    assert str(P.HIGHEST) == "HIGHEST"
    with pytest.raises(ValueError, match="unknown precision 'fast'"):
        inp.dot(normal(3), normal(3), precision="fast")


def test_preferred_element_type_is_the_dtype_computed_in():
    x = R.integers(-3, 3, (3, 4)).astype(np.int8)
    out = inp.matmul(x, x.T, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x.astype(np.float32) @ x.T.astype(np.float32))
    assert inp.einsum("ij,kj->ik", x, x, preferred_element_type=np.int32).dtype == np.int32


NORMS = [
    ((5,), {}), ((5,), {"ord": 1}), ((5,), {"ord": 2}), ((5,), {"ord": np.inf}),
    ((5,), {"ord": -np.inf}), ((5,), {"ord": 3}), ((5,), {"ord": 0}), ((3, 4), {}),
    ((3, 4), {"axis": 1}), ((3, 4), {"axis": 0, "keepdims": True}),
    ((3, 4), {"ord": "fro"}), ((3, 4), {"ord": 1}), ((3, 4), {"ord": -1}),
    ((3, 4), {"ord": np.inf}), ((3, 4), {"ord": -np.inf, "keepdims": True}),
    ((2, 3, 4), {"axis": (0, 2)}), ((2, 3, 4), {"axis": (2, 1), "ord": 1}),
    ((2, 3, 4), {"axis": -1, "ord": 1}), ((2, 3, 4), {"keepdims": True}),
]


@pytest.mark.parametrize("shape, kwargs", NORMS, ids=[str(k) for _, k in NORMS])
def test_norm(shape, kwargs, rng):
    grad = kwargs.get("ord") != 0
    check_like_numpy(lambda x: inp.linalg.norm(x, **kwargs),
                     lambda x: np.linalg.norm(x, **kwargs), (normal(*shape),), rng, grad=grad)


def test_norm_of_integers_and_unsupported_orders():
    n = R.integers(-3, 3, (4,))
    check_like_numpy(inp.linalg.norm, np.linalg.norm, (n,))
    with pytest.raises(ValueError, match="invalid norm order 3"):
        inp.linalg.norm(normal(3, 3), 3)


@pytest.mark.parametrize("call, match", [
    (lambda x: inp.matmul(x, np.ones((4, 2))), "dot_general"),
    (lambda x: inp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 1))), "matmul"),
    (lambda x: inp.dot(x, np.ones(2)), "dot_general"),
    (lambda x: inp.einsum("ij,jk->ik", x, np.ones((2, 2))), "einsum: label 'j' has sizes 3 and 2"),
    (lambda x: inp.einsum("ijk->", x), "einsum"),
])
def test_bad_shapes_name_the_primitive_and_the_callers_line(call, match):
    for run in [call, inert.make_jaxpr(call)]:
        with pytest.raises(inert.errors.ShapeError, match=match) as info:
            run(np.ones((2, 3)))
        assert "test_dot.py" in str(info.value)


def test_linalg_is_a_submodule():
    assert importlib.import_module("inert.numpy.linalg").norm is inp.linalg.norm
