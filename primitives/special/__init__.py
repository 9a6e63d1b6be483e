"""Special functions: scipy.special's values, with derivatives by their identities.

Values always come from scipy.special (never hand-written numerics), and result
dtypes from the scipy ufunc's own type resolution, so float32 stays float32 where
scipy keeps it. The derivative rules are the textbook identities, written with bind
wrappers so that they are staged and differentiable again.

Several functions have an operand with no derivative: the order of a Bessel function or
of polygamma, `a` and `b` of betainc, `x` of zeta (the incomplete gamma functions' `a`
has one, `igamma_grad_a`, itself without a derivative in `a`). Its jvp rule is `None`:
the operand may be anything inactive (a Python scalar, a numpy array, an `Inactive`
argument, a `stop_gradient` value), and an active one raises NonDifferentiableError
naming the primitive and the operand.

A rule that computes with such a parameter first converts it to the result's real
dtype (`param_like`): evaluated on its own, arithmetic on a Python scalar gives a
strongly typed numpy scalar that would promote a float32 result to float64, while
the staged program (weakly typed) says float32. scipy's loop converts the parameter
to that dtype anyway, so no precision is lost.

The family is imported from here: `logarithmic` (xlogy and the entropies) sits below
`gamma_functions`, whose densities use it; `common` holds what all modules share.
"""

# ruff: noqa: F401 — this module re-exports the family

from __future__ import annotations

from .bessel import (
    i0,
    i0_p,
    i0e,
    i0e_p,
    i1,
    i1_p,
    i1e,
    i1e_p,
    iv,
    iv_p,
    ive,
    ive_p,
    j0,
    j0_p,
    j1,
    j1_p,
    jv,
    jv_p,
    kv,
    kv_p,
    kve,
    kve_p,
    y0,
    y0_p,
    y1,
    y1_p,
    yv,
    yv_p,
)
from .elementary import (
    boxcox,
    boxcox1p,
    boxcox1p_p,
    boxcox_p,
    cosm1,
    cosm1_p,
    exp1,
    exp1_p,
    expi,
    expi_p,
    expn,
    expn_p,
    hyp1f1,
    hyp1f1_p,
    hyp2f1,
    hyp2f1_p,
    sinc,
    sinc_p,
    spence,
    spence_p,
)
from .error_functions import (
    dawsn,
    dawsn_p,
    erf,
    erf_p,
    erfc,
    erfc_p,
    erfcinv,
    erfcinv_p,
    erfcx,
    erfcx_p,
    erfinv,
    erfinv_p,
    log_ndtr,
    log_ndtr_p,
    ndtr,
    ndtr_p,
    ndtri,
    ndtri_p,
)
from .gamma_functions import (
    beta,
    beta_p,
    betainc,
    betainc_p,
    betaln,
    betaln_p,
    binom,
    binom_p,
    digamma,
    digamma_p,
    gamma,
    gamma_p,
    gammaln,
    gammaln_p,
    gammasgn,
    gammasgn_p,
    igamma,
    igamma_grad_a,
    igamma_p,
    igammac,
    igammac_p,
    loggamma,
    loggamma_p,
    poch,
    poch_p,
    polygamma,
    polygamma_p,
    rgamma,
    rgamma_p,
    zeta,
    zeta_p,
)
from .logarithmic import (
    entr,
    entr_p,
    kl_div,
    kl_div_p,
    logit,
    logit_p,
    rel_entr,
    rel_entr_p,
    xlog1py,
    xlog1py_p,
    xlogy,
    xlogy_p,
)
