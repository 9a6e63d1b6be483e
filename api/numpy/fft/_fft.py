"""numpy.fft's functions on the one `fft` primitive (primitives/fft.py): each resizes
the transformed axes to `n`/`s` (cropping, or padding with zeros, as numpy does),
moves them last, binds `fft` and scales for `norm`; the derivatives are the
primitive's. `hfft`/`ihfft` are `irfft`/`rfft` of the conjugate with the norm's
direction swapped, as numpy defines them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ....core.errors import DTypeError
from ....core.trace import get_aval
from ....core.typing import ArrayLike, DTypeLike
from ....primitives import elementwise as ew
from ....primitives.elementwise.complex_parts import real_dtype
from ....primitives.fft import FftType
from ....primitives.fft import fft as fft_primitive
from ....primitives.shape.slicing import pad, slice_in_dim
from ....primitives.shape.structural import transpose
from .._array import Array
from .._arrays import astype, conj_if_complex, operand
from .._shape import roll

_NORMS = ("backward", "ortho", "forward")
_INVERSE = {FftType.IFFT, FftType.IRFFT}


def _transform(a, s, axes, norm, fft_type: FftType, name: str):
    a = _as_input(operand(a), fft_type, name)
    shape = get_aval(a).shape
    axes = _axes(len(shape), s, axes, name)
    if s is None:
        s = [shape[ax] for ax in axes]
        if fft_type == FftType.IRFFT:
            s[-1] = 2 * (s[-1] - 1)
    s = [int(n) for n in s]
    if len(s) != len(axes) or any(n < 1 for n in s):
        raise ValueError(f"{name}: invalid lengths {s} for axes {axes}")
    input_lengths = list(s)
    if fft_type == FftType.IRFFT:
        input_lengths[-1] = s[-1] // 2 + 1
    for ax, n in zip(axes, input_lengths):
        a = _resized(a, ax, n)
    rest = [ax for ax in range(len(shape)) if ax not in axes]
    order = [*rest, *axes]
    out = fft_primitive(transpose(a, order), fft_type, s)
    out = transpose(out, np.argsort(order))
    return _scaled(out, math.prod(s), norm, fft_type in _INVERSE, name)


def _as_input(a, fft_type: FftType, name: str):
    dtype = get_aval(a).dtype
    if fft_type == FftType.RFFT:
        if dtype.kind == "c":
            raise DTypeError(f"{name}: takes a real input, got {dtype.name}")
        return a if dtype.kind == "f" else astype(a, np.float64)
    if dtype.kind == "c":
        return a
    return astype(a, np.complex64 if dtype == np.float32 else np.complex128)


def _axes(ndim: int, s, axes, name: str) -> list[int]:
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [int(ax) for ax in axes]
    if any(not -ndim <= ax < ndim for ax in axes):
        raise ValueError(f"{name}: axes {axes} out of range for {ndim} dimensions")
    axes = [ax % ndim for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axes {axes}")
    return axes


def _resized(a, axis: int, n: int):
    """Axis `axis` cropped or padded with zeros to length n."""
    aval = get_aval(a)
    have = aval.shape[axis]
    if n < have:
        return slice_in_dim(a, 0, n, axis=axis)
    if n > have:
        padding = [(0, 0, 0)] * aval.ndim
        padding[axis] = (0, n - have, 0)
        return pad(a, aval.dtype.type(0), padding)
    return a


def _scaled(out, size: int, norm, inverse: bool, name: str):
    """The primitive's scaling is numpy's "backward" (1/n on the inverse)."""
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'{name}: norm must be one of {_NORMS} or None, got {norm!r}')
    if norm == "backward":
        return out
    factor = math.sqrt(size) if norm == "ortho" else size
    scale = factor if inverse else 1 / factor
    return ew.mul(out, real_dtype(get_aval(out).dtype).type(scale))


def _swapped(norm):
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def _one(n, axis):
    return None if n is None else [n], [axis]


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    return _transform(a, *_one(n, axis), norm, FftType.FFT, "fft")


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    return _transform(a, *_one(n, axis), norm, FftType.IFFT, "ifft")


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    return _transform(a, *_one(n, axis), norm, FftType.RFFT, "rfft")


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    return _transform(a, *_one(n, axis), norm, FftType.IRFFT, "irfft")


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The real spectrum of a signal with Hermitian symmetry, given its first half."""
    return _transform(conj_if_complex(operand(a)), *_one(n, axis), _swapped(norm),
                      FftType.IRFFT, "hfft")


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    return conj_if_complex(_transform(a, *_one(n, axis), _swapped(norm), FftType.RFFT, "ihfft"))


def fftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.FFT, "fftn")


def ifftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.IFFT, "ifftn")


def rfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.RFFT, "rfftn")


def irfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.IRFFT, "irfftn")


def fft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = (-2, -1),
         norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.FFT, "fft2")


def ifft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = (-2, -1),
          norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.IFFT, "ifft2")


def rfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = (-2, -1),
          norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.RFFT, "rfft2")


def irfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = (-2, -1),
           norm: str | None = None) -> Array:
    return _transform(a, s, axes, norm, FftType.IRFFT, "irfft2")


def fftfreq(n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike | None = None) -> Array:
    """numpy's sample frequencies (constants: nothing to differentiate unless `d` is)."""
    freqs = np.fft.fftfreq(int(n), 1.0)
    return _per_spacing(freqs, d, dtype)


def rfftfreq(n: int, d: ArrayLike = 1.0, *, dtype: DTypeLike | None = None) -> Array:
    freqs = np.fft.rfftfreq(int(n), 1.0)
    return _per_spacing(freqs, d, dtype)


def _per_spacing(freqs, d, dtype):
    if isinstance(d, (int, float)):
        freqs = freqs / d
    else:
        freqs = ew.div(freqs, operand(d))
    return freqs if dtype is None else astype(freqs, dtype)


def fftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """The zero frequency moved to the middle: a roll by n // 2 along each axis."""
    return _shifted(x, axes, 1)


def ifftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    return _shifted(x, axes, -1)


def _shifted(x, axes, sign: int):
    x = operand(x)
    shape = get_aval(x).shape
    axes = range(len(shape)) if axes is None else (axes,) if isinstance(axes, int) else axes
    axes = tuple(int(ax) for ax in axes)
    return roll(x, tuple(sign * (shape[ax] // 2) for ax in axes), axes)
