"""inert.random: JAX's key API, the same numbers under every transform, distributions
against scipy.stats (Kolmogorov–Smirnov and moments, never exact bits), and
reparameterised gradients."""

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import inert
import inert.numpy as jnp
from inert import lax
from inert import random as jr

N = 20_000
P_MIN = 1e-3  # fixed seeds: a test that passes once passes always; a wrong law fails
KEY = jr.PRNGKey(42)


def ks_pvalue(samples, cdf) -> float:
    return st.kstest(np.asarray(samples).ravel(), cdf).pvalue


def discrete_pvalue(samples, pmf) -> float:
    """Chi-squared test of counts of non-negative integers against `pmf`, over every
    value expected more than 50 times (observed or not)."""
    counts = np.bincount(np.asarray(samples).astype(np.int64).ravel())
    values = np.arange(len(counts) + 50)
    counts = np.pad(counts, (0, 50))
    want = pmf(values) * counts.sum()
    big = want > 50
    return st.chisquare(counts[big], want[big] * counts[big].sum() / want[big].sum()).pvalue


# ---------------------------------------------------------------------------------
# Keys

def test_keys_are_uint32_pairs_as_jax_lays_them_out():
    np.testing.assert_array_equal(jr.PRNGKey(5), [0, 5])
    np.testing.assert_array_equal(jr.key(2**32 + 3), [1, 3])
    np.testing.assert_array_equal(jr.key(-1), [2**32 - 1, 2**32 - 1])
    assert jr.key(0).dtype == np.uint32
    np.testing.assert_array_equal(jr.wrap_key_data(jr.key_data(KEY)), KEY)
    np.testing.assert_array_equal(jr.clone(KEY), KEY)
    assert jr.key_data(jr.split(KEY, 3)).shape == (3, 2)


def test_split_and_fold_in_give_distinct_keys():
    keys = jr.split(KEY, 5)
    assert keys.shape == (5, 2) and keys.dtype == np.uint32
    assert len({tuple(k) for k in keys}) == 5
    assert jr.split(KEY).shape == (2, 2) and jr.split(KEY, (2, 3)).shape == (2, 3, 2)
    folded = {tuple(jr.fold_in(KEY, i)) for i in range(5)}
    assert len(folded) == 5 and tuple(KEY) not in folded


@pytest.mark.parametrize("call, error, word", [
    (lambda: jr.normal(np.zeros(2)), TypeError, "key"),
    (lambda: jr.normal(np.zeros(3, np.uint32)), ValueError, "key"),
    (lambda: jr.split(KEY, -1), ValueError, "num"),
    (lambda: jr.normal(KEY, dtype=np.int32), TypeError, "dtype"),
    (lambda: jr.key(1.5), TypeError, "seed"),
    (lambda: jr.uniform(KEY, (-2,)), ValueError, "shape"),
    (lambda: jr.gamma(KEY, np.ones(3), shape=(2,)), ValueError, "shape"),
    (lambda: jr.choice(KEY, 3, (4,), replace=False), ValueError, "replacement"),
    (lambda: jr.fold_in(KEY, 1.0), TypeError, "data"),
])
def test_bad_input_is_a_clear_error_naming_the_argument(call, error, word):
    with pytest.raises(error, match=word) as info:
        call()
    assert "test_random.py" in str(info.value)  # the user's line


# ---------------------------------------------------------------------------------
# The same numbers everywhere

