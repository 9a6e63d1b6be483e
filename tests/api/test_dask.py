"""grad, vjp, jvp, vmap and jit on Dask arrays: one lazy graph, nothing computed until
`.compute()`, no tangent or cotangent of inactive data; and the same gradients on a
`dask.distributed.LocalCluster` (2 workers on loopback), also when a worker dies
mid-computation and when the data exceeds a worker's memory limit."""

from __future__ import annotations

import contextlib
import os
import threading
import time

import dask
import dask.array as da
import numpy as np
import pytest
from dask.callbacks import Callback

import inert
import inert.numpy as jnp

distributed = pytest.importorskip("distributed")


def logistic_loss(w, X, y):
    z = X @ w
    return jnp.sum(jnp.logaddexp(0.0, z) - y * z)


def least_squares(w, X, y):
    r = X @ w - y
    return 0.5 * jnp.sum(r * r)


@contextlib.contextmanager
def no_compute():
    """Inside, computing a dask graph fails, and afterwards the test fails if anything
    tried (even where inert caught the error and fell back to interpreting)."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise AssertionError("a dask graph was computed while building it")

    with dask.config.set(scheduler=refuse):
        yield
    assert not attempts, f"{len(attempts)} computations"


def _data(n=2000, d=5, chunk=500, seed=0):
    rng = np.random.default_rng(seed)
    Xn = rng.standard_normal((n, d))
    yn = (rng.random(n) < 0.5).astype(np.float64)
    wn = 0.1 * rng.standard_normal(d)
    return wn, Xn, yn, da.from_array(Xn, chunks=(chunk, d)), da.from_array(yn, chunks=chunk)


@pytest.mark.parametrize("loss", [logistic_loss, least_squares])
@pytest.mark.parametrize("transform", [lambda f: f, inert.jit], ids=["eager", "jit"])
def test_grad_is_a_lazy_dask_graph_equal_to_numpy(loss, transform):
    wn, Xn, yn, X, y = _data()
    with no_compute():
        g = transform(inert.grad(loss))(wn, X, y)
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(scheduler="sync"), inert.grad(loss)(wn, Xn, yn),
                               rtol=1e-10)


def test_vjp_jvp_vmap_return_dask_arrays_without_computing():
    wn, Xn, yn, X, y = _data()
    with no_compute():
        out, pullback = inert.vjp(lambda w, X: logistic_loss(w, X, y), wn, X)
        ct_w, ct_X = pullback(1.0)
        primal, tangent = inert.jvp(lambda w: logistic_loss(w, X, y), (wn,), (wn,))
        batched = inert.vmap(lambda w: least_squares(w, X, y))(np.stack([wn, 2 * wn]))
    for value in (out, ct_w, ct_X, primal, tangent, batched):
        assert isinstance(value, da.Array)
    _, pullback_w = inert.vjp(lambda w: logistic_loss(w, X, y), wn)
    computed = [r for r in pullback_w.linear.residuals if np.ndim(r) and r is not wn
                and getattr(r, "name", None) not in (X.name, y.name)]
    assert computed and all(isinstance(r, da.Array) for r in computed)  # held lazily
    f = lambda w: logistic_loss(w, Xn, yn)
    np.testing.assert_allclose(ct_w.compute(), inert.grad(f)(wn), rtol=1e-10)
    np.testing.assert_allclose(tangent.compute(), inert.jvp(f, (wn,), (wn,))[1], rtol=1e-10)
    np.testing.assert_allclose(batched.compute(), [least_squares(v, Xn, yn) for v in
                                                   (wn, 2 * wn)], rtol=1e-10)


def _chunk_shaped_results(array, chunk_shape) -> set[str]:
    """The names of the graph's tasks whose result has the shape `chunk_shape`."""
    names = set()

    def record(key, result, dsk, state, worker_id):
        if np.shape(result) == chunk_shape:
            names.add((key[0] if isinstance(key, tuple) else key).split("-")[0])

    with Callback(posttask=record):
        array.compute(scheduler="sync")
    return names


