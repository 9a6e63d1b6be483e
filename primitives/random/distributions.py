"""Samples that are inverse CDFs of uniforms: gamma (differentiable in its shape),
Poisson and binomial.

Drawing a Gamma(a) sample as `x = F_a⁻¹(u)` for a uniform `u` from a key makes it a
pure, elementwise function of `(a, u)`: scipy's `gammaincinv` computes it, and its
derivative in `a` at fixed `u` is the implicit-reparameterisation derivative JAX uses,
by the implicit function theorem applied to `F_a(x) = u`:

    dx/da = -(dF/da)(a, x) / f(a, x),   f the Gamma(a) density.

dF/da is `igamma_grad_a`'s, the derivative of the incomplete gamma function's own
expansions (`primitives/special/incomplete_gamma.py`); the density is exact. `u` comes
from a key, so it is inactive by construction; an active `u` is an error, as is
differentiating `random_gamma_grad` again (second derivatives in the shape are not
built).

Gamma samples whose value underflows (shape `a` below ~0.01 with a small `u`) are 0,
and so is their derivative; `inert.random.loggamma` (and with it `beta` and
`dirichlet`) computes their logarithm without underflow instead.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.avals import ShapedArray
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import defjvp_zero
from ..elementwise import mul
from ..elementwise.ufunc_rules import (
    broadcast_shapes,
    defbroadcasting,
    defjvp_elementwise,
    ufunc_abstract_eval,
)
from ..special.incomplete_gamma import gammainc_slope_a

# ---------------------------------------------------------------------------------
random_gamma_p = Primitive("random_gamma", operand_names=("a", "u"))


def random_gamma(a, u):
    """The Gamma(a, 1) sample at the uniform `u` in (0, 1): `gammaincinv(a, u)`."""
    return random_gamma_p.bind(a, u)


impl_rules[random_gamma_p] = sc.gammaincinv
abstract_eval_rules[random_gamma_p] = ufunc_abstract_eval(sc.gammaincinv, "random_gamma")
defjvp_elementwise(random_gamma_p,
                   lambda t, out, a, u: mul(t, random_gamma_grad(a, out)),
                   None)
# transpose: none, not linear
defbroadcasting(random_gamma_p)

# ---------------------------------------------------------------------------------
random_gamma_grad_p = Primitive("random_gamma_grad", operand_names=("a", "x"))


def random_gamma_grad(a, x):
    """d x / d a of the Gamma(a) sample `x` at a fixed uniform (module docstring)."""
    return random_gamma_grad_p.bind(a, x)


def random_gamma_grad_impl(a, x):
    dtype = abstract_eval_rules[random_gamma_grad_p](get_aval(a), get_aval(x)).dtype
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    valid = (a64 > 0) & (x64 > 0)  # a <= 0 (or NaN) has no distribution
    a_safe, x_safe = np.where(valid, a64, 1.0), np.where(valid, x64, 1.0)
    log_density = sc.xlogy(a_safe - 1, x_safe) - x_safe - sc.gammaln(a_safe)
    with np.errstate(over="ignore"):  # a density that underflows: the slope is infinite
        slope = -gammainc_slope_a(a_safe, x_safe) * np.exp(-log_density)
    out = np.where(valid, slope, np.where(a64 > 0, 0.0, np.nan))  # an underflowed x: 0
    return out.astype(dtype)


impl_rules[random_gamma_grad_p] = random_gamma_grad_impl
abstract_eval_rules[random_gamma_grad_p] = ufunc_abstract_eval(sc.gammainc, "random_gamma_grad")
defjvp_elementwise(random_gamma_grad_p, None, None)
# transpose: none, not linear
defbroadcasting(random_gamma_grad_p)

# ---------------------------------------------------------------------------------
random_poisson_p = Primitive("random_poisson", operand_names=("lam", "u"))


def random_poisson(lam, u):
    """The Poisson(lam) sample at the uniform `u`: the smallest integer k with
    CDF(k) >= u, from scipy's inverse of the CDF in k (`pdtrik`), as int64."""
    return random_poisson_p.bind(lam, u)


def random_poisson_impl(lam, u):
    """-1 where `lam` is negative, infinite or NaN: no distribution to sample."""
    valid = np.isfinite(lam) & (np.asarray(lam) >= 0)
    k = sc.pdtrik(u, np.where(valid, lam, 0.0))
    return np.where(valid, np.ceil(k), -1).astype(np.int64)


def random_poisson_abstract_eval(lam, u):
    return ShapedArray(broadcast_shapes("random_poisson", [lam, u]), np.dtype(np.int64))


impl_rules[random_poisson_p] = random_poisson_impl
abstract_eval_rules[random_poisson_p] = random_poisson_abstract_eval
defjvp_zero(random_poisson_p)  # integer-valued
# transpose: none, not linear
defbroadcasting(random_poisson_p)

# ---------------------------------------------------------------------------------
random_binomial_p = Primitive("random_binomial", operand_names=("n", "p", "u"))


def random_binomial(n, p, u):
    """The Binomial(n, p) sample at the uniform `u`: the smallest integer k with
    CDF(k) >= u, from scipy's inverse of the CDF in k (`bdtrik`), as float64."""
    return random_binomial_p.bind(n, p, u)


def random_binomial_impl(n, p, u):
    """p = 0 or n = 0 gives 0, p = 1 gives n (where bdtrik has no inverse); n < 0, or p
    outside [0, 1], or NaN, gives NaN."""
    n, p = np.asarray(n, np.float64), np.asarray(p, np.float64)
    inner = (n > 0) & (p > 0) & (p < 1)
    k = np.ceil(sc.bdtrik(u, np.where(inner, n, 1.0), np.where(inner, p, 0.5)))
    k = np.where(inner, np.minimum(k, n), np.where(p >= 1, n, 0.0))
    return np.where((n >= 0) & (p >= 0) & (p <= 1), k, np.nan)


def random_binomial_abstract_eval(n, p, u):
    return ShapedArray(broadcast_shapes("random_binomial", [n, p, u]), np.dtype(np.float64))


impl_rules[random_binomial_p] = random_binomial_impl
abstract_eval_rules[random_binomial_p] = random_binomial_abstract_eval
defjvp_zero(random_binomial_p)  # integer-valued (as floats): piecewise constant
# transpose: none, not linear
defbroadcasting(random_binomial_p)
