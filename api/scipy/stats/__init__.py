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

import scipy.stats

from ...numpy._array import derived_docstring
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


def _document(distribution: str) -> None:
    """Give each function of a distribution's module without a docstring scipy's summary
    of the method it implements (`pdf`: "Probability density function at x of the given
    RV.")."""
    module = globals()[distribution]
    for name, fn in vars(module).items():
        if callable(fn) and not name.startswith("_") and not fn.__doc__ and \
                getattr(fn, "__module__", None) == module.__name__:
            fn.__doc__ = derived_docstring(
                getattr(getattr(scipy.stats, distribution), name, None),
                f"scipy.stats.{distribution}.{name}", "with scipy's parameters; as JAX's, it "
                "traces, differentiates and batches")


for _distribution in DISTRIBUTIONS:
    _document(_distribution)


def __dir__():
    return __all__
