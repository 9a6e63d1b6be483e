"""inert.numpy.linalg: one table drives values and dtypes against numpy (eager and
staged), jvp against finite differences, the vjp dot-product test, jacfwd against
jacrev, vmap against a loop and jit against eager; then Hessians of realistic scalar
functions, the residuals activity analysis keeps, and bad input."""

from __future__ import annotations

import warnings
from typing import Callable

import attrs
import numpy as np
import pytest
from harness import assert_allclose, check_grads
from numpy_checks import assert_like_numpy, staged

import inert
import inert.numpy as inp
from inert.errors import DTypeError, LinAlgError, ShapeError

LA = inp.linalg


def spd(rng, n, batch=()):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def general(rng, *shape):
    a = rng.standard_normal(shape)
    return a + 2 * np.eye(shape[-1]) if shape[-1] == shape[-2] else a


def _invariant_svd(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    return inp.matmul(u * s[..., None, :], vh), s


def _invariant_eigh(a):
    w, v = LA.eigh(a)
    return w, inp.matmul(v[..., :, -1:], inp.swapaxes(v[..., :, -1:], -1, -2))


def _invariant_qr(a):
    q, r = LA.qr(a)
    return inp.matmul(q, r), inp.matmul(q, inp.swapaxes(q, -1, -2))


@attrs.frozen
class Case:
    name: str
    f: Callable
    make: Callable  # rng, batch -> arguments
    reference: Callable | None = None  # numpy; None: compare to f itself (invariants)
    grad: bool = True
    stacks: bool = True  # accepts stacks of operands (a vector b is one vector)


CASES = [
    Case("cholesky", LA.cholesky, lambda r, b: (spd(r, 4, b),), np.linalg.cholesky),
    Case("cholesky-upper", lambda a: LA.cholesky(a, upper=True), lambda r, b: (spd(r, 4, b),),
         lambda a: np.linalg.cholesky(a, upper=True)),
    Case("solve-matrix", LA.solve, lambda r, b: (general(r, *b, 4, 4), general(r, *b, 4, 2)),
         np.linalg.solve),
    Case("solve-vector", LA.solve, lambda r, b: (general(r, *b, 4, 4),
                                                 r.standard_normal((*b, 4))),
         np.linalg.solve, stacks=False),
    Case("inv", LA.inv, lambda r, b: (general(r, *b, 3, 3),), np.linalg.inv),
    Case("det", LA.det, lambda r, b: (general(r, *b, 3, 3),), np.linalg.det),
    Case("slogdet", lambda a: tuple(LA.slogdet(a)), lambda r, b: (general(r, *b, 3, 3),),
         lambda a: tuple(np.linalg.slogdet(a))),
    Case("eigvalsh", LA.eigvalsh, lambda r, b: (spd(r, 4, b),), np.linalg.eigvalsh),
    Case("eigh-invariants", _invariant_eigh, lambda r, b: (spd(r, 4, b),)),
    Case("svd-invariants", _invariant_svd, lambda r, b: (general(r, *b, 4, 3),)),
    Case("svdvals", LA.svdvals, lambda r, b: (general(r, *b, 3, 4),),
         lambda a: np.linalg.svd(a, compute_uv=False)),
    Case("qr-invariants", _invariant_qr, lambda r, b: (general(r, *b, 4, 3),)),
    Case("qr-r-abs", lambda a: inp.abs(LA.qr(a, mode="r")), lambda r, b: (general(r, *b, 4, 3),),
         lambda a: np.abs(np.linalg.qr(a, mode="r"))),
    Case("pinv", LA.pinv, lambda r, b: (general(r, *b, 4, 3),), np.linalg.pinv),
    Case("matrix_power-3", lambda a: LA.matrix_power(a, 3), lambda r, b: (general(r, *b, 3, 3),),
         lambda a: np.linalg.matrix_power(a, 3)),
    Case("matrix_power--2", lambda a: LA.matrix_power(a, -2),
         lambda r, b: (general(r, *b, 3, 3),), lambda a: np.linalg.matrix_power(a, -2)),
    Case("matrix_power-0", lambda a: LA.matrix_power(a, 0),
         lambda r, b: (general(r, *b, 3, 3),), lambda a: np.linalg.matrix_power(a, 0),
         grad=False),
    *(Case(f"norm-{o}", lambda a, o=o: LA.norm(a, o, axis=(-2, -1)),
           lambda r, b: (general(r, *b, 4, 3),),
           lambda a, o=o: np.linalg.norm(a, o, axis=(-2, -1)))
      for o in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)),
    *(Case(f"vector-norm-{o}", lambda a, o=o: LA.norm(a, o, axis=-1),
           lambda r, b: (r.standard_normal((*b, 5)),),
           lambda a, o=o: np.linalg.norm(a, o, axis=-1)) for o in (None, 1, 3, np.inf)),
    *(Case(f"matrix_norm-{o}", lambda a, o=o: LA.matrix_norm(a, ord=o, keepdims=True),
           lambda r, b: (general(r, *b, 3, 4),),
           lambda a, o=o: np.linalg.matrix_norm(a, ord=o, keepdims=True)) for o in ("fro", 2)),
    Case("vector_norm-all", LA.vector_norm, lambda r, b: (r.standard_normal((*b, 3, 2)),),
         np.linalg.vector_norm, stacks=False),
    Case("vector_norm-1", lambda a: LA.vector_norm(a, axis=-1, ord=1),
         lambda r, b: (r.standard_normal((*b, 3, 2)),),
         lambda a: np.linalg.vector_norm(a, axis=-1, ord=1)),
    Case("trace", lambda a: LA.trace(a, offset=1), lambda r, b: (general(r, *b, 3, 4),),
         lambda a: np.linalg.trace(a, offset=1)),
    Case("diagonal", LA.diagonal, lambda r, b: (general(r, *b, 3, 4),), np.linalg.diagonal),
    Case("matrix_transpose", LA.matrix_transpose, lambda r, b: (general(r, *b, 3, 4),),
         np.linalg.matrix_transpose),
    Case("vecdot", LA.vecdot, lambda r, b: (general(r, *b, 3, 4), general(r, *b, 3, 4)),
         np.linalg.vecdot),
    Case("outer", LA.outer, lambda r, b: (r.standard_normal((*b, 3)), r.standard_normal((*b, 2))),
         np.linalg.outer, stacks=False),
    Case("cond", LA.cond, lambda r, b: (general(r, *b, 3, 3),), np.linalg.cond),
    Case("cond-fro", lambda a: LA.cond(a, "fro"), lambda r, b: (general(r, *b, 3, 3),),
         lambda a: np.linalg.cond(a, "fro")),
]
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_like_numpy(case, rng):
    args = case.make(rng, (2,) if case.stacks else ())
    if case.reference is not None:
        want = case.reference(*args)
        assert_like_numpy(case.f(*args), want)
        assert_like_numpy(staged(case.f, *args), want)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=[c.name for c in CASES
                                                                    if c.grad])
