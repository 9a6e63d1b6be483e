"""Fit a logistic regression on a Dask cluster with inert's gradient.

The design matrix is a chunked dask array that lives on the workers; each step's
gradient is one lazy task graph (forward and backward pass) that the cluster runs,
reducing over the chunks by dask's tree reductions. X is data, not a parameter, so
no derivative of it is ever built.

    python examples/logistic_dask.py [--rows N] [--features D] [--steps K]
"""

from __future__ import annotations

import argparse

import dask.array as da
import distributed
import numpy as np

import inert
import inert.numpy as jnp


def mean_logistic_loss(w, X, y):
    z = X @ w
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z)


def synthetic_data(n: int, d: int, chunk: int, seed: int = 0):
    """Features, labels drawn from a known logistic model, and its coefficients."""
    rng = da.random.RandomState(seed)
    X = rng.standard_normal((n, d), chunks=(chunk, d))
    w_true = np.linspace(-2.0, 2.0, d)
    p = 1.0 / (1.0 + da.exp(-(X @ w_true)))
    y = (rng.random_sample(n, chunks=chunk) < p).astype(np.float64)
    return X, y, w_true


def fit(client, X, y, steps: int, learning_rate: float = 1.0):
    """Gradient descent; each step computes the loss and gradient on the cluster."""
    value_and_grad = inert.jit(inert.value_and_grad(mean_logistic_loss))
    w = np.zeros(X.shape[1])
    losses = []
    for _ in range(steps):
        loss, g = client.compute(value_and_grad(w, X, y), sync=True)
        losses.append(float(loss))
        w = w - learning_rate * g
    return w, losses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        X, y, w_true = synthetic_data(args.rows, args.features, chunk=max(args.rows // 8, 1))
        X, y = client.persist([X, y])
        w, losses = fit(client, X, y, args.steps)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps")
    print("fitted coefficients:", np.round(w, 2))
    print("true coefficients:  ", np.round(w_true, 2))
    return w, losses, w_true


if __name__ == "__main__":
    main()
