"""The special functions beyond the shared table: derivatives at the points where the
identities need care (sinc at 0, the scaled Bessel functions far out), integer orders
inactive by type, and the compositions of the namespace (multigammaln, jn, yn)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.special as sc
from harness import check_grads

import inert
import inert.scipy.special as isp
from inert.errors import NonDifferentiableError
from inert.primitives import special as sp


def _derivative(fn, order):
    for _ in range(order):
        fn = inert.grad(fn)
    return fn


@pytest.mark.parametrize("x", [0.0, 1e-9, 9.9e-4, 1.01e-3, 0.3])
def test_sinc_derivatives_are_right_at_and_around_zero(x):
    """The quotient form cancels near 0; the Taylor branch takes over there. Against
    the derivatives of the series sum (-1)^k (pi x)^(2k) / (2k+1)!."""
    k = np.arange(12)
    coeffs = (-1.0) ** k * math.pi ** (2 * k) / np.array([math.factorial(2 * j + 1) for j in k])
    first = np.sum(coeffs[1:] * 2 * k[1:] * x ** (2 * k[1:] - 1))
    second = np.sum(coeffs[1:] * 2 * k[1:] * (2 * k[1:] - 1) * x ** (2 * k[1:] - 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(_derivative(sp.sinc, 1)(x), first, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_derivative(sp.sinc, 2)(x), second, rtol=1e-6)


def test_jn_and_yn_take_integer_orders_inactive_by_type(rng):
    z = rng.uniform(0.5, 5, 4)
    n = np.array([0, 1, 2, 3])
    np.testing.assert_allclose(isp.jn(n, z), sc.jn(n, z), rtol=1e-14)
    np.testing.assert_allclose(isp.yn(n, z), sc.yn(n, z), rtol=1e-13)
    g = inert.grad(lambda z: inert.numpy.sum(isp.jn(n, z)))(z)
    np.testing.assert_allclose(g, sc.jvp(n, z), rtol=1e-12)
    g = inert.grad(lambda z: inert.numpy.sum(isp.yn(n, z)))(z)
    np.testing.assert_allclose(g, sc.yvp(n, z), rtol=1e-12)
    with pytest.raises(NonDifferentiableError, match=r"^yv: operand 0 \(v\) is active"):
        inert.grad(lambda v: isp.yn(v, 1.5))(2.0)


@pytest.mark.parametrize("fn, ref", [
    (lambda z: sp.ive(1.5, z), lambda z: sc.ivp(1.5, z) * np.exp(-z) - sc.ive(1.5, z)),
    (lambda z: sp.kve(1.5, z), lambda z: sc.kvp(1.5, z) * np.exp(z) + sc.kve(1.5, z)),
    (sp.i0e, lambda z: sc.i1e(z) - sc.i0e(z)),
    (sp.i1e, lambda z: sc.ivp(1, z) * np.exp(-z) - sc.i1e(z)),
], ids=["ive", "kve", "i0e", "i1e"])
def test_scaled_bessel_derivatives_stay_finite_where_unscaled_overflow(fn, ref):
    z = np.array([800.0, 2000.0])
    _, tangent = inert.jvp(fn, (z,), (np.ones(2),))
    assert np.all(np.isfinite(tangent))
    with np.errstate(over="ignore", invalid="ignore"):
        want = ref(np.array([30.0, 60.0]))  # where scipy's unscaled values are finite
    _, got = inert.jvp(fn, (np.array([30.0, 60.0]),), (np.ones(2),))
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_multigammaln_matches_scipy_with_derivatives(rng):
    a = rng.uniform(2.0, 6.0, (2, 3))
    for d in (1, 2, 4):
        np.testing.assert_allclose(isp.multigammaln(a, d), sc.multigammaln(a, d), rtol=1e-13)
    check_grads(lambda a: isp.multigammaln(a, 3), (a,), rng, order=2)
    with pytest.raises(ValueError, match="multigammaln: d must be a positive Python int"):
        isp.multigammaln(a, 2.5)


def test_gamma_family_is_consistent(rng):
    x = rng.uniform(-3.5, 5, 8)
    np.testing.assert_allclose(isp.gammasgn(x) * np.exp(isp.gammaln(x)), isp.gamma(x),
                               rtol=1e-12)
    np.testing.assert_allclose(isp.rgamma(x) * isp.gamma(x), 1.0, rtol=1e-12)
    a, b = rng.uniform(0.5, 4, (2, 5))
    np.testing.assert_allclose(np.log(isp.beta(a, b)), isp.betaln(a, b), rtol=1e-12)


def test_inverse_normal_functions_undo_their_functions(rng):
    x = rng.uniform(-5, 5, 6)
    np.testing.assert_allclose(isp.ndtri(isp.ndtr(x)), x, rtol=1e-9)
    np.testing.assert_allclose(isp.erfcinv(isp.erfc(x / 3)), x / 3, rtol=1e-9)
    g = inert.grad(lambda x: inert.numpy.sum(isp.ndtri(isp.ndtr(x))))(x)
    np.testing.assert_allclose(g, 1.0, rtol=1e-7)


def test_factorial_and_comb_match_scipy(rng):
    n = np.array([-1.0, 0.0, 3.0, 4.5, 10.0])
    np.testing.assert_allclose(isp.factorial(n), sc.factorial(n), rtol=1e-13)
    big, k = np.array([5.0, 7.5, 3.0, 4.0]), np.array([2.0, 3.0, 4.0, -1.0])
    np.testing.assert_allclose(isp.comb(big, k), sc.comb(big, k), rtol=1e-13)
    np.testing.assert_allclose(isp.comb(big, k, repetition=True),
                               sc.comb(big, k, repetition=True), rtol=1e-13)
    check_grads(lambda n: isp.factorial(n), (np.array([0.5, 3.0, 4.5]),), rng)
    check_grads(lambda n, k: isp.comb(n, k), (np.array([5.0, 7.5]), np.array([2.0, 3.5])), rng)


def test_bernoulli_numbers_are_scipys():
    np.testing.assert_array_equal(isp.bernoulli(6), sc.bernoulli(6))
