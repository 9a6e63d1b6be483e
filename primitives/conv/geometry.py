"""Window geometry shared by convolutions and windowed reductions.

Both slide a window over an operand that may be *dilated* (`base`/`lhs` dilation puts
`d - 1` holes between neighbours) and padded (`(low, high)` per axis; negative values
crop), with a window that may itself be dilated (`rhs`/`window` dilation) and moved
by `strides`. These helpers compute sizes, resolve the padding names `'SAME'`,
`'SAME_LOWER'` and `'VALID'`, the padding of the transposed window operation, and, on
numpy values, the padded operand and the strided view of its windows (no copy).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...core.errors import ShapeError
from ...core.trace import user_source_info
from ..shape.slicing import pad_impl


def dilated_size(n: int, dilation: int) -> int:
    """Elements of an axis of `n` once `dilation - 1` holes sit between neighbours."""
    return 0 if n == 0 else (n - 1) * dilation + 1


def window_count(size: int, span: int, stride: int) -> int:
    """How many windows of `span` fit, `stride` apart, in an axis of `size`."""
    return max(0, (size - span) // stride + 1)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    strides: Sequence[int], padding: str,
                    name: str = "padtype_to_pads") -> tuple:
    """`(low, high)` per axis for a padding name, as lax computes it: `'SAME'` keeps
    `ceil(n / stride)` outputs, the odd element of padding at the high end
    (`'SAME_LOWER'`: at the low end); `'VALID'` pads nothing."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ShapeError(f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                         f"(low, high) pairs, not {padding!r}").with_source(user_source_info())
    pads = []
    for n, w, s in zip(in_shape, window_shape, strides):
        total = max((-(-n // s) - 1) * s + w - n, 0)
        small = total // 2
        pads.append((small, total - small) if kind == "SAME" else (total - small, small))
    return tuple(pads)


def explicit_padding(name: str, padding) -> tuple:
    """Padding pairs as a tuple of `(low, high)` ints (the primitive's abstract eval
    checks there is one per windowed axis)."""
    try:
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ShapeError(f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or "
                         f"(low, high) pairs, not {padding!r}").with_source(
                             user_source_info()) from None


def check_positive(name: str, what: str, values, n: int) -> None:
    if len(values) != n or any(v < 1 for v in values):
        raise ShapeError(f"{name}: {what} {tuple(values)} must be {n} positive integers")


def windowed_shape(in_shape, window_shape, strides, padding, base_dilation,
                   window_dilation) -> tuple[int, ...]:
    """The number of windows along each axis."""
    return tuple(window_count(lo + dilated_size(n, bd) + hi, dilated_size(w, wd), s)
                 for n, w, s, (lo, hi), bd, wd in zip(in_shape, window_shape, strides, padding,
                                                      base_dilation, window_dilation))


def transpose_padding(in_shape, window_shape, strides, out_shape, padding, base_dilation,
                      window_dilation) -> tuple:
    """The padding of the cotangent, dilated by `strides`, such that sliding the
    (reversed) window over it, `base_dilation` apart, lands once on every input
    element: the window's reach minus the forward low padding in front, and behind
    whatever makes the result as long as the dilated input."""
    pads = []
    for n, w, s, m, (lo, _), bd, wd in zip(in_shape, window_shape, strides, out_shape,
                                           padding, base_dilation, window_dilation):
        span = dilated_size(w, wd)
        before = span - lo - 1
        pads.append((before, dilated_size(n, bd) + span - 1 - dilated_size(m, s) - before))
    return tuple(pads)


def kernel_transpose_padding(in_shape, window_shape, strides, out_shape, padding,
                             base_dilation, window_dilation) -> tuple:
    """The padding of the input when the roles of window and output swap (a kernel's
    cotangent): the forward low padding in front, and behind what makes exactly one
    window per kernel element fit."""
    pads = []
    for n, w, s, m, (lo, _), bd, wd in zip(in_shape, window_shape, strides, out_shape,
                                           padding, base_dilation, window_dilation):
        span = dilated_size(w, wd)
        pads.append((lo, dilated_size(m, s) - dilated_size(n, bd) + span - lo - 1))
    return tuple(pads)


# ---------------------------------------------------------------------------------
# On numpy values


def dilate_and_pad(x, fill, first: int, dilation, padding):
    """`x` with its axes from `first` on dilated (holes of `fill`) and padded."""
    config = [(0, 0, 0)] * first + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, dilation)]
    if all(c == (0, 0, 0) for c in config):
        return np.asarray(x)
    return pad_impl(np.asarray(x), np.asarray(fill, np.asarray(x).dtype),
                    padding_config=tuple(config))


def window_view(x, first: int, window_shape, strides, window_dilation, writeable=False):
    """The windows of `x` over its axes from `first` on, as a strided view: the
    axes of `x` before `first`, then one per window position, then one per window
    element. No copy."""
    n = len(window_shape)
    spans = [dilated_size(w, d) for w, d in zip(window_shape, window_dilation)]
    axes = tuple(range(first, first + n))
    view = sliding_window_view(x, spans, axis=axes, writeable=writeable)
    return view[(slice(None),) * first + tuple(slice(None, None, s) for s in strides)
                + tuple(slice(None, None, d) for d in window_dilation)]
