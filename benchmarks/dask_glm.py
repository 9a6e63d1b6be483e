"""A GLM gradient over a chunked design matrix on a Dask cluster:
`python -m inert.benchmarks.dask_glm [--scale S] [--repeat N] [--workers W]`.

inert's gradient of the logistic-regression loss (one lazy graph of its forward and
backward pass) against the hand-written dask gradient `Xᵀ (expit(X w) - y)`, in the
same run on the same persisted data: median wall time, and the peak memory of the
workers while the gradient runs (in total, and above what they held before: the
persisted data). Scale 1 is a 2.4 GB
design matrix of (3·10⁶, 100) float64 in 30 chunks.
"""

from __future__ import annotations

import argparse
import json
import time

import dask.array as da
import distributed
import numpy as np
import scipy.special
from distributed.diagnostics import MemorySampler

import inert
import inert.numpy as jnp


def logistic_loss(w, X, y):
    z = X @ w
    return jnp.sum(jnp.logaddexp(0.0, z) - y * z)


def hand_written_gradient(w, X, y):
    """What dask-ml writes by hand for the same loss."""
    return X.T @ (scipy.special.expit(X @ w) - y)


def make_data(scale: float, d: int = 100, chunks: int = 30):
    n = int(3_000_000 * scale) // chunks * chunks
    rng = da.random.RandomState(0)
    X = rng.standard_normal((n, d), chunks=(n // chunks, d))
    w_true = np.linspace(-1.0, 1.0, d) / np.sqrt(d)
    y = (rng.random_sample(n, chunks=n // chunks) < scipy.special.expit(X @ w_true)) * 1.0
    return X, y


def measure(client, gradients: dict, repeat: int) -> dict:
    """Median seconds and peak extra worker memory of each gradient, runs interleaved
    (a shared machine drifts: both sides of the ratio then see the same conditions)."""
    sampler = MemorySampler()
    times: dict[str, list[float]] = {k: [] for k in gradients}
    baseline = sum(w["metrics"]["memory"] for w in client.scheduler_info()["workers"].values())
    for i in range(repeat):
        for key, build in gradients.items():
            start = time.perf_counter()
            with sampler.sample(f"{key}{i}", client=client, interval=0.05):
                client.compute(build()).result()
            times[key].append(time.perf_counter() - start)
    peaks = {k: max(max(m for _, m in sampler.samples[f"{k}{i}"]) for i in range(repeat))
             - baseline for k in gradients}
    return {"baseline_bytes": int(baseline)} | {
        k: {"seconds": float(np.median(times[k])), "peak_extra_bytes": int(peaks[k]),
            "peak_bytes": int(peaks[k] + baseline)} for k in gradients}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        X, y = make_data(args.scale)
        X, y = client.persist([X, y])
        distributed.wait([X, y])
        w = np.zeros(X.shape[1])
        np.testing.assert_allclose(*client.compute([inert.grad(logistic_loss)(w, X, y),
                                                    hand_written_gradient(w, X, y)],
                                                   sync=True), rtol=1e-8)
        jitted = inert.jit(inert.grad(logistic_loss))  # traced once, a graph per call
        result = measure(client, {"inert": lambda: inert.grad(logistic_loss)(w, X, y),
                                  "inert_jit": lambda: jitted(w, X, y),
                                  "hand": lambda: hand_written_gradient(w, X, y)},
                         args.repeat)
    result["X_bytes"] = int(X.nbytes)
    for key in ("inert", "inert_jit"):
        result[f"{key}_time_ratio"] = result[key]["seconds"] / result["hand"]["seconds"]
        result[f"{key}_peak_ratio"] = result[key]["peak_bytes"] / result["hand"]["peak_bytes"]
        result[f"{key}_peak_extra_ratio"] = (result[key]["peak_extra_bytes"]
                                             / max(result["hand"]["peak_extra_bytes"], 1))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
