"""inert.scipy.stats.multivariate_normal against scipy: values for a full, a scalar and
a one-dimensional covariance, derivatives in x, mean and cov (to second order), vmap and
jit, the residuals of an inactive covariance (its Cholesky factor alone), NaN for a
covariance that is not positive definite, scipy's degenerate density for a singular one
with allow_singular, and the entropy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from harness import assert_allclose, check_grads

import inert
import inert.numpy as inp
from inert.errors import ShapeError
from inert.scipy.stats import multivariate_normal as mvn


def _problem(rng, n=3, points=(4, 2)):
    a = rng.standard_normal((n, n))
    return rng.standard_normal((*points, n)), rng.standard_normal(n), a @ a.T + n * np.eye(n)


def test_values_against_scipy(rng):
    x, mean, cov = _problem(rng)
    for args in ((x, mean, cov), (x, mean, 2.0), (0.3, 0.1, 2.0), (x[0, 0], mean, cov)):
        want = scipy.stats.multivariate_normal.logpdf(*args)
        assert_allclose(mvn.logpdf(*args), want, rtol=1e-12, atol=1e-12)
        assert_allclose(mvn.pdf(*args), scipy.stats.multivariate_normal.pdf(*args),
                        rtol=1e-12, atol=1e-14)


def test_derivatives_in_every_argument(rng):
    check_grads(mvn.logpdf, _problem(rng, points=(2,)), rng, order=2)


def test_vmap_and_jit(rng):
    x, mean, cov = _problem(rng)
    covs = np.stack([cov, 2 * cov])
    got = inert.vmap(mvn.logpdf, in_axes=(None, None, 0))(x, mean, covs)
    assert_allclose(got, np.stack([mvn.logpdf(x, mean, c) for c in covs]), rtol=1e-12)
    assert_allclose(inert.jit(mvn.logpdf)(x, mean, cov), mvn.logpdf(x, mean, cov), rtol=1e-12)


def test_an_inactive_covariance_keeps_only_its_factor_and_the_whitened_points(rng):
    x, mean, cov = _problem(rng, n=5, points=(7,))
    kept = sorted(r.aval.shape for r in inert.saved_residuals(
        lambda m, c: inp.sum(mvn.logpdf(x, m, c)), mean, inert.Inactive(cov)))
    assert kept == [(5, 5), (5, 7)]


def test_bad_covariances():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(mvn.logpdf(np.zeros(2), np.zeros(2), -np.eye(2)))
    with pytest.raises(ShapeError, match="multivariate_normal.logpdf"):
        mvn.logpdf(np.zeros(3), np.zeros(3), np.eye(2))


def _singular(rng, n=3, rank=2):
    b = rng.standard_normal((n, rank))
    mean = rng.standard_normal(n)
    return mean + rng.standard_normal((4, rank)) @ b.T, mean, b @ b.T, b


def test_a_singular_covariance_with_allow_singular_is_scipys_degenerate_density(rng):
    x, mean, cov, _ = _singular(rng)
    want = scipy.stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)
    assert_allclose(mvn.logpdf(x, mean, cov, allow_singular=True), want, rtol=1e-10)
    assert_allclose(inert.jit(lambda x: mvn.logpdf(x, mean, cov, allow_singular=True))(x),
                    want, rtol=1e-10)
    off = x + np.linalg.svd(cov)[0][:, -1]  # a step along the null space
    assert np.all(mvn.logpdf(off, mean, cov, allow_singular=True) == -np.inf)
    ones = np.ones((2, 2))  # the example of issue 25's notes, by scipy
    assert_allclose(mvn.logpdf(np.array([0.5, 0.5]), np.zeros(2), ones, allow_singular=True),
                    scipy.stats.multivariate_normal.logpdf([0.5, 0.5], np.zeros(2), ones,
                                                           allow_singular=True), rtol=1e-12)
    regular_x, regular_mean, regular_cov = _problem(rng)
    assert_allclose(mvn.logpdf(regular_x, regular_mean, regular_cov, allow_singular=True),
                    mvn.logpdf(regular_x, regular_mean, regular_cov), rtol=1e-10)


def test_the_degenerate_density_is_differentiable_along_its_support(rng):
    x, mean, cov, b = _singular(rng)
    tangent = rng.standard_normal((4, 2)) @ b.T  # within the covariance's range
    f = lambda x: mvn.logpdf(x, mean, cov, allow_singular=True)  # noqa: E731
    _, slope = inert.jvp(f, (x,), (tangent,))
    h = 1e-6
    assert_allclose(slope, (f(x + h * tangent) - f(x - h * tangent)) / (2 * h), rtol=1e-6)


def test_entropy_against_scipy(rng):
    _, mean, cov = _problem(rng)
    want = scipy.stats.multivariate_normal.entropy(mean, cov)
    assert_allclose(mvn.entropy(mean, cov), want, rtol=1e-13)
    assert_allclose(inert.grad(lambda c: mvn.entropy(mean, c))(cov), 0.5 * np.linalg.inv(cov),
                    rtol=1e-10, atol=1e-12)
    assert_allclose(mvn.entropy(np.zeros(2), 2.0),
                    scipy.stats.multivariate_normal.entropy(np.zeros(2), 2.0), rtol=1e-13)
    _, _, singular, _ = _singular(rng)
    assert_allclose(mvn.entropy(None, singular, allow_singular=True),
                    scipy.stats.multivariate_normal(None, singular, allow_singular=True)
                    .entropy(), rtol=1e-10)
