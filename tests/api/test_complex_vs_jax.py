"""Complex differentiation and FFTs against JAX 0.10 (skipped without JAX, which the
project does not depend on): each program is written once, for a namespace, and run on
inert's and on JAX's; values, gradients, jvps and vjps (cotangents pulled back as they
are, JAX's convention, no conjugation) must agree."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import inert
import inert.numpy as inp
import inert.scipy.linalg as isl
from inert import lax as ilax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp, jlax, jsl = jax.numpy, jax.lax, jax.scipy.linalg


RNG = np.random.default_rng(26)
Z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
X = RNG.standard_normal(3)


def _close(got, want, rtol=1e-10, atol=1e-12):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype.kind == w.dtype.kind and g.shape == w.shape, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _compiled(f):
    """JAX's `f` compiled as one program: eager JAX compiles each operation of a long
    program (a Hessian, expm) separately, which takes seconds."""
    return jax.jit(f)


def _random_like(y):
    """Random values of an array's (or a jax.ShapeDtypeStruct's) shape and kind."""
    out = RNG.standard_normal(y.shape)
    return out + 1j * RNG.standard_normal(y.shape) if np.dtype(y.dtype).kind == "c" else out


# ---------------------------------------------------------------------------------
# grad's conventions: C -> R, holomorphic C -> C


def test_the_cookbooks_example():
    """Exactly JAX's figure: |z|'s rule divides a real number by |z|, as JAX's rounds."""
    assert complex(inert.grad(lambda z: abs(z) ** 2)(3 + 4j)) == 6 - 8j
    assert complex(jax.grad(lambda z: abs(z) ** 2)(3 + 4j)) == 6 - 8j


REAL_OF_COMPLEX = {  # C -> R, scalar outputs: grad is ∂f/∂x - i ∂f/∂y
    "abs2": lambda xp: lambda z: xp.sum(xp.abs(z) ** 2),
    "abs": lambda xp: lambda z: xp.sum(xp.abs(z)),
    "abs3": lambda xp: lambda z: xp.sum(xp.abs(z) ** 3),
    "log_abs": lambda xp: lambda z: xp.sum(xp.log(xp.abs(z))),
    "real_z_sin_z": lambda xp: lambda z: xp.sum(xp.real(z * xp.sin(z))),
    "imag_exp_angle": lambda xp: lambda z: xp.sum(xp.imag(xp.exp(z)) * xp.angle(z)),
    "parts": lambda xp: lambda z: xp.sum(xp.real(z) ** 2 * xp.imag(z)),
    "quadratic_form": lambda xp: lambda z: xp.real(xp.vdot(z, xp.outer(z, z) @ z)),
}


@pytest.mark.parametrize("name", sorted(REAL_OF_COMPLEX))
def test_grad_of_a_real_function_of_complex_inputs(name):
    ours, theirs = REAL_OF_COMPLEX[name](inp), REAL_OF_COMPLEX[name](jnp)
    _close(inert.value_and_grad(ours)(Z), _compiled(jax.value_and_grad(theirs))(Z))


HOLOMORPHIC = {  # C -> C, vector outputs
    "sin": lambda xp: xp.sin,
    "exp_times_z": lambda xp: lambda z: xp.exp(z) * z,
    "cube_plus": lambda xp: lambda z: z ** 3 + 2j * z,
    "reciprocal": lambda xp: lambda z: 1 / z,
    "log": lambda xp: xp.log,
    "tanh_of_square": lambda xp: lambda z: xp.tanh(z * z),
    "matrix": lambda xp: lambda z: xp.outer(z, z) @ xp.cos(z),
}


def _holomorphic_derivatives(api, f, xp):
    """jacfwd and jacrev of f, grad and hessian of a weighted sum of its outputs."""
    def scalar(z):
        return xp.sum(f(z) * xp.arange(1, 4))

    return lambda z: [api.jacfwd(f, holomorphic=True)(z), api.jacrev(f, holomorphic=True)(z),
                      api.grad(scalar, holomorphic=True)(z),
                      api.hessian(scalar, holomorphic=True)(z)]


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_derivatives(name):
    ours = _holomorphic_derivatives(inert, HOLOMORPHIC[name](inp), inp)
    theirs = _holomorphic_derivatives(jax, HOLOMORPHIC[name](jnp), jnp)
    _close(ours(Z), _compiled(theirs)(Z))


