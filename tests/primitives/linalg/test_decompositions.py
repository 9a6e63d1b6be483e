"""The decompositions and solves: one table of cases drives values against
numpy/scipy, abstract eval against impl, jvp against finite differences, the vjp
dot-product test, second derivatives, vmap against a loop (each operand batched
alone and both) and jit against eager. Decompositions with sign freedom are checked
through invariant functions (reconstructions, projectors)."""

from __future__ import annotations

import warnings
from typing import Callable

import attrs
import numpy as np
import pytest
import scipy.linalg
from harness import assert_allclose, check_abstract_eval, check_grads
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
from inert.errors import DTypeError, LinAlgError, NonDifferentiableError, ShapeError
from inert.primitives.linalg import cholesky as ch
from inert.primitives.linalg import eigh as eg
from inert.primitives.linalg import expm as ex
from inert.primitives.linalg import lu as lu_mod
from inert.primitives.linalg import qr as qr_mod
from inert.primitives.linalg import svd as svd_mod
from inert.primitives.linalg import sylvester as sy
from inert.primitives.linalg.matrices import matmul, mH, mT


def spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def symmetric(rng, shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def lower_factor(rng, shape):
    return np.linalg.cholesky(spd(rng, shape))


def general(rng, shape):
    return rng.standard_normal(shape) + 2 * np.eye(shape[-1]) if shape[-1] == shape[-2] \
        else rng.standard_normal(shape)


def complex_general(rng, shape):
    return general(rng, shape) + 1j * rng.standard_normal(shape)


def _solve_tri(left, lower, trans, unit):
    return lambda a, b: ch.triangular_solve(a, b, left_side=left, lower=lower,
                                            transpose_a=trans, unit_diagonal=unit)


def _tri_reference(left, lower, trans, unit):
    def ref(a, b):
        a = np.tril(a) if lower else np.triu(a)
        if unit:
            a = a - np.diag(np.diag(a)) + np.eye(a.shape[-1])
        op = a.T if trans else a
        return np.linalg.solve(op, b) if left else np.linalg.solve(op.T, b.T).T
    return ref


def _reconstruct_svd(a, full=False):
    s, u, vt = svd_mod.svd(a, full_matrices=full)
    return matmul(u * s[..., None, :], vt)


def _projectors_svd(a):
    s, u, vt = svd_mod.svd(a, full_matrices=False)
    return matmul(u[..., :, :2], mH(u[..., :, :2])), matmul(mH(vt[..., :2, :]), vt[..., :2, :])


def _polar_svd(a):
    """U Vᴴ and |U|, |Vᴴ|: invariant under the phase LAPACK gives each pair of vectors."""
    s, u, vt = svd_mod.svd(a, full_matrices=False)
    return matmul(u, vt), abs(u), abs(vt)


def _reconstruct_eigh(a):
    v, w = eg.eigh(a)
    return matmul(v * w[..., None, :], mT(v))


def _projector_eigh(a):
    v, _ = eg.eigh(a)
    return matmul(v[..., :, -2:], mT(v[..., :, -2:]))


@attrs.frozen
class Case:
    name: str
    f: Callable
    makers: tuple  # one (rng, shape) -> array per operand
    shapes: tuple
    reference: Callable | None  # numpy/scipy on one matrix (None: checked invariantly)
    order: int = 2

    def args(self, rng, batch=()):
        return tuple(m(rng, (*batch, *s)) for m, s in zip(self.makers, self.shapes))


def _tri_cases():
    for left in (True, False):
        for lower in (True, False):
            for trans in (False, True):
                for unit in (False, True):
                    name = f"triangular_solve-{'left' if left else 'right'}-" \
                           f"{'lower' if lower else 'upper'}{'-T' if trans else ''}" \
                           f"{'-unit' if unit else ''}"
                    maker = lower_factor if lower else (lambda r, s: mT(lower_factor(r, s)))
                    b_shape = (4, 3) if left else (3, 4)
                    # second derivatives for one variant of each side: the rule is shared
                    order = 2 if lower and not trans and not unit else 1
                    yield Case(name, _solve_tri(left, lower, trans, unit),
                               (maker, general), ((4, 4), b_shape),
                               _tri_reference(left, lower, trans, unit), order)


CASES = [
    Case("cholesky", ch.cholesky, (spd,), ((4, 4),), np.linalg.cholesky),
    *_tri_cases(),
    Case("expm", ex.expm, (general,), ((3, 3),), scipy.linalg.expm),
    Case("expm_frechet", ex.expm_frechet, (general, general), ((3, 3), (3, 3)),
         lambda a, e: scipy.linalg.expm_frechet(a, e, compute_expm=False), order=1),
    Case("sqrtm", sy.sqrtm, (spd,), ((3, 3),), scipy.linalg.sqrtm),
    Case("solve_sylvester", sy.solve_sylvester, (general, general, general),
         ((3, 3), (2, 2), (3, 2)), scipy.linalg.solve_sylvester),
    Case("lu-factors", lambda a: lu_mod.lu(a)[0], (general,), ((4, 4),),
         lambda a: scipy.linalg.lu_factor(a)[0]),
    Case("solve", lu_mod.solve, (general, general), ((4, 4), (4, 2)), np.linalg.solve),
    Case("qr-square", qr_mod.qr, (general,), ((4, 4),), np.linalg.qr),
    Case("qr-tall", qr_mod.qr, (general,), ((5, 3),), np.linalg.qr),
    Case("qr-wide", qr_mod.qr, (general,), ((3, 5),), np.linalg.qr),
    Case("qr-wide-complete", lambda a: qr_mod.qr(a, full_matrices=True), (general,),
         ((2, 4),), lambda a: np.linalg.qr(a, mode="complete"), order=1),
    Case("qr-square-complete", lambda a: qr_mod.qr(a, full_matrices=True), (general,),
         ((3, 3),), lambda a: np.linalg.qr(a, mode="complete"), order=1),
    Case("eigh-eigenvalues", lambda a: eg.eigh(a)[1], (symmetric,), ((4, 4),),
         np.linalg.eigvalsh),
    Case("eigh-upper-eigenvalues", lambda a: eg.eigh(a, lower=False)[1], (symmetric,),
         ((4, 4),), np.linalg.eigvalsh, order=1),
    Case("eigh-reconstruction", _reconstruct_eigh, (symmetric,), ((4, 4),), lambda a: a),
    Case("eigh-projector", _projector_eigh, (symmetric,), ((4, 4),), None),
    Case("eigvalsh", eg.eigvalsh, (symmetric,), ((4, 4),), np.linalg.eigvalsh),
    Case("eigvalsh-upper", lambda a: eg.eigvalsh(a, lower=False), (symmetric,), ((4, 4),),
         np.linalg.eigvalsh, order=1),
    *(Case(f"svdvals-{m}x{n}", lambda a: svd_mod.svd(a, compute_uv=False)[0], (general,),
           ((m, n),), lambda a: np.linalg.svd(a, compute_uv=False)) for m, n in
      ((4, 4), (5, 3), (3, 5))),
    *(Case(f"svd-reconstruction-{m}x{n}", _reconstruct_svd, (general,), ((m, n),),
           lambda a: a, order=1) for m, n in ((4, 4), (5, 3), (3, 5))),
    *(Case(f"svd-projectors-{m}x{n}", _projectors_svd, (general,), ((m, n),), None,
           order=1) for m, n in ((4, 4), (5, 3), (3, 5))),
    # complex matrices: JAX's rules, conjugate transposes
    Case("expm-complex", ex.expm, (complex_general,), ((3, 3),), scipy.linalg.expm),
    *(Case(f"qr-complex-{m}x{n}", qr_mod.qr, (complex_general,), ((m, n),), np.linalg.qr)
      for m, n in ((4, 4), (5, 3), (3, 5))),
    *(Case(f"svdvals-complex-{m}x{n}", lambda a: svd_mod.svd(a, compute_uv=False)[0],
           (complex_general,), ((m, n),), lambda a: np.linalg.svd(a, compute_uv=False))
      for m, n in ((4, 4), (5, 3), (3, 5))),
    *(Case(f"svd-complex-{name}-{m}x{n}", f, (complex_general,), ((m, n),), reference,
           order=1) for m, n in ((4, 4), (5, 3), (3, 5)) for name, f, reference in
      (("reconstruction", _reconstruct_svd, lambda a: a), ("projectors", _projectors_svd,
                                                           None), ("polar", _polar_svd, None))),
]
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_against_numpy_and_scipy(case, rng):
    args = case.args(rng, (2,))
    got = case.f(*args)
    if case.reference is not None:
        for i in range(2):
            want = case.reference(*(a[i] for a in args))
            assert_allclose(tuple(g[i] for g in got) if isinstance(got, list) else got[i],
                            tuple(want) if isinstance(want, tuple) else want, rtol=1e-10,
                            atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives(case, rng):
    """jvp by finite differences, vjp by the dot-product test, and (order 2) the same
    of the jvp: the rules are differentiable again."""
    check_grads(case.f, case.args(rng), rng, order=case.order)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap(case, rng):
    stacked = case.args(rng, (3,))
    n = len(stacked)
    for axes in {(0,) * n, *((tuple(0 if j == i else None for j in range(n))) for i in
                             range(n))}:
        args = tuple(a if ax == 0 else a[0] for a, ax in zip(stacked, axes))
        got = inert.vmap(case.f, in_axes=axes)(*args)
        for i in range(3):
            lane = case.f(*(a[i] if ax == 0 else a for a, ax in zip(args, axes)))
            assert_allclose(_lane(got, i), lane, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit(case, rng):
    stacked = case.args(rng, (3,))
    assert_allclose(inert.jit(case.f)(*stacked), case.f(*stacked), rtol=1e-12, atol=1e-12)


def _lane(out, i):
    return type(out)(o[i] for o in out) if isinstance(out, (list, tuple)) else out[i]


@pytest.mark.parametrize("prim, args, params", [
    (ch.cholesky_p, ("spd",), {}),
    (lu_mod.lu_p, ("general",), {}),
    (lu_mod.solve_p, ("general", "rhs"), {}),
    (qr_mod.qr_p, ("tall",), {"full_matrices": False}),
    (qr_mod.qr_p, ("tall",), {"full_matrices": True}),
    (eg.eigh_p, ("symmetric",), {"lower": True}),
    (ex.expm_p, ("general",), {}),
    (ex.expm_frechet_p, ("general", "general"), {}),
    (sy.sqrtm_p, ("spd",), {}),
    (sy.solve_sylvester_p, ("general", "small", "rhs"), {}),
    (eg.eigvalsh_p, ("symmetric",), {"lower": True}),
    (svd_mod.svd_p, ("tall",), {"full_matrices": True, "compute_uv": True}),
    (svd_mod.svd_p, ("tall",), {"full_matrices": False, "compute_uv": False}),
], ids=lambda p: getattr(p, "name", None))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_abstract_eval_matches_impl(prim, args, params, dtype, rng):
    makers = {"spd": lambda: spd(rng, (2, 3, 3)), "general": lambda: general(rng, (2, 3, 3)),
              "rhs": lambda: general(rng, (2, 3, 2)), "tall": lambda: general(rng, (2, 4, 3)),
              "small": lambda: general(rng, (2, 2, 2)),
              "symmetric": lambda: symmetric(rng, (2, 3, 3))}
    check_abstract_eval(prim, tuple(makers[a]().astype(dtype) for a in args), params)


def test_lu_permutation_and_pivots_agree_with_scipy(rng):
    a = general(rng, (3, 5, 5))
    factors, pivots, perm = lu_mod.lu(a)
    for i in range(3):
        lower = np.tril(factors[i], -1) + np.eye(5)
        np.testing.assert_allclose(a[i][perm[i]], lower @ np.triu(factors[i]), atol=1e-12)
        np.testing.assert_array_equal(pivots[i], scipy.linalg.lu_factor(a[i])[1])


def test_lu_pivots_to_permutation(rng):
    pivots = np.array([[2, 2, 3], [0, 2, 2]], np.int32)
    perm = lu_mod.lu_pivots_to_permutation(pivots, 4)
    np.testing.assert_array_equal(perm, [[2, 0, 3, 1], [0, 2, 1, 3]])
    batched = inert.vmap(lambda p: lu_mod.lu_pivots_to_permutation(p, 4), in_axes=1)
    np.testing.assert_array_equal(batched(pivots.T), perm)


def test_lu_solve_in_both_directions(rng):
    a, b = general(rng, (2, 4, 4)), general(rng, (2, 4, 3))
    factors, _, perm = lu_mod.lu(a)
    np.testing.assert_allclose(lu_mod.lu_solve(factors, perm, b), np.linalg.solve(a, b))
    np.testing.assert_allclose(lu_mod.lu_solve(factors, perm, b, trans=1),
                               np.linalg.solve(mT(a), b))


def test_eigenvalue_gradients_are_exact_at_repeated_eigenvalues():
    """No gap divides the eigenvalues' rule: at multiples of I and at a matrix with a
    repeated pair, sum(w) has gradient I and sum(w²) has 2A (from the lower triangle:
    the upper one is not read, so its mirror counts twice)."""
    q = np.linalg.qr(np.random.default_rng(1).standard_normal((4, 4)))[0]
    for a in (np.eye(4), 3 * np.eye(4), q @ np.diag([1.0, 1.0, 2.0, 5.0]) @ q.T):
        for values in (eg.eigvalsh, lambda a: eg.eigh(a)[1]):
            grad_sum = inert.grad(lambda a, values=values: values(a).sum())(a)
            np.testing.assert_allclose(grad_sum, np.eye(4), atol=1e-12)
            grad_sq = inert.grad(lambda a, values=values: (values(a) ** 2).sum())(a)
            np.testing.assert_allclose(grad_sq, 2 * (2 * np.tril(a) - np.diag(np.diag(a))),
                                       atol=1e-12)


def test_eigenvector_tangents_stay_finite_at_repeated_eigenvalues():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, (dv, dw) = inert.jvp(eg.eigh, (np.eye(3),), (np.ones((3, 3)),))
    assert np.all(np.isfinite(dv)) and np.all(np.isfinite(dw))


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan(rng):
    a = np.stack([spd(rng, (3, 3)), -np.eye(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ch.cholesky(a)
        _, tangent = inert.jvp(ch.cholesky, (a,), (np.ones_like(a),))
    np.testing.assert_allclose(out[0], np.linalg.cholesky(a[0]))
    assert np.all(np.isnan(out[1])) and np.all(np.isnan(tangent[1]))


def test_singular_matrices_raise_linalg_error():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LinAlgError, match="solve: singular") as info:
        lu_mod.solve(singular, np.ones((2, 1)))
    assert isinstance(info.value, np.linalg.LinAlgError)
    assert "test_decompositions.py" in str(info.value)
    with pytest.raises(LinAlgError, match="triangular_solve: singular"):
        ch.triangular_solve(np.zeros((2, 2)), np.ones((2, 1)), left_side=True, lower=True)
    assert lu_mod.lu(singular)[0][1, 1] == 0.0  # an LU factorisation exists, without warnings


@pytest.mark.parametrize("f, args, match", [
    (ch.cholesky, (np.ones((2, 3)),), r"cholesky: needs a square matrix .* f64\[2,3\]"),
    (ch.cholesky, (np.ones(3),), "cholesky: needs a square matrix"),
    (lambda a, b: lu_mod.solve(a, b), (np.eye(3), np.ones((2, 1))), r"solve: b f64\[2,1\]"),
    (lambda a, b: ch.triangular_solve(a, b, left_side=False, lower=True), (np.eye(3),
     np.ones((3, 2))), "triangular_solve: b"),
])
def test_bad_shapes_name_the_primitive_and_the_line(f, args, match):
    with pytest.raises(ShapeError, match=match) as info:
        inert.make_jaxpr(f)(*args)
    assert "test_decompositions.py" in str(info.value)


def test_complex_and_integer_matrices_are_refused():
    with pytest.raises(DTypeError, match="complex matrices are not supported"):
        sy.sqrtm(np.eye(2, dtype=complex))
    with pytest.raises(DTypeError, match="eigh: needs real floating-point"):
        eg.eigh(np.eye(2, dtype=int))


@pytest.mark.parametrize("f, shape", [
    (lambda a: qr_mod.qr(a, full_matrices=True), (5, 3)),
    (lambda a: svd_mod.svd(a, full_matrices=True)[1], (5, 3))])
def test_underivable_factors_are_refused_when_differentiated(f, shape, rng):
    a = general(rng, shape)
    f(a)  # the values are fine
    with pytest.raises(NonDifferentiableError):
        inert.jvp(f, (a,), (a,))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 3), st.integers(1, 3), st.booleans(), st.sampled_from(["solve", "left",
                                                                             "right"]))
def test_batched_right_hand_sides_fold_into_one_solve(axis, k, stacked, which):
    """A matrix the same for every lane (itself a stack or not), right-hand sides batched
    on any axis: the folded solve agrees with a loop."""
    rng = np.random.default_rng(axis * 10 + k)
    batch = (2,) if stacked else ()
    a = lower_factor(rng, (*batch, 3, 3))
    b_shape = (*batch, 3, k) if which != "right" else (*batch, k, 3)
    axis = min(axis, len(b_shape))
    lanes = rng.standard_normal((4, *b_shape))
    f = {"solve": lu_mod.solve, "left": _solve_tri(True, True, False, False),
         "right": _solve_tri(False, True, True, False)}[which]
    got = inert.vmap(f, in_axes=(None, axis))(a, np.moveaxis(lanes, 0, axis))
    np.testing.assert_allclose(got, np.stack([f(a, lane) for lane in lanes]), rtol=1e-10)
