"""`inert.random`: JAX's functional random numbers, on numpy's counter-based Philox.

A key is a `uint32[2]` array (JAX's raw key layout; `key` and `PRNGKey` both make one,
inert has no typed key arrays), integer-valued and so inactive by type. Every sampler
is a pure function of its key: the same key gives the same numbers eagerly, under
`jit` (which samples afresh for each key it is called with), inside `scan`, and lane
by lane under `vmap` over a batch of keys. `primitives/random/keys.py` documents how
bits, `split` and `fold_in` derive from the key.

Samplers transform uniform bits: floats in [0, 1) from the top mantissa bits; the
normal by `sqrt(2) erfinv(2u - 1)`; gamma and Poisson by scipy's inverse CDFs. So
`loc + scale * normal(key)` is differentiable in `loc` and `scale` by ordinary rules,
and `gamma` (with it `loggamma`, `beta`, `dirichlet`, `t` and `chisquare`) in its shape
by implicit reparameterisation (`primitives/random/distributions.py`); `beta` and
`dirichlet` work in log space, so small concentrations do not underflow. Integers drawn by
`randint` reduce 64 random bits modulo the range (a bias of at most range / 2^64).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.avals import is_float
from ..core.errors import DTypeError
from ..core.trace import get_aval, user_source_info
from ..primitives.control.scan import scan
from ..primitives.random import distributions as dist
from ..primitives.random import keys as rk
from ..primitives.special import erf, erfinv, gammaln
from . import numpy as jnp
from .numpy._arrays import shape_error
from .scipy.special import logsumexp

_SQRT2 = math.sqrt(2.0)


def _dtype_error(message: str) -> DTypeError:
    return DTypeError(message).with_source(user_source_info())


# ---------------------------------------------------------------------------------
# Keys


def _check_key(name: str, key, batched: bool = False):
    aval = get_aval(key)
    if aval.dtype != rk.KEY_DTYPE:
        raise _dtype_error(f"random.{name}: key must be a uint32 array of shape (2,) made by "
                           f"inert.random.key or PRNGKey, not {aval.str_short()}")
    if batched and aval.shape[-1:] == (2,):
        return key
    if aval.shape != (2,):
        raise shape_error(f"random.{name}: key must have shape (2,), not {aval.str_short()}; "
                          "map over a batch of keys with vmap")
    return key


def key(seed, *, impl=None):
    """A key from an integer seed: `[seed >> 32, seed & 0xFFFFFFFF]` of its 64 bits."""
    del impl  # one implementation: Philox
    aval = get_aval(seed)
    if aval.dtype.kind not in "iub" or aval.shape != ():
        raise _dtype_error(f"random.key: seed must be an integer scalar, not {aval.str_short()}")
    bits = jnp.astype(jnp.astype(seed, np.int64), np.uint64)
    words = jnp.stack([jnp.floor_divide(bits, 2**32), jnp.remainder(bits, 2**32)])
    return jnp.astype(words, rk.KEY_DTYPE)


PRNGKey = key


def clone(key):
    """The key itself: inert's keys are values, never consumed."""
    return _check_key("clone", key, batched=True)


def key_data(keys):
    """The keys' words, shape `(..., 2)` (a key is its words here)."""
    return _check_key("key_data", keys, batched=True)


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from their words: a `uint32` array of shape `(..., 2)`."""
    del impl
    return _check_key("wrap_key_data", key_bits_array, batched=True)


def _shape(name: str, shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        raise shape_error(f"random.{name}: shape must be non-negative Python integers (a "
                          f"traced value cannot be a shape), not {shape}")
    return tuple(int(d) for d in shape)


def split(key, num=2):
    """`num` new keys (shape `(num, 2)`; `num` may be a shape)."""
    _check_key("split", key)
    if isinstance(num, (int, np.integer)) and num < 0:
        raise shape_error(f"random.split: num must be non-negative, not {num}")
    return jnp.asarray(rk.random_split(key, _shape("split", num)))


def fold_in(key, data):
    """A new key from `key` and the integer `data` (taken modulo 2^32)."""
    _check_key("fold_in", key)
    if get_aval(data).dtype.kind not in "iub":
        raise _dtype_error(f"random.fold_in: data must be an integer, not "
                           f"{get_aval(data).str_short()}")
    return jnp.asarray(rk.random_fold_in(key, jnp.astype(data, rk.KEY_DTYPE)))


def bits(key, shape=(), dtype=None):
    """Random unsigned integers, every bit uniform (uint32 by default)."""
    _check_key("bits", key)
    dtype = np.dtype(np.uint32 if dtype is None else dtype)
    if dtype not in rk.BITS_DTYPES:
        raise _dtype_error(f"random.bits: dtype must be an unsigned integer type, not {dtype}")
    return jnp.asarray(rk.random_bits(key, _shape("bits", shape), dtype))


# ---------------------------------------------------------------------------------
# Uniform floats: the building block of every sampler


def _float_dtype(name: str, dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if not is_float(dtype):
        raise _dtype_error(f"random.{name}: dtype must be a float type, not {dtype}")
    return dtype


def _mantissa(name, key, shape, dtype, drop: int):
    """Integers of `nmant + 1 - drop` random bits, the top bits of `dtype`'s width."""
    _check_key(name, key)
    width = 8 * dtype.itemsize
    n = np.finfo(dtype).nmant + 1 - drop
    raw = rk.random_bits(key, _shape(name, shape), np.dtype(f"uint{width}"))
    return jnp.astype(jnp.floor_divide(raw, 2 ** (width - n)), dtype), n


