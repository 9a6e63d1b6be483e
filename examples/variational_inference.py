"""Variational inference with a reparameterised Gaussian posterior, on inert.

Bayesian linear regression, y = X w + noise, with a standard normal prior on w: the
exact posterior is Gaussian, so the fitted approximation can be checked. The
approximation q(w) = N(mu, diag(sigma^2)) maximises the evidence lower bound (ELBO),
estimated with samples w = mu + sigma * eps, eps ~ N(0, 1) from `inert.random` (the
reparameterisation trick: the gradient flows through the samples into mu and sigma).
Each step draws fresh noise from `fold_in(key, step)`, and is `jit`-ted. A
mean-field Gaussian fitted to a Gaussian posterior recovers its mean exactly, and
1/sigma^2 the diagonal of its precision. Run it:

    python examples/variational_inference.py [--steps 1500] [--samples 16]
"""

import argparse
import math

import numpy as np

import inert
import inert.numpy as jnp
from inert import random
from inert.example_libraries import optimizers

NOISE_STD = 0.5
DIM, POINTS = 3, 40


def make_data(key):
    key_x, key_w, key_noise = random.split(key, 3)
    x = random.normal(key_x, (POINTS, DIM))
    w_true = random.normal(key_w, (DIM,))
    return x, x @ w_true + NOISE_STD * random.normal(key_noise, (POINTS,))


def log_joint(w, x, y):
    """log p(y | w) + log p(w), up to a constant; `w` has a leading sample axis."""
    residual = y - w @ x.T
    return (-0.5 * jnp.sum(residual ** 2, axis=-1) / NOISE_STD ** 2
            - 0.5 * jnp.sum(w ** 2, axis=-1))


def negative_elbo(params, key, x, y, samples: int):
    mu, log_sigma = params
    eps = random.normal(key, (samples, DIM))
    w = mu + jnp.exp(log_sigma) * eps
    entropy = jnp.sum(log_sigma) + 0.5 * DIM * (1 + math.log(2 * math.pi))
    return -(jnp.mean(log_joint(w, x, y)) + entropy)


def exact_posterior(x, y):
    precision = np.eye(DIM) + np.asarray(x).T @ np.asarray(x) / NOISE_STD ** 2
    mean = np.linalg.solve(precision, np.asarray(x).T @ np.asarray(y) / NOISE_STD ** 2)
    return mean, precision


def fit(steps: int, samples: int, seed: int = 0):
    data_key, noise_key = random.split(random.PRNGKey(seed))
    x, y = make_data(data_key)
    opt_init, opt_update, get_params = optimizers.adam(optimizers.piecewise_constant(
        [steps // 3, 2 * steps // 3], [0.05, 0.01, 0.002]))

    @inert.jit
    def step(i, opt_state, x, y):
        objective = lambda params: negative_elbo(  # noqa: E731 — samples is a static size
            params, random.fold_in(noise_key, i), x, y, samples)
        loss, grads = inert.value_and_grad(objective)(get_params(opt_state))
        return opt_update(i, grads, opt_state), loss

    opt_state = opt_init((jnp.zeros(DIM), jnp.zeros(DIM)))
    every = max(1, steps // 10)
    for i in range(steps):
        opt_state, loss = step(i, opt_state, x, y)
        if i % every == 0 or i == steps - 1:
            print(f"step {i:5d}  negative ELBO {float(loss):.3f}")
    mu, log_sigma = get_params(opt_state)
    mean, precision = exact_posterior(x, y)
    print("posterior mean  fitted", np.round(np.asarray(mu), 3), " exact", np.round(mean, 3))
    print("posterior std   fitted", np.round(np.exp(np.asarray(log_sigma)), 3),
          " mean-field exact", np.round(1 / np.sqrt(np.diag(precision)), 3))
    print(f"max error of the mean {np.max(np.abs(np.asarray(mu) - mean)):.4f}")
    return mu, log_sigma


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--samples", type=int, default=16, help="Monte Carlo samples per step")
    args = parser.parse_args()
    fit(args.steps, args.samples)