SAMPLERS = {
    "uniform": lambda k: jr.uniform(k, (3,)),
    "normal": lambda k: jr.normal(k, (2, 2)),
    "gamma": lambda k: jr.gamma(k, 2.5, (3,)),
    "randint": lambda k: jr.randint(k, (4,), 0, 100),
    "permutation": lambda k: jr.permutation(k, 5),
    "split": lambda k: jr.split(k, 3),
    "poisson": lambda k: jr.poisson(k, 4.0, (3,)),
    "choice": lambda k: jr.choice(k, 6, (3,), replace=False, p=jnp.arange(1.0, 7.0) / 21),
    "beta": lambda k: jr.beta(k, 2.0, 3.0, (3,)),
    "t": lambda k: jr.t(k, 3.0, (2,)),
    "dirichlet": lambda k: jr.dirichlet(k, jnp.ones(3)),
    "permutation_independent": lambda k: jr.permutation(k, jnp.arange(6).reshape(2, 3), 1, True),
    "categorical": lambda k: jr.categorical(k, jnp.zeros((2, 4))),
    "multinomial": lambda k: jr.multinomial(k, 12.0, jnp.array([0.2, 0.5, 0.3])),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_same_key_same_numbers_eager_jit_scan_and_vmap(name):
    sample = SAMPLERS[name]
    keys = jr.split(KEY, 3)
    eager = np.stack([sample(k) for k in keys])
    # the same bits; a fusing jit backend (numba) may round float math in the last bit
    np.testing.assert_allclose(np.stack([inert.jit(sample)(k) for k in keys]), eager,
                               rtol=1e-14, atol=0)
    np.testing.assert_array_equal(inert.vmap(sample)(keys), eager)
    _, scanned = lax.scan(lambda c, k: (c, sample(k)), 0.0, keys)
    np.testing.assert_array_equal(scanned, eager)


def test_jit_samples_afresh_for_each_key_and_bakes_in_no_numbers():
    f = inert.jit(lambda k: jr.normal(k, (4,)))
    a, b = f(jr.PRNGKey(0)), f(jr.PRNGKey(1))
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(a, f(jr.PRNGKey(0)))
    closed = inert.make_jaxpr(lambda k: jr.normal(k, (4,)))(KEY)
    assert not closed.consts and "random_bits" in str(closed)


def test_fold_in_a_loop_index_inside_scan_matches_the_eager_loop():
    def step(c, i):
        return c, jr.uniform(jr.fold_in(KEY, i), ())

    _, ys = lax.scan(step, 0.0, jnp.arange(4))
    np.testing.assert_array_equal(ys, [jr.uniform(jr.fold_in(KEY, i), ()) for i in range(4)])


def test_vmap_over_keys_and_parameters_together():
    keys = jr.split(KEY, 3)
    a = np.array([0.5, 2.0, 7.0])
    got = inert.vmap(lambda k, a: jr.gamma(k, a, (2,)))(keys, a)
    np.testing.assert_array_equal(got, [jr.gamma(k, ai, (2,)) for k, ai in zip(keys, a)])


# ---------------------------------------------------------------------------------
# Distributions against scipy.stats

CONTINUOUS = [
    ("uniform", lambda k: jr.uniform(k, (N,), minval=-1.0, maxval=3.0), st.uniform(-1, 4)),
    ("normal", lambda k: jr.normal(k, (N,)), st.norm()),
    ("normal32", lambda k: jr.normal(k, (N,), np.float32), st.norm()),
    ("exponential", lambda k: jr.exponential(k, (N,)), st.expon()),
    ("gumbel", lambda k: jr.gumbel(k, (N,)), st.gumbel_r()),
    ("laplace", lambda k: jr.laplace(k, (N,)), st.laplace()),
    ("logistic", lambda k: jr.logistic(k, (N,)), st.logistic()),
    ("cauchy", lambda k: jr.cauchy(k, (N,)), st.cauchy()),
    ("t", lambda k: jr.t(k, 3.5, (N,)), st.t(3.5)),
    ("gamma_small", lambda k: jr.gamma(k, 0.3, (N,)), st.gamma(0.3)),
    ("gamma", lambda k: jr.gamma(k, 4.0, (N,)), st.gamma(4.0)),
    ("beta", lambda k: jr.beta(k, 2.0, 0.7, (N,)), st.beta(2.0, 0.7)),
    ("truncated_normal", lambda k: jr.truncated_normal(k, -0.5, 2.0, (N,)),
     st.truncnorm(-0.5, 2.0)),
    ("chisquare", lambda k: jr.chisquare(k, 3.0, (N,)), st.chi2(3.0)),
    ("lognormal", lambda k: jr.lognormal(k, 0.7, (N,)), st.lognorm(0.7)),
    ("weibull_min", lambda k: jr.weibull_min(k, 2.0, 1.5, (N,)), st.weibull_min(1.5, scale=2.0)),
    ("pareto", lambda k: jr.pareto(k, 3.0, (N,)), st.pareto(3.0)),
    ("rayleigh", lambda k: jr.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0)),
    ("maxwell", lambda k: jr.maxwell(k, (N,)), st.maxwell()),
    ("double_sided_maxwell", lambda k: jnp.abs(jr.double_sided_maxwell(k, 1.0, 2.0, (N,)) - 1) / 2,
     st.maxwell()),
    ("f", lambda k: jr.f(k, 3.0, 7.0, (N,)), st.f(3.0, 7.0)),
    ("triangular", lambda k: jr.triangular(k, -1.0, 0.5, 2.0, (N,)), st.triang(0.5, -1, 3)),
    ("generalized_normal", lambda k: jr.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5)),
    ("wald", lambda k: jr.wald(k, 1.7, (N,)), st.invgauss(1.7)),
    ("loggamma_tiny", lambda k: jr.loggamma(k, 0.001, (N,)), st.loggamma(0.001)),
    ("loggamma", lambda k: jr.loggamma(k, 2.5, (N,)), st.loggamma(2.5)),
    ("dirichlet_marginal", lambda k: jr.dirichlet(k, np.array([1.5, 2.0, 0.5]), (N,))[:, 0],
     st.beta(1.5, 2.5)),
]