def _unit(name, key, shape, dtype):
    """Uniform on [0, 1): every float of the form k 2^-(nmant+1)."""
    m, n = _mantissa(name, key, shape, dtype, 0)
    return m * dtype.type(2.0 ** -n)


def _open_unit(name, key, shape, dtype):
    """Uniform on (0, 1), symmetric about 1/2: (k + 1/2) 2^-nmant."""
    m, n = _mantissa(name, key, shape, dtype, 1)
    return (m + dtype.type(0.5)) * dtype.type(2.0 ** -n)


def _param_shape(name, shape, *params) -> tuple[int, ...]:
    """The output shape: `shape`, or the parameters' broadcast shape if None."""
    return _output_shape(name, shape, *(get_aval(p).shape for p in params))


def _output_shape(name, shape, *param_shapes) -> tuple[int, ...]:
    """`shape`, which the `param_shapes` must broadcast to; their broadcast if None."""
    if shape is None:
        return np.broadcast_shapes(*param_shapes)
    shape = _shape(name, shape)
    try:
        fits = np.broadcast_shapes(shape, *param_shapes) == shape
    except ValueError:
        fits = False
    if not fits:
        raise shape_error(f"random.{name}: parameter shapes {list(param_shapes)} do not "
                          f"broadcast to shape {shape}")
    return shape


def _count(name: str, n) -> int:
    """A population size given as an integer (concrete: it is a shape)."""
    if get_aval(n).dtype.kind not in "iu":
        raise _dtype_error(f"random.{name}: expected an integer or an array, not "
                           f"{get_aval(n).str_short()}")
    return int(n)


def uniform(key, shape=(), dtype=float, minval=0.0, maxval=1.0):
    """Uniform on [minval, maxval); differentiable in both bounds."""
    dtype = _float_dtype("uniform", dtype)
    shape = _param_shape("uniform", shape, minval, maxval)
    u = _unit("uniform", key, shape, dtype)
    minval, maxval = jnp.astype(minval, dtype), jnp.astype(maxval, dtype)
    return jnp.maximum(minval, minval + (maxval - minval) * u)


def normal(key, shape=(), dtype=float):
    dtype = _float_dtype("normal", dtype)
    u = _open_unit("normal", key, shape, dtype)
    return jnp.asarray(dtype.type(_SQRT2) * erfinv(2 * u - 1))


def exponential(key, shape=(), dtype=float):
    dtype = _float_dtype("exponential", dtype)
    return -jnp.log1p(-_unit("exponential", key, shape, dtype))


def gumbel(key, shape=(), dtype=float):
    dtype = _float_dtype("gumbel", dtype)
    return -jnp.log(-jnp.log(_open_unit("gumbel", key, shape, dtype)))


def laplace(key, shape=(), dtype=float):
    dtype = _float_dtype("laplace", dtype)
    v = 2 * _open_unit("laplace", key, shape, dtype) - 1
    return -jnp.sign(v) * jnp.log1p(-jnp.abs(v))


def logistic(key, shape=(), dtype=float):
    dtype = _float_dtype("logistic", dtype)
    u = _open_unit("logistic", key, shape, dtype)
    return jnp.log(u) - jnp.log1p(-u)


