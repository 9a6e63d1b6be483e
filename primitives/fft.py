"""The one fast Fourier transform primitive, `fft` (jax.lax.fft): every
`inert.numpy.fft` function is this plus padding, cropping, axis moves and scaling.

`fft(x, fft_type, fft_lengths)` transforms the trailing `len(fft_lengths)` axes:

* `FFT` and `IFFT`: complex to complex (IFFT with numpy's 1/n);
* `RFFT`: real to complex, the last axis keeps its `n // 2 + 1` non-negative
  frequencies;
* `IRFFT`: that half spectrum back to `n` real values (the imaginary parts of the
  frequencies that must be real are ignored, as numpy does).

Values are scipy.fft's (pocketfft, single precision kept); none is computed here. The
primitive is linear, so its jvp is itself. Its transposes (for the pairing
`Re(sum(u * v))`, with no conjugation: docs/design.md, "Complex numbers"):

* the DFT matrix is symmetric, so FFT and IFFT are their own transposes;
* RFFT is "embed as complex, FFT, keep the first n//2 + 1": its transpose is those
  steps' transposes in reverse, `real(FFT(ct zero-padded to n))`;
* IRFFT: `y_j = (1/n) sum_k w_k Re(X_k e^{2 pi i jk/n})`, where `w_k` is 2 for the
  frequencies standing for a conjugate pair and 1 for the zero (and, n even, the
  Nyquist) frequency; so its transpose is `conj(w * RFFT(ct)) / n`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.fft

from ..core.avals import ShapedArray, canonical
from ..core.errors import DTypeError, ShapeError
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..core.typing import ArrayLike
from ..interpreters.ad import deflinear
from ..interpreters.batching import batch_rules
from ..interpreters.transpose import transpose_rules
from .elementwise import conj, mul, real
from .elementwise.complex_parts import complex_dtype, real_dtype
from .shape.slicing import pad
from .shape.structural import moveaxis


class FftType(enum.IntEnum):
    """Which transform; the values are jax.lax.FftType's."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:  # how a jaxpr prints the parameter
        return self.name


fft_p = Primitive("fft")


def fft(x: ArrayLike, fft_type: Any, fft_lengths: Sequence[int]) -> np.ndarray:
    """The `fft_type` transform of the trailing `len(fft_lengths)` axes of `x`."""
    fft_type = FftType[fft_type] if isinstance(fft_type, str) else FftType(fft_type)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(map(int, fft_lengths)))


_SCIPY = {FftType.FFT: scipy.fft.fftn, FftType.IFFT: scipy.fft.ifftn,
          FftType.RFFT: scipy.fft.rfftn, FftType.IRFFT: scipy.fft.irfftn}


def fft_impl(x, *, fft_type, fft_lengths):
    axes = tuple(range(-len(fft_lengths), 0))
    out = _SCIPY[fft_type](np.asarray(x), s=fft_lengths, axes=axes)
    return out.astype(fft_abstract_eval(get_aval(x), fft_type=fft_type,
                                        fft_lengths=fft_lengths).dtype, copy=False)


impl_rules[fft_p] = fft_impl


def fft_abstract_eval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= x.ndim:
        raise ShapeError(f"fft: {k} fft_lengths for an operand {x.str_short()}")
    real_in = fft_type == FftType.RFFT
    if real_in != (x.dtype.kind == "f") or x.dtype.kind not in "fc":
        raise DTypeError(f"fft: {fft_type.name} takes a {'real' if real_in else 'complex'} "
                         f"floating operand, got {x.str_short()}")
    want = list(fft_lengths)
    if fft_type == FftType.IRFFT:
        want[-1] = fft_lengths[-1] // 2 + 1
    if list(x.shape[-k:]) != want:
        raise ShapeError(f"fft: {fft_type.name} of lengths {fft_lengths} needs trailing axes "
                         f"{tuple(want)}, got {x.str_short()}")
    shape, dtype = list(x.shape), x.dtype
    if fft_type == FftType.RFFT:
        shape[-1], dtype = fft_lengths[-1] // 2 + 1, complex_dtype(x.dtype)
    elif fft_type == FftType.IRFFT:
        shape[-1], dtype = fft_lengths[-1], real_dtype(x.dtype)
    return canonical(ShapedArray(tuple(shape), dtype))


abstract_eval_rules[fft_p] = fft_abstract_eval
deflinear(fft_p)


def fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft(ct, fft_type, fft_lengths)]


def _zero_of(x):
    return get_aval(x).dtype.type(0)


def _rfft_transpose(ct, fft_lengths):
    """real(FFT(ct padded with zeros to the full last length))."""
    n, half = fft_lengths[-1], get_aval(ct).shape[-1]
    padding = [(0, 0, 0)] * (get_aval(ct).ndim - 1) + [(0, n - half, 0)]
    return real(fft(pad(ct, _zero_of(ct), padding), FftType.FFT, fft_lengths))


def _irfft_transpose(ct, fft_lengths):
    """conj(w * RFFT(ct)) / prod(lengths), w = 2 for the frequencies that stand for a
    conjugate pair (all but the zero one and, for an even length, the last)."""
    spectrum = fft(ct, FftType.RFFT, fft_lengths)
    n = fft_lengths[-1]
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights /= math.prod(fft_lengths)
    return conj(mul(spectrum, weights.astype(real_dtype(get_aval(ct).dtype))))


transpose_rules[fft_p] = fft_transpose


def fft_batch(vals, dims, *, fft_type, fft_lengths):
    """The batch axis goes first, out of the transformed trailing axes."""
    (x,), (dim,) = vals, dims
    x = moveaxis(x, dim, 0)
    return [fft(x, fft_type, fft_lengths)], [0]


batch_rules[fft_p] = fft_batch