# ---------------------------------------------------------------------------------
# jvp and vjp of C -> C (holomorphic or not), R -> C and C -> R

MAPS = {  # name: (program, input)
    "twice": (lambda xp, lax: lambda z: 2 * z, Z),
    "conj_times_z": (lambda xp, lax: lambda z: xp.conj(z) * z ** 2, Z),
    "abs_times_z": (lambda xp, lax: lambda z: xp.abs(z) * z, Z),
    "mixed_parts": (lambda xp, lax: lambda z: xp.real(z) + 1j * xp.imag(z) * z, Z),
    "sin_of_conj": (lambda xp, lax: lambda z: xp.sin(xp.conj(z)) / (1 + xp.abs(z)), Z),
    "phase": (lambda xp, lax: lambda x: xp.exp(1j * x), X),
    "scaled": (lambda xp, lax: lambda x: x * (1 + 2j), X),
    "lax_complex": (lambda xp, lax: lambda x: lax.complex(x, x ** 2), X),
    "promoted": (lambda xp, lax: lambda x: xp.cumsum(x + 0j) * xp.sin(x), X),
    "abs": (lambda xp, lax: lambda z: xp.abs(z), Z),
    "real_imag": (lambda xp, lax: lambda z: xp.real(z) * xp.imag(z) ** 2, Z),
    "angle": (lambda xp, lax: lambda z: xp.angle(z), Z),
    "scalar": (lambda xp, lax: lambda z: xp.sum(z * z), Z),
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_jvp_and_vjp(name):
    program, x = MAPS[name]
    ours, theirs = program(inp, ilax), program(jnp, jlax)
    t, ct = _random_like(x), _random_like(jax.eval_shape(theirs, x))
    want = _compiled(lambda x, t, ct: (jax.jvp(theirs, (x,), (t,)), jax.vjp(theirs, x)[1](ct)))
    _close((inert.jvp(ours, (x,), (t,)), inert.vjp(ours, x)[1](ct)), want(x, t, ct))


# ---------------------------------------------------------------------------------
# Every jnp.fft function, each norm, odd and even lengths

Z46 = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
X46 = Z46.real.copy()
NORMS = [{"norm": norm} for norm in (None, "backward", "ortho", "forward")]
LENGTHS = [{"n": 5, "norm": "ortho"}, {"n": 8, "norm": "forward"}, {"n": 5, "axis": 0}]
SHAPES_2D = [{"s": (3, 7), "norm": "ortho"}, {"axes": (1, 0), "norm": "forward"}]
SHAPES_ND = [{"s": (5,), "axes": (0,), "norm": "ortho"}, {"s": (3, 5), "norm": "forward"}]
FFTS = {  # name: (input, the keywords tried), each norm at the default lengths
    **{name: (Z46, NORMS + LENGTHS) for name in ("fft", "ifft")},
    **{name: (X46, NORMS + LENGTHS) for name in ("rfft", "ihfft")},
    # the default n is 2 (6 - 1) = 10; odd ones cut and pad
    **{name: (Z46, NORMS + LENGTHS + [{"n": 11, "norm": "ortho"}]) for name in ("irfft", "hfft")},
    **{name: (Z46, NORMS[1:] + SHAPES_2D) for name in ("fft2", "ifft2", "irfft2")},
    "rfft2": (X46, NORMS[1:] + SHAPES_2D),
    **{name: (Z46, NORMS[1:] + SHAPES_ND) for name in ("fftn", "ifftn", "irfftn")},
    "rfftn": (X46, NORMS[1:] + SHAPES_ND),
}


@pytest.mark.parametrize("name", sorted(FFTS))
def test_fft_values_and_vjps(name):
    """Values and the vjp of a random cotangent for each keyword set; JAX's all in one
    compiled program."""
    x, cases = FFTS[name]
    ours, theirs = ([functools.partial(getattr(xp.fft, name), **kw) for kw in cases]
                    for xp in (inp, jnp))
    cts = [_random_like(jax.eval_shape(f, x)) for f in theirs]
    want = _compiled(lambda x, cts: [(f(x), jax.vjp(f, x)[1](ct))
                                     for f, ct in zip(theirs, cts)])(x, cts)
    _close([(f(x), inert.vjp(f, x)[1](ct)) for f, ct in zip(ours, cts)], want)


def test_frequencies_and_shifts():
    for n, d in [(8, 1.0), (7, 0.25)]:
        _close(inp.fft.fftfreq(n, d), jnp.fft.fftfreq(n, d))
        _close(inp.fft.rfftfreq(n, d), jnp.fft.rfftfreq(n, d))
    z, ct = Z46[:, :5], _random_like(Z46[:, :5])
    for axes in [None, 0, (1, 0)]:
        for shift in ("fftshift", "ifftshift"):
            ours, theirs = (functools.partial(getattr(xp.fft, shift), axes=axes)
                            for xp in (inp, jnp))
            _close((ours(z), inert.vjp(ours, z)[1](ct)), (theirs(z), jax.vjp(theirs, z)[1](ct)))


def test_a_spectral_loss_and_its_second_derivative():
    def program(xp):
        return lambda x: xp.sum(xp.abs(xp.fft.rfft(xp.sin(x) * x, n=9)) ** 3)

    x = RNG.standard_normal(8)
    _close(inert.grad(program(inp))(x), jax.grad(program(jnp))(x))
    _close(inert.hessian(program(inp))(x), _compiled(jax.hessian(program(jnp)))(x), rtol=1e-9)


# ---------------------------------------------------------------------------------
# Complex linear algebra: gauge-invariant functions of the decompositions

A43 = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))


