"""inert.scipy.stats against scipy.stats: values to 1e-12 relative over realistic
parameters, both tails and outside the support included; derivatives with respect to
x and every float parameter against finite differences; no numpy warnings; -inf/0
(never nan) off the support, with a zero gradient there."""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import pytest
import scipy.stats as ss
from harness import check_jvp, check_staged, check_vjp

import inert
import inert.scipy.stats as ist
from inert.errors import NonDifferentiableError


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@attrs.frozen
class Spec:
    dist: str
    params: tuple  # after x, positionally, as scipy takes them
    x: tuple  # for values: tails and points off the support
    interior: tuple  # for derivatives
    functions: tuple
    constant: dict = attrs.field(factory=dict)  # function -> indices of params without derivative

    @property
    def id(self):
        return f"{self.dist}{self.params}"


ALL_CONTINUOUS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
CDFS = ("cdf", "logcdf", "sf", "logsf")
CONTINUOUS = [
    Spec("norm", (0.5, 2.0), (-90, -40, -3, 0, 1.5, 40, 90), (-30, -2, 0.3, 3, 30),
         ALL_CONTINUOUS),
    Spec("t", (3.5, 0.5, 2.0), (-1e3, -40, -3, 0, 1.5, 40, 1e3), (-20, -2, 0.3, 3, 20),
         ALL_CONTINUOUS, {f: {0} for f in CDFS}),
    Spec("t", (60.0, 0.0, 1.0), (-10, -1, 0, 2), (-5, 0.3, 4), ("logpdf", "pdf")),
    Spec("cauchy", (0.5, 2.0), (-1e6, -40, -3, 0, 1.5, 40, 1e6), (-20, -2, 0.3, 3, 20),
         ALL_CONTINUOUS),
    Spec("laplace", (0.5, 2.0), (-300, -3, 0, 0.5, 1.5, 40, 300), (-20, -2, 1.3, 30),
         ("logpdf", "pdf", "cdf")),
    Spec("logistic", (0.5, 2.0), (-800, -40, -3, 0, 1.5, 40, 800), (-30, -2, 0.3, 30),
         ("logpdf", "pdf", "cdf", "sf")),
    Spec("gamma", (2.5, 0.5, 2.0), (-1, 0.5, 0.6, 1, 5, 100, 1000), (0.7, 2, 10, 60),
         ALL_CONTINUOUS),
    Spec("gamma", (0.7, 0.0, 1.0), (-1, 1e-8, 0.5, 30), (0.01, 1.0, 20), ("logpdf", "pdf")),
    Spec("chi2", (3.5, 0.5, 2.0), (-1, 0.5, 0.6, 1, 5, 100, 1000), (0.7, 2, 10, 60),
         ALL_CONTINUOUS),
    Spec("beta", (2.5, 1.5, 0.5, 2.0), (-1, 0.5, 0.5001, 1.0, 1.5, 2.4999, 2.5, 3),
         (0.6, 1.5, 2.4), ALL_CONTINUOUS, {f: {0, 1} for f in CDFS}),
    Spec("expon", (0.5, 2.0), (-1, 0.5, 0.6, 3, 100, 1000), (0.7, 3, 50), ALL_CONTINUOUS),
    Spec("uniform", (0.5, 2.0), (-1, 0.5, 1.0, 2.5, 3), (0.7, 2.0), ("logpdf", "pdf", "cdf")),
    Spec("lognorm", (0.7, 0.5, 2.0), (-1, 0.5, 0.50001, 1, 3, 100), (0.6, 2, 30),
         ("logpdf", "pdf", "cdf")),
    Spec("truncnorm", (-1.0, 2.0, 0.5, 2.0), (-3, -1.5, -0.5, 0.5, 2.0, 4.5, 5, 8),
         (-1.2, 0.5, 3.0, 4.4), ALL_CONTINUOUS),
    Spec("truncnorm", (5.0, 8.0, 0.0, 1.0), (4, 5, 5.001, 6.5, 7.9, 8, 9), (5.2, 6.5, 7.5),
         ALL_CONTINUOUS),
    Spec("truncnorm", (-np.inf, -30.0, 0.0, 1.0), (-35, -31, -30.01, -29), (-31, -30.2),
         ALL_CONTINUOUS),
    Spec("truncnorm", (-2.0, np.inf, 0.0, 1.0), (-3, -2, -1.9, 0, 5, 40), (-1.5, 0.3, 4),
         ALL_CONTINUOUS),
]
CONTINUOUS += [
    Spec("gumbel_r", (0.5, 2.0), (-1000, -10, -3, 0, 1.5, 40, 1500), (-5, 0.3, 3, 30),
         ALL_CONTINUOUS),
    Spec("gumbel_l", (0.5, 2.0), (-1500, -40, -3, 0, 1.5, 10, 1000), (-30, -3, 0.3, 5),
         ALL_CONTINUOUS),
    Spec("pareto", (2.5, 0.5, 2.0), (-1, 0.5, 2.0, 2.6, 4, 100, 1e5), (2.7, 4, 50),
         ALL_CONTINUOUS),
    Spec("gennorm", (1.5, 0.5, 2.0), (-300, -3, 0.5, 2, 40), (-20, -1, 0.3, 3, 20),
         ("logpdf", "pdf", "cdf")),
    Spec("gennorm", (0.7, 0.0, 1.0), (-30, -1, 0.0, 2, 40), (-20, -1, 0.3, 3, 20),
         ("logpdf", "pdf", "cdf")),
    Spec("wrapcauchy", (0.6,), (-1, 0, 0.5, 3, 6.2, 7), (0.5, 3, 6.2), ("logpdf", "pdf")),
]
DISCRETE = [
    Spec("poisson", (3.5,), (-1, 0, 1, 2.5, 5, 30, 200), (0, 1, 5, 30), ("logpmf", "pmf", "cdf")),
    Spec("bernoulli", (0.3,), (-1, 0, 0.5, 1, 2), (0, 1), ("logpmf", "pmf")),
    Spec("binom", (10, 0.3), (-1, 0, 2.5, 3, 10, 11), (0, 3, 10), ("logpmf", "pmf")),
    Spec("geom", (0.3,), (-1, 0, 1, 1.5, 5, 40), (1, 5, 40), ("logpmf", "pmf")),
    Spec("nbinom", (3.5, 0.3), (-1, 0, 2.5, 4, 30), (0, 4, 30), ("logpmf", "pmf")),
    Spec("betabinom", (12, 2.5, 0.7), (-1, 0, 2.5, 5, 12, 13), (0, 5, 12), ("logpmf", "pmf")),
]
CASES = [(s, f) for s in CONTINUOUS + DISCRETE for f in s.functions]
by_case = pytest.mark.parametrize("spec, fn", CASES, ids=[f"{s.id}-{f}" for s, f in CASES])