def cauchy(key, shape=(), dtype=float):
    dtype = _float_dtype("cauchy", dtype)
    return jnp.tan(dtype.type(np.pi) * (_open_unit("cauchy", key, shape, dtype) - 0.5))


def lognormal(key, sigma=1.0, shape=None, dtype=float):
    """exp(sigma * normal): differentiable in `sigma`."""
    dtype = _float_dtype("lognormal", dtype)
    shape = _param_shape("lognormal", shape, sigma)
    return jnp.exp(jnp.astype(sigma, dtype) * normal(key, shape, dtype))


def weibull_min(key, scale, concentration, shape=(), dtype=float):
    """scale * E^(1/concentration) of a standard exponential E > 0 (never 0, where the
    derivative in `concentration` would be 0 * log 0)."""
    dtype = _float_dtype("weibull_min", dtype)
    shape = _param_shape("weibull_min", shape, scale, concentration)
    e = -jnp.log(_open_unit("weibull_min", key, shape, dtype))
    return jnp.astype(scale, dtype) * e ** (1 / jnp.astype(concentration, dtype))


def pareto(key, b, shape=None, dtype=float):
    """Pareto of shape `b` on [1, inf): exp(E / b) of a standard exponential E."""
    dtype = _float_dtype("pareto", dtype)
    shape = _param_shape("pareto", shape, b)
    return jnp.exp(exponential(key, shape, dtype) / jnp.astype(b, dtype))


def rayleigh(key, scale, shape=None, dtype=float):
    """scale * sqrt(-2 log u), by the inverse CDF."""
    dtype = _float_dtype("rayleigh", dtype)
    shape = _param_shape("rayleigh", shape, scale)
    u = _open_unit("rayleigh", key, shape, dtype)
    return jnp.astype(scale, dtype) * jnp.sqrt(-2 * jnp.log(u))


def maxwell(key, shape=(), dtype=float):
    """The length of a standard normal 3-vector."""
    z = normal(key, (*_shape("maxwell", shape), 3), dtype)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=float):
    """loc + scale * S * M, a random sign S times a Maxwell M."""
    shape = _param_shape("double_sided_maxwell", shape, loc, scale)
    key_m, key_s = split(key)
    signed = maxwell(key_m, shape, dtype) * rademacher(key_s, shape, dtype)
    return jnp.astype(loc, dtype) + jnp.astype(scale, dtype) * signed


def triangular(key, left, mode, right, shape=None, dtype=float):
    """The triangular distribution on [left, right] peaking at `mode`, by its inverse
    CDF; differentiable in all three."""
    dtype = _float_dtype("triangular", dtype)
    shape = _param_shape("triangular", shape, left, mode, right)
    left, mode, right = (jnp.astype(v, dtype) for v in (left, mode, right))
    u = _open_unit("triangular", key, shape, dtype)
    width = right - left
    below = u < (mode - left) / width
    return jnp.where(below, left + jnp.sqrt(u * width * (mode - left)),
                     right - jnp.sqrt((1 - u) * width * (right - mode)))


def truncated_normal(key, lower, upper, shape=None, dtype=float):
    """Normal restricted to (lower, upper), by the inverse CDF; differentiable in the
    bounds."""
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _param_shape("truncated_normal", shape, lower, upper)
    lo = erf(jnp.astype(lower, dtype) / _SQRT2)
    hi = erf(jnp.astype(upper, dtype) / _SQRT2)
    u = lo + (hi - lo) * _open_unit("truncated_normal", key, shape, dtype)
    return jnp.clip(_SQRT2 * erfinv(u), lower, upper)


def rademacher(key, shape=(), dtype=int):
    """-1 or 1, each with probability 1/2."""
    return jnp.astype(2 * jnp.astype(bernoulli(key, 0.5, shape), np.int64) - 1, dtype)


def geometric(key, p, shape=None, dtype=int):
    """The number of Bernoulli(p) trials up to and including the first success (>= 1)."""
    shape = _param_shape("geometric", shape, p)
    u = _open_unit("geometric", key, shape, np.dtype(np.float64))
    return jnp.astype(jnp.floor(jnp.log1p(-u) / jnp.log1p(-jnp.asarray(p))) + 1, dtype)


def bernoulli(key, p=0.5, shape=None):
    """Booleans, True with probability `p`."""
    shape = _param_shape("bernoulli", shape, p)
    return _unit("bernoulli", key, shape, np.dtype(np.float64)) < p


