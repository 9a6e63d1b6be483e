"""inert.scipy.linalg against scipy.linalg: values, derivatives (jvp by finite
differences and the vjp dot-product test), vmap against a loop and jit against
eager, for each function of the namespace; then lax.linalg's conventions."""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np
import pytest
import scipy.linalg as sl
from harness import assert_allclose, check_grads

import inert
import inert.scipy.linalg as isl
from inert import lax
from inert.errors import ShapeError


def spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def general(rng, m, n):
    return rng.standard_normal((m, n)) + 2 * np.eye(m, n)


def upper_factor(rng, n):
    return np.linalg.cholesky(spd(rng, n)).T


def complex_general(rng, m, n):
    return general(rng, m, n) + 1j * rng.standard_normal((m, n))


def hermitian(rng, n):
    a = complex_general(rng, n, n)
    return a @ a.conj().T + n * np.eye(n)


@attrs.frozen
class Case:
    name: str
    f: Callable
    reference: Callable
    make: Callable  # rng -> arguments (one problem)
    vmap: bool = True


def _banded(rng, lower, upper, n):
    """scipy's band storage of a diagonally dominant matrix (the unused corners zero)."""
    ab = rng.standard_normal((lower + upper + 1, n))
    ab[upper] += 4.0
    for k in range(upper):
        ab[k, :upper - k] = 0.0
    for k in range(lower):
        ab[upper + 1 + k, n - 1 - k:] = 0.0
    return ab


def _lu_solve(a, b, trans=0):
    return isl.lu_solve(isl.lu_factor(a), b, trans=trans)


