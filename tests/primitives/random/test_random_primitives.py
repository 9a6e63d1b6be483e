"""The random primitives: pure functions of their key, lane by lane under vmap, abstract
eval agreeing with impl, and the gamma sample's implicit derivative in its shape."""

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
from harness import check_abstract_eval

import inert
from inert.errors import DTypeError, NonDifferentiableError, ShapeError
from inert.primitives.random import distributions as dist
from inert.primitives.random import keys as rk

KEY = np.array([7, 11], np.uint32)
KEYS = np.array([[7, 11], [0, 1], [2**32 - 1, 5]], np.uint32)


@pytest.mark.parametrize("prim, params", [
    (rk.random_bits_p, dict(shape=(3, 2), dtype=np.dtype(np.uint32))),
    (rk.random_bits_p, dict(shape=(5,), dtype=np.dtype(np.uint8))),
    (rk.random_bits_p, dict(shape=(), dtype=np.dtype(np.uint64))),
    (rk.random_split_p, dict(shape=(4,))),
    (rk.random_permutation_p, dict(n=6)),
], ids=lambda x: getattr(x, "name", ""))
def test_key_primitives_are_pure_and_typed(prim, params):
    check_abstract_eval(prim, [KEYS], params)
    out = inert.core.trace.impl_rules[prim](KEY, **params)
    np.testing.assert_array_equal(out, inert.core.trace.impl_rules[prim](KEY.copy(), **params))
    # a batch of keys gives each lane what its key gives alone
    batched = inert.core.trace.impl_rules[prim](KEYS, **params)
    for lane, k in zip(batched, KEYS):
        np.testing.assert_array_equal(lane, inert.core.trace.impl_rules[prim](k, **params))


def test_bits_of_every_width_are_the_philox_stream_cut_low_bits_first():
    words = np.random.Philox(key=np.array([7 << 32 | 11, 0], np.uint64)).random_raw(2)
    got = rk.random_bits_impl(KEY, shape=(8,), dtype=np.dtype(np.uint16))
    want = [(int(w) >> (16 * i)) & 0xFFFF for w in words for i in range(4)]
    np.testing.assert_array_equal(got, want)
    assert rk.random_bits_impl(KEY, shape=(0,), dtype=np.dtype(np.uint32)).shape == (0,)


def test_domains_keep_split_keys_apart_from_sampled_bits():
    bits64 = rk.random_bits_impl(KEY, shape=(4,), dtype=np.dtype(np.uint64))
    split = rk.random_split_impl(KEY, shape=(4,))
    halves = split[:, 0].astype(np.uint64) << np.uint64(32) | split[:, 1]
    assert not set(halves) & set(bits64)
    assert len({tuple(k) for k in split}) == 4


def test_fold_in_batches_key_and_data_lane_by_lane():
    data = np.array([0, 1, 2], np.uint32)
    out = inert.vmap(rk.random_fold_in, in_axes=(None, 0))(KEY, data)
    for lane, d in zip(out, data):
        np.testing.assert_array_equal(lane, rk.random_fold_in_impl(KEY, d))
    assert len({tuple(k) for k in out}) == 3
    check_abstract_eval(rk.random_fold_in_p, [KEYS, data], {})


@pytest.mark.parametrize("bad, error", [
    (np.zeros(2, np.float64), DTypeError), (np.zeros(3, np.uint32), ShapeError)])
def test_key_primitives_reject_bad_keys(bad, error):
    with pytest.raises(error, match="random_bits"):
        inert.make_jaxpr(lambda k: rk.random_bits(k, (2,), np.uint32))(bad)


# ---------------------------------------------------------------------------------
# gamma's implicit derivative

@pytest.mark.parametrize("a", [0.05, 0.3, 1.0, 4.5, 60.0, 2000.0])
def test_gamma_grad_matches_finite_differences_of_the_inverse_cdf(a):
    u = np.array([1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6])
    x = sc.gammaincinv(a, u)
    h = 1e-5 * a
    fd = (sc.gammaincinv(a + h, u) - sc.gammaincinv(a - h, u)) / (2 * h)
    got = dist.random_gamma_grad_impl(np.full_like(u, a), x)
    np.testing.assert_allclose(got, fd, rtol=2e-5, atol=1e-300)


def test_gamma_jvp_is_the_implicit_derivative_and_float32_stays_float32():
    u = np.array([0.1, 0.5, 0.9], np.float32)
    a = np.array([0.5, 2.0, 9.0], np.float32)
    x, dx = inert.jvp(lambda a: dist.random_gamma(a, u), (a,), (np.ones(3, np.float32),))
    assert x.dtype == dx.dtype == np.float32
    np.testing.assert_allclose(dx, dist.random_gamma_grad_impl(a.astype(float), x.astype(float)),
                               rtol=1e-4)


def test_gamma_underflowed_sample_has_zero_derivative_and_no_warning():
    with np.errstate(all="raise"):
        x = dist.random_gamma_grad_impl(np.array([0.001]), np.array([0.0]))
    assert x[0] == 0.0


def test_gamma_uniform_and_second_derivative_are_not_differentiable():
    with pytest.raises(NonDifferentiableError, match="random_gamma"):
        inert.grad(lambda u: dist.random_gamma(2.0, u))(0.5)
    with pytest.raises(NonDifferentiableError, match="random_gamma_grad"):
        inert.grad(inert.grad(lambda a: dist.random_gamma(a, 0.5)))(2.0)


def test_poisson_is_scipys_quantile_and_batches_elementwise():
    u = np.linspace(0.001, 0.999, 50)
    lam = np.array([[0.2], [3.0], [80.0]])
    np.testing.assert_array_equal(dist.random_poisson_impl(lam, u), st.poisson.ppf(u, lam))
    batched = inert.vmap(dist.random_poisson, in_axes=(0, None))(lam[:, 0], u)
    np.testing.assert_array_equal(batched, st.poisson.ppf(u, lam))


def test_invalid_parameters_give_flags_not_warnings():
    with np.errstate(all="raise"):
        counts = dist.random_poisson_impl(np.array([-1.0, np.nan, np.inf, 2.0]), 0.5)
        slopes = dist.random_gamma_grad_impl(np.array([-1.0, 0.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(counts, [-1, -1, -1, 2])  # the median of Poisson(2)
    assert np.isnan(slopes[:2]).all() and np.isfinite(slopes[2])