def _fns(spec, fn):
    return getattr(getattr(ist, spec.dist), fn), getattr(getattr(ss, spec.dist), fn)


@by_case
def test_values_match_scipy_in_both_tails_and_off_the_support(spec, fn):
    ours, theirs = _fns(spec, fn)
    x = np.asarray(spec.x, np.float64)
    got, want = ours(x, *spec.params), theirs(x, *spec.params)
    assert np.shape(got) == np.shape(want) and not np.any(np.isnan(got))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@by_case
def test_derivatives_in_x_and_every_float_parameter(spec, fn, rng):
    ours, _ = _fns(spec, fn)
    discrete = spec in DISCRETE
    x = np.asarray(spec.interior, np.int64 if discrete else np.float64)
    constant = spec.constant.get(fn, set())
    active = [i for i, p in enumerate(spec.params)
              if i not in constant and type(p) is float and np.isfinite(p)]

    def f(x, *active_params):
        params = list(spec.params)
        for i, p in zip(active, active_params):
            params[i] = p
        return ours(x, *params)

    args = (x, *(np.full(x.shape, spec.params[i]) for i in active))
    check_jvp(f, args, rng, rtol=1e-5, atol=1e-8)
    check_vjp(f, args, rng)


@pytest.mark.parametrize("spec, fn", [(s, f) for s in CONTINUOUS for f in s.constant],
                         ids=lambda v: getattr(v, "id", v))
def test_a_shape_parameter_without_derivative_raises_only_when_active(spec, fn):
    ours, _ = _fns(spec, fn)
    (i, *_) = sorted(spec.constant[fn])
    x = float(spec.interior[0])

    def f(p):
        params = list(spec.params)
        params[i] = p
        return ours(x, *params)

    with pytest.raises(NonDifferentiableError):
        inert.grad(f)(spec.params[i])
    assert np.isfinite(inert.grad(lambda x: ours(x, *spec.params))(x))


@pytest.mark.parametrize("dist, args", [
    ("gamma", (2.5, 0.0, 1.0)), ("beta", (2.5, 1.5, 0.0, 1.0)), ("expon", (0.0, 1.0)),
    ("lognorm", (0.7, 0.0, 1.0)), ("truncnorm", (-1.0, 2.0, 0.0, 1.0)),
    ("uniform", (0.0, 1.0))])