def test_inactive_design_matrix_has_no_derivative_in_the_graph():
    """Running grad with respect to w computes nothing of a chunk of X's shape but X's
    chunks themselves: no tangent or cotangent of X; asking for X's cotangent too
    computes one per chunk."""
    wn, Xn, yn, X, y = _data()
    chunk = X.chunksize
    x_tasks = {X.name.split("-")[0]}  # dask may also fuse X's loads into their readers
    assert _chunk_shaped_results(inert.grad(logistic_loss)(wn, X, y), chunk) <= x_tasks
    ct_X = inert.grad(logistic_loss, argnums=1)(wn, X, y)
    assert _chunk_shaped_results(ct_X, chunk) - x_tasks


def test_reductions_over_chunks_are_tree_reductions():
    wn, Xn, yn, X, y = _data(n=4000, chunk=250)
    layers = inert.grad(least_squares)(wn, X, y).__dask_graph__().layers
    assert any(name.startswith("sum-aggregate") for name in layers), list(layers)


# ---------------------------------------------------------------------------------
# On a real cluster


WORKER_MEMORY = 200e6


@pytest.fixture(scope="module")
def client():
    """2 worker processes on loopback, each limited to WORKER_MEMORY; always closed."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1",
                                       memory_limit=WORKER_MEMORY)
    client = distributed.Client(cluster, timeout="30s")
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def hand_written_least_squares_gradient(w, X, y):
    return X.T @ (X @ w - y)


@pytest.mark.parametrize("loss", [logistic_loss, least_squares])
def test_gradients_on_a_cluster_equal_numpy(client, loss):
    X = da.random.RandomState(1).standard_normal((100_000, 20), chunks=(25_000, 20))
    y = (X[:, 1] > 0).astype(np.float64)
    wn = np.linspace(-0.2, 0.2, 20)
    Xn, yn = client.compute([X, y], sync=True)
    g = client.compute(inert.grad(loss)(wn, X, y)).result(timeout=30)
    np.testing.assert_allclose(g, inert.grad(loss)(wn, Xn, yn), rtol=1e-9)


def test_data_larger_than_worker_memory_streams_chunks(client):
    """A design matrix of 1.2 times a worker's memory limit, generated chunk by chunk on
    the workers: inert's gradient streams the chunks (a worker over its limit would be
    killed) and equals the hand-written dask gradient."""
    d, chunk = 50, 25_000
    n = int(1.2 * WORKER_MEMORY / (8 * d)) // chunk * chunk
    rows = da.arange(n, chunks=chunk, dtype=np.float64)[:, None]  # cheap to generate
    X = da.cos(rows * np.linspace(0.1, 1.0, d))
    y = X[:, 0] + 0.5
    w = np.linspace(-0.1, 0.1, d)
    assert X.nbytes > WORKER_MEMORY
    g, want = client.compute([inert.grad(least_squares)(w, X, y),
                              hand_written_least_squares_gradient(w, X, y)])
    np.testing.assert_allclose(g.result(timeout=60), want.result(timeout=60), rtol=1e-9)


def test_gradient_survives_a_worker_killed_mid_computation(client):
    """A worker process dies while the graph runs; its nanny restarts it and dask
    recomputes the lost chunks."""
    wn, Xn, yn, X, y = _data(n=20_000, d=20, chunk=2_000)
    slow = X.map_blocks(_slowly, dtype=X.dtype)  # keeps the computation running
    future = client.compute(inert.grad(logistic_loss)(wn, slow, y))
    time.sleep(0.3)
    victim = sorted(client.scheduler_info()["workers"])[0]
    client.run(_exit_soon, workers=[victim])  # its nanny then starts a new worker
    g = future.result(timeout=60)
    np.testing.assert_allclose(g, inert.grad(logistic_loss)(wn, Xn, yn), rtol=1e-9)


def _exit_soon():
    """Kill this worker process just after replying (os._exit skips all cleanup)."""
    threading.Timer(0.05, os._exit, (1,)).start()


def _slowly(block):
    time.sleep(0.1)
    return block
