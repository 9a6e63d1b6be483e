"""`inert.scipy.special`: the scipy.special subset, on inert's primitives.

Names and signatures are scipy's (and jax.scipy.special's). The special functions
are primitives of `special`; the reductions over exponentials (`logsumexp`,
`softmax`, `log_softmax`) are compositions, shifted by their maximum so that they
neither overflow nor underflow, as scipy computes them. The shift is a constant
(`stop_gradient`): the result does not depend on it, so no derivative flows
through it and the maximum needs no derivative of its own.
"""

from __future__ import annotations

from ...primitives import elementwise as ew
from ...primitives.special import (
    betainc,
    betaln,
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    gammaln,
    iv,
    jv,
    kv,
    log_ndtr,
    logit,
    ndtr,
    polygamma,
    xlog1py,
    xlogy,
    zeta,
)
from ...primitives.special import igamma as gammainc
from ...primitives.special import igammac as gammaincc
from .. import numpy as inp
from ..numpy._array import return_arrays_from

psi = digamma
expit = ew.logistic

__all__ = [
    "betainc", "betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc",
    "gammaincc", "gammaln", "iv", "jv", "kv", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "ndtr", "polygamma", "psi", "softmax", "xlog1py", "xlogy", "zeta",
]


def _max_shift(a, axis):
    """The maximum over `axis` (kept as size-1 axes), 0 where it is not finite (all
    -inf: the result is -inf, not nan), as a constant."""
    shift = inp.max(inp.stop_gradient(a), axis=axis, keepdims=True)
    return inp.where(inp.isfinite(shift), shift, 0)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis`; with `return_sign`, (log|sum|, sign(sum))."""
    a = inp.asarray(a)
    shift = _max_shift(a, axis)
    terms = inp.exp(inp.subtract(a, shift))
    if b is not None:
        terms = inp.multiply(b, terms)
    total = inp.sum(terms, axis=axis, keepdims=keepdims)
    shift = inp.reshape(shift, inp.shape(total))
    if return_sign:
        return inp.add(inp.log(inp.abs(total)), shift), inp.sign(total)
    return inp.add(inp.log(total), shift)


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (None: over all of x, as in scipy)."""
    exps = inp.exp(inp.subtract(x, _max_shift(x, axis)))
    return inp.divide(exps, inp.sum(exps, axis=axis, keepdims=True))


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (None: over all of x, as in scipy)."""
    shifted = inp.subtract(x, _max_shift(x, axis))
    return inp.subtract(shifted, inp.log(inp.sum(inp.exp(shifted), axis=axis, keepdims=True)))

__all__ = [
    "betainc", "betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc",
    "gammaincc", "gammaln", "iv", "jv", "kv", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "ndtr", "polygamma", "psi", "softmax", "xlog1py", "xlogy", "zeta",
]
return_arrays_from(globals(), __all__)


def __dir__():
    return __all__