@pytest.mark.parametrize("name, sample, law", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_laws_pass_kolmogorov_smirnov(name, sample, law):
    x = np.asarray(sample(KEY))
    assert x.shape == (N,) and np.all(np.isfinite(x))
    assert ks_pvalue(x, law.cdf) > P_MIN


def test_kolmogorov_smirnov_can_fail_a_wrong_law():
    assert ks_pvalue(jr.gamma(KEY, 4.0, (N,)), st.gamma(4.2).cdf) < P_MIN
    assert ks_pvalue(jr.normal(KEY, (N,)), st.norm(0.05).cdf) < P_MIN
    assert discrete_pvalue(jr.poisson(KEY, 6.0, (N,)), lambda v: st.poisson.pmf(v, 6.3)) < P_MIN
    assert discrete_pvalue(jr.binomial(KEY, 10, 0.3, (N,)),
                           lambda v: st.binom.pmf(v, 10, 0.32)) < P_MIN


def test_uniform_bits_fill_the_unit_interval_without_reaching_one():
    u = jr.uniform(KEY, (N,), np.float32)
    assert u.dtype == np.float32 and 0 <= u.min() and u.max() < 1
    assert abs(np.mean(jr.bits(KEY, (N,), np.uint8)) - 127.5) < 1.0


@pytest.mark.parametrize("lam", [0.4, 6.0, 150.0])
def test_poisson_frequencies_and_moments(lam):
    x = jr.poisson(KEY, lam, (N,))
    assert x.dtype == np.int64
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / N)
    assert abs(x.var() / lam - 1) < 0.05
    assert discrete_pvalue(x, lambda v: st.poisson.pmf(v, lam)) > P_MIN


def test_discrete_choices_have_the_right_frequencies():
    n = 5
    for draws in (jr.randint(KEY, (N,), 2, 2 + n) - 2, jr.choice(KEY, n, (N,)),
                  jr.categorical(KEY, np.zeros(n), shape=(N,))):
        counts = np.bincount(np.asarray(draws), minlength=n)
        assert len(counts) == n and st.chisquare(counts).pvalue > P_MIN
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for draws in (jr.choice(KEY, 4, (N,), p=p),
                  jr.categorical(KEY, np.log(p), shape=(N,)),
                  jr.categorical(KEY, np.log(p)[:, None], axis=0, shape=(N,))):
        assert st.chisquare(np.bincount(np.asarray(draws), minlength=4), p * N).pvalue > P_MIN
    assert abs(jr.bernoulli(KEY, 0.3, (N,)).mean() - 0.3) < 0.015
    assert abs(jnp.mean(jr.double_sided_maxwell(KEY, 1.0, 2.0, (N,)) > 1) - 0.5) < 0.015
    signs = jr.rademacher(KEY, (N,))
    assert set(np.unique(signs)) == {-1, 1} and abs(signs.mean()) < 0.03
    trials = jr.geometric(KEY, 0.3, (N,))
    assert trials.min() == 1 and discrete_pvalue(trials, lambda v: st.geom.pmf(v, 0.3)) > P_MIN


def test_choice_without_replacement_and_permutations_are_permutations():
    x = np.arange(10.0) * 2
    for taken in (jr.choice(KEY, x, (10,), replace=False),
                  jr.choice(KEY, x, (10,), replace=False, p=np.full(10, 0.1)),
                  jr.permutation(KEY, x)):
        np.testing.assert_array_equal(np.sort(taken), x)
    m = np.arange(12).reshape(3, 4)
    rows = jr.permutation(KEY, m, axis=1, independent=True)
    np.testing.assert_array_equal(np.sort(rows, axis=1), m)
    assert len({tuple(r - r.min()) for r in np.asarray(rows)}) > 1  # not one shared order
    first = inert.vmap(lambda k: jr.permutation(k, 4)[0])(jr.split(KEY, 2000))
    assert st.chisquare(np.bincount(first, minlength=4)).pvalue > P_MIN


