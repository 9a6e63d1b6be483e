"""inert.scipy.signal's convolutions against scipy.signal: 1-d to 3-d, every mode,
either input the larger, derivatives in both inputs; unsupported options raise."""

import numpy as np
import pytest
import scipy.signal
from harness import check_vjp

import inert
import inert.scipy.signal as isignal
from inert.errors import ShapeError

SHAPES = [((7,), (3,)), ((3,), (5,)), ((5, 4), (2, 3)), ((2, 3), (4, 5)), ((4, 5), (4, 5)),
          ((3, 4, 3), (2, 2, 3))]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_against_scipy(name, mode, shapes, rng):
    in1, in2 = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    f = lambda a, b: getattr(isignal, name)(a, b, mode)  # noqa: E731
    want = getattr(scipy.signal, name)(in1, in2, mode, method="direct")
    np.testing.assert_allclose(f(in1, in2), want, rtol=1e-12, atol=1e-12)
    check_vjp(f, (in1, in2), rng)
    if len(shapes[0]) == 2:
        f2 = getattr(isignal, name + "2d")
        np.testing.assert_allclose(f2(in1, in2, mode),
                                   getattr(scipy.signal, name + "2d")(in1, in2, mode),
                                   rtol=1e-12, atol=1e-12)


def test_namespace():
    assert inert.scipy.signal is isignal
    assert sorted(dir(isignal)) == ["convolve", "convolve2d", "correlate", "correlate2d"]


def test_unsupported_and_bad_inputs():
    with pytest.raises(NotImplementedError, match="convolve2d: only boundary='fill'"):
        isignal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ShapeError, match="correlate2d: inputs must be 2-d"):
        isignal.correlate2d(np.ones(3), np.ones(2))
    with pytest.raises(ShapeError, match="one input must be at least as large"):
        isignal.convolve(np.ones((2, 5)), np.ones((3, 3)), "valid")
    with pytest.raises(ShapeError, match="same rank"):
        isignal.convolve(np.ones((2, 5)), np.ones(3))
