"""The samplers of continuous distributions (and the few discrete ones that are one
transformation of uniforms), each a composition on `_keys`' uniform floats."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives.random import distributions as dist
from ...primitives.special import erf, erfinv, gammaln
from .. import numpy as jnp
from ..numpy._array import Array
from ..numpy._arrays import shape_error
from ..scipy.special import logsumexp
from ._keys import (
    SQRT2,
    float_dtype,
    open_unit,
    output_shape,
    param_shape,
    shape_tuple,
    split,
    unit,
)


def uniform(key: ArrayLike, shape: Sequence[int] = (), dtype: DTypeLike = float,
            minval: ArrayLike = 0.0, maxval: ArrayLike = 1.0) -> Array:
    """Uniform on [minval, maxval); differentiable in both bounds.

    Example:
        >>> u = inert.random.uniform(inert.random.PRNGKey(1), (1000,), minval=1.0, maxval=2.0)
        >>> bool(jnp.all((1.0 <= u) & (u < 2.0)))
        True
    """
    dtype = float_dtype("uniform", dtype)
    shape = param_shape("uniform", shape, minval, maxval)
    u = unit("uniform", key, shape, dtype)
    minval, maxval = jnp.astype(minval, dtype), jnp.astype(maxval, dtype)
    return jnp.maximum(minval, minval + (maxval - minval) * u)


def normal(key: ArrayLike, shape: Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard normal numbers of `shape` and float `dtype`: sqrt(2) * erfinv(2u - 1) of
    uniforms u in the open unit interval. A pure function of `key`, as JAX's, but the
    numbers differ from JAX's for the same key (inert's bits come from numpy's Philox, not
    threefry).

    Example:
        >>> key = inert.random.PRNGKey(0)
        >>> x = inert.random.normal(key, (2, 3))
        >>> x.shape, x.dtype, bool(jnp.all(x == inert.random.normal(key, (2, 3))))
        ((2, 3), dtype('float64'), True)
    """
    dtype = float_dtype("normal", dtype)
    u = open_unit("normal", key, shape, dtype)
    return jnp.asarray(dtype.type(SQRT2) * erfinv(2 * u - 1))


def exponential(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard exponential numbers (rate 1) of `shape` and float `dtype`, by inversion:
    -log1p(-u). The numbers differ from JAX's for the same key (numpy's Philox bits)."""
    dtype = float_dtype("exponential", dtype)
    return -jnp.log1p(-unit("exponential", key, shape, dtype))


def gumbel(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard Gumbel numbers of `shape` and float `dtype`, by inversion: -log(-log(u)). The
    numbers differ from JAX's for the same key (numpy's Philox bits)."""
    dtype = float_dtype("gumbel", dtype)
    return -jnp.log(-jnp.log(open_unit("gumbel", key, shape, dtype)))


def laplace(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard Laplace numbers (scale 1) of `shape` and float `dtype`, by inversion. The
    numbers differ from JAX's for the same key (numpy's Philox bits)."""
    dtype = float_dtype("laplace", dtype)
    v = 2 * open_unit("laplace", key, shape, dtype) - 1
    return -jnp.sign(v) * jnp.log1p(-jnp.abs(v))


def logistic(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard logistic numbers of `shape` and float `dtype`, by inversion: log(u) -
    log1p(-u). The numbers differ from JAX's for the same key (numpy's Philox bits)."""
    dtype = float_dtype("logistic", dtype)
    u = open_unit("logistic", key, shape, dtype)
    return jnp.log(u) - jnp.log1p(-u)