def test_gradient_off_the_support_is_zero_not_nan(dist, args):
    logpdf = getattr(ist, dist).logpdf
    x = np.array([-2.0, -0.5]) if dist != "truncnorm" else np.array([-2.0, 3.5])
    grads = inert.grad(lambda x, *p: inert.numpy.sum(logpdf(x, *p)),
                       argnums=tuple(range(1 + len(args))))(x, *args)
    assert np.all(logpdf(x, *args) == -np.inf)
    for g in grads:
        np.testing.assert_array_equal(g, 0.0)


@pytest.mark.parametrize("dist, fn, args", [
    ("norm", "logpdf", (1.0, 0.0, -1.0)), ("norm", "ppf", (1.5,)),
    ("gamma", "logpdf", (1.0, -2.0)), ("beta", "cdf", (0.5, 1.0, 0.0)),
    ("t", "logpdf", (0.5, -1.0)), ("binom", "logpmf", (2, 5, 1.5)),
    ("poisson", "logpmf", (2, -1.0)), ("truncnorm", "logpdf", (0.0, 2.0, 1.0)),
    ("vonmises", "logpdf", (0.3, -1.0)), ("geom", "pmf", (2, 0.0))])
def test_invalid_parameters_give_nan_like_scipy(dist, fn, args):
    assert np.isnan(getattr(getattr(ist, dist), fn)(*args))
    with np.errstate(all="ignore"):
        assert np.isnan(getattr(getattr(ss, dist), fn)(*args))


def test_norm_tails_are_finite_and_quantiles_invert():
    assert np.isfinite(ist.norm.logcdf(-40.0)) and np.isfinite(ist.norm.logsf(40.0))
    q = np.array([0.0, 1e-300, 0.3, 0.5, 1 - 1e-16, 1.0, 1.5, -0.1])
    for fn in ("ppf", "isf"):
        np.testing.assert_allclose(getattr(ist.norm, fn)(q, 0.5, 2.0),
                                   getattr(ss.norm, fn)(q, 0.5, 2.0), rtol=1e-12)
    for dist, args in (("cauchy", (0.5, 2.0)), ("logistic", (0.5, 2.0)), ("expon", (0.5, 2.0)),
                       ("uniform", (0.5, 2.0)), ("gumbel_r", (0.5, 2.0)),
                       ("gumbel_l", (0.5, 2.0)), ("pareto", (2.5, 0.5, 2.0))):
        q = np.array([0.0, 1e-10, 0.3, 0.9, 1.0, 1.5])
        with np.errstate(all="ignore"):
            want = getattr(ss, dist).ppf(q, *args)
        np.testing.assert_allclose(getattr(ist, dist).ppf(q, *args), want, rtol=1e-12)
    check_jvp(lambda q, s: ist.norm.ppf(q, 0.5, s), (np.array([1e-3, 0.3, 0.99]),
                                                     np.full(3, 2.0)), np.random.default_rng(0))


def test_dirichlet_matches_scipy_and_is_minus_infinity_off_the_simplex(rng):
    alpha = np.array([0.7, 2.0, 3.5])
    x = rng.dirichlet(alpha, 4).T
    np.testing.assert_allclose(ist.dirichlet.logpdf(x, alpha), ss.dirichlet.logpdf(x, alpha),
                               rtol=1e-12)
    np.testing.assert_allclose(ist.dirichlet.pdf(x[:, 0], alpha), ss.dirichlet.pdf(x[:, 0], alpha),
                               rtol=1e-12)
    off = np.array([[0.5, 0.6], [0.6, -0.1], [0.2, 0.5]])
    np.testing.assert_array_equal(ist.dirichlet.logpdf(off, alpha), -np.inf)

    def on_simplex(logits, alpha):  # derivatives along the simplex
        return ist.dirichlet.logpdf(inert.scipy.special.softmax(logits, axis=0), alpha)

    check_jvp(on_simplex, (rng.normal(size=(3, 4)), alpha), rng)
    with pytest.raises(inert.errors.ShapeError, match="dirichlet.logpdf: alpha must have shape"):
        ist.dirichlet.logpdf(x[:2], alpha)


def test_vonmises_matches_scipy_for_large_and_small_concentrations(rng):
    x = rng.uniform(-np.pi, np.pi, 5)
    for kappa in (1e-3, 2.5, 800.0):
        np.testing.assert_allclose(ist.vonmises.logpdf(x, kappa), ss.vonmises.logpdf(x, kappa),
                                   rtol=1e-12)
    check_jvp(ist.vonmises.logpdf, (x, np.full(5, 3.0)), rng)