def test_weighted_choice_without_replacement_favours_heavy_items_first():
    p = np.array([0.7, 0.1, 0.1, 0.1])
    firsts = inert.vmap(lambda k: jr.choice(k, 4, (2,), replace=False, p=p))(jr.split(KEY, 2000))
    assert abs(np.mean(firsts[:, 0] == 0) - 0.7) < 0.03
    assert np.all(firsts[:, 0] != firsts[:, 1])


# ---------------------------------------------------------------------------------
# Reparameterised gradients

def test_location_scale_normal_is_differentiable():
    eps = jr.normal(KEY, (3,))
    g_loc, g_scale = inert.grad(lambda m, s: jnp.sum(m + s * jr.normal(KEY, (3,))),
                                argnums=(0, 1))(1.0, 2.0)
    assert g_loc == 3.0
    np.testing.assert_allclose(g_scale, np.sum(eps))
    lo, hi = inert.grad(lambda a, b: jnp.sum(jr.uniform(KEY, (3,), minval=a, maxval=b)),
                        argnums=(0, 1))(1.0, 4.0)
    u = np.asarray(jr.uniform(KEY, (3,)))
    np.testing.assert_allclose([lo, hi], [np.sum(1 - u), np.sum(u)])


@pytest.mark.parametrize("sampler", [
    lambda k, a: jr.gamma(k, a, (4,)),
    lambda k, a: jr.beta(k, a, 2.0 * a, (4,)),
    lambda k, a: jr.dirichlet(k, jnp.stack([a, 1.0 + 0 * a, 2.0 * a])),
    lambda k, a: jr.t(k, a, (4,)),
    lambda k, a: jr.truncated_normal(k, -a, a / 2, (4,)),
    lambda k, a: jr.chisquare(k, a, (4,)),
    lambda k, a: jr.loggamma(k, a, (4,)),
    lambda k, a: jr.loggamma(k, a / 400, (4,)),  # samples below 1e-246: the log-space branch
    lambda k, a: jr.lognormal(k, a, (4,)),
    lambda k, a: jr.weibull_min(k, 2.0 * a, a, (4,)),
    lambda k, a: jr.pareto(k, a, (4,)),
    lambda k, a: jr.rayleigh(k, a, (4,)),
    lambda k, a: jr.triangular(k, -a, a / 3, 2 * a, (4,)),
    lambda k, a: jr.wald(k, a, (4,)),
    lambda k, a: jr.f(k, a, 2 * a, (4,)),
    lambda k, a: jr.generalized_normal(k, a, (4,)),
])
def test_shape_gradients_match_finite_differences_at_a_fixed_key(sampler):
    """The same key means the same uniforms: finite differences in the parameter are
    those of the inverse-CDF sample at fixed uniforms."""
    a, h = 1.7, 1e-5
    got = inert.jacfwd(lambda a: sampler(KEY, a))(a)
    fd = (np.asarray(sampler(KEY, a + h)) - np.asarray(sampler(KEY, a - h))) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(inert.jacrev(lambda a: sampler(KEY, a))(a), got, rtol=1e-10)


def test_gamma_pathwise_gradient_is_unbiased_for_the_mean():
    """d E[x] / d a = 1 for x ~ Gamma(a): the mean of the sample gradients."""
    g = inert.grad(lambda a: jnp.mean(jr.gamma(KEY, a, (N,))))(3.0)
    assert abs(g - 1.0) < 0.02
    x = jr.gamma(KEY, 3.0, (5,))
    uniforms = sc.gammainc(3.0, x)
    fd = (sc.gammaincinv(3.0 + 1e-6, uniforms) - sc.gammaincinv(3.0 - 1e-6, uniforms)) / 2e-6
    np.testing.assert_allclose(inert.jacfwd(lambda a: jr.gamma(KEY, a, (5,)))(3.0), fd,
                               rtol=1e-5)


def test_population_sizes_must_be_integers():
    np.testing.assert_array_equal(np.sort(jr.permutation(KEY, np.int64(4))), np.arange(4))
    with pytest.raises(TypeError, match="permutation"):
        jr.permutation(KEY, 4.0)
    with pytest.raises(TypeError, match="choice"):
        jr.choice(KEY, 4.0)


