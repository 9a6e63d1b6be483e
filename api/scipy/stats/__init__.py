"""`inert.scipy.stats`: jax.scipy.stats's distributions, each a namespace module of
functions (`norm.logpdf(x, loc, scale)`) with scipy's names and parameters.

The modules sit in folders by kind (continuous, circular, extreme, discrete,
multivariate); the root
`__init__` registers each as `inert.scipy.stats.<name>`; `rankdata`, `mode` and `sem` are
functions (`_summary`). Values come from
inert.scipy.special's primitives, so every float parameter is differentiable where
scipy.special gives the identity; `_common` states the support and validity rules.
"""

from __future__ import annotations

from ._summary import mode, rankdata, sem
from .circular import vonmises, wrapcauchy
from .continuous import (
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    gennorm,
    laplace,
    logistic,
    lognorm,
    norm,
    pareto,
    t,
    truncnorm,
    uniform,
)
from .discrete import bernoulli, betabinom, binom, geom, nbinom, poisson
from .extreme import gumbel_l, gumbel_r
from .multivariate import dirichlet, multinomial, multivariate_normal

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "lognorm", "mode",
    "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "rankdata",
    "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
]

DISTRIBUTIONS = tuple(name for name in __all__ if name not in ("mode", "rankdata", "sem"))


def __dir__():
    return __all__
