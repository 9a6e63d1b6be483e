"""inert.numpy's shape functions against numpy: values and dtypes, staged, and
derivatives (all of them are linear, so the vjp test checks their transposes)."""

import numpy as np
import pytest
from numpy_checks import check_like_numpy, check_numpy_case

import inert
import inert.numpy as inp

R = np.random.default_rng(0)
X = R.standard_normal((2, 3, 4))
M = R.standard_normal((4, 5))
V = R.standard_normal(5)
I32 = R.integers(-5, 5, (3, 4)).astype(np.int32)

# (name, args, keyword arguments); numpy's function of the same name is the reference
CASES = [
    ("reshape", (X, (4, -1)), {}), ("reshape", (X, 24), {}), ("reshape", (I32, (-1,)), {}),
    ("ravel", (X,), {}), ("transpose", (X,), {}), ("transpose", (X, (1, 2, 0)), {}),
    ("transpose", (X, (-1, 0, 1)), {}), ("swapaxes", (X, 0, -1), {}),
    ("moveaxis", (X, 0, -1), {}), ("moveaxis", (X, (0, 1), (2, 0)), {}),
    ("squeeze", (X[:, :1, None],), {}), ("squeeze", (X[:, :1, None], 1), {}),
    ("expand_dims", (X, 1), {}), ("expand_dims", (X, (0, -1)), {}),
    ("broadcast_to", (V, (3, 5)), {}), ("broadcast_to", (M[:, :1], (2, 4, 5)), {}),
    ("concatenate", ([M, M[:2]],), {}), ("concatenate", ([M, M[:, :1]],), {"axis": -1}),
    ("concatenate", ([M, V],), {"axis": None}), ("concatenate", ([V, I32[0]],), {}),
    ("stack", ([V, V * 2],), {}), ("stack", ([M, M],), {"axis": -1}),
    ("hstack", ([V, V[:2]],), {}), ("hstack", ([M, M],), {}), ("vstack", ([V, V],), {}),
    ("vstack", ([M, V],), {}), ("column_stack", ([V, V],), {}),
    ("split", (M, 2), {}), ("split", (M, [1, 3]), {"axis": 0}),
    ("split", (M, 5), {"axis": 1}), ("array_split", (V, 3), {}),
    ("flip", (X,), {}), ("flip", (X, 1), {}), ("flip", (X, (0, 2)), {}), ("fliplr", (M,), {}),
    ("flipud", (M,), {}), ("roll", (V, 2), {}), ("roll", (X, -1, 1), {}),
    ("roll", (X, (1, 2), (0, 2)), {}), ("roll", (M, 7), {}),
    ("tile", (V, 2), {}), ("tile", (M, (2, 1, 3)), {}), ("tile", (X, (2, 1)), {}),
    ("repeat", (V, 2), {}), ("repeat", (M, 3), {"axis": 1}), ("repeat", (M, 2), {}),
    ("repeat", (M, [1, 0, 2, 1]), {"axis": 0}),
    ("take", (M, np.array([3, 0, 0])), {"axis": 0}), ("take", (X, np.array([[1, 2]])), {}),
    ("take", (M, np.array([-1, 2])), {"axis": 1}),
    ("take_along_axis", (M, np.argsort(M, 1)), {"axis": 1}),
    ("take_along_axis", (M, np.array([[0, 3, 1, 2, 3]])), {"axis": 0}),
    ("diagonal", (M,), {}), ("diagonal", (M, 1), {}), ("diagonal", (M, -2), {}),
    ("diagonal", (X, 0, 0, 2), {}), ("diag", (V,), {}), ("diag", (V, -1), {}),
    ("diag", (M, 2), {}), ("tril", (M,), {}), ("triu", (M, 1), {}), ("tril", (X, -1), {}),
    ("atleast_2d", (V,), {}), ("atleast_1d", (np.array(2.0),), {}),
    ("broadcast_arrays", (M[:, :1], V), {}), ("meshgrid", (V, V[:3]), {}),
    ("meshgrid", (V, V[:3], V[:2]), {"indexing": "ij"}), ("meshgrid", (V[:3], V), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_shape_function(name, args, kwargs, rng):
    check_numpy_case(name, args, kwargs, rng, inp)


def test_traced_values_stack_into_arrays(rng):
    f = lambda x, y: inp.array([[x[0], y], [1.0, x[1] * y]])  # noqa: E731
    ref = lambda x, y: np.array([[x[0], y], [1.0, x[1] * y]])  # noqa: E731
    check_like_numpy(f, ref, (np.array([1.0, 2.0]), np.float64(3.0)), rng, grad=True)
    check_like_numpy(lambda x: inp.asarray([x, x], np.float32),
                     lambda x: np.asarray([x, x], np.float32), (V,))


def test_creation_functions(rng):
    """Shapes are static, so creation gives numpy constants; the *_like functions of
    traced arrays are staged broadcasts of a scalar."""
    assert inp.zeros((2, 3)).dtype == np.float64
    np.testing.assert_array_equal(inp.full((2,), 7, np.int32), np.full((2,), 7, np.int32))
    np.testing.assert_array_equal(inp.eye(3, k=1), np.eye(3, k=1))
    np.testing.assert_array_equal(inp.arange(5), np.arange(5))
    np.testing.assert_array_equal(inp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    for name in ["zeros_like", "ones_like"]:
        check_like_numpy(getattr(inp, name), getattr(np, name), (I32,))
        check_like_numpy(lambda x, n=name: getattr(inp, n)(x, np.float32),
                         lambda x, n=name: getattr(np, n)(x, np.float32), (M,), rng, grad=True)
    check_like_numpy(lambda x: inp.full_like(x, 2.5), lambda x: np.full_like(x, 2.5), (M,))
    check_like_numpy(lambda x: inp.full((2, 3), x[0]), lambda x: np.full((2, 3), x[0]), (V,),
                     rng, grad=True)
    check_like_numpy(lambda x: inp.eye(4, 5, -1, np.float32) * x,
                     lambda x: np.eye(4, 5, -1, np.float32) * x, (M,), rng, grad=True)


def test_filled_arrays_are_staged_inside_a_trace():
    """So that JAX's idiom `jnp.zeros(n).at[i].set(v)` works, and so that no array of
    zeros is stored in the jaxpr."""
    f = lambda v: inp.zeros((3, 2)).at[1].set(v) + inp.ones(2) + inp.eye(3, 2)  # noqa: E731
    jaxpr = inert.make_jaxpr(f)(V[:2])
    assert not jaxpr.consts
    np.testing.assert_array_equal(inert.jit(f)(V[:2]), np.eye(3, 2) + 1 +
                                  np.array([[0, 0], V[:2], [0, 0]]))
    assert not inert.make_jaxpr(inp.zeros_like)(M).consts


def test_shape_queries_and_astype():
    assert inp.shape([[1, 2, 3]]) == (1, 3) and inp.ndim(2.0) == 0 and inp.size(M) == 20
    check_like_numpy(lambda x: inp.astype(x, np.float32), lambda x: x.astype(np.float32),
                     (I32,))


@pytest.mark.parametrize("call, match", [
    (lambda: inp.reshape(M, (3, -1)), "reshape"),
    (lambda: inp.reshape(M, (3, 3)), "reshape"),
    (lambda: inp.squeeze(M, 0), "squeeze"),
    (lambda: inp.broadcast_to(M, (5, 4)), "broadcast_to"),
    (lambda: inp.concatenate([M, V]), "concatenate"),
    (lambda: inp.stack([M, V]), "stack"),
    (lambda: inp.split(M, 3), "split"),
    (lambda: inp.transpose(X, (0, 1)), "transpose"),
    (lambda: inp.moveaxis(X, 3, 0), "moveaxis"),
])
def test_bad_shapes_raise_shape_errors_at_the_callers_line(call, match):
    with pytest.raises(inert.errors.ShapeError, match=match) as info:
        call()
    assert "test_shape.py" in str(info.value)
