"""`inert.numpy.fft`: numpy.fft's functions, on the one `fft` primitive (a package:
api/numpy holds at most 15 modules)."""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

import numpy as np

from .._array import return_arrays_from
from ._fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
    "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]
# Eager results are immutable Arrays, as inert.numpy's are (see api/numpy/_array).
return_arrays_from(globals(), __all__, like=np.fft)


def __dir__():
    return __all__