def test_small_concentrations_do_not_underflow_to_nan():
    """Gamma(0.01) samples are mostly below 1e-100; beta and dirichlet work in log space."""
    a, b = 0.01, 0.02
    x = jr.beta(KEY, a, b, (N,))
    assert not np.isnan(x).any()
    q = np.linspace(0.01, 0.99, 9)
    np.testing.assert_allclose([np.mean(x < v) for v in q], st.beta(a, b).cdf(q), atol=0.012)
    d = jr.dirichlet(KEY, np.full(3, 0.01), (1000,))
    assert not np.isnan(d).any()
    np.testing.assert_allclose(d.sum(-1), 1.0)
    np.testing.assert_allclose(np.exp(jr.loggamma(KEY, 2.0, (5,))), jr.gamma(KEY, 2.0, (5,)),
                               rtol=1e-14)
    assert np.isfinite(inert.grad(lambda a: jr.beta(KEY, a, 0.5))(0.01))


def test_recomputed_and_nested_derivatives_see_the_same_numbers():
    """checkpoint recomputes the samples in the backward pass: a pure function of the key
    gives the same ones, so the gradient is unchanged; second derivatives compose."""
    def f(w):
        return jnp.sum(jnp.tanh(w * jr.normal(KEY, (4,))) * jr.gamma(KEY, w, (4,)))

    g = inert.grad(f)(1.3)
    np.testing.assert_allclose(inert.grad(inert.checkpoint(f))(1.3), g, rtol=1e-13)
    np.testing.assert_allclose(inert.jit(inert.grad(f))(1.3), g, rtol=1e-13)
    eps = jr.normal(KEY, (4,))
    hess = inert.hessian(lambda s: jnp.sum((1.0 + s * eps) ** 3))(0.5)
    np.testing.assert_allclose(hess, np.sum(6 * (1.0 + 0.5 * eps) * eps ** 2), rtol=1e-12)


@pytest.mark.parametrize("n, p", [(10, 0.3), (200, 0.02), (1000, 0.9)])
def test_binomial_frequencies(n, p):
    x = jr.binomial(KEY, n, p, (N,))
    assert x.dtype == np.float64 and x.min() >= 0 and x.max() <= n
    assert discrete_pvalue(x, lambda v: st.binom.pmf(v, n, p)) > P_MIN
    np.testing.assert_array_equal(jr.binomial(KEY, np.array([0.0, 5, 5, -1]),
                                              np.array([0.5, 0, 1, 0.5])), [0, 0, 5, np.nan])


def test_multinomial_counts_add_up_with_binomial_marginals():
    p = np.array([0.2, 0.5, 0.3])
    m = jr.multinomial(KEY, 20, p, shape=(N,))
    assert m.shape == (N, 3)
    np.testing.assert_array_equal(m.sum(-1), 20)
    for i in range(3):
        assert discrete_pvalue(m[:, i], lambda v, i=i: st.binom.pmf(v, 20, p[i])) > P_MIN
    batched = jr.multinomial(KEY, np.array([5.0, 9.0]), np.tile(p, (2, 1)))
    np.testing.assert_array_equal(batched.sum(-1), [5, 9])


def test_results_are_immutable_arrays_like_every_value_inert_returns():
    words = np.array([1, 2], np.uint32)
    for out in (jr.key_data(words), jr.normal(KEY, (2,)), jr.split(KEY)):
        assert isinstance(out, jnp.ndarray) and not out.flags.writeable
    assert not np.shares_memory(jr.wrap_key_data(words), words)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_moments_and_gradient(method):
    mean, cov = np.array([1.0, -1.0]), np.array([[2.0, 0.6], [0.6, 1.0]])
    x = jr.multivariate_normal(KEY, mean, cov, (N,), method=method)
    np.testing.assert_allclose(x.mean(0), mean, atol=0.04)
    np.testing.assert_allclose(np.cov(np.asarray(x).T), cov, atol=0.06)
    assert ks_pvalue((x[:, 0] - 1) / np.sqrt(2), st.norm().cdf) > P_MIN
    f = lambda m: jr.multivariate_normal(KEY, m, cov, (3,), method=method)  # noqa: E731
    np.testing.assert_allclose(inert.jacfwd(f)(mean), np.broadcast_to(np.eye(2), (3, 2, 2)),
                               atol=1e-12)


def test_orthogonal_matrices_are_orthogonal_and_haar():
    q = jr.orthogonal(KEY, 3, (N // 10,))
    np.testing.assert_allclose(np.einsum("bij,bkj->bik", q, q), np.broadcast_to(np.eye(3),
                               q.shape), atol=1e-12)
    # under the Haar measure each entry of a 3x3 rotation is (2 Beta(1, 1) - 1): uniform
    assert ks_pvalue(q[:, 0, 0], st.uniform(-1, 2).cdf) > P_MIN