# ---------------------------------------------------------------------------------
# Gamma and what is built on it


def gamma(key, a, shape=None, dtype=float):
    """Gamma(a, 1), differentiable in `a` (implicit reparameterisation)."""
    dtype = _float_dtype("gamma", dtype)
    shape = _param_shape("gamma", shape, a)
    u = _open_unit("gamma", key, shape, dtype)
    return jnp.asarray(dist.random_gamma(jnp.astype(a, dtype), u))


def loggamma(key, a, shape=None, dtype=float):
    """log of a Gamma(a, 1) sample (the sample `gamma` gives for the same key), without
    underflow for small `a`: below `tiny^0.8` of the dtype, P(a, x) = x^a / Gamma(a + 1)
    to the last bit, so log x = (log u + gammaln(a + 1)) / a. Differentiable in `a`."""
    dtype = _float_dtype("loggamma", dtype)
    shape = _param_shape("loggamma", shape, a)
    u = _open_unit("loggamma", key, shape, dtype)
    a = jnp.astype(a, dtype)
    x = dist.random_gamma(a, u)
    tiny = x < np.finfo(dtype).tiny ** 0.8
    log_small = (jnp.log(u) + gammaln(a + 1)) / a
    return jnp.where(tiny, log_small, jnp.log(jnp.where(tiny, 1, x)))


def beta(key, a, b, shape=None, dtype=float):
    """Beta(a, b) as X / (X + Y) of independent Gamma(a) and Gamma(b), in log space so
    that small `a` and `b` do not underflow to 0 / 0."""
    shape = _param_shape("beta", shape, a, b)
    key_a, key_b = split(key)
    log_x, log_y = loggamma(key_a, a, shape, dtype), loggamma(key_b, b, shape, dtype)
    return jnp.exp(log_x - jnp.logaddexp(log_x, log_y))


def dirichlet(key, alpha, shape=None, dtype=float):
    """Dirichlet(alpha) over the last axis of `alpha`: normalised gammas (in log space)."""
    alpha_shape = get_aval(alpha).shape
    if not alpha_shape:
        raise shape_error("random.dirichlet: alpha must have at least one axis")
    batch = _output_shape("dirichlet", shape, alpha_shape[:-1])
    log_g = loggamma(key, alpha, (*batch, alpha_shape[-1]), dtype)
    return jnp.exp(log_g - logsumexp(log_g, axis=-1, keepdims=True))


def t(key, df, shape=(), dtype=float):
    """Student's t with `df` degrees of freedom: normal / sqrt(chi2 / df)."""
    shape = _param_shape("t", shape, df)
    key_n, key_g = split(key)
    half_df = jnp.astype(df, dtype) / 2
    return normal(key_n, shape, dtype) * jnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


def chisquare(key, df, shape=None, dtype=float):
    """Chi-squared with `df` degrees of freedom: 2 Gamma(df / 2)."""
    return 2 * gamma(key, jnp.astype(df, dtype) / 2, shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=float):
    """Fisher's F: the ratio of two chi-squared variables over their degrees of freedom."""
    shape = _param_shape("f", shape, dfnum, dfden)
    key_num, key_den = split(key)
    num = chisquare(key_num, dfnum, shape, dtype) / jnp.astype(dfnum, dtype)
    return num / (chisquare(key_den, dfden, shape, dtype) / jnp.astype(dfden, dtype))


def generalized_normal(key, p, shape=(), dtype=float):
    """Density proportional to exp(-|x|^p): a random sign times Gamma(1/p)^(1/p)."""
    shape = _param_shape("generalized_normal", shape, p)
    key_g, key_s = split(key)
    inv_p = 1 / jnp.astype(p, dtype)
    return rademacher(key_s, shape, dtype) * gamma(key_g, inv_p, shape, dtype) ** inv_p


def wald(key, mean, shape=None, dtype=float):
    """The Wald (inverse Gaussian) distribution of mean `mean` and shape 1, by the
    transformation of Michael, Schucany and Haas (1976)."""
    dtype = _float_dtype("wald", dtype)
    shape = _param_shape("wald", shape, mean)
    key_n, key_u = split(key)
    mu = jnp.astype(mean, dtype)
    v = normal(key_n, shape, dtype) ** 2
    x = mu + mu * mu * v / 2 - mu / 2 * jnp.sqrt(4 * mu * v + mu * mu * v * v)
    return jnp.where(uniform(key_u, shape, dtype) <= mu / (mu + x), x, mu * mu / x)


