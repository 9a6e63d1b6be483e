"""inert.scipy.stats.multivariate_normal against scipy: values for a full, a scalar and
a one-dimensional covariance, derivatives in x, mean and cov (to second order), vmap and
jit, the residuals of an inactive covariance (its Cholesky factor alone), and NaN for a
covariance that is not positive definite."""

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
