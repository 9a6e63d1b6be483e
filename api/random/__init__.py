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

from ..numpy._array import return_arrays_from
from ._choices import (  # noqa: F401
    categorical,
    choice,
    permutation,
    randint,
)
from ._keys import (  # noqa: F401
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    split,
    wrap_key_data,
)
from ._samplers import (  # noqa: F401
    bernoulli,
    beta,
    binomial,
    cauchy,
    chisquare,
    dirichlet,
    double_sided_maxwell,
    exponential,
    f,
    gamma,
    generalized_normal,
    geometric,
    gumbel,
    laplace,
    loggamma,
    logistic,
    lognormal,
    maxwell,
    multinomial,
    multivariate_normal,
    normal,
    orthogonal,
    pareto,
    poisson,
    rademacher,
    rayleigh,
    t,
    triangular,
    truncated_normal,
    uniform,
    wald,
    weibull_min,
)

__all__ = [
    "PRNGKey", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare",
    "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in",
    "gamma", "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace",
    "loggamma", "logistic", "lognormal", "maxwell", "multinomial", "multivariate_normal",
    "normal", "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint",
    "rayleigh", "split", "t", "triangular", "truncated_normal", "uniform", "wald",
    "weibull_min", "wrap_key_data",
]

return_arrays_from(globals(), __all__)  # immutable `Array`s, like every value inert returns


def __dir__():
    return __all__