CASES = [
    Case("cholesky-upper", isl.cholesky, sl.cholesky, lambda r: (spd(r, 4),)),
    Case("cholesky-lower", lambda a: isl.cholesky(a, lower=True),
         lambda a: sl.cholesky(a, lower=True), lambda r: (spd(r, 4),)),
    *(Case(f"cho_solve-{'lower' if lower else 'upper'}",
           lambda a, b, lower=lower: isl.cho_solve(isl.cho_factor(a, lower=lower), b),
           lambda a, b, lower=lower: sl.cho_solve(sl.cho_factor(a, lower=lower), b),
           lambda r: (spd(r, 4), r.standard_normal((4, 2)))) for lower in (True, False)),
    *(Case(f"solve_triangular-trans{trans}",
           lambda a, b, trans=trans: isl.solve_triangular(a, b, trans=trans),
           lambda a, b, trans=trans: sl.solve_triangular(a, b, trans=trans),
           lambda r: (upper_factor(r, 4), r.standard_normal(4))) for trans in (0, "T")),
    Case("solve_triangular-lower-unit",
         lambda a, b: isl.solve_triangular(a, b, lower=True, unit_diagonal=True),
         lambda a, b: sl.solve_triangular(a, b, lower=True, unit_diagonal=True),
         lambda r: (general(r, 4, 4), r.standard_normal((4, 3)))),
    Case("lu", isl.lu, sl.lu, lambda r: (general(r, 4, 4),)),
    Case("lu-permute_l", lambda a: isl.lu(a, permute_l=True),
         lambda a: sl.lu(a, permute_l=True), lambda r: (general(r, 4, 4),)),
    Case("lu_factor", lambda a: isl.lu_factor(a)[0], lambda a: sl.lu_factor(a)[0],
         lambda r: (general(r, 4, 4),)),
    *(Case(f"lu_solve-trans{t}", lambda a, b, t=t: _lu_solve(a, b, t),
           lambda a, b, t=t: sl.lu_solve(sl.lu_factor(a), b, trans=t),
           lambda r: (general(r, 4, 4), r.standard_normal(4))) for t in (0, 1)),
    *(Case(f"solve-{assume}", lambda a, b, assume=assume: isl.solve(a, b, assume_a=assume),
           lambda a, b, assume=assume: sl.solve(a, b, assume_a=assume),
           lambda r: (spd(r, 4), r.standard_normal((4, 2)))) for assume in ("gen", "pos")),
    Case("solve-transposed", lambda a, b: isl.solve(a, b, transposed=True),
         lambda a, b: sl.solve(a, b, transposed=True),
         lambda r: (general(r, 4, 4), r.standard_normal(4))),
    Case("inv", isl.inv, sl.inv, lambda r: (general(r, 3, 3),)),
    Case("det", isl.det, sl.det, lambda r: (general(r, 3, 3),)),
    Case("eigh-eigvals_only", lambda a: isl.eigh(a, eigvals_only=True),
         lambda a: sl.eigh(a, eigvals_only=True), lambda r: (spd(r, 4),)),
    Case("eigh-upper-values", lambda a: isl.eigh(a, lower=False)[0],
         lambda a: sl.eigh(a, lower=False)[0], lambda r: (np.triu(spd(r, 4)),)),
    Case("svd-values", lambda a: isl.svd(a, compute_uv=False),
         lambda a: sl.svd(a, compute_uv=False), lambda r: (general(r, 4, 3),)),
    Case("qr-r", lambda a: isl.qr(a, mode="r")[0] ** 2,
         lambda a: sl.qr(a, mode="r")[0] ** 2, lambda r: (general(r, 4, 3),)),
    Case("expm", isl.expm, sl.expm, lambda r: (r.standard_normal((3, 3)),)),
    Case("expm_frechet", lambda a, e: isl.expm_frechet(a, e),
         lambda a, e: sl.expm_frechet(a, e), lambda r: (r.standard_normal((3, 3)),
                                                        r.standard_normal((3, 3)))),
    Case("sqrtm", isl.sqrtm, sl.sqrtm, lambda r: (spd(r, 3),)),
    Case("solve_sylvester", isl.solve_sylvester, sl.solve_sylvester,
         lambda r: (general(r, 3, 3), general(r, 2, 2), r.standard_normal((3, 2)))),
    *(Case(f"solve_banded-{lu}", lambda ab, b, lu=lu: isl.solve_banded(lu, ab, b),
           lambda ab, b, lu=lu: sl.solve_banded(lu, ab, b),
           lambda r, lu=lu: (_banded(r, *lu, 5), r.standard_normal((5, 2))), vmap=False)
      for lu in ((1, 1), (2, 0), (0, 1))),
    # complex matrices: scipy's conjugate transposes (trans 'C', 2)
    *(Case(f"solve_triangular-complex-trans{trans}",
           lambda a, b, trans=trans: isl.solve_triangular(a, b, trans=trans),
           lambda a, b, trans=trans: sl.solve_triangular(a, b, trans=trans),
           lambda r: (np.triu(complex_general(r, 4, 4)), complex_general(r, 4, 2)))
      for trans in (0, "T", "C")),
    Case("lu-complex", isl.lu, sl.lu, lambda r: (complex_general(r, 4, 4),)),
    *(Case(f"lu_solve-complex-trans{t}", lambda a, b, t=t: _lu_solve(a, b, t),
           lambda a, b, t=t: sl.lu_solve(sl.lu_factor(a), b, trans=t),
           lambda r: (complex_general(r, 4, 4), complex_general(r, 4, 1)[:, 0]))
      for t in (0, 1, 2)),
    Case("solve-complex-matrix-real-b", isl.solve, sl.solve,
         lambda r: (complex_general(r, 4, 4), r.standard_normal((4, 2)))),
    Case("solve_banded-complex", lambda ab, b: isl.solve_banded((1, 1), ab, b),
         lambda ab, b: sl.solve_banded((1, 1), ab, b),
         lambda r: (_banded(r, 1, 1, 5) + 1j * _banded(r, 1, 1, 5), complex_general(r, 5, 2)),
         vmap=False),
    Case("block_diag", isl.block_diag, sl.block_diag,
         lambda r: (r.standard_normal((2, 2)), r.standard_normal(3), r.standard_normal((1, 2))),
         vmap=False),
]
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_against_scipy(case, rng):
    args = case.make(rng)
    assert_allclose(case.f(*args), case.reference(*args), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives(case, rng):
    check_grads(case.f, case.make(rng), rng)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=[c.name for c in CASES
                                                                    if c.vmap])
def test_vmap(case, rng):
    lanes = [case.make(np.random.default_rng(i)) for i in range(3)]
    stacked = tuple(np.stack(xs) for xs in zip(*lanes))
    got = inert.vmap(case.f)(*stacked)
    for i, args in enumerate(lanes):
        want = case.f(*args)
        lane = type(got)(g[i] for g in got) if isinstance(got, tuple) else got[i]
        assert_allclose(lane, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit(case, rng):
    args = case.make(rng)
    assert_allclose(inert.jit(case.f)(*args), case.f(*args), rtol=1e-12, atol=1e-12)


def test_eigh_and_svd_factors_reconstruct(rng):
    a = spd(rng, 4)
    w, v = isl.eigh(a)
    np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-10)
    b = rng.standard_normal((4, 3))
    u, s, vh = isl.svd(b, full_matrices=False)
    np.testing.assert_allclose((u * s) @ vh, b, atol=1e-10)
    q, r = isl.qr(b, mode="economic")
    np.testing.assert_allclose(q @ r, b, atol=1e-10)
    assert isl.qr(b)[0].shape == (4, 4)


