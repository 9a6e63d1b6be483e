"""The numpy names scientific code reaches for (sorting and order statistics, padding,
finite differences, NaN reductions, index helpers, more ufuncs) against numpy: values
and dtypes eagerly and staged, and derivatives where the inputs are floats."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from harness import check_grads, check_vjp
from numpy_checks import assert_like_numpy, check_numpy_case

import inert
import inert.numpy as inp
from inert.errors import ConcretizationError

R = np.random.default_rng(1)
X = R.standard_normal((2, 3, 4))
M = R.standard_normal((4, 5))
V = R.standard_normal(6)
S = np.sort(R.uniform(0, 1, 7))
NAN = M.copy()
NAN[0, 1] = NAN[3, 4] = np.nan
TIES = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 0.5])

CASES = [
    # sorting and order statistics (derivatives through the sort's gather)
    ("sort", (M,), {}), ("sort", (X, 0), {}), ("sort", (X,), {"axis": None}),
    ("argsort", (TIES,), {"kind": "stable"}), ("argsort", (M,), {"axis": 0}),
    ("searchsorted", (S, V), {}), ("searchsorted", (S, S), {"side": "right"}),
    ("median", (M,), {}), ("median", (X,), {"axis": 1, "keepdims": True}),
    ("quantile", (M, 0.3), {"axis": 1}), ("quantile", (X, np.array([0.1, 0.9])), {"axis": -1}),
    ("quantile", (M, 0.7), {"method": "nearest"}), ("quantile", (M, 0.5), {"method": "lower"}),
    ("quantile", (M, 0.25), {"method": "midpoint", "axis": 0}),
    ("percentile", (M, np.array([5.0, 50.0])), {"axis": 0}),
    ("interp", (np.linspace(-0.5, 1.5, 9), S, R.normal(size=7)), {}),
    # padding, joining, products
    ("pad", (M, 2), {}), ("pad", (M, ((1, 2), (0, 3))), {"mode": "edge"}),
    ("pad", (M, ((5, 2), (3, 7))), {"mode": "reflect"}), ("pad", (V, (4, 9)), {"mode": "wrap"}),
    ("pad", (M, ((2, 6), (1, 1))), {"mode": "symmetric"}),
    ("pad", (M, 1), {"constant_values": ((1.0, 2.0), (3.0, 4.0))}),
    ("append", (M, V), {}), ("append", (M, M[:1]), {"axis": 0}),
    ("kron", (M[:2, :3], M[:3, :2]), {}), ("kron", (V[:3], M), {}),
    ("rot90", (X,), {}), ("rot90", (X, 3, (2, 0)), {}),
    ("atleast_3d", (V,), {}), ("rollaxis", (X, 2), {}), ("rollaxis", (X, 0, 2), {}),
    ("hsplit", (M, [2]), {}), ("vsplit", (M, 2), {}), ("dsplit", (X, 2), {}),
    ("dstack", ([M, M],), {}),
    # finite differences and integration
    ("diff", (X,), {}), ("diff", (M, 2, 0), {}), ("diff", (V,), {"prepend": 0.0, "append": V[:1]}),
    ("ediff1d", (M,), {"to_begin": np.array([1.0, 2.0])}),
    ("gradient", (M,), {}), ("gradient", (X, 0.5), {"axis": 2}),
    ("trapezoid", (M,), {}), ("trapezoid", (M, S[:5]), {}),
    ("trapezoid", (M,), {"dx": 0.2, "axis": 0}),
    ("cross", (M[:, :3], X[0, :, :3].repeat(2, 0)[:4]), {}),
    ("cross", (X[..., :3], X[..., 1:]), {"axisc": 0}),
    # NaN reductions (the NaNs' gradient is 0)
    ("nansum", (NAN,), {"axis": 0}), ("nanmean", (NAN,), {"axis": 1}), ("nanmax", (NAN,), {}),
    ("nanmin", (NAN,), {"axis": 1}), ("nanprod", (NAN,), {"axis": 1}),
    ("nanvar", (NAN,), {"axis": 1, "ddof": 1}), ("nanstd", (NAN,), {}),
    ("nancumsum", (NAN,), {"axis": 1}), ("nanargmax", (NAN,), {"axis": 1}),
    ("nanmedian", (NAN,), {"axis": 1}), ("nanquantile", (NAN, 0.3), {"axis": 0}),
    ("nan_to_num", (np.array([1.0, np.nan, np.inf, -np.inf]),), {}),
    ("nan_to_num", (np.array([np.nan, np.inf]),), {"nan": 2.0, "posinf": 9.0}),
    # elementwise
    ("logaddexp2", (M, V[:5]), {}), ("fabs", (M,), {}),
    ("heaviside", (np.array([-1, 0, 2]), np.array([0.5, 0.3, 0.2])), {}),
    ("copysign", (M, -V[:5]), {}), ("ldexp", (M, 3), {}),
    ("sinc", (np.array([0.0, 1e-4, 0.3, -2.5]),), {}), ("real", (M,), {}), ("imag", (M,), {}),
    ("conj", (M,), {}), ("conjugate", (M,), {}), ("angle", (V,), {}),
    ("angle", (V,), {"deg": True}),
    # index helpers and choices
    ("unravel_index", (np.array([0, 7, 22]), (3, 2, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([1, 0])), (3, 2)), {}),
    ("select", ([M > 0.5, M < -0.5], [M, M * 2]), {"default": 1.0}),
    ("nonzero", (M > 0,), {}), ("argwhere", (M > 0,), {}), ("flatnonzero", (M > 0,), {}),
    ("where", (M > 0,), {}),
    # more array-API and numpy names
    ("cumulative_sum", (M,), {"axis": 1, "include_initial": True}),
    ("cumulative_prod", (V,), {}), ("ptp", (M,), {"axis": 0}), ("cov", (M,), {}),
    ("cov", (M, M[::-1]), {"rowvar": False, "bias": True}), ("corrcoef", (M,), {}),
    ("digitize", (V, np.array([-1.0, 0.0, 0.5])), {}), ("isin", (TIES, [1.0, 3.0]), {}),
    ("signbit", (np.array([-0.0, 0.0, -2.0, 3.0]),), {}), ("isposinf", (NAN / 0.5,), {}),
    ("rint", (M * 3,), {}), ("modf", (M * 3,), {}), ("divmod", (M, 0.3), {}),
    ("float_power", (np.abs(M), 1.5), {}), ("i0", (M,), {}), ("vander", (V[:4],), {}),
    ("vander", (V[:4], 3, True), {}), ("diagflat", (V[:3], 1), {}),
    ("permute_dims", (X, (2, 0, 1)), {}), ("matrix_transpose", (X,), {}),
    ("concat", ([M, M],), {"axis": 1}), ("unstack", (M,), {}),
    ("lexsort", ((TIES[::-1], TIES),), {}), ("bincount", (np.array([0, 2, 2, 5]),), {}),
    ("bincount", (np.array([0, 2, 2]), np.array([0.5, 1.0, 2.0])), {"minlength": 5}),
    ("vecdot", (M, M[::-1]), {}), ("vecdot", (M, V[:5]), {}),
    ("choose", (np.array([0, 2, 1, 0]), [V[:4], 2 * V[:4], V[2:]]), {}),
    ("delete", (M, [0, 2]), {"axis": 1}), ("delete", (M, slice(1, 3)), {}),
    ("insert", (M, [1, 3], 9.0), {"axis": 1}), ("insert", (M, 2, V[:5]), {"axis": 0}),
    ("resize", (M, (3, 7)), {}), ("copy", (M,), {}),
    ("apply_along_axis", (lambda r: r[:2] * r[1], 1, M), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_numpy(name, args, kwargs, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inert itself warns about nothing
        check_numpy_case(name, args, kwargs, rng, inp)


def test_descending_sorts_keep_ties_in_order():
    order = inp.argsort(TIES, descending=True)
    np.testing.assert_array_equal(order, [0, 2, 3, 1, 4, 5])
    np.testing.assert_array_equal(inp.sort(TIES, descending=True), np.sort(TIES)[::-1])


def test_nextafter_has_a_zero_derivative():
    assert_like_numpy(inp.nextafter(M, np.inf), np.nextafter(M, np.inf))
    np.testing.assert_array_equal(inert.grad(lambda m: inp.sum(inp.nextafter(m, 0.0)))(M), 0)


def test_unique_eagerly_matches_numpy():
    for flags in ((False, False, False), (True, True, True)):
        assert_like_numpy(inp.unique(TIES, *flags), np.unique(TIES, *flags))


def test_partition_puts_the_kth_element_in_place(rng):
    for kth in (0, 3, 5):
        got = inp.partition(V, kth)
        assert got[kth] == np.partition(V, kth)[kth]
        assert np.all(got[:kth] <= got[kth]) and np.all(got[kth + 1:] >= got[kth])
        np.testing.assert_array_equal(V[inp.argpartition(V, kth)], got)
    check_grads(lambda v: inp.partition(v, 2), (V,), rng)


def test_sort_gradient_keeps_only_the_permutation(rng):
    residuals = inert.saved_residuals(lambda x: inp.sum(inp.sort(x)[:3]), V)
    assert [np.dtype(r.aval.dtype).kind for r in residuals] == ["i"]
    check_vjp(lambda x: inp.sort(x, axis=0), (M,), rng)
    np.testing.assert_allclose(inert.vmap(inp.sort)(M), np.sort(M, axis=1))
    np.testing.assert_allclose(inert.vmap(inp.median, in_axes=1)(M), np.median(M, axis=0))


def test_median_gradient_is_shared_by_the_middle_pair():
    g = inert.grad(inp.median)(V)
    middle = np.argsort(V)[2:4]
    np.testing.assert_allclose(g[middle], 0.5)
    assert np.sum(g) == 1.0


def test_interp_is_differentiable_in_the_table(rng):
    xp, fp = S, rng.normal(size=7)
    x = np.linspace(S[0] + 0.01, S[-1] - 0.01, 5)
    check_grads(inp.interp, (x, xp, fp), rng)


@pytest.mark.parametrize("fn", [
    lambda x: inp.nonzero(x > 0), lambda x: inp.argwhere(x), lambda x: inp.unique(x),
    lambda x: inp.where(x > 0), lambda x: inp.flatnonzero(x)],
    ids=["nonzero", "argwhere", "unique", "where", "flatnonzero"])
def test_data_dependent_sizes_need_size_while_tracing(fn):
    with pytest.raises(ConcretizationError, match=r"without size= \(the shape of its result"):
        inert.jit(fn)(V)


def test_size_makes_them_traceable():
    x = np.array([0.0, 2.0, 0.0, -1.0, 2.0])
    (idx,) = inert.jit(lambda x: inp.nonzero(x, size=4, fill_value=-1))(x)
    np.testing.assert_array_equal(idx, [1, 3, 4, -1])
    got = inert.jit(lambda x: inp.unique(x, size=4, fill_value=9.0, return_index=True,
                                         return_inverse=True, return_counts=True))(x)
    values, index, inverse, counts = np.unique(x, True, True, True)
    np.testing.assert_array_equal(got[0], [*values, 9.0])
    np.testing.assert_array_equal(got[1][:3], index)
    np.testing.assert_array_equal(got[2], inverse)
    np.testing.assert_array_equal(got[3], [*counts, 0])
    np.testing.assert_array_equal(inert.jit(lambda m: inp.argwhere(m, size=2))(np.eye(3)),
                                  [[0, 0], [1, 1]])
    # under grad the values are known, so no size is needed
    g = inert.grad(lambda x: inp.sum(x[inp.nonzero(x > 0)]))(x)
    np.testing.assert_array_equal(g, x > 0)


def test_r_and_c_concatenate_like_numpy():
    assert_like_numpy(inp.r_[1:4, [7, 8], 0:1:3j], np.r_[1:4, [7, 8], 0:1:3j])
    assert_like_numpy(inp.r_["1", M, M], np.r_["1", M, M])
    assert_like_numpy(inp.c_[V, V], np.c_[V, V])
    check_grads(lambda v: inp.r_[v, 2 * v[:2]], (V,), np.random.default_rng(0))


def test_comparisons_of_whole_arrays():
    a = np.array([1.0, np.inf, np.nan])
    assert inp.allclose(a[:2], a[:2] + 1e-9) and not inp.allclose(a, a)
    assert inp.allclose(a, a, equal_nan=True) and inp.array_equal(a, a, equal_nan=True)
    assert not inp.array_equal(M, M[:2]) and inp.array_equiv(M[:1], np.repeat(M[:1], 3, 0))
    assert_like_numpy(inp.isclose(a, np.array([1.0, np.inf, 1.0])),
                      np.isclose(a, np.array([1.0, np.inf, 1.0])))


def test_index_helpers_and_put_along_axis(rng):
    for fn in ("tril_indices", "triu_indices"):
        assert_like_numpy(getattr(inp, fn)(4, 1), getattr(np, fn)(4, 1))
        assert_like_numpy(getattr(inp, fn + "_from")(M), getattr(np, fn + "_from")(M))
    assert_like_numpy(inp.diag_indices(3), np.diag_indices(3))
    idx = np.argsort(M, axis=1)[:, :2]
    want = M.copy()
    np.put_along_axis(want, idx, 0.0, axis=1)
    assert_like_numpy(inp.put_along_axis(M, idx, 0.0, 1, inplace=False), want)
    with pytest.raises(ValueError, match="inplace=False"):
        inp.put_along_axis(M, idx, 0.0, 1)
    check_grads(lambda m: inp.put_along_axis(m, idx, 0.0, 1, inplace=False), (M,), rng)


def test_piecewise_and_histogram():
    x = np.linspace(-2, 2, 9)
    funcs = [lambda x: -x, lambda x: x ** 2, 7.0]
    assert_like_numpy(inp.piecewise(x, [x < 0, x > 1], funcs),
                      np.piecewise(x, [x < 0, x > 1], funcs))
    counts, edges = inp.histogram(M, 4, weights=np.abs(M))
    want = np.histogram(M, 4, weights=np.abs(M))
    np.testing.assert_allclose(counts, want[0])
    np.testing.assert_allclose(edges, want[1])


HISTOGRAMS = [dict(bins=3, range=(0, 6)), dict(bins=7), dict(bins=4, density=True),
              dict(bins=np.array([-1.0, 0.0, 0.5, 2.0, 6.0])),
              dict(bins=5, range=(0, 6), weights=np.arange(54.0)), dict(bins=3, range=(2, 2))]


@pytest.mark.parametrize("kwargs", HISTOGRAMS)
def test_histogram_under_jit_and_vmap_is_numpys(kwargs, rng):
    """Values at the edges (0, 6, 3 with 3 bins over (0, 6)) land where numpy puts them."""
    x = np.concatenate([rng.normal(size=50) * 2, [0.0, 6.0, 2.0, 3.0]])
    counts, edges = inert.jit(lambda x: inp.histogram(x, **kwargs))(x)
    want = np.histogram(x, **kwargs)
    np.testing.assert_allclose(counts, want[0], rtol=1e-13)
    np.testing.assert_array_equal(edges, want[1])
    assert np.asarray(counts).dtype == want[0].dtype
    if "weights" not in kwargs:
        lanes = inert.vmap(lambda x: inp.histogram(x, **kwargs)[0])(np.stack([x, -x]))
        np.testing.assert_allclose(lanes[1], np.histogram(-x, **kwargs)[0], rtol=1e-13)


def test_histogram_weight_sums_are_differentiable_in_the_weights():
    x = np.array([0.5, 1.5, 1.7, 5.0])
    g = inert.grad(lambda w: inp.histogram(x, 3, (0, 6), weights=w)[0][0])(np.ones(4))
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0])


def test_complex_parts_match_numpy():
    z = np.array([1 + 2j, -3 - 0.5j, -1 + 0j])
    for fn, want in ((inp.real, np.real), (inp.imag, np.imag), (inp.conj, np.conj),
                     (inp.angle, np.angle)):
        assert_like_numpy(fn(z), want(z))
        assert_like_numpy(fn(M), want(M))


def test_predicates_and_aliases():
    assert inp.isscalar(2.0) and not inp.isscalar(M) and inp.isrealobj(M)
    assert not inp.iscomplexobj(M) and inp.isreal(M).all() and not inp.iscomplex(M).any()
    # float_ is float64's scalar type (JAX's converter, see test_scalar_types.py)
    assert inp.float_ is inp.float64 and inp.empty_like(M).shape == M.shape
    assert inp.s_[1:3] == np.s_[1:3] and inp.mgrid[0:2, 0:3].shape == (2, 2, 3)


def test_array_api_names_and_updates(rng):
    np.testing.assert_allclose(inp.matvec(M, V[:5]), M @ V[:5])
    np.testing.assert_allclose(inp.vecmat(V[:4], M), V[:4] @ M)
    counts = inp.unique_counts(TIES)
    np.testing.assert_array_equal(counts.counts, np.unique(TIES, return_counts=True)[1])
    everything = inp.unique_all(TIES)
    np.testing.assert_array_equal(TIES, everything.values[everything.inverse_indices])
    want = M.copy()
    np.fill_diagonal(want, 5.0)
    assert_like_numpy(inp.fill_diagonal(M, 5.0, inplace=False), want)
    want = np.zeros(6)
    np.put(want, [0, 3], [1.0, 2.0])
    assert_like_numpy(inp.put(np.zeros(6), np.array([0, 3]), np.array([1.0, 2.0]),
                              inplace=False), want)
    np.testing.assert_array_equal(inert.jit(lambda x: inp.bincount(x, length=3))(
        np.array([0, 1, 1])), [1, 2, 0])
    check_grads(lambda m: inp.fill_diagonal(m, 0.0, inplace=False), (M,), rng)


def test_frexp_splits_like_numpy_at_every_scale(rng):
    x = np.array([0.0, -3.5, 1e-310, 1.7e308, np.inf, np.nan, 1 - 2 ** -53, 2.0 ** -1074, 8.0])
    assert_like_numpy(inp.frexp(x), np.frexp(x))
    check_grads(lambda x: inp.frexp(x)[0], (np.array([3.0, -0.3, 100.0]),), rng)


def test_cumulative_scans_take_an_axis(rng):
    check_numpy_case("cumsum", (X, 1), {}, rng, inp)
    check_numpy_case("cumprod", (X,), {"axis": -1}, rng, inp)


def test_real_if_close_is_numpys_where_the_values_are_known():
    close, far = np.array([1 + 1e-16j, 2 - 1e-15j]), np.array([1 + 1e-3j])
    assert_like_numpy(inp.real_if_close(close), np.real_if_close(close))
    assert_like_numpy(inp.real_if_close(far), np.real_if_close(far))
    assert_like_numpy(inp.real_if_close(M), np.real_if_close(M))
    g = inert.grad(lambda x: inp.sum(inp.real_if_close(x * (1 + 0j))))(np.ones(2))
    np.testing.assert_array_equal(g, [1.0, 1.0])
    with pytest.raises(inert.errors.ConcretizationError, match="real_if_close"):
        inert.jit(inp.real_if_close)(close)
