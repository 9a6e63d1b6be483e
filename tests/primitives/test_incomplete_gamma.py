"""The incomplete gamma functions' derivative in their shape `a` (`igamma_grad_a`):
against mpmath's derivative to near full precision over twelve decades of `a` and
`x`, at the edges of the domain, by finite differences, and through the transforms."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
from harness import check_jvp, check_vjp

import inert
from inert.errors import NonDifferentiableError
from inert.primitives import special as sp
from inert.primitives.special.incomplete_gamma import gammainc_slope_a

A = [1e-3, 0.01, 0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 100.0, 1e3, 1e4, 1e5]
X = [1e-5, 0.01, 0.3, 1.0, 2.0, 5.0, 10.0, 31.0, 99.0, 101.0, 200.0, 700.0, 1e3, 1.01e4,
     5e4, 1.003e5]


def _mpmath_slope(a: float, x: float) -> float:
    """dP/da by mpmath at 30 digits, from the smaller tail (P near 1 would lose them)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    if mpmath.gammainc(a, 0, x, regularized=True) > 0.5:
        return float(-mpmath.diff(lambda s: mpmath.gammainc(s, x, mpmath.inf,
                                                            regularized=True), a))
    return float(mpmath.diff(lambda s: mpmath.gammainc(s, 0, x, regularized=True), a))


def test_the_slope_in_a_is_mpmaths_to_near_full_precision():
    a, x = np.meshgrid(A, X)
    got = gammainc_slope_a(a, x)
    want = np.vectorize(_mpmath_slope)(a, x)
    tiny = np.abs(want) < 1e-300  # underflowed: the prefactor is 0 in float64 too
    assert np.all(np.abs(got[tiny]) < 1e-290)
    rtol = np.where(a >= 1e5, 1e-9, np.where(a >= 1e3, 1e-11, 1e-12))
    relative = np.abs(got - want)[~tiny] / np.abs(want[~tiny])
    assert np.all(relative <= rtol[~tiny]), relative.max()


def test_the_slope_at_the_edges_of_the_domain():
    a = np.array([0.0, -1.0, np.nan, 2.0, 2.0, 2.0, np.inf])
    x = np.array([1.0, 1.0, 1.0, 0.0, np.inf, np.nan, 1.0])
    got = sp.igamma_grad_a(a, x)
    # P is 0 for every x as a -> inf, and constant in a at x = 0 and x = inf
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.nan, 0.0, 0.0, np.nan, 0.0])
    assert sp.igamma_grad_a(np.float32(2.0), np.float32(1.0)).dtype == np.float32


def test_gammainc_and_gammaincc_are_differentiable_in_a(rng):
    a, x = rng.uniform(0.3, 6, 5), rng.uniform(0.1, 8, 5)
    check_jvp(sp.igamma, (a, x), rng, rtol=1e-7, atol=1e-9)
    check_vjp(sp.igamma, (a, x), rng)
    check_jvp(sp.igammac, (a, x), rng, rtol=1e-7, atol=1e-9)
    g = inert.grad(lambda a: inert.numpy.sum(sp.igamma(a, x) + sp.igammac(a, x)))(a)
    np.testing.assert_allclose(g, 0.0, atol=1e-15)  # P + Q = 1


def test_the_mixed_second_derivative_and_the_refused_one_in_a():
    a, x, h = 2.5, 1.7, 1e-5
    mixed = inert.grad(inert.grad(sp.igamma, argnums=0), argnums=1)(a, x)
    want = (gammainc_slope_a(a, x + h) - gammainc_slope_a(a, x - h)) / (2 * h)
    np.testing.assert_allclose(mixed, want, rtol=1e-8)
    with pytest.raises(NonDifferentiableError, match="igamma_grad_a"):
        inert.grad(inert.grad(sp.igamma))(a, x)


def test_gamma_and_chi2_cdfs_in_their_shape_under_jit_and_vmap():
    stats = inert.scipy.stats
    x = np.array([0.5, 2.0, 9.0])
    f = inert.jit(inert.vmap(inert.grad(lambda df, x: stats.chi2.cdf(x, df)), (None, 0)))
    h = 1e-6
    want = (sc.gammainc((3.0 + h) / 2, x / 2) - sc.gammainc((3.0 - h) / 2, x / 2)) / (2 * h)
    np.testing.assert_allclose(f(3.0, x), want, rtol=1e-6)
    d_log_sf = inert.grad(stats.gamma.logsf, argnums=1)(2.0, 1.5)  # log Q(a, x) in a
    np.testing.assert_allclose(d_log_sf, -gammainc_slope_a(1.5, 2.0) / sc.gammaincc(1.5, 2.0),
                               rtol=1e-12)