def cauchy(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """Standard Cauchy numbers of `shape` and float `dtype`, by inversion: tan(pi (u - 1/2)).
    The numbers differ from JAX's for the same key (numpy's Philox bits)."""
    dtype = float_dtype("cauchy", dtype)
    return jnp.tan(dtype.type(np.pi) * (open_unit("cauchy", key, shape, dtype) - 0.5))


def lognormal(key: ArrayLike, sigma: ArrayLike = 1.0, shape: int | Sequence[int] | None = None,
              dtype: DTypeLike = float) -> Array:
    """exp(sigma * normal): differentiable in `sigma`."""
    dtype = float_dtype("lognormal", dtype)
    shape = param_shape("lognormal", shape, sigma)
    return jnp.exp(jnp.astype(sigma, dtype) * normal(key, shape, dtype))


def weibull_min(key: ArrayLike, scale: ArrayLike, concentration: ArrayLike,
                shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """scale * E^(1/concentration) of a standard exponential E > 0 (never 0, where the
    derivative in `concentration` would be 0 * log 0)."""
    dtype = float_dtype("weibull_min", dtype)
    shape = param_shape("weibull_min", shape, scale, concentration)
    e = -jnp.log(open_unit("weibull_min", key, shape, dtype))
    return jnp.astype(scale, dtype) * e ** (1 / jnp.astype(concentration, dtype))


def pareto(key: ArrayLike, b: ArrayLike, shape: int | Sequence[int] | None = None,
           dtype: DTypeLike = float) -> Array:
    """Pareto of shape `b` on [1, inf): exp(E / b) of a standard exponential E."""
    dtype = float_dtype("pareto", dtype)
    shape = param_shape("pareto", shape, b)
    return jnp.exp(exponential(key, shape, dtype) / jnp.astype(b, dtype))


def rayleigh(key: ArrayLike, scale: ArrayLike, shape: int | Sequence[int] | None = None,
             dtype: DTypeLike = float) -> Array:
    """scale * sqrt(-2 log u), by the inverse CDF."""
    dtype = float_dtype("rayleigh", dtype)
    shape = param_shape("rayleigh", shape, scale)
    u = open_unit("rayleigh", key, shape, dtype)
    return jnp.astype(scale, dtype) * jnp.sqrt(-2 * jnp.log(u))


def maxwell(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """The length of a standard normal 3-vector."""
    z = normal(key, (*shape_tuple("maxwell", shape), 3), dtype)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


def double_sided_maxwell(key: ArrayLike, loc: ArrayLike, scale: ArrayLike,
                         shape: int | Sequence[int] = (), dtype: DTypeLike = float) -> Array:
    """loc + scale * S * M, a random sign S times a Maxwell M."""
    shape = param_shape("double_sided_maxwell", shape, loc, scale)
    key_m, key_s = split(key)
    signed = maxwell(key_m, shape, dtype) * rademacher(key_s, shape, dtype)
    return jnp.astype(loc, dtype) + jnp.astype(scale, dtype) * signed


def triangular(key: ArrayLike, left: ArrayLike, mode: ArrayLike, right: ArrayLike,
               shape: int | Sequence[int] | None = None, dtype: DTypeLike = float) -> Array:
    """The triangular distribution on [left, right] peaking at `mode`, by its inverse
    CDF; differentiable in all three."""
    dtype = float_dtype("triangular", dtype)
    shape = param_shape("triangular", shape, left, mode, right)
    left, mode, right = (jnp.astype(v, dtype) for v in (left, mode, right))
    u = open_unit("triangular", key, shape, dtype)
    width = right - left
    below = u < (mode - left) / width
    return jnp.where(below, left + jnp.sqrt(u * width * (mode - left)),
                     right - jnp.sqrt((1 - u) * width * (right - mode)))


def truncated_normal(key: ArrayLike, lower: ArrayLike, upper: ArrayLike,
                     shape: int | Sequence[int] | None = None, dtype: DTypeLike = float) -> Array:
    """Normal restricted to (lower, upper), by the inverse CDF; differentiable in the
    bounds."""
    dtype = float_dtype("truncated_normal", dtype)
    shape = param_shape("truncated_normal", shape, lower, upper)
    lo = erf(jnp.astype(lower, dtype) / SQRT2)
    hi = erf(jnp.astype(upper, dtype) / SQRT2)
    u = lo + (hi - lo) * open_unit("truncated_normal", key, shape, dtype)
    return jnp.clip(SQRT2 * erfinv(u), lower, upper)


def rademacher(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike = int) -> Array:
    """-1 or 1, each with probability 1/2."""
    return jnp.astype(2 * jnp.astype(bernoulli(key, 0.5, shape), np.int64) - 1, dtype)


def geometric(key: ArrayLike, p: ArrayLike, shape: int | Sequence[int] | None = None,
              dtype: DTypeLike = int) -> Array:
    """The number of Bernoulli(p) trials up to and including the first success (>= 1)."""
    shape = param_shape("geometric", shape, p)
    u = open_unit("geometric", key, shape, np.dtype(np.float64))
    return jnp.astype(jnp.floor(jnp.log1p(-u) / jnp.log1p(-jnp.asarray(p))) + 1, dtype)


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5,
              shape: int | Sequence[int] | None = None) -> Array:
    """Booleans, True with probability `p`.

    Example:
        >>> inert.random.bernoulli(inert.random.PRNGKey(0), 0.5, (4,)).dtype
        dtype('bool')
    """
    shape = param_shape("bernoulli", shape, p)
    return unit("bernoulli", key, shape, np.dtype(np.float64)) < p


# ---------------------------------------------------------------------------------
# Gamma and what is built on it


def gamma(key: ArrayLike, a: ArrayLike, shape: int | Sequence[int] | None = None,
          dtype: DTypeLike = float) -> Array:
    """Gamma(a, 1), differentiable in `a` (implicit reparameterisation)."""
    dtype = float_dtype("gamma", dtype)
    shape = param_shape("gamma", shape, a)
    u = open_unit("gamma", key, shape, dtype)
    return jnp.asarray(dist.random_gamma(jnp.astype(a, dtype), u))


def loggamma(key: ArrayLike, a: ArrayLike, shape: int | Sequence[int] | None = None,
             dtype: DTypeLike = float) -> Array:
    """log of a Gamma(a, 1) sample (the sample `gamma` gives for the same key), without
    underflow for small `a`: below `tiny^0.8` of the dtype, P(a, x) = x^a / Gamma(a + 1)
    to the last bit, so log x = (log u + gammaln(a + 1)) / a. Differentiable in `a`."""
    dtype = float_dtype("loggamma", dtype)
    shape = param_shape("loggamma", shape, a)
    u = open_unit("loggamma", key, shape, dtype)
    a = jnp.astype(a, dtype)
    x = dist.random_gamma(a, u)
    tiny = x < np.finfo(dtype).tiny ** 0.8
    log_small = (jnp.log(u) + gammaln(a + 1)) / a
    return jnp.where(tiny, log_small, jnp.log(jnp.where(tiny, 1, x)))


def beta(key: ArrayLike, a: ArrayLike, b: ArrayLike, shape: int | Sequence[int] | None = None,
         dtype: DTypeLike = float) -> Array:
    """Beta(a, b) as X / (X + Y) of independent Gamma(a) and Gamma(b), in log space so
    that small `a` and `b` do not underflow to 0 / 0."""
    shape = param_shape("beta", shape, a, b)
    key_a, key_b = split(key)
    log_x, log_y = loggamma(key_a, a, shape, dtype), loggamma(key_b, b, shape, dtype)
    return jnp.exp(log_x - jnp.logaddexp(log_x, log_y))


def dirichlet(key: ArrayLike, alpha: ArrayLike, shape: int | Sequence[int] | None = None,
              dtype: DTypeLike = float) -> Array:
    """Dirichlet(alpha) over the last axis of `alpha`: normalised gammas (in log space)."""
    alpha_shape = get_aval(alpha).shape
    if not alpha_shape:
        raise shape_error("random.dirichlet: alpha must have at least one axis")
    batch = output_shape("dirichlet", shape, alpha_shape[:-1])
    log_g = loggamma(key, alpha, (*batch, alpha_shape[-1]), dtype)
    return jnp.exp(log_g - logsumexp(log_g, axis=-1, keepdims=True))


def t(key: ArrayLike, df: ArrayLike, shape: int | Sequence[int] = (),
      dtype: DTypeLike = float) -> Array:
    """Student's t with `df` degrees of freedom: normal / sqrt(chi2 / df)."""
    shape = param_shape("t", shape, df)
    key_n, key_g = split(key)
    half_df = jnp.astype(df, dtype) / 2
    return normal(key_n, shape, dtype) * jnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


def chisquare(key: ArrayLike, df: ArrayLike, shape: int | Sequence[int] | None = None,
              dtype: DTypeLike = float) -> Array:
    """Chi-squared with `df` degrees of freedom: 2 Gamma(df / 2)."""
    return 2 * gamma(key, jnp.astype(df, dtype) / 2, shape, dtype)


def f(key: ArrayLike, dfnum: ArrayLike, dfden: ArrayLike, shape: int | Sequence[int] | None = None,
      dtype: DTypeLike = float) -> Array:
    """Fisher's F: the ratio of two chi-squared variables over their degrees of freedom."""
    shape = param_shape("f", shape, dfnum, dfden)
    key_num, key_den = split(key)
    num = chisquare(key_num, dfnum, shape, dtype) / jnp.astype(dfnum, dtype)
    return num / (chisquare(key_den, dfden, shape, dtype) / jnp.astype(dfden, dtype))


def generalized_normal(key: ArrayLike, p: ArrayLike, shape: int | Sequence[int] = (),
                       dtype: DTypeLike = float) -> Array:
    """Density proportional to `exp(-|x|^p)`: a random sign times `Gamma(1/p)^(1/p)`."""
    shape = param_shape("generalized_normal", shape, p)
    key_g, key_s = split(key)
    inv_p = 1 / jnp.astype(p, dtype)
    return rademacher(key_s, shape, dtype) * gamma(key_g, inv_p, shape, dtype) ** inv_p


def wald(key: ArrayLike, mean: ArrayLike, shape: int | Sequence[int] | None = None,
         dtype: DTypeLike = float) -> Array:
    """The Wald (inverse Gaussian) distribution of mean `mean` and shape 1, by the
    transformation of Michael, Schucany and Haas (1976)."""
    dtype = float_dtype("wald", dtype)
    shape = param_shape("wald", shape, mean)
    key_n, key_u = split(key)
    mu = jnp.astype(mean, dtype)
    v = normal(key_n, shape, dtype) ** 2
    x = mu + mu * mu * v / 2 - mu / 2 * jnp.sqrt(4 * mu * v + mu * mu * v * v)
    return jnp.where(uniform(key_u, shape, dtype) <= mu / (mu + x), x, mu * mu / x)


def poisson(key: ArrayLike, lam: ArrayLike, shape: int | Sequence[int] | None = None,
            dtype: DTypeLike = int) -> Array:
    """Poisson(lam) counts, by the inverse CDF (not differentiable: integers)."""
    shape = param_shape("poisson", shape, lam)
    u = open_unit("poisson", key, shape, np.dtype(np.float64))
    return jnp.astype(dist.random_poisson(jnp.astype(lam, np.float64), u), dtype)


def binomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, shape: int | Sequence[int] | None = None,
             dtype: DTypeLike = float) -> Array:
    """Binomial(n, p) counts, by the inverse CDF (not differentiable: integers)."""
    dtype = float_dtype("binomial", dtype)
    shape = param_shape("binomial", shape, n, p)
    u = open_unit("binomial", key, shape, np.dtype(np.float64))
    return jnp.astype(dist.random_binomial(jnp.astype(n, np.float64), jnp.astype(p, np.float64),
                                           u), dtype)


def multinomial(key: ArrayLike, n: ArrayLike, p: ArrayLike, *,
                shape: int | Sequence[int] | None = None, dtype: DTypeLike = float,
                unroll: int = 1) -> Array:
    """Counts of `n` draws from the categories of the last axis of `p`: category by
    category, a binomial of what is left with the probability left (`unroll` is JAX's
    loop setting, here the loop is unrolled)."""
    del unroll
    p = jnp.asarray(p)
    *batch, categories = get_aval(p).shape
    shape = output_shape("multinomial", shape, get_aval(n).shape, tuple(batch))
    remaining, mass_left = jnp.broadcast_to(jnp.astype(n, np.float64), shape), 1.0
    counts = []
    for i, k in enumerate(split(key, max(categories - 1, 0))):
        share = jnp.clip(p[..., i] / jnp.where(mass_left > 0, mass_left, 1.0), 0.0, 1.0)
        counts.append(binomial(k, remaining, share, shape, np.float64))
        remaining, mass_left = remaining - counts[-1], mass_left - p[..., i]
    counts.append(remaining)
    return jnp.astype(jnp.stack(counts, axis=-1), dtype)


def multivariate_normal(key: ArrayLike, mean: ArrayLike, cov: ArrayLike,
                        shape: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
                        method: str = "cholesky") -> Array:
    """mean + A z for a standard normal z and A Aᵀ = cov (A from cov's Cholesky, eigh or
    svd factorisation); differentiable in `mean` and `cov`."""
    if method not in ("cholesky", "eigh", "svd"):
        raise shape_error(f"random.multivariate_normal: method must be cholesky, eigh or "
                          f"svd, not {method!r}")
    dtype = float_dtype("multivariate_normal", np.result_type(
        get_aval(mean).dtype, get_aval(cov).dtype) if dtype is None else dtype)
    mean, cov = jnp.astype(mean, dtype), jnp.astype(cov, dtype)
    mean_shape, cov_shape = get_aval(mean).shape, get_aval(cov).shape
    if len(mean_shape) < 1 or cov_shape[-2:] != (mean_shape[-1],) * 2:
        raise shape_error(f"random.multivariate_normal: mean {mean_shape} and cov "
                          f"{cov_shape} must be (..., n) and (..., n, n)")
    shape = output_shape("multivariate_normal", shape, mean_shape[:-1], cov_shape[:-2])
    if method == "cholesky":
        factor = jnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.expand_dims(jnp.sqrt(jnp.maximum(w, 0)), -2)
    else:
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.expand_dims(jnp.sqrt(s), -2)
    z = normal(key, (*shape, mean_shape[-1]), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key: ArrayLike, n: int, shape: int | Sequence[int] = (),
               dtype: DTypeLike = float) -> Array:
    """Haar-random orthogonal n x n matrices: the Q of a normal matrix's QR, its columns'
    signs fixed by R's diagonal."""
    dtype = float_dtype("orthogonal", dtype)
    z = normal(key, (*shape_tuple("orthogonal", shape), n, n), dtype)
    q, r = jnp.linalg.qr(z)
    return q * jnp.expand_dims(jnp.sign(jnp.diagonal(r, 0, -2, -1)), -2)
