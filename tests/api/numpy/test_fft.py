"""inert.numpy.fft against numpy.fft: every function, with n/s, axis/axes and norm;
derivatives by finite differences and the dot-product test, vmap, jit."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from tests.harness import check_grads, check_jit_backends

RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 6))
Z = X + 1j * RNG.standard_normal((4, 6))
X3 = RNG.standard_normal((3, 4, 5))

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
NORMS = [None, "backward", "ortho", "forward"]


def _input(name):
    return X if name in ("rfft", "ihfft", "rfft2", "rfftn") else Z


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_transforms_match_numpy(name, norm):
    a = _input(name)
    for n, axis in [(None, -1), (4, -1), (9, -1), (None, 0), (7, 0)]:
        got = getattr(jnp.fft, name)(a, n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
        assert np.asarray(got).dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", N_D)
def test_multidimensional_transforms_match_numpy(name, norm):
    a = _input(name)
    cases = [dict(), dict(s=(3, 8), axes=(-2, -1)), dict(axes=(1, 0)),
             dict(s=(5, 2), axes=(0, 1))]
    if name.endswith("n"):
        cases += [dict(axes=(0,)), dict(s=(5,), axes=(1,))]
    for kw in cases:
        got = getattr(jnp.fft, name)(a, norm=norm, **kw)
        want = getattr(np.fft, name)(a, norm=norm, **kw)
        assert got.shape == want.shape, kw
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(kw))


def test_single_precision_is_kept():
    x = X.astype(np.float32)
    assert np.asarray(jnp.fft.rfft(x)).dtype == np.complex64
    assert np.asarray(jnp.fft.irfft(jnp.fft.rfft(x))).dtype == np.float32
    assert np.asarray(jnp.fft.fft(x, norm="ortho")).dtype == np.complex64


def test_frequencies_and_shifts_match_numpy():
    for n, d in [(8, 1.0), (7, 0.25)]:
        np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
        np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    for axes in [None, 0, (1,), (0, 1)]:
        np.testing.assert_array_equal(jnp.fft.fftshift(X3[0], axes), np.fft.fftshift(X3[0], axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(X3[0], axes),
                                      np.fft.ifftshift(X3[0], axes))


DERIVATIVE_CASES = [
    ("fft", lambda z: jnp.fft.fft(z, n=5, norm="ortho"), Z),
    ("ifft", lambda z: jnp.fft.ifft(z, axis=0), Z),
    ("rfft_even", lambda x: jnp.fft.rfft(x), X),
    ("rfft_odd", lambda x: jnp.fft.rfft(x, n=5, axis=0), X),
    ("irfft_even", lambda z: jnp.fft.irfft(z), Z),
    ("irfft_odd", lambda z: jnp.fft.irfft(z, n=7, norm="forward"), Z),
    ("hfft", lambda z: jnp.fft.hfft(z, n=9), Z),
    ("ihfft", lambda x: jnp.fft.ihfft(x), X),
    ("fft2", jnp.fft.fft2, Z),
    ("rfft2", lambda x: jnp.fft.rfft2(x, s=(3, 5)), X),
    ("irfft2", lambda z: jnp.fft.irfft2(z, s=(4, 6)), Z),
    ("rfftn_3d", lambda x: jnp.fft.rfftn(x, axes=(0, 2)), X3),
    ("irfftn_3d", lambda z: jnp.fft.irfftn(z, s=(3, 4, 5)), np.fft.rfftn(X3)),
    ("power_spectrum", lambda x: jnp.sum(jnp.abs(jnp.fft.fft2(x * X)) ** 2), X),
]
IDS = [c[0] for c in DERIVATIVE_CASES]


@pytest.mark.parametrize("name, f, a", DERIVATIVE_CASES, ids=IDS)
def test_derivatives(name, f, a, rng):
    """jvp by finite differences; vjp (the primitive's transposes, RFFT's and IRFFT's
    Hermitian halves included) by the dot-product test; second order."""
    check_grads(f, (a,), rng, order=2)


@pytest.mark.parametrize("name, f, a", DERIVATIVE_CASES, ids=IDS)
def test_vmap_matches_a_loop(name, f, a):
    batch = np.stack([a, 2 * a, a[::-1]])
    for axis in (0, 1):
        got = inert.vmap(f, in_axes=axis)(np.moveaxis(batch, 0, axis))
        want = np.stack([np.asarray(f(b)) for b in batch])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, a", DERIVATIVE_CASES, ids=IDS)
def test_jit(name, f, a):
    check_jit_backends(f, (a,))


def test_lax_fft_is_the_primitive():
    jaxpr = inert.make_jaxpr(lambda z: inert.lax.fft(z, "FFT", (6,)))(Z)
    assert "= fft[" in str(jaxpr) and "fft_type=FFT" in str(jaxpr)
    np.testing.assert_allclose(inert.lax.fft(X, inert.lax.FftType.RFFT, (4, 6)), np.fft.rfft2(X))


def test_errors():
    with pytest.raises(inert.errors.DTypeError, match="rfft: takes a real input"):
        jnp.fft.rfft(Z)
    with pytest.raises(ValueError, match="norm must be one of"):
        jnp.fft.fft(Z, norm="sideways")
    with pytest.raises(inert.errors.ShapeError, match="fft: IRFFT of lengths"):
        inert.make_jaxpr(lambda z: inert.lax.fft(z, "IRFFT", (6,)))(Z)