def _svd_invariants(xp):
    def f(a):
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        polar = u @ vh
        return (xp.sum(s ** 3) + xp.sum(xp.abs(u) ** 4) + xp.sum(xp.abs(vh) ** 3)
                + xp.sum(xp.real(polar) * xp.imag(polar)))
    return f


LINALG = {  # name: (program, input)
    "svd": (lambda xp, sl: _svd_invariants(xp), A43),
    "svd_wide": (lambda xp, sl: _svd_invariants(xp), A43.T),
    "svdvals": (lambda xp, sl: lambda a: xp.sum(xp.linalg.svd(a, compute_uv=False)), A43),
    "qr": (lambda xp, sl: lambda a: (lambda q, r: xp.sum(xp.real(q) ** 3 * xp.imag(q))
                                     + xp.sum(xp.abs(r) ** 3))(*xp.linalg.qr(a)), A43),
    "qr_square": (lambda xp, sl: lambda a: xp.sum(xp.imag(xp.linalg.qr(a)[0]) ** 3),
                  A43[:3]),
    "expm": (lambda xp, sl: lambda a: xp.sum(xp.abs(sl.expm(a)) ** 2), A43[:3]),
    "norms": (lambda xp, sl: lambda a: _norms(xp, a), A43),
    "pinv": (lambda xp, sl: lambda a: xp.sum(xp.abs(xp.linalg.pinv(a) - 1j) ** 2), A43),
    "lstsq": (lambda xp, sl: lambda a: _least_squares(xp, a), A43),
    "cond": (lambda xp, sl: lambda a: xp.linalg.cond(a) + xp.linalg.cond(a[:3], 1), A43),
    "matrix_power": (lambda xp, sl: lambda a: xp.sum(xp.imag(xp.linalg.matrix_power(a, -3))),
                     A43[:3]),
}


def _least_squares(xp, a):
    x, resid, rank, s = xp.linalg.lstsq(a, Z46[:, :2])
    return xp.sum(xp.real(x) * xp.imag(x)) + xp.sum(resid) + rank * xp.sum(s)


def _norms(xp, a):
    """Every matrix norm of `a` and vector norm of its first column, weighted so that
    no two gradients can cancel."""
    matrix = [xp.linalg.norm(a, ord) for ord in (None, "nuc", 1, -1, 2, -2, np.inf)]
    vector = [xp.linalg.norm(a[:, 0], ord) for ord in (1, 2, 3, np.inf, -np.inf)]
    return sum((k + 1) * n for k, n in enumerate(matrix + vector))


