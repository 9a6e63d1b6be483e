"""Bayesian logistic regression: the MAP estimate, then a Laplace approximation of the
posterior, on synthetic data.

The log posterior is written with inert.scipy.stats (a normal prior, a Bernoulli
likelihood of the logistic of the linear predictor); inert.grad and inert.hessian drive
Newton's method to the MAP, and the Hessian there gives the posterior covariance.
Run it as a script.
"""

from __future__ import annotations

import numpy as np

import inert
import inert.numpy as jnp
from inert.scipy import special, stats


def synthetic_data(n: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    weights = rng.normal(0.0, 2.0, dim)
    x = rng.normal(size=(n, dim))
    y = (rng.uniform(size=n) < special.expit(x @ weights)).astype(np.int64)
    return x, y, weights


def log_posterior(w, x, y, prior_scale=2.0):
    """log p(w) + sum log p(y | x, w): the labels are integers (inactive by type)."""
    log_prior = jnp.sum(stats.norm.logpdf(w, 0.0, prior_scale))
    p = special.expit(x @ w)
    return log_prior + jnp.sum(stats.bernoulli.logpmf(y, p))


def fit_map(x, y, steps: int):
    """Newton's method on the log posterior (concave: a normal prior and a logistic
    likelihood), with inert.grad and inert.hessian."""
    w = np.zeros(x.shape[1])
    value_and_grad = inert.jit(inert.value_and_grad(lambda w: log_posterior(w, x, y)))
    hessian = inert.jit(inert.hessian(lambda w: log_posterior(w, x, y)))
    history = []
    for _ in range(steps):
        value, g = value_and_grad(w)
        history.append(float(value) / len(y))
        w = w - np.linalg.solve(hessian(w), g)
    return w, history


def laplace_covariance(w, x, y):
    """The inverse of the negative Hessian of the log posterior at the MAP."""
    return np.linalg.inv(-inert.hessian(lambda w: log_posterior(w, x, y))(w))


def main(n: int = 500, dim: int = 3, steps: int = 8, verbose: bool = True):
    x, y, true_w = synthetic_data(n, dim)
    w, history = fit_map(x, y, steps)
    covariance = laplace_covariance(w, x, y)
    accuracy = float(np.mean((special.expit(x @ w) > 0.5) == y))
    if verbose:
        print(f"log posterior per point: {history[0]:.4f} -> {history[-1]:.4f}")
        print(f"MAP weights {np.round(w, 3)}, true {np.round(true_w, 3)}")
        print(f"posterior std {np.round(np.sqrt(np.diag(covariance)), 3)}, "
              f"training accuracy {accuracy:.3f}")
    return {"history": history, "weights": w, "true_weights": true_w,
            "covariance": covariance, "accuracy": accuracy}


if __name__ == "__main__":
    main()
