"""CNN: a small convolutional network, Conv-ReLU-MaxPool-Conv-ReLU-MaxPool-Dense on a
batch of 28x28 images (NCHW), squared error against targets; every weight active,
images and targets inactive.

Its analytic minimum (docs/benchmarks.md): the images (by reference, for the first
kernel's cotangent), one boolean per ReLU input, one int8 window index per pooled
element, each later layer's input (a pooled output, for its weight's cotangent)
and weights (for its input's cotangent), and `out - Y`. Besides the hand-written
numpy gradient it is timed against PyTorch's CPU autograd when torch is installed.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import inert
import inert.numpy as inp
from inert import lax

from .peers import torch_gradient

F64 = 8


def _pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _relu(z):
    return inp.where(z > 0, z, 0.0)


def cnn_loss(W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803
    h = _pool(_relu(lax.conv(X, W1, (1, 1), "VALID") + b1[:, None, None]))
    h = _pool(_relu(lax.conv(h, W2, (1, 1), "VALID") + b2[:, None, None]))
    out = inp.reshape(h, (h.shape[0], -1)) @ W3 + b3
    return 0.5 * inp.sum((out - Y) ** 2) / X.shape[0]


def cnn_args(rng, batch: int, side: int = 28, c1: int = 32, c2: int = 32, classes: int = 10):
    s2 = ((side - 2) // 2 - 2) // 2
    return (rng.standard_normal((c1, 1, 3, 3)) / 3, np.zeros(c1),
            rng.standard_normal((c2, c1, 3, 3)) / np.sqrt(9 * c1), np.zeros(c2),
            rng.standard_normal((c2 * s2 * s2, classes)) / np.sqrt(c2 * s2 * s2),
            np.zeros(classes), rng.standard_normal((batch, 1, side, side)),
            rng.standard_normal((batch, classes)))


def cnn_minimum_bytes(W1, b1, W2, b2, W3, b3, X, Y) -> int:  # noqa: N803
    n, side = X.shape[0], X.shape[2]
    c1, c2 = W1.shape[0], W2.shape[0]
    a1 = side - 2
    p1 = a1 // 2
    a2 = p1 - 2
    p2 = a2 // 2
    masks = n * (c1 * a1 * a1 + c2 * a2 * a2)
    indices = n * (c1 * p1 * p1 + c2 * p2 * p2)
    kept = X.size + n * c1 * p1 * p1 + W2.size + n * c2 * p2 * p2 + W3.size + Y.size
    return F64 * kept + masks + indices


# ---------------------------------------------------------------------------------
# By hand, in numpy


def _conv(x, w):
    windows = sliding_window_view(x, w.shape[2:], axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w, optimize=True)


def _conv_grads(x, w, g):
    windows = sliding_window_view(x, w.shape[2:], axis=(2, 3))
    dw = np.einsum("nchwij,nohw->ocij", windows, g, optimize=True)
    kh, kw = w.shape[2:]
    padded = np.pad(g, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))
    dx = np.einsum("nohwij,ocij->nchw", sliding_window_view(padded, (kh, kw), axis=(2, 3)),
                   w[:, :, ::-1, ::-1], optimize=True)
    return dx, dw


def _pool_forward(x):
    """2x2 max pooling (odd edges dropped) and each window's first argmax."""
    n, c, h, w = x.shape
    blocks = x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2)
    blocks = blocks.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    index = blocks.argmax(-1)
    return np.take_along_axis(blocks, index[..., None], -1)[..., 0], index


def _pool_backward(g, index, shape):
    n, c, h, w = shape
    blocks = np.zeros((*g.shape, 4))
    np.put_along_axis(blocks, index[..., None], g[..., None], -1)
    blocks = blocks.reshape(*g.shape, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    out = np.zeros(shape)
    out[:, :, :h // 2 * 2, :w // 2 * 2] = blocks.reshape(n, c, h // 2 * 2, w // 2 * 2)
    return out


def cnn_numpy(W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803
    z1 = _conv(X, W1) + b1[:, None, None]
    p1, i1 = _pool_forward(np.maximum(z1, 0.0))
    z2 = _conv(p1, W2) + b2[:, None, None]
    p2, i2 = _pool_forward(np.maximum(z2, 0.0))
    flat = p2.reshape(len(X), -1)
    diff = flat @ W3 + b3 - Y
    d_out = diff / len(X)
    d_p2 = (d_out @ W3.T).reshape(p2.shape)
    d_z2 = _pool_backward(d_p2, i2, z2.shape) * (z2 > 0)
    d_p1, d_W2 = _conv_grads(p1, W2, d_z2)
    d_z1 = _pool_backward(d_p1, i1, z1.shape) * (z1 > 0)
    d_W1 = _conv_grads(X, W1, d_z1)[1]
    grads = (d_W1, d_z1.sum((0, 2, 3)), d_W2, d_z2.sum((0, 2, 3)), flat.T @ d_out,
             d_out.sum(0))
    return 0.5 * np.sum(diff ** 2) / len(X), grads


# ---------------------------------------------------------------------------------
# PyTorch, where installed


def _torch_conv_sum(torch, x, w):
    return torch.nn.functional.conv2d(x, w).sum()


def torch_loss(torch, W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803 — the workload's names
    """The same loss in torch (timed by `peers.torch_gradient`)."""
    F = torch.nn.functional  # noqa: N806
    h = F.max_pool2d(F.relu(F.conv2d(X, W1, b1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, W2, b2)), 2)
    out = h.reshape(len(X), -1) @ W3 + b3
    return 0.5 * ((out - Y) ** 2).sum() / len(X)


def conv_layer_timing(median_times, repeat: int) -> str | None:
    """Forward and backward of one 64x1x28x28 by 32x1x3x3 convolution against
    PyTorch's (one thread), or None without torch."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 1, 28, 28)), rng.standard_normal((32, 1, 3, 3))
    grad = inert.grad(lambda x, w: inp.sum(lax.conv(x, w, (1, 1), "VALID")), argnums=(0, 1))
    torch_run = torch_gradient(_torch_conv_sum, (0, 1))((x, w))
    if torch_run is None:
        return None
    t_inert, t_torch = median_times([lambda: grad(x, w), torch_run], repeat)
    return (f"conv 64x1x28x28 by 32x1x3x3, forward and backward: {t_inert / t_torch:.2f}x "
            f"PyTorch ({t_inert * 1e3:.1f} ms; target ≤ 3x)")