def poisson(key, lam, shape=None, dtype=int):
    """Poisson(lam) counts, by the inverse CDF (not differentiable: integers)."""
    shape = _param_shape("poisson", shape, lam)
    u = _open_unit("poisson", key, shape, np.dtype(np.float64))
    return jnp.astype(dist.random_poisson(jnp.astype(lam, np.float64), u), dtype)


# ---------------------------------------------------------------------------------
# Discrete choices


def randint(key, shape, minval, maxval, dtype=int):
    """Integers uniform on [minval, maxval) (minval where maxval <= minval)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise _dtype_error(f"random.randint: dtype must be an integer type, not {dtype}")
    shape = _param_shape("randint", shape, minval, maxval)
    _check_key("randint", key)
    lo, hi = jnp.astype(minval, np.int64), jnp.astype(maxval, np.int64)
    span = jnp.astype(jnp.where(hi > lo, hi - lo, 1), np.uint64)
    offset = jnp.remainder(rk.random_bits(key, shape, np.dtype(np.uint64)), span)
    return jnp.astype(lo + jnp.astype(offset, np.int64), dtype)


def categorical(key, logits, axis=-1, shape=None):
    """Indices along `axis` drawn with probabilities softmax(logits): the argmax of
    logits plus Gumbel noise."""
    logits = jnp.moveaxis(jnp.asarray(logits), axis, -1)
    *batch, n = get_aval(logits).shape
    shape = _output_shape("categorical", shape, tuple(batch))
    noise = gumbel(key, (*shape, n), get_aval(logits).dtype)
    return jnp.argmax(logits + noise, axis=-1)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `arange(x)` (an integer `x`) or of `x` along `axis`
    (each slice on its own if `independent`)."""
    _check_key("permutation", key)
    if get_aval(x).shape == ():
        return jnp.asarray(rk.random_permutation(key, _count("permutation", x)))
    x = jnp.asarray(x)
    n = get_aval(x).shape[axis]
    if not independent:
        return jnp.take(x, rk.random_permutation(key, n), axis=axis)
    moved = jnp.moveaxis(x, axis, -1)
    perms = rk.random_permutation(rk.random_split(key, get_aval(moved).shape[:-1]), n)
    return jnp.moveaxis(jnp.take_along_axis(moved, perms, -1), -1, axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Elements of `a` along `axis` (or of `arange(a)` for an integer `a`), with or
    without replacement, uniformly or with probabilities `p`."""
    _check_key("choice", key)
    shape = _shape("choice", shape)
    population = get_aval(a).shape != ()
    n = get_aval(a).shape[axis] if population else _count("choice", a)
    k = math.prod(shape)
    if not replace and k > n:
        raise shape_error(f"random.choice: cannot take {k} samples from {n} without "
                          "replacement")
    if p is not None and get_aval(p).shape != (n,):
        raise shape_error(f"random.choice: p must have shape ({n},), not "
                          f"{get_aval(p).shape}")
    if p is None:
        index = (randint(key, shape, 0, n) if replace else
                 jnp.reshape(rk.random_permutation(key, n)[:k], shape))
    else:
        logp = jnp.where(p > 0, jnp.log(jnp.where(p > 0, p, 1.0)), -np.inf)
        index = (categorical(key, logp, shape=shape) if replace else
                 jnp.reshape(_top_k_indices(logp + gumbel(key, (n,)), k), shape))
    return jnp.take(a, index, axis=axis) if population else index


def _top_k_indices(scores, k: int):
    """The indices of the `k` largest scores, largest first (Gumbel top-k sampling)."""

    def take_largest(s, _):
        i = jnp.argmax(s)
        return s.at[i].set(-np.inf), i

    return scan(take_largest, scores, None, length=k)[1]


__all__ = [
    "PRNGKey", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare", "choice",
    "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma",
    "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace", "loggamma",
    "logistic", "lognormal", "maxwell", "normal", "pareto", "permutation", "poisson",
    "rademacher", "randint", "rayleigh", "split", "t", "triangular", "truncated_normal",
    "uniform", "wald", "weibull_min", "wrap_key_data",
]


def __dir__():
    return __all__