def test_bad_input_names_the_function(rng):
    with pytest.raises(ShapeError, match=r"cho_solve: b of shape \(3,\) does not fit") as info:
        isl.cho_solve((np.eye(4), True), np.ones(3))
    assert "test_scipy_linalg.py" in str(info.value)
    with pytest.raises(ShapeError, match="lu_factor: needs square"):
        isl.lu_factor(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="assume_a"):
        isl.solve(np.eye(2), np.ones(2), assume_a="banded")


def test_lax_linalg_follows_jax_conventions(rng):
    a = spd(rng, 3)
    np.testing.assert_allclose(lax.linalg.cholesky(a), np.linalg.cholesky(a))
    b = rng.standard_normal((2, 3))
    upper = np.triu(a)
    # JAX's defaults: right side, upper triangle
    np.testing.assert_allclose(lax.linalg.triangular_solve(upper, b) @ upper, b, atol=1e-12)
    v, w = lax.linalg.eigh(a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a))
    u, s, vh = lax.linalg.svd(b)
    assert u.shape == (2, 2) and vh.shape == (3, 3)
    np.testing.assert_allclose(lax.linalg.svd(b, compute_uv=False), s)
    q, r = lax.linalg.qr(b.T)
    assert q.shape == (3, 3)
    factors, pivots, perm = lax.linalg.lu(a)
    np.testing.assert_array_equal(lax.linalg.lu_pivots_to_permutation(pivots, 3), perm)


def test_sqrtm_keeps_only_the_root_and_refuses_a_matrix_without_a_real_one(rng):
    a = spd(rng, 4)
    kept = inert.saved_residuals(lambda a: inert.numpy.sum(isl.sqrtm(a) ** 2), a)
    assert [(r.aval.shape, r.origin) for r in kept] == [((4, 4), "sqrtm")]  # the root alone
    with pytest.raises(inert.errors.LinAlgError, match="no real square root"):
        isl.sqrtm(-a)
    with pytest.raises(ShapeError, match="solve_banded: ab must have l \\+ u \\+ 1 = 3"):
        isl.solve_banded((1, 1), np.ones((2, 4)), np.ones(4))


HERMITIAN_CASES = {  # name: (ours, scipy's) of one Hermitian matrix
    **{f"cholesky-{side}": (lambda a, lower=lower: isl.cholesky(a, lower=lower),
                            lambda a, lower=lower: sl.cholesky(a, lower=lower))
       for side, lower in (("lower", True), ("upper", False))},
    **{f"cho_solve-{side}": (
        lambda a, lower=lower: isl.cho_solve(isl.cho_factor(a, lower=lower), _B),
        lambda a, lower=lower: sl.cho_solve(sl.cho_factor(a, lower=lower), _B))
       for side, lower in (("lower", True), ("upper", False))},
    "solve-pos": (lambda a: isl.solve(a, _B, assume_a="pos"),
                  lambda a: sl.solve(a, _B, assume_a="pos")),
    **{f"eigh-{side}": (lambda a, lower=lower: _invariant_eigh(isl.eigh(a, lower=lower)),
                        lambda a, lower=lower: _invariant_eigh(sl.eigh(a, lower=lower)))
       for side, lower in (("lower", True), ("upper", False))},
}
_B = np.linspace(-1, 1, 8).reshape(4, 2) * (1 - 0.5j)


def _invariant_eigh(w_v):
    """The eigenvalues and |V|: invariant under each eigenvector's phase."""
    w, v = w_v
    return w, abs(v)


@pytest.mark.parametrize("name", sorted(HERMITIAN_CASES))
def test_complex_hermitian_routines(name, rng):
    """scipy's values, and the tangent along a Hermitian direction by finite differences
    (these routines read one triangle, as LAPACK, whose diagonal they take as real)."""
    ours, theirs = HERMITIAN_CASES[name]
    a, e = hermitian(rng, 4), complex_general(rng, 4, 4)
    e, h = e + e.conj().T, 1e-6
    assert_allclose(ours(a), theirs(a), rtol=1e-10, atol=1e-10)
    central = inert.tree_util.tree_map(lambda p, m: (p - m) / (2 * h), theirs(a + h * e),
                                       theirs(a - h * e))
    assert_allclose(inert.jvp(ours, (a,), (e,))[1], central, rtol=1e-6, atol=1e-7)