def test_integer_parameters_are_inactive_by_type():
    g = inert.grad(lambda p: ist.binom.logpmf(3, 10, p))(0.3)
    np.testing.assert_allclose(g, 3 / 0.3 - 7 / 0.7, rtol=1e-12)
    _, tangent = inert.jvp(lambda k, n: ist.binom.logpmf(k, n, 0.3), (3, 10),
                           (np.zeros((), inert.float0), np.zeros((), inert.float0)))
    np.testing.assert_array_equal(tangent, 0.0)


def test_staged_and_vmapped_agree_with_eager(rng):
    x, loc = rng.normal(size=(3, 4)), rng.normal(size=4)
    f = lambda x, loc: ist.truncnorm.logcdf(x, -1.0, 2.0, loc, 1.5)  # noqa: E731
    check_staged(f, (x, loc))
    np.testing.assert_allclose(inert.vmap(f, in_axes=(0, None))(x, loc), f(x, loc), rtol=1e-13)
    np.testing.assert_allclose(inert.jit(f)(x, loc), f(x, loc), rtol=1e-13)


def test_namespaces_are_importable_as_jax_spells_them():
    import inert.scipy.stats.norm as norm  # noqa: PLC0415 — the import is what is tested

    assert norm is ist.norm and "logpdf" in dir(norm) and "np" not in dir(norm)


def test_gumbel_far_tails_are_limits_without_overflow():
    assert ist.gumbel_r.logpdf(-2000.0) == -np.inf and ist.gumbel_r.cdf(-2000.0) == 0.0
    assert ist.gumbel_l.logpdf(2000.0) == -np.inf and ist.gumbel_l.sf(2000.0) == 0.0
    np.testing.assert_array_equal(inert.grad(ist.gumbel_r.logpdf)(-2000.0), 0.0)


def test_multinomial_matches_scipy_and_is_minus_infinity_off_its_support(rng):
    p = np.array([0.2, 0.5, 0.3])
    x = np.array([[2, 5, 3], [0, 10, 0], [1, 1, 1], [3, -1, 8]])
    np.testing.assert_allclose(ist.multinomial.logpmf(x, 10, p), ss.multinomial.logpmf(x, 10, p),
                               rtol=1e-12)
    np.testing.assert_allclose(ist.multinomial.pmf(x[0], 10, p), ss.multinomial.pmf(x[0], 10, p),
                               rtol=1e-12)

    def on_simplex(logits):
        return ist.multinomial.logpmf(x[:2], 10, inert.scipy.special.softmax(logits))

    check_jvp(on_simplex, (rng.normal(size=3),), rng)


def test_bernoulli_cdf_and_ppf_match_scipy():
    k, q = np.array([-1, 0, 0.5, 1, 2]), np.array([0, 0.3, 0.69, 0.7, 0.71, 1.0, 1.2, -0.1])
    np.testing.assert_array_equal(ist.bernoulli.cdf(k, 0.3), ss.bernoulli.cdf(k, 0.3))
    np.testing.assert_array_equal(ist.bernoulli.ppf(q, 0.3), ss.bernoulli.ppf(q, 0.3))
    np.testing.assert_allclose(inert.grad(lambda p: ist.bernoulli.cdf(0.5, p))(0.3), -1.0)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_rankdata_matches_scipy(method, axis):
    a = np.array([[3.0, 1, 3, 2], [1, 1, 0, 5]])
    got, want = ist.rankdata(a, method, axis=axis), ss.rankdata(a, method, axis=axis)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(inert.jit(lambda a: ist.rankdata(a, method, axis=axis))(a),
                                  want)


def test_mode_and_sem_match_scipy(rng):
    a = rng.integers(0, 4, (3, 7)).astype(float)
    for axis in (0, 1, None):
        got, want = ist.mode(a, axis=axis), ss.mode(a, axis=axis)
        np.testing.assert_array_equal(got.mode, want.mode)
        np.testing.assert_array_equal(got.count, want.count)
    np.testing.assert_allclose(ist.sem(a, axis=1), ss.sem(a, axis=1), rtol=1e-13)
    b = a.copy()
    b[0, 2] = np.nan
    np.testing.assert_allclose(ist.sem(b, axis=1, nan_policy="omit"),
                               ss.sem(b, axis=1, nan_policy="omit"), rtol=1e-13)
    check_jvp(lambda a: ist.sem(a, axis=0), (rng.normal(size=(4, 3)),), rng)