def test_derivatives(case, rng):
    args = case.make(rng, ())
    check_grads(case.f, args, rng)
    argnums = tuple(range(len(args)))
    forward = inert.jacfwd(case.f, argnums=argnums)(*args)
    reverse = inert.jacrev(case.f, argnums=argnums)(*args)
    assert_allclose(forward, reverse, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap(case, rng):
    args = case.make(rng, (3,))
    got = inert.vmap(case.f)(*args)
    for i in range(3):
        lane = case.f(*(a[i] for a in args))
        assert_allclose(_lane(got, i), lane, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jit(case, rng):
    args = case.make(rng, (3,) if case.stacks else ())
    assert_allclose(inert.jit(case.f)(*args), case.f(*args), rtol=1e-12, atol=1e-12)


def _lane(out, i):
    return type(out)(o[i] for o in out) if isinstance(out, tuple) else out[i]


def test_more_functions_against_numpy(rng):
    a, b = general(rng, 5, 3), rng.standard_normal((5, 2))
    for got, want in zip(LA.lstsq(a, b), np.linalg.lstsq(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    x, resid, rank, _ = LA.lstsq(a, b[:, 0])
    np.testing.assert_allclose(x, np.linalg.lstsq(a, b[:, 0])[0], rtol=1e-10)
    assert resid.shape == (1,) and int(rank) == 3
    chain = [rng.standard_normal(s) for s in ((3,), (3, 6), (6, 2), (2, 4), (4,))]
    np.testing.assert_allclose(LA.multi_dot(chain), np.linalg.multi_dot(chain), rtol=1e-12)
    singular = np.outer(np.arange(1.0, 4.0), np.arange(1.0, 4.0))
    assert int(LA.matrix_rank(singular)) == np.linalg.matrix_rank(singular) == 1
    assert int(LA.matrix_rank(np.zeros(3))) == 0
    t = general(rng, 6, 6).reshape(2, 3, 6)
    rhs = rng.standard_normal((2, 3))
    np.testing.assert_allclose(LA.tensorsolve(t, rhs), np.linalg.tensorsolve(t, rhs))
    t4 = general(rng, 6, 6).reshape(2, 3, 3, 2)
    np.testing.assert_allclose(LA.tensorinv(t4), np.linalg.tensorinv(t4))
    assert LA.det(np.eye(3, dtype=int)).dtype == np.float64


def test_lstsq_and_multi_dot_derivatives(rng):
    a, b = general(rng, 5, 3), rng.standard_normal((5, 2))
    check_grads(lambda a, b: LA.lstsq(a, b)[0], (a, b), rng)
    chain = (rng.standard_normal((3,)), rng.standard_normal((3, 4)), rng.standard_normal((4,)))
    check_grads(lambda *xs: LA.multi_dot(xs), chain, rng)


# ---------------------------------------------------------------------------------
# Hessians of realistic scalar functions


def logdet_via_cholesky(a):
    return 2.0 * inp.sum(inp.log(inp.diagonal(LA.cholesky(a), axis1=-2, axis2=-1)))


def gp_negative_log_likelihood(params, x, y):
    log_length, log_variance, log_noise = params[0], params[1], params[2]
    sq = (x[:, None] - x[None, :]) ** 2
    k = inp.exp(log_variance) * inp.exp(-0.5 * sq / inp.exp(2 * log_length))
    k = k + inp.exp(log_noise) * inp.eye(x.shape[0])
    chol = LA.cholesky(k)
    alpha = inert.scipy.linalg.cho_solve((chol, True), y)
    return 0.5 * y @ alpha + inp.sum(inp.log(inp.diagonal(chol)))


def least_squares_loss(a, y):
    w = LA.solve(a.T @ a, a.T @ y)
    return inp.sum((a @ w - y) ** 2)


def _numerical_hessian(f, x, eps=1e-5):
    flat = x.ravel()
    rows = []
    for i in range(flat.size):
        step = np.zeros_like(flat)
        step[i] = eps
        plus = inert.grad(f)((flat + step).reshape(x.shape))
        minus = inert.grad(f)((flat - step).reshape(x.shape))
        rows.append(((plus - minus) / (2 * eps)).ravel())
    return np.array(rows)


@pytest.mark.parametrize("name", ["slogdet", "cholesky-logdet", "gp", "least-squares"])
def test_hessians_are_symmetric_and_match_finite_differences(name, rng):
    x_pts, y_pts = np.linspace(0, 3, 6), np.sin(np.linspace(0, 3, 6))
    a_ls, y_ls = rng.standard_normal((6, 3)), rng.standard_normal(6)
    f, x = {
        "slogdet": (lambda a: LA.slogdet(a)[1], spd(rng, 3)),
        "cholesky-logdet": (logdet_via_cholesky, spd(rng, 3)),
        "gp": (lambda p: gp_negative_log_likelihood(p, x_pts, y_pts), np.array([0.1, 0.2, -2.0])),
        "least-squares": (lambda y: least_squares_loss(a_ls, y), y_ls),
    }[name]
    hess = np.asarray(inert.hessian(f)(x)).reshape(x.size, x.size)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hess, _numerical_hessian(f, x), rtol=1e-5, atol=1e-6)
    if name == "least-squares":  # the residual of a projection: H = 2 (I - P)
        projector = a_ls @ np.linalg.solve(a_ls.T @ a_ls, a_ls.T)
        np.testing.assert_allclose(hess, 2 * (np.eye(6) - projector), atol=1e-10)


def test_logdet_gradient_is_the_inverse(rng):
    a = spd(rng, 4)
    np.testing.assert_allclose(inert.grad(lambda a: LA.slogdet(a)[1])(a), np.linalg.inv(a).T,
                               rtol=1e-10)
    np.testing.assert_allclose(inert.grad(logdet_via_cholesky)(a), np.linalg.inv(a), rtol=1e-10)


# ---------------------------------------------------------------------------------
# What activity analysis keeps


def _kept(f, *args):
    return sorted((r.aval.shape, r.aval.dtype.name, r.nbytes)
                  for r in inert.saved_residuals(f, *args))


def test_solve_with_an_inactive_matrix_keeps_one_factor_and_nothing_of_b(rng):
    n = 40
    a, b = general(rng, n, n), rng.standard_normal(n)
    kept = _kept(lambda a, b: LA.solve(a, b), inert.Inactive(a), b)
    assert kept == [((n,), "int32", 4 * n), ((n, n), "float64", 8 * n * n)]


def test_solve_with_an_active_matrix_keeps_the_factor_and_the_solution(rng):
    n = 40
    a, b = general(rng, n, n), rng.standard_normal(n)
    kept = _kept(lambda a, b: LA.solve(a, b), a, b)
    assert sum(k[2] for k in kept) == 8 * n * n + 4 * n + 8 * n
    assert ((n, 1), "float64", 8 * n) in kept  # the solution, as a column


def test_logdet_by_cholesky_keeps_the_factor_once(rng):
    n = 30
    kept = _kept(logdet_via_cholesky, spd(rng, n))
    assert kept == [((n,), "float64", 8 * n), ((n, n), "float64", 8 * n * n)]


def test_cho_solve_with_an_inactive_factor_keeps_it_by_reference(rng):
    factor = np.linalg.cholesky(spd(rng, 20))
    infos = inert.saved_residuals(
        lambda c, b: inp.sum(inert.scipy.linalg.cho_solve((c, True), b)),
        inert.Inactive(factor), rng.standard_normal(20))
    assert [r.aval.shape for r in infos] == [(20, 20)]
    _, vjp_fn = inert.vjp(lambda c, b: inert.scipy.linalg.cho_solve((c, True), b),
                          inert.Inactive(factor), np.ones(20))
    assert any(r is factor for r in vjp_fn.linear.residuals)


# ---------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("call, match", [
    (lambda: LA.solve(np.ones((3, 4)), np.ones(3)), r"solve: needs square .* \(3, 4\)"),
    (lambda: LA.solve(np.eye(3), np.ones(4)), r"solve: b of shape \(4,\) does not fit"),
    (lambda: LA.cholesky(np.ones(3)), "cholesky: needs square"),
    (lambda: LA.det(np.ones((2, 3))), "det: needs square"),
    (lambda: LA.inv(np.ones((2, 2, 3))), "inv: needs square"),
])
def test_bad_shapes_name_the_function_and_the_line(call, match):
    with pytest.raises(ShapeError, match=match) as info:
        call()
    assert "test_linalg.py" in str(info.value)


def test_singular_solve_raises_linalg_error_at_the_users_line():
    with pytest.raises(np.linalg.LinAlgError, match="singular") as info:
        LA.solve(np.ones((3, 3)), np.ones(3))
    assert isinstance(info.value, LinAlgError) and "test_linalg.py" in str(info.value)
    with pytest.raises(LinAlgError):
        inert.grad(lambda b: inp.sum(LA.solve(np.ones((3, 3)), b)))(np.ones(3))


def test_not_positive_definite_is_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(np.isnan(LA.cholesky(-np.eye(3))))
        assert np.all(np.isnan(inert.grad(logdet_via_cholesky)(-np.eye(3))))
        sign, logdet = LA.slogdet(np.zeros((2, 2)))
    assert sign == 0 and logdet == -np.inf


def test_not_positive_definite_is_an_error_under_debug_nans():
    with inert.debug_nans(True), pytest.raises(FloatingPointError, match="cholesky") as info:
        LA.cholesky(-np.eye(3))
    assert "test_linalg.py" in str(info.value)


def test_complex_matrices_are_refused_by_tensorinv():
    with pytest.raises(DTypeError, match="tensorinv: complex matrices are not supported"):
        LA.tensorinv(np.eye(4, dtype=complex).reshape(2, 2, 2, 2))


@pytest.mark.parametrize("name", ["cholesky", "solve", "inv", "det", "slogdet", "eigh",
                                  "svdvals", "qr", "pinv", "norm-2"])
def test_float32_stays_float32_in_values_and_gradients(name, rng):
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    s = (a @ a.T).astype(np.float32)
    f = {"cholesky": lambda a: LA.cholesky(s + 0 * a), "solve": lambda a: LA.solve(a, a[0]),
         "inv": LA.inv, "det": LA.det, "slogdet": lambda a: LA.slogdet(a)[1],
         "eigh": lambda a: LA.eigh(a + a.T)[0], "svdvals": LA.svdvals,
         "qr": lambda a: LA.qr(a)[1], "pinv": LA.pinv, "norm-2": lambda a: LA.norm(a, 2)}[name]
    assert np.asarray(f(a)).dtype == np.float32
    assert inert.grad(lambda a: inp.sum(f(a)))(a).dtype == np.float32


def test_vmap_of_grad_is_a_loop_of_grads(rng):
    stack = spd(rng, 3, (4,))
    rhs = rng.standard_normal(3)
    for f in (logdet_via_cholesky, lambda a: inp.sum(LA.solve(a, rhs)),
              lambda a: LA.slogdet(a)[1], lambda a: inp.sum(LA.eigvalsh(a) ** 3)):
        got = inert.vmap(inert.grad(f))(stack)
        np.testing.assert_allclose(got, np.stack([inert.grad(f)(a) for a in stack]),
                                   rtol=1e-10, atol=1e-12)


def test_eig_of_a_real_matrix_is_complex_and_differentiable(rng):
    """The eigenvalues' gradient by finite differences, and the eigenvectors' through a
    function invariant under each vector's phase (|v|⁴), as JAX's rule gives them."""
    a = rng.standard_normal((4, 4))
    w, v = inp.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                               rtol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(inert.grad(lambda a: inp.sum(inp.real(inp.linalg.eigvals(a))))(a),
                               np.eye(4), atol=1e-12)
    direction, h = rng.standard_normal((4, 4)), 1e-6

    def central(f, g):
        return np.sum(g * direction), (f(a + h * direction) - f(a - h * direction)) / (2 * h)

    def moduli(a):
        return np.sum(np.abs(np.linalg.eigvals(a)) ** 2)

    squares = lambda a: inp.sum(inp.abs(inp.linalg.eigvals(a)) ** 2)  # noqa: E731
    got, want = central(moduli, inert.grad(squares)(a))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    quartic = lambda a: inp.sum(inp.abs(inp.linalg.eig(a).eigenvectors[:, 0]) ** 4)  # noqa: E731
    got, want = central(lambda a: np.sum(np.abs(np.linalg.eig(a)[1][:, 0]) ** 4),
                        inert.grad(quartic)(a))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    lanes = inert.vmap(inp.linalg.eigvals)(np.stack([a, 2 * a]))
    np.testing.assert_allclose(lanes[1], 2 * lanes[0], rtol=1e-12)


def test_cholesky_of_a_complex_hermitian_matrix(rng):
    """numpy's factor, its tangent along a Hermitian direction by finite differences,
    and the gradient of log det (JAX's convention: its real pairing with a direction is
    the directional derivative)."""
    b = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a = b @ b.conj().T + 3 * np.eye(3)
    np.testing.assert_allclose(LA.cholesky(a), np.linalg.cholesky(a), rtol=1e-13)
    np.testing.assert_allclose(LA.cholesky(a, upper=True), np.linalg.cholesky(a).conj().T,
                               rtol=1e-13)
    e = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    e, h = e + e.conj().T, 1e-6
    _, tangent = inert.jvp(LA.cholesky, (a,), (e,))
    central = (np.linalg.cholesky(a + h * e) - np.linalg.cholesky(a - h * e)) / (2 * h)
    np.testing.assert_allclose(tangent, central, atol=1e-8)
    logdet = lambda a: 2 * inp.sum(inp.log(inp.real(inp.diagonal(LA.cholesky(a)))))  # noqa: E731
    slope = (np.linalg.slogdet(a + h * e)[1] - np.linalg.slogdet(a - h * e)[1]) / (2 * h)
    np.testing.assert_allclose(np.real(np.sum(inert.grad(logdet)(a) * e)), slope, rtol=1e-7)


def test_eigh_of_a_complex_hermitian_matrix(rng):
    """Real eigenvalues and numpy's eigenvectors; the eigenvalues' gradient and that of
    a phase-invariant function of an eigenvector (|v|⁴) by finite differences along a
    Hermitian direction."""
    b = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a = b + b.conj().T
    w, v = LA.eigh(a)
    assert w.dtype == np.float64 and v.dtype == np.complex128
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
    e = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    e, h = e + e.conj().T, 1e-6
    for ours, theirs in [(lambda a: inp.sum(LA.eigvalsh(a) ** 3),
                          lambda a: np.sum(np.linalg.eigvalsh(a) ** 3)),
                         (lambda a: inp.sum(inp.abs(LA.eigh(a).eigenvectors[:, 0]) ** 4),
                          lambda a: np.sum(np.abs(np.linalg.eigh(a)[1][:, 0]) ** 4))]:
        slope = (theirs(a + h * e) - theirs(a - h * e)) / (2 * h)
        np.testing.assert_allclose(np.real(np.sum(inert.grad(ours)(a) * e)), slope, rtol=1e-6)


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_svd_and_qr_of_complex_matrices(shape, rng):
    """numpy's factors; gauge-invariant functions of the SVD (the singular values,
    |U|, U Vᴴ) and numpy's unique QR differentiated along a complex direction."""
    a, e, h = _complex(rng, *shape), _complex(rng, *shape), 1e-6
    u, s, vh = LA.svd(a, full_matrices=False)
    assert s.dtype == np.float64 and u.dtype == vh.dtype == np.complex128
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)
    np.testing.assert_allclose(LA.qr(a).Q @ LA.qr(a).R, a, atol=1e-12)
    for ours, theirs in [
            (lambda a: inp.sum(LA.svd(a, compute_uv=False)),
             lambda a: np.sum(np.linalg.svd(a, compute_uv=False))),
            (lambda a: inp.sum(inp.abs(LA.svd(a, full_matrices=False)[0]) ** 3),
             lambda a: np.sum(np.abs(np.linalg.svd(a, full_matrices=False)[0]) ** 3)),
            (lambda a: inp.sum(inp.imag(_polar(*LA.svd(a, full_matrices=False))) ** 2),
             lambda a: np.sum(np.imag(_polar(*np.linalg.svd(a, full_matrices=False))) ** 2)),
            (lambda a: _qr_loss(inp, LA.qr(a)), lambda a: _qr_loss(np, np.linalg.qr(a)))]:
        slope = (theirs(a + h * e) - theirs(a - h * e)) / (2 * h)
        np.testing.assert_allclose(np.real(np.sum(inert.grad(ours)(a) * e)), slope, rtol=1e-6)


