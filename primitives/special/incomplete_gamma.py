"""d/da of the regularized incomplete gamma function P(a, x) = gammainc(a, x), in numpy.

scipy has P and Q = 1 - P but not their derivative in the shape `a`, which
`gamma.cdf` in its shape, `chi2.cdf` in its degrees of freedom and the gamma sampler's
reparameterisation need. It is the derivative of the two expansions scipy's own
evaluation rests on (Numerical Recipes' `gser` and `gcf`), carried along with them:

* x < a + 1, the series  P = x^a e^-x / Gamma(a + 1) * sum_n c_n,  c_n = prod_{k<=n} x / (a + k):
  dP/da = P (log x - psi(a + 1)) + x^a e^-x / Gamma(a + 1) * sum_n c_n * -sum_{k<=n} 1 / (a + k);
* otherwise Q's continued fraction, by the modified Lentz method, each of its
  quantities with its derivative in `a` (forward mode by hand: b_i = x + 2i + 1 - a
  has slope -1, the numerators -i (i - a) slope i), and dP/da = -dQ/da.

Both converge in O(sqrt(a)) terms near x = a; past `MAX_TERMS` an element takes a
Richardson-extrapolated central difference of scipy's tail instead (relative error
about 1e-9 there; the expansions reach 1e-15)."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

EPS = np.finfo(np.float64).eps
MAX_TERMS = 2_000
_TINY = 1e-300
_BIG = 1e150  # Lentz's starting c, "infinite": the numerators are at most ~MAX_TERMS ** 2


def gammainc_slope_a(a, x) -> np.ndarray:
    """dP/da at (a, x) in float64, broadcast; NaN for a <= 0 or a NaN operand, 0 at
    x = 0, x = inf and a = inf, where P is constant in a."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.where((a > 0) & (x >= 0), 0.0, np.nan)
    inside = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
    series = inside & (x < a + 1)
    for mask, expansion in ((series, _SeriesSlope), (inside & ~series, _FractionSlope)):
        if mask.any():
            out[mask] = _summed(expansion(a[mask], x[mask]))
    return out


def _summed(expansion) -> np.ndarray:
    """Runs `expansion` term by term until each element has converged, every few terms
    setting the converged ones aside (a few slow elements must not keep the whole
    array iterating); those still unconverged after MAX_TERMS take the difference."""
    slope = np.empty(expansion.a.shape)
    where = np.arange(slope.size)
    for n in range(1, MAX_TERMS):
        converged = expansion.add_term(n)
        if n % 8 and not converged.all():
            continue
        slope[where[converged]] = expansion.slope(converged)
        where = where[~converged]
        expansion.keep(~converged)
        if not where.size:
            return slope
    slope[where] = _difference_slope(expansion.a, expansion.x)
    return slope


class _SeriesSlope:
    """P's series and its derivative, summed term by term."""

    def __init__(self, a, x):
        self.a, self.x = a, x
        self.term, self.total = np.ones_like(a), np.ones_like(a)
        self.harmonic, self.slope_total = np.zeros_like(a), np.zeros_like(a)

    def add_term(self, n: int) -> np.ndarray:
        self.term = self.term * self.x / (self.a + n)
        self.harmonic = self.harmonic + 1.0 / (self.a + n)
        self.total = self.total + self.term
        self.slope_total = self.slope_total - self.term * self.harmonic
        return (self.term < EPS * self.total) & (
            self.term * self.harmonic <= EPS * np.abs(self.slope_total))

    def slope(self, which) -> np.ndarray:
        a, x = self.a[which], self.x[which]
        prefactor = np.exp(sc.xlogy(a, x) - x - sc.gammaln(a + 1))
        return prefactor * ((np.log(x) - sc.digamma(a + 1)) * self.total[which]
                            + self.slope_total[which])

    def keep(self, which) -> None:
        for name, value in vars(self).items():
            setattr(self, name, value[which])


class _FractionSlope(_SeriesSlope):
    """Q's continued fraction by the modified Lentz method, each quantity beside its
    derivative in `a`."""

    def __init__(self, a, x):
        self.a, self.x = a, x
        self.b = x + 1 - a
        self.c, self.dc = np.full_like(a, _BIG), np.zeros_like(a)
        self.d = 1 / self.b
        self.dd = self.d * self.d  # d/da (1 / b), as db/da = -1
        self.h, self.dh = self.d.copy(), self.dd.copy()

    def add_term(self, i: int) -> np.ndarray:
        numerator, slope_numerator = -i * (i - self.a), float(i)
        self.b = self.b + 2
        u = numerator * self.d + self.b
        du = slope_numerator * self.d + numerator * self.dd - 1
        u = np.where(np.abs(u) < _TINY, _TINY, u)
        self.d, self.dd = 1 / u, -du / (u * u)
        self.dc = -1 + (slope_numerator - numerator * self.dc / self.c) / self.c
        self.c = self.b + numerator / self.c
        self.c = np.where(np.abs(self.c) < _TINY, _TINY, self.c)
        step, dstep = self.d * self.c, self.dd * self.c + self.d * self.dc
        self.h, self.dh = self.h * step, self.dh * step + self.h * dstep
        return (np.abs(step - 1) < EPS) & (np.abs(dstep * self.h) <= EPS * np.abs(self.dh))

    def slope(self, which) -> np.ndarray:
        a, x = self.a[which], self.x[which]
        prefactor = np.exp(sc.xlogy(a, x) - x - sc.gammaln(a))
        return -prefactor * ((np.log(x) - sc.digamma(a)) * self.h[which] + self.dh[which])


def _difference_slope(a, x, relative_step=2e-3):
    """dP/da by Richardson extrapolation of central differences of the smaller tail."""
    upper = sc.gammainc(a, x) > 0.5
    sign = np.where(upper, -1.0, 1.0)

    def central(h):
        plus = np.where(upper, sc.gammaincc(a + h, x), sc.gammainc(a + h, x))
        minus = np.where(upper, sc.gammaincc(a - h, x), sc.gammainc(a - h, x))
        return sign * (plus - minus) / (2 * h)

    h = relative_step * np.minimum(a, np.sqrt(a))
    return (4 * central(h / 2) - central(h)) / 3
