"""`inert.scipy.signal`: scipy.signal's convolutions, N-d and 2-d, on inert values.

Each is one `conv_general_dilated` (see `inert.numpy`'s `correlate_nd`), so both
inputs are differentiable. `method` is accepted for scipy's signature; the
convolution is always computed directly. `convolve2d`/`correlate2d` support the
default zero-filled boundary only.
"""

from __future__ import annotations

from ...core.trace import get_aval
from ...core.typing import ArrayLike
from ..numpy._array import Array
from ..numpy._arrays import operand, shape_error
from ..numpy._convolve import correlate_nd


def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto") -> Array:
    """scipy.signal.convolve: the N-d convolution, modes full, same and valid."""
    return correlate_nd("convolve", in1, in2, mode, flip=True)


def correlate(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto") -> Array:
    """scipy.signal.correlate: `z[k] = sum_l in1[l + k - K] * in2[l]` (real inputs)."""
    return correlate_nd("correlate", in1, in2, mode, flip=False)


def _two_d(name: str, in1, in2, boundary: str, fillvalue) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is "
                                  f"supported, not {boundary!r} with {fillvalue!r}")
    for x in (in1, in2):
        if get_aval(operand(x)).ndim != 2:
            raise shape_error(f"{name}: inputs must be 2-d, not {get_aval(operand(x)).shape}")


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0) -> Array:
    """The 2-d convolution of `in1` with `in2`, as scipy.signal.convolve2d (`mode` full, same
    or valid); only `boundary='fill'` with `fillvalue=0` is supported, as in JAX."""
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return correlate_nd("convolve2d", in1, in2, mode, flip=True)


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0) -> Array:
    """The 2-d cross-correlation of `in1` with `in2`, as scipy.signal.correlate2d (`mode` full,
    same or valid); only `boundary='fill'` with `fillvalue=0` is supported, as in JAX."""
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    return correlate_nd("correlate2d", in1, in2, mode, flip=False, centre_high=True)


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d"]


def __dir__():
    return __all__
