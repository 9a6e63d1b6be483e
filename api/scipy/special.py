"""`inert.scipy.special`: the scipy.special subset, on inert's primitives.

Names and signatures are scipy's (and jax.scipy.special's). The special functions
are primitives of `special`; the reductions over exponentials (`logsumexp`,
`softmax`, `log_softmax`) are compositions, shifted by their maximum so that they
neither overflow nor underflow, as scipy computes them. The shift is a constant
(`stop_gradient`): the result does not depend on it, so no derivative flows
through it and the maximum needs no derivative of its own.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np
import scipy.special as sc

from ...core.typing import ArrayLike
from ...primitives import elementwise as ew
from ...primitives.special import (
    beta,
    betainc,
    betaln,
    binom,
    boxcox,
    boxcox1p,
    cosm1,
    dawsn,
    digamma,
    entr,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    exp1,
    expi,
    expn,
    gamma,
    gammaln,
    gammasgn,
    hyp1f1,
    hyp2f1,
    i0,
    i0e,
    i1,
    i1e,
    iv,
    ive,
    j0,
    j1,
    jv,
    kl_div,
    kv,
    kve,
    log_ndtr,
    loggamma,
    logit,
    ndtr,
    ndtri,
    poch,
    polygamma,
    rel_entr,
    rgamma,
    sinc,
    spence,
    xlog1py,
    xlogy,
    y0,
    y1,
    yv,
    zeta,
)
from ...primitives.special import igamma as gammainc
from ...primitives.special import igammac as gammaincc
from .. import numpy as inp
from ..numpy._array import Array, return_arrays_from

psi = digamma
expit = ew.logistic
jn = jv  # an integer order is inactive by type
yn = yv



def _max_shift(a, axis):
    """The maximum over `axis` (kept as size-1 axes), 0 where it is not finite (all
    -inf: the result is -inf, not nan), as a constant."""
    shift = inp.max(inp.stop_gradient(a), axis=axis, keepdims=True)
    return inp.where(inp.isfinite(shift), shift, 0)


def logsumexp(a: ArrayLike, axis: int | Sequence[int] | None = None, b: ArrayLike | None = None,
              keepdims: bool = False, return_sign: bool = False) -> Array | tuple[Array, Array]:
    """`log(sum(b * exp(a)))` over `axis`; with `return_sign`, `(log|sum|, sign(sum))`.

    Example:
        >>> print(inert.scipy.special.logsumexp(np.array([0.0, np.log(3.0)])))  # log 4
        1.3862943611198906
    """
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


def softmax(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """exp(x) / sum(exp(x)) over `axis` (None: over all of x, as in scipy)."""
    exps = inp.exp(inp.subtract(x, _max_shift(x, axis)))
    return inp.divide(exps, inp.sum(exps, axis=axis, keepdims=True))


def log_softmax(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """x - logsumexp(x) over `axis` (None: over all of x, as in scipy)."""
    shifted = inp.subtract(x, _max_shift(x, axis))
    return inp.subtract(shifted, inp.log(inp.sum(inp.exp(shifted), axis=axis, keepdims=True)))


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers B_0 ... B_n (n a concrete int): scipy's, as an array."""
    return np.asarray(sc.bernoulli(operator.index(n)))


def factorial(n: ArrayLike, exact: bool = False) -> Array:
    """Gamma(n + 1), and 0 for n < 0, as scipy's factorial with exact=False."""
    if exact:
        raise ValueError("factorial: exact=True is not supported (it needs integers)")
    n = inp.asarray(n)
    return inp.where(n < 0, 0.0, gamma(inp.where(n < 0, 0.0, n) + 1.0))


def comb(N: ArrayLike, k: ArrayLike, exact: bool = False, repetition: bool = False) -> Array:  # noqa: N803 — scipy's names
    """The number of combinations of k of N things (real N and k, by binom); 0 unless
    0 <= k <= N. With `repetition`, combinations with repetition."""
    if exact:
        raise ValueError("comb: exact=True is not supported (it needs integers)")
    N, k = inp.asarray(N), inp.asarray(k)
    if repetition:
        N = N + k - 1
    valid = inp.logical_and(inp.logical_and(k <= N, N >= 0), k >= 0)
    return inp.where(valid, binom(N, k), 0.0)


def multigammaln(a: ArrayLike, d: int) -> Array:
    """log of the multivariate gamma function of dimension `d` (a Python int):
    d(d-1)/4 log(pi) + sum over j < d of gammaln(a - j/2)."""
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise ValueError(f"multigammaln: d must be a positive Python int, got {d!r}")
    a = inp.asarray(a)
    shifted = inp.subtract(inp.expand_dims(a, -1), inp.arange(d) / 2.0)
    return inp.add(inp.sum(gammaln(shifted), axis=-1), d * (d - 1) / 4.0 * math.log(math.pi))


__all__ = [
    "bernoulli", "beta", "betainc", "betaln", "binom", "boxcox", "boxcox1p", "comb", "cosm1",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcinv", "erfcx", "erfinv", "exp1", "expi",
    "expit", "expn", "factorial", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn", "jv",
    "kl_div", "kv", "kve", "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp",
    "multigammaln", "ndtr", "ndtri", "poch", "polygamma", "psi", "rel_entr", "rgamma", "sinc",
    "softmax", "spence", "xlog1py", "xlogy", "y0", "y1", "yn", "yv", "zeta",
]
return_arrays_from(globals(), __all__, like=sc)


def __dir__():
    return __all__
