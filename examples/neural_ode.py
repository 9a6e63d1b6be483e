"""A neural ODE: a small MLP vector field fitted to a spiral trajectory through odeint.

The loss integrates dy/dt = mlp(y; params) from the first observation and compares
the solution at the observed times; inert.grad of it runs the adjoint method
(inert.scipy.integrate.odeint's custom_vjp), which keeps only the solution at the
observed times for the backward pass. Run it as a script.
"""

from __future__ import annotations

import numpy as np

import inert
import inert.numpy as jnp
from inert.scipy.integrate import odeint


def spiral(times):
    """A damped rotation, the trajectory to learn."""
    a = np.array([[-0.1, 2.0], [-2.0, -0.1]])
    eigenvalues, vectors = np.linalg.eig(a)
    start = np.linalg.solve(vectors, np.array([2.0, 0.0]))
    return np.real((vectors * start) @ np.exp(np.outer(eigenvalues, times))).T


def init_params(hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return {"w1": rng.normal(0, 0.5, (2, hidden)), "b1": np.zeros(hidden),
            "w2": rng.normal(0, 0.5, (hidden, 2)), "b2": np.zeros(2)}


def vector_field(y, t, params):
    hidden = jnp.tanh(y @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, times, observed):
    predicted = odeint(vector_field, observed[0], times, params, rtol=1e-6, atol=1e-6)
    return jnp.mean(jnp.square(predicted - observed))


def adam_step(params, g, state, i: int, learning_rate: float):
    """One Adam update (moments 0.9, 0.999) of the parameter pytree."""
    tree_map = inert.tree_util.tree_map
    m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, state[0], g)
    v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, state[1], g)
    correction_m, correction_v = 1 - 0.9 ** i, 1 - 0.999 ** i
    params = tree_map(lambda p, m, v: p - learning_rate * (m / correction_m) /
                      (np.sqrt(v / correction_v) + 1e-8), params, m, v)
    return params, (m, v)


def train(steps: int, hidden: int, n_times: int, learning_rate: float = 0.05):
    """Adam on the trajectory loss."""
    times = np.linspace(0.0, 2.0, n_times)
    observed = spiral(times)
    params = init_params(hidden)
    state = (inert.tree_util.tree_map(np.zeros_like, params),) * 2
    value_and_grad = inert.value_and_grad(loss)
    history = []
    for i in range(1, steps + 1):
        value, g = value_and_grad(params, times, observed)
        history.append(float(value))
        params, state = adam_step(params, g, state, i, learning_rate)
    return params, history


def main(steps: int = 150, hidden: int = 16, n_times: int = 20, verbose: bool = True):
    params, history = train(steps, hidden, n_times)
    if verbose:
        print(f"trajectory loss: {history[0]:.4f} -> {history[-1]:.4f} in {steps} steps")
    return {"params": params, "history": history}


if __name__ == "__main__":
    main()
