"""CuPy through the same backend path as Dask: a gradient of CuPy arrays is a CuPy
array equal to numpy's. Runs only where CuPy and a GPU are present."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp

cp = pytest.importorskip("cupy")


def test_grad_of_cupy_arrays_is_a_cupy_array_equal_to_numpy():
    try:
        cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("no GPU")
    rng = np.random.default_rng(0)
    Xn, yn, wn = rng.standard_normal((200, 5)), rng.random(200), rng.standard_normal(5)

    def loss(w, X, y):
        z = X @ w
        return jnp.sum(jnp.logaddexp(0.0, z) - y * z)

    g = inert.grad(loss)(cp.asarray(wn), cp.asarray(Xn), cp.asarray(yn))
    assert isinstance(g, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(g), inert.grad(loss)(wn, Xn, yn), rtol=1e-10)
