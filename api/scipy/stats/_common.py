"""What the distributions share: float promotion, the location-scale transform, and
the two ways a value leaves a density's formula.

* Outside the support the result is scipy's constant (-inf for a log density, 0 for
  a density, 0 or 1 for a cdf). The formula is evaluated at a point inside the
  support instead (`inside`), so that it never computes log(0) or 0 * inf: no numpy
  warning, and the gradient there is exactly 0 rather than nan.
* Where a parameter is invalid (a scale <= 0, a probability outside [0, 1]) scipy
  gives nan; so do these functions (`nan_unless`), again computing with a harmless
  stand-in for the invalid parameter.
"""

from __future__ import annotations

import numpy as np

from ....core.avals import is_float
from ....core.trace import get_aval
from ... import numpy as inp
from ...numpy._arrays import astype, promote
from ..special import log_ndtr, ndtr


def floats(*args) -> list:
    """The operands promoted together to a floating dtype (float64 for integers)."""
    args = promote(*args)
    if is_float(get_aval(args[0]).dtype):
        return args
    return [astype(a, np.float64) for a in args]


def inside(mask, value, stand_in):
    """`value` where `mask` holds, `stand_in` (a point of the support) elsewhere."""
    return inp.where(mask, value, stand_in)


def nan_unless(valid, value):
    return inp.where(valid, value, np.nan)


def location_scale(x, loc, scale):
    """(z, log(scale), valid): z = (x - loc) / scale, computed with scale 1 where the
    scale is not positive, where `valid` is False and the result must be nan."""
    x, loc, scale = floats(x, loc, scale)
    valid = inp.greater(scale, 0)
    scale = inside(valid, scale, 1.0)
    return inp.divide(inp.subtract(x, loc), scale), inp.log(scale), valid


def log1mexp(d):
    """log(1 - exp(d)) for d <= 0, accurate at both ends (Maechler's two forms)."""
    near_zero = inp.greater(d, -np.log(2.0))
    d_near, d_far = inside(near_zero, d, -1.0), inside(near_zero, -1.0, d)
    return inp.where(near_zero, inp.log(-inp.expm1(d_near)), inp.log1p(-inp.exp(d_far)))


def log_diff_ndtr(a, b):
    """log(ndtr(b) - ndtr(a)) for a < b, as scipy computes it: within a tail the
    difference of log_ndtr values (mirrored into the lower tail, where they are
    accurate); across 0, log1p of minus both tails' masses."""
    upper = inp.greater(a, 0)
    lo, hi = inp.where(upper, -b, a), inp.where(upper, -a, b)
    in_tail = inp.logical_or(upper, inp.less_equal(b, 0))
    log_hi = log_ndtr(hi)
    finite = inp.isfinite(lo)  # lo = -inf adds nothing; its derivative would be nan
    log_ratio = inp.where(finite, log_ndtr(inside(finite, lo, 0.0)) - log_hi, -np.inf)
    tail = log_hi + log1mexp(log_ratio)
    a, b = inp.where(in_tail, -1.0, a), inp.where(in_tail, 1.0, b)  # stand-ins in the tails
    central = inp.log1p(-inp.add(ndtr(a), ndtr(-b)))
    return inp.where(in_tail, tail, central)


def log_where(mask, p):
    """log(p) where `mask` holds and -inf elsewhere, never taking log(0) itself."""
    return inp.where(mask, inp.log(inside(mask, p, 1.0)), -np.inf)


def all_of(*conditions):
    """The elementwise conjunction of the boolean conditions."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = inp.logical_and(result, condition)
    return result


def lattice(k, loc, lower):
    """(k - loc, mask): the mask says k - loc is an integer >= `lower` (the support of
    a discrete distribution; scipy's pmf is 0 at a non-integer)."""
    k, loc = floats(k, loc)
    k = k - loc
    return k, all_of(inp.equal(k, inp.floor(k)), inp.greater_equal(k, lower))


def probability(p, open_at_zero=False):
    """(p, valid): p with 1/2 where it is not a probability (0 excluded if asked)."""
    above = inp.greater(p, 0) if open_at_zero else inp.greater_equal(p, 0)
    valid = all_of(above, inp.less_equal(p, 1))
    return inside(valid, p, 0.5), valid


def log_probability(p, complement):
    """log(p) given p and 1 - p: log1p(-complement) where p >= 1/2 (which keeps the
    digits log(p) loses near 1), log(p) below, -inf at p = 0; scipy's two forms."""
    upper = inp.greater_equal(p, 0.5)
    lower_form = log_where(inp.greater(p, 0), p)
    return inp.where(upper, inp.log1p(-inside(upper, complement, 0.0)), lower_form)


def exp_or_inf(u):
    """exp(u), inf where it overflows, without numpy's overflow warning."""
    overflows = inp.greater(u, _LARGEST_EXPONENT)
    return inp.where(overflows, np.inf, inp.exp(inside(overflows, 0.0, u)))


_LARGEST_EXPONENT = 709.0


def quantile(q, loc, scale, standard):
    """loc + scale * standard(q) for q in (0, 1) (standard increasing, from -inf at 0 to
    inf at 1), those limits at 0 and 1, nan outside [0, 1] or for a scale <= 0."""
    q, loc, scale = floats(q, loc, scale)
    valid = all_of(inp.greater(scale, 0), inp.greater_equal(q, 0), inp.less_equal(q, 1))
    interior = all_of(inp.greater(q, 0), inp.less(q, 1))
    ends = inp.where(inp.greater(q, 0.5), np.inf, -np.inf)
    value = inp.where(interior, standard(inside(interior, q, 0.5)), ends)
    return nan_unless(valid, loc + inside(valid, scale, 1.0) * value)