def _polar(u, s, vh):
    return u @ vh


def _svd_loss(u, s, vh):
    """Products of the factors' parts, whose derivative needs the factors: nothing
    beyond what the SVD's rule keeps."""
    return inp.sum(inp.real(u) * inp.imag(vh[0])) + inp.sum(s ** 2)


def _qr_loss(xp, qr):
    return xp.sum(xp.real(qr[0]) * xp.imag(qr[0])) + xp.sum(xp.imag(qr[1]) ** 2)


def test_complex_svd_and_qr_keep_one_factorization(rng):
    """The real case's policy: the backward pass keeps the factors (complex) and the
    singular values (real), nothing else."""
    a = _complex(rng, 6, 4)
    kept = _kept(lambda a: _svd_loss(*LA.svd(a, full_matrices=False)), a)
    assert kept == [((4,), "float64", 8 * 4), ((4, 4), "complex128", 16 * 16),
                    ((6, 4), "complex128", 16 * 24)]
    kept = _kept(lambda a: _qr_loss(inp, LA.qr(a)), a)
    assert kept == [((4, 4), "complex128", 16 * 16), ((6, 4), "complex128", 16 * 24)]


def test_svd_based_functions_of_complex_matrices(rng):
    """pinv, lstsq, matrix_rank and cond take complex matrices through the complex SVD
    (their gradients are compared with JAX's in tests/api/test_complex_vs_jax.py)."""
    a, b = _complex(rng, 5, 3), _complex(rng, 5, 2)
    np.testing.assert_allclose(LA.pinv(a), np.linalg.pinv(a), atol=1e-12)
    for got, want in zip(LA.lstsq(a, b, numpy_resid=True), np.linalg.lstsq(a, b, rcond=None)):
        assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind  # rank: int32
        np.testing.assert_allclose(got, want, atol=1e-12)
    deficient = a[:, :2] @ _complex(rng, 2, 3)
    assert int(LA.matrix_rank(deficient)) == np.linalg.matrix_rank(deficient) == 2
    np.testing.assert_allclose(LA.cond(a), np.linalg.cond(a), rtol=1e-12)
    np.testing.assert_allclose(LA.cond(a[:3], "fro"), np.linalg.cond(a[:3], "fro"), rtol=1e-12)
    np.testing.assert_allclose(LA.matrix_power(a[:3], -2),
                               np.linalg.matrix_power(a[:3], -2), rtol=1e-10)
