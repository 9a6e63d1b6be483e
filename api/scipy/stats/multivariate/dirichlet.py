"""`inert.scipy.stats.dirichlet`: the Dirichlet distribution with concentrations
`alpha` (shape (K,)) over x of shape (K,) or (K, ...) (the components first, as in
scipy). Off the simplex the log density is -inf, as in JAX (scipy raises instead);
the simplex is scipy's: x >= 0 and |sum(x) - 1| <= 1e-9."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ....numpy._arrays import shape_error
from ...special import gammaln, xlogy
from .._common import all_of, floats, inside, nan_unless

_SIMPLEX_TOLERANCE = 1e-9


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    x, alpha = floats(x, alpha)
    if inp.ndim(alpha) != 1 or inp.ndim(x) < 1 or inp.shape(x)[0] != inp.shape(alpha)[0]:
        raise shape_error(f"dirichlet.logpdf: alpha must have shape (K,) and x (K, ...), got "
                          f"alpha {inp.shape(alpha)} and x {inp.shape(x)}")
    alpha = inp.reshape(alpha, inp.shape(alpha) + (1,) * (inp.ndim(x) - 1))
    valid = inp.all(inp.greater(alpha, 0))
    alpha = inside(valid, alpha, 1.0)
    on_simplex = all_of(inp.all(inp.greater_equal(x, 0), axis=0),
                        inp.less_equal(inp.abs(inp.sum(x, axis=0) - 1.0), _SIMPLEX_TOLERANCE))
    x = inside(on_simplex, x, 1.0 / inp.shape(x)[0])
    log_norm = inp.sum(gammaln(alpha), axis=0) - gammaln(inp.sum(alpha, axis=0))
    density = inp.sum(xlogy(alpha - 1.0, x), axis=0) - log_norm
    return nan_unless(valid, inp.where(on_simplex, density, -np.inf))


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    return inp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]


def __dir__():
    return __all__
