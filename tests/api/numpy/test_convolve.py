"""numpy.convolve and numpy.correlate: values against numpy for every pair of short
lengths and every mode (either input the longer), derivatives in both inputs."""

import numpy as np
import pytest
from harness import check_jvp, check_vjp

import inert
import inert.numpy as inp
from inert.errors import ShapeError

LENGTHS = [(1, 1), (5, 1), (1, 4), (6, 3), (3, 6), (4, 4), (7, 2), (2, 5)]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", LENGTHS, ids=str)
def test_against_numpy(name, mode, lengths, rng):
    a, v = rng.standard_normal(lengths[0]), rng.standard_normal(lengths[1])
    f = lambda a, v: getattr(inp, name)(a, v, mode)  # noqa: E731
    np.testing.assert_allclose(f(a, v), getattr(np, name)(a, v, mode), rtol=1e-12, atol=1e-12)
    check_jvp(f, (a, v), rng)
    check_vjp(f, (a, v), rng)


def test_default_modes_and_dtypes(rng):
    a, v = rng.standard_normal(6).astype(np.float32), [1, 2, 3]
    assert inp.convolve(a, v).shape == (8,) and inp.correlate(a, v).shape == (4,)
    assert inp.convolve(a, np.float32([1, 2])).dtype == np.float32
    assert inp.convolve([1, 2, 3], [0, 1]).dtype == np.int64


def test_jit_vmap_and_jacobians(rng):
    a, v = rng.standard_normal(5), rng.standard_normal(3)
    np.testing.assert_allclose(inert.jit(inp.convolve)(a, v), np.convolve(a, v), rtol=1e-12)
    batch = rng.standard_normal((4, 5))
    np.testing.assert_allclose(inert.vmap(inp.correlate, (0, None))(batch, v),
                               np.stack([np.correlate(b, v) for b in batch]), rtol=1e-12)
    np.testing.assert_allclose(inert.jacfwd(inp.convolve, 1)(a, v),
                               inert.jacrev(inp.convolve, 1)(a, v), rtol=1e-12)


@pytest.mark.parametrize("args, message", [
    ((np.ones(3), np.ones((2, 2))), "must be 1-d"),
    ((np.ones(3), np.ones(2), "wide"), "mode must be one of"),
    ((np.ones(0), np.ones(2)), "must not be empty"),
])
def test_bad_inputs(args, message):
    with pytest.raises(ShapeError, match=message) as info:
        inp.convolve(*args)
    assert "test_convolve.py" in str(info.value)
