"""The numpy computation behind `conv_general_dilated`'s impl: a grouped, strided,
dilated, padded correlation of canonical operands, one matmul per group and batch
element, in one of two ways, whichever moves less memory:

* im2col: gather the input's patches under every window position (a copy that
  runs along the input's last axis in its innermost loop, over window positions or
  window elements, whichever are more), and multiply them with the kernel. Cheap
  when the kernel has at least as many output as input features.
* kn2row: multiply the whole input with every kernel element first, then add the
  products up, each shifted to the window positions it reaches (padding is where a
  shift reaches nothing, so the input is never padded). Cheap when the kernel has
  fewer output features, as the input cotangent of a transposed convolution does.

A large window (a long filter, a kernel's cotangent over a large image) is
computed by FFTs instead, when their estimated cost is lower: the products of the
transforms summed over input features, transformed back, at the strided positions.
Only for real floating-point operands, whose rounding error this changes to that of
an FFT (relative to the largest output, not to each).

Both produce (batch groups, batch, feature groups, group features, *spatial), whose
order makes the canonical output (batch, features, *spatial) a view.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.fft

from .geometry import dilate_and_pad, dilated_size, window_view, windowed_shape


class Layout(NamedTuple):
    """How the operands split into groups, and the window geometry."""

    groups: int
    batch_groups: int
    group_batch: int  # batch elements per batch group
    in_features: int  # per feature group
    group_out: int  # output features per group
    kernel: tuple
    out_spatial: tuple
    strides: tuple
    rhs_dilation: tuple


def correlate(x, w, strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups):
    """x (N, C, *S) correlated with w (O, I, *K): (N / batch_groups, O, *S_out)."""
    n, kernel = x.ndim - 2, w.shape[2:]
    (batch, _), (out_features, in_features) = x.shape[:2], w.shape[:2]
    padded = [lo + dilated_size(s, d) + hi for s, d, (lo, hi) in
              zip(x.shape[2:], lhs_dilation, padding)]
    out_spatial = windowed_shape(padded, kernel, strides, ((0, 0),) * n, (1,) * n,
                                 rhs_dilation)
    group_batch = batch // batch_groups
    if 0 in out_spatial or 0 in x.shape[:2] or 0 in kernel:
        return np.zeros((group_batch, out_features, *out_spatial), x.dtype)
    layout = Layout(groups, batch_groups, group_batch, in_features,
                    out_features // (groups * batch_groups), kernel, out_spatial, strides,
                    rhs_dilation)
    patch_elements = batch * x.shape[1] * math.prod(kernel) * math.prod(out_spatial)
    product_elements = group_batch * out_features * math.prod(kernel) * math.prod(padded)
    if _fft_is_cheaper(x.dtype, layout, padded, min(patch_elements, product_elements)):
        out = _by_fft(dilate_and_pad(x, 0, 2, lhs_dilation, padding), w, layout)
    elif patch_elements <= product_elements:
        out = _by_patches(dilate_and_pad(x, 0, 2, lhs_dilation, padding), w, layout)
    else:
        dilated = dilate_and_pad(x, 0, 2, lhs_dilation, ((0, 0),) * n)
        out = _by_shifted_products(dilated, w, layout, [lo for lo, _ in padding])
    out = out.reshape(batch_groups, group_batch, out_features // batch_groups, *out_spatial)
    return np.swapaxes(out, 0, 1).reshape(group_batch, out_features, *out_spatial)


def _grouped(x, g: Layout):
    """x (N, C, *S) as (batch groups, batch, feature groups, features, *S), a view."""
    return x.reshape(g.batch_groups, g.group_batch, g.groups, g.in_features, *x.shape[2:])


def _grouped_kernel(w, g: Layout):
    """w (O, I, *K) as (batch groups, 1, feature groups, group features, I * K)."""
    return w.reshape(g.batch_groups, 1, g.groups, g.group_out, -1)


def _by_patches(x, w, g: Layout):
    n = len(g.kernel)
    windows = _grouped(window_view(x, 2, g.kernel, g.strides, g.rhs_dilation), g)
    spatial, window = range(4, 4 + n), range(4 + n, 4 + 2 * n)
    kernel = _grouped_kernel(w, g)
    patch_size, positions = kernel.shape[-1], math.prod(g.out_spatial)
    if g.out_spatial[-1] >= g.kernel[-1]:  # (..., I * K, positions): positions innermost
        patches = windows.transpose(0, 1, 2, 3, *window, *spatial).reshape(
            *windows.shape[:3], patch_size, positions)
        return np.matmul(kernel, patches)
    patches = windows.transpose(0, 1, 2, *spatial, 3, *window).reshape(
        *windows.shape[:3], positions, patch_size)  # window elements innermost
    return np.swapaxes(np.matmul(patches, np.swapaxes(kernel, -1, -2)), -1, -2)


def _by_shifted_products(x, w, g: Layout, low):
    """`low` is the padding in front: a kernel element's shift reaches the input
    element `p * stride + k * dilation - low` from window position p, if any."""
    spatial = x.shape[2:]
    grouped = _grouped(x, g).reshape(g.batch_groups, g.group_batch, g.groups, g.in_features,
                                     math.prod(spatial))
    kernel = _grouped_kernel(w, g).reshape(g.batch_groups, 1, g.groups, g.group_out,
                                           g.in_features, math.prod(g.kernel))
    kernel = np.swapaxes(kernel, -1, -2).reshape(g.batch_groups, 1, g.groups, -1,
                                                 g.in_features)
    products = np.matmul(kernel, grouped).reshape(
        g.batch_groups, g.group_batch, g.groups, g.group_out, *g.kernel, *spatial)
    out = np.zeros((g.batch_groups, g.group_batch, g.groups, g.group_out, *g.out_spatial),
                   x.dtype)
    whole = (slice(None),) * 4
    for offset in np.ndindex(*g.kernel):
        reach = [_reach(k * d - lo, s, m, size) for k, d, lo, s, m, size in
                 zip(offset, g.rhs_dilation, low, g.strides, g.out_spatial, spatial)]
        if all(r is not None for r in reach):
            target = out[(*whole, *(r[0] for r in reach))]
            target += products[(*whole, *offset, *(r[1] for r in reach))]
    return out.reshape(*out.shape[:4], -1)


def _reach(shift: int, stride: int, positions: int, size: int):
    """The window positions p whose element `p * stride + shift` is inside an axis
    of `size`, and those elements, as two slices (None if there are none)."""
    first = -(shift // stride) if shift < 0 else 0
    last = min(positions, (size - 1 - shift) // stride + 1) if size - 1 - shift >= 0 else 0
    if last <= first:
        return None
    return (slice(first, last),
            slice(first * stride + shift, (last - 1) * stride + shift + 1, stride))


def _fft_is_cheaper(dtype, g: Layout, padded, temporary: int) -> bool:
    """Multiply-adds of the direct ways against the FFTs' (transforms of the input,
    the kernel and the output, plus their products), for real floats only. The FFTs'
    estimate is optimistic (their constant is larger, their memory access worse), so
    they must be four times cheaper, unless the direct way's `temporary` array of
    patches or products is too big to hold."""
    if dtype.kind != "f":
        return False
    span = [dilated_size(k, d) for k, d in zip(g.kernel, g.rhs_dilation)]
    size = math.prod(scipy.fft.next_fast_len(p, real=True) for p in padded)
    all_groups = g.groups * g.batch_groups
    direct = (all_groups * g.group_batch * g.group_out * g.in_features
              * math.prod(g.kernel) * math.prod(g.out_spatial))
    signals = all_groups * (g.group_batch * g.in_features + g.group_out * g.in_features
                            + g.group_batch * g.group_out)
    fft = 3 * size * math.log2(size + 1) * signals + 2 * size * all_groups * g.group_batch \
        * g.group_out * g.in_features
    big = temporary > 2**25  # the patches or products would not fit in a cache, or memory
    return math.prod(span) > 8 and (4 * fft < direct or big and fft < direct)


def _by_fft(x, w, g: Layout):
    """The correlation of each input feature with the kernel's is a convolution with
    the kernel reversed; the window at position p ends at p * stride + span - 1 of
    the full convolution."""
    n = len(g.kernel)
    axes = tuple(range(-n, 0))
    kernel = dilate_and_pad(np.flip(w, axes), 0, 2, g.rhs_dilation, ((0, 0),) * n)
    spans = kernel.shape[2:]
    shape = [scipy.fft.next_fast_len(s + k - 1, real=True) for s, k in zip(x.shape[2:], spans)]
    x_hat = scipy.fft.rfftn(_grouped(x, g), shape, axes=axes)  # (B, nb, G, I, *F)
    w_hat = scipy.fft.rfftn(kernel, shape, axes=axes).reshape(
        g.batch_groups, 1, g.groups, g.group_out, g.in_features, *x_hat.shape[-n:])
    out_hat = np.einsum("bngi...,bzgoi...->bngo...", x_hat, w_hat, optimize=True)
    full = scipy.fft.irfftn(out_hat, shape, axes=axes)
    out = full[(Ellipsis, *(slice(k - 1, k - 1 + (m - 1) * s + 1, s) for k, m, s in
                            zip(spans, g.out_spatial, g.strides)))]
    return out.astype(x.dtype, copy=False).reshape(*out.shape[:4], -1)