@pytest.mark.parametrize("name", sorted(LINALG))
def test_complex_linear_algebra_gradients(name):
    program, a = LINALG[name]
    ours, theirs = program(inp, isl), program(jnp, jsl)
    _close(inert.value_and_grad(ours)(a), _compiled(jax.value_and_grad(theirs))(a), rtol=1e-9)


@pytest.mark.parametrize("name", ["svd", "qr"])
def test_complex_decomposition_tangents(name):
    """numpy's factors are LAPACK's, as JAX's are on a CPU, so even tangents that depend
    on the gauge (each pair of singular vectors' phase) agree."""
    def program(xp):
        if name == "svd":
            return lambda a: xp.linalg.svd(a, full_matrices=False)
        return xp.linalg.qr

    t = _random_like(A43)
    _close(inert.jvp(program(inp), (A43,), (t,)), jax.jvp(program(jnp), (A43,), (t,)),
           rtol=1e-8, atol=1e-10)


def test_triangular_solve_conjugates_on_request():
    a = np.triu(Z46[:4, :4]) + 3 * np.eye(4)
    for transpose_a in (False, True):
        kw = dict(left_side=True, lower=False, transpose_a=transpose_a, conjugate_a=True)
        _close(ilax.linalg.triangular_solve(a, Z46, **kw),
               jlax.linalg.triangular_solve(a, Z46, **kw))


B42 = Z46[:, :2]
_HERMITIAN = A43[:3] @ A43[:3].conj().T + 3 * np.eye(3)
_TRIANGULAR = np.triu(Z46[:4, :4]) + 3 * np.eye(4)
SCIPY = {  # name: (program, input); a Hermitian input is moved along Hermitian directions
    **{f"cho_solve_{side}": (
        lambda xp, sl, lower=lower: lambda a: xp.sum(
            xp.abs(sl.cho_solve(sl.cho_factor(a, lower=lower), B42[:3])) ** 2), _HERMITIAN)
       for side, lower in (("lower", True), ("upper", False))},
    "cholesky_upper": (lambda xp, sl: lambda a: xp.sum(xp.real(sl.cholesky(a)) *
                                                       xp.imag(sl.cholesky(a))), _HERMITIAN),
    # not solve(assume_a="pos"): JAX's gradient of it is not the derivative for complex
    # matrices (its custom_linear_solve takes aᵀ = a); inert's is checked by finite
    # differences in tests/api/scipy/test_scipy_linalg.py
    "eigh_upper": (lambda xp, sl: lambda a: xp.sum(sl.eigh(a, lower=False)[0] ** 3) +
                   xp.sum(xp.abs(sl.eigh(a, lower=False)[1]) ** 4), _HERMITIAN),
    **{f"solve_triangular_{trans}": (
        lambda xp, sl, trans=trans: lambda a: xp.sum(
            xp.abs(sl.solve_triangular(a, B42, trans=trans)) ** 2), _TRIANGULAR)
       for trans in ("T", "C")},
    **{f"lu_solve_{trans}": (
        lambda xp, sl, trans=trans: lambda a: xp.sum(
            xp.abs(sl.lu_solve(sl.lu_factor(a), B42, trans=trans)) ** 2), _TRIANGULAR.T + 1j)
       for trans in (0, 1, 2)},
}


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_complex_scipy_linalg_gradients(name):
    """Against JAX along a direction: the routines that read one triangle of a Hermitian
    matrix (inert's, as LAPACK) and JAX's symmetrizing ones agree on Hermitian moves."""
    program, a = SCIPY[name]
    ours, theirs = program(inp, isl), program(jnp, jsl)
    direction = _random_like(a)
    if np.allclose(a, a.conj().T):
        direction = direction + direction.conj().T
    value, g = inert.value_and_grad(ours)(a)
    want_value, want_g = _compiled(jax.value_and_grad(theirs))(a)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(np.real(np.sum(g * direction)),
                               np.real(np.sum(np.asarray(want_g) * direction)), rtol=1e-9)
