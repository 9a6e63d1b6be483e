"""numpy's `convolve` and `correlate`, and the N-d `full`/`same`/`valid` convolution
that `inert.scipy.signal` builds on: each is one `conv_general_dilated` with a batch
and a feature axis of one, so both operands are differentiable (the kernel's
derivative is the transposed convolution's other half).

The modes as scipy.signal defines them: `full` has every overlap
(`s1 + s2 - 1` along each axis), `same` the centre of it with the shape of the first
input, `valid` only the positions where one input covers
the other (the smaller inside the larger, which may be either one).
"""

from __future__ import annotations

from typing import Any

from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives.conv.convolution import conv_general_dilated
from ...primitives.shape import structural as st
from ._array import Array
from ._arrays import conj_if_complex, promote, shape_error

MODES = ("full", "same", "valid")


def _padding(mode: str, s2: int, centre_high: bool) -> tuple[int, int]:
    if mode == "full":
        return s2 - 1, s2 - 1
    if mode == "same":
        start = s2 // 2 if centre_high else (s2 - 1) // 2
        return s2 - 1 - start, start
    return 0, 0


def correlate_nd(name: str, in1, in2, mode: str, flip: bool, centre_high: bool = False):
    """`in1` correlated with `in2` (convolved, with `flip`) over every axis. For an
    even `in2`, `same` starts `(s2 - 1) // 2` into `full`, or with `centre_high` (as
    scipy's correlate2d) `s2 // 2`."""
    if mode not in MODES:
        raise shape_error(f"{name}: mode must be one of {MODES}, not {mode!r}")
    in1, in2 = promote(in1, in2)
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    if len(s1) != len(s2):
        raise shape_error(f"{name}: in1 {s1} and in2 {s2} must have the same rank")
    if 0 in s1 or 0 in s2:
        raise shape_error(f"{name}: inputs {s1} and {s2} must not be empty")
    if mode == "valid" and not all(a >= b for a, b in zip(s1, s2)):
        if not all(b >= a for a, b in zip(s1, s2)):
            raise shape_error(f"{name}: in 'valid' mode one input must be at least as large "
                              f"as the other along every axis, not {s1} and {s2}")
        swapped = correlate_nd(name, in2, in1, mode, flip, centre_high)
        return swapped if flip else st.rev(swapped, range(len(s1)))
    axes = range(len(s1))
    kernel = st.rev(in2, axes) if flip else in2
    out = conv_general_dilated(
        st.reshape(in1, (1, 1, *s1)), st.reshape(kernel, (1, 1, *s2)), (1,) * len(s1),
        [_padding(mode, b, centre_high) for b in s2])
    return st.reshape(out, get_aval(out).shape[2:])


def _vectors(name: str, a, v):
    a, v = promote(a, v)
    if get_aval(a).ndim != 1 or get_aval(v).ndim != 1:
        raise shape_error(f"{name}: a {get_aval(a).shape} and v {get_aval(v).shape} must be "
                          f"1-d")
    return a, v


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: Any = None,
             preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.convolve: the discrete convolution of two 1-d arrays; `same` has the
    length of the longer one (convolution commutes, so it goes first). `precision`
    and `preferred_element_type` are jax.numpy's, accepted and unused."""
    a, v = _vectors("convolve", a, v)
    if get_aval(v).shape[0] > get_aval(a).shape[0]:
        a, v = v, a
    return correlate_nd("convolve", a, v, mode, flip=True)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.correlate: `c[k] = sum_n a[n + k] * v[n]`. With `v` the longer one numpy
    correlates the other way round and reverses, as done here."""
    a, v = _vectors("correlate", a, v)
    v = conj_if_complex(v)  # numpy conjugates the second operand
    if get_aval(v).shape[0] > get_aval(a).shape[0]:
        return st.rev(correlate_nd("correlate", v, a, mode, flip=False), (0,))
    return correlate_nd("correlate", a, v, mode, flip=False)
