"""The benchmark workloads of docs/benchmarks.md, each with its analytic minimum.

A workload builds its arguments at a given size, says which are active (the others
are passed `Inactive`), computes the analytic minimum of residual bytes by the rules
of docs/benchmarks.md, and has a hand-written numpy gradient to time against. Sizes are
parameters so the test suite can check the residual ratios on small instances.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np
import scipy.linalg

import inert
import inert.numpy as inp
import inert.scipy.linalg as isl
from inert import lax

from . import peers
from .cnn import cnn_args, cnn_loss, cnn_minimum_bytes, cnn_numpy, torch_loss
from .peers import torch_gradient

F64 = 8


@attrs.frozen
class Workload:
    key: str
    description: str
    f: Callable
    make_args: Callable[[int], tuple]  # scale -> arguments, with Inactive where inactive
    minimum_bytes: Callable[[tuple], int]
    numpy_grad: Callable | None  # plain numpy: arguments -> (value, gradient)
    has_aux: bool = False
    torch_grad: Callable | None = None  # plain arguments -> a torch gradient call, or None


def _unwrap(args):
    return tuple(a.value if isinstance(a, inert.Inactive) else a for a in args)


def active_argnums(args) -> tuple[int, ...]:
    """The positions of the arguments not wrapped in `Inactive`: what is differentiated."""
    return tuple(i for i, a in enumerate(args) if not isinstance(a, inert.Inactive))


# W1 ------------------------------------------------------------------------------
def w1(x, y):
    return inp.sum(x * y)


def w1_numpy(x, y):
    return np.sum(x * y), np.broadcast_to(1.0, x.shape) * y


# W2 ------------------------------------------------------------------------------
def mlp_loss(W1, b1, W2, b2, W3, b3, X, Y):
    h1 = inp.tanh(X @ W1 + b1)
    h2 = inp.tanh(h1 @ W2 + b2)
    out = h2 @ W3 + b3
    return 0.5 * inp.sum((out - Y) ** 2) / X.shape[0]


def mlp_args(rng, batch, width, classes):
    shapes = [(width, width), (width,), (width, width), (width,), (width, classes), (classes,)]
    params = [rng.standard_normal(s) / np.sqrt(s[0]) for s in shapes]
    return params + [rng.standard_normal((batch, width)), rng.standard_normal((batch, classes))]


def w2_numpy(W1, b1, W2, b2, W3, b3, X, Y):
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    diff = h2 @ W3 + b3 - Y
    batch = X.shape[0]
    return 0.5 * np.sum(diff ** 2) / batch, h2.T @ (diff / batch)


def w2_all_numpy(W1, b1, W2, b2, W3, b3, X, Y):
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    diff = h2 @ W3 + b3 - Y
    batch = X.shape[0]
    d_out = diff / batch
    d_z2 = (d_out @ W3.T) * (1 - h2 * h2)
    d_z1 = (d_z2 @ W2.T) * (1 - h1 * h1)
    grads = (X.T @ d_z1, d_z1.sum(0), h1.T @ d_z2, d_z2.sum(0), h2.T @ d_out, d_out.sum(0))
    return 0.5 * np.sum(diff ** 2) / batch, grads


# W3, W4 ------------------------------------------------------------------------
def rnn_loss(W, h0, xs):
    def step(h, x):
        h = inp.tanh(W @ h + x)
        return h, None

    return inp.sum(lax.scan(step, h0, xs)[0])


def rnn_numpy(W, h0, xs):
    """Forward keeping every state, then the backward loop by hand."""
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + x))
    dh, dW, dxs = np.ones_like(h0), np.zeros_like(W), np.empty_like(xs)
    for t in range(len(xs) - 1, -1, -1):
        dz = dh * (1.0 - hs[t + 1] * hs[t + 1])
        dxs[t] = dz
        dW += np.outer(dz, hs[t])
        dh = W.T @ dz
    return hs[-1].sum(), (dW, dh, dxs)


def rnn_args(rng, steps, hidden):
    return (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
            rng.standard_normal(hidden), rng.standard_normal((steps, hidden)))


# W5, W6 --------------------------------------------------------------------------
def w5(x):
    return inp.sum(x * 2.0 + 1.0)


def w5_numpy(x):
    return np.sum(x * 2.0 + 1.0), np.broadcast_to(1.0, x.shape) * 2.0


def w6(x):
    return inp.sum(inp.where(x > 0, inp.sqrt(x), 0.0))


def w6_args(rng, n):
    x = rng.uniform(0.1, 2.0, n)
    x[rng.permutation(n)[: n // 10]] = 0.0
    return (x,)


def w6_numpy(x):
    mask = x > 0
    s = np.sqrt(x)
    value = np.sum(np.where(mask, s, 0.0))
    with np.errstate(divide="ignore"):
        return value, np.where(mask, 0.5 / s, 0.0)


# W7 ------------------------------------------------------------------------------
def w7(x, n_ops=2000):
    for i in range(n_ops):
        x = inp.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
    return x


def w7_numpy(x, n_ops=2000):
    cosines = []
    for i in range(n_ops):
        if i % 3 == 0:
            cosines.append(np.cos(x))
            x = np.sin(x)
        elif i % 3 == 1:
            x = x * 0.999
        else:
            x = x + 0.001
    g = 1.0
    for i in reversed(range(n_ops)):
        if i % 3 == 0:
            g = g * cosines.pop()
        elif i % 3 == 1:
            g = g * 0.999
    return x, g


# W8 ------------------------------------------------------------------------------
def rosenbrock(x):
    a, b = x[::2], x[1::2]
    return inp.sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2)


def rosenbrock_hvp(x, v):
    return inert.jvp(inert.grad(rosenbrock), (x,), (v,))[1]


def rosenbrock_grad_numpy(x):
    a, b = x[::2], x[1::2]
    r, s = b - a * a, 1.0 - a
    g = np.empty_like(x)
    g[::2] = -400.0 * r * a - 2.0 * s
    g[1::2] = 200.0 * r
    return np.sum(100.0 * r * r + s * s), g


# W9 ------------------------------------------------------------------------------
def w9(x):
    return inp.sum(inp.tanh(x)), inp.mean(inp.sin(x @ x.T))


def w9_numpy(x):
    t = np.tanh(x)
    aux = np.mean(np.sin(x @ x.T))
    return (np.sum(t), aux), 1.0 - t * t


# W10 -----------------------------------------------------------------------------
def w10(x, A, b):  # noqa: N803 — the workload's names
    return inp.sum((A @ x + b) ** 2)


def w10_numpy(x, A, b):  # noqa: N803
    r = A @ x + b
    return np.sum(r * r), 2.0 * (A.T @ r)


# W11 -----------------------------------------------------------------------------
_LOG_2PI = float(np.log(2.0 * np.pi))


def gp_nlml(lengthscale, variance, noise, x, y):
    """The negative log marginal likelihood of a GP with a squared-exponential kernel:
    0.5 yᵀ K⁻¹ y + log|L| + n/2 log 2π, with K = L Lᵀ."""
    n = x.shape[0]
    sq = (x[:, None] - x[None, :]) ** 2
    k = variance * inp.exp(-0.5 * sq / lengthscale**2) + noise * inp.eye(n)
    chol = isl.cholesky(k, lower=True)
    z = isl.solve_triangular(chol, y, lower=True)
    return 0.5 * (z @ z) + inp.sum(inp.log(inp.diagonal(chol))) + 0.5 * n * _LOG_2PI


def gp_nlml_numpy(lengthscale, variance, noise, x, y):
    """By hand (Rasmussen and Williams, 5.9): dNLML/dθ = -½ tr((ααᵀ - K⁻¹) ∂K/∂θ)."""
    n = x.shape[0]
    sq = (x[:, None] - x[None, :]) ** 2
    e = np.exp(-0.5 * sq / lengthscale**2)
    chol = np.linalg.cholesky(variance * e + noise * np.eye(n))
    z = scipy.linalg.solve_triangular(chol, y, lower=True)
    alpha = scipy.linalg.solve_triangular(chol, z, lower=True, trans=1)
    value = 0.5 * (z @ z) + np.sum(np.log(np.diag(chol))) + 0.5 * n * _LOG_2PI
    w = np.outer(alpha, alpha) - scipy.linalg.cho_solve((chol, True), np.eye(n))
    we = w * e
    grads = (-0.5 * variance / lengthscale**3 * np.sum(we * sq), -0.5 * np.sum(we),
             -0.5 * np.trace(w))
    return value, grads


def gp_args(rng, n):
    x = np.sort(rng.uniform(0.0, 10.0, n))
    y = np.sin(x) + 0.1 * rng.standard_normal(n)
    return np.float64(1.3), np.float64(0.9), np.float64(0.1), inert.Inactive(x), inert.Inactive(y)


def gp_minimum(args):
    """The kernel's exponential and its Cholesky factor (n² each), z = L⁻¹y and L's
    diagonal (n each), x by reference (the squared distances are recomputed from it),
    and the two scalars the kernel's derivative multiplies by."""
    n = _size(_unwrap(args)[3])
    return F64 * (2 * n * n + 3 * n + 2)


# W12 -----------------------------------------------------------------------------
def w12(w, A, y):  # noqa: N803
    """The least-squares objective, whose minimiser `lstsq(A, y)` computes."""
    return inp.sum((A @ w - y) ** 2)


def w12_numpy(w, A, y):  # noqa: N803
    r = A @ w - y
    return np.sum(r * r), 2.0 * (A.T @ r)


# W13, W14: refs (mutable buffers) filled element by element --------------------
def naive_map_sin_cos_exp(x):
    """Mooncake's example: a buffer filled one slot per Python iteration."""
    y = inert.empty_ref(x.shape)
    for n in range(x.shape[0]):
        y[n] = inp.sin(inp.cos(inp.exp(x[n])))
    return inp.sum(inert.freeze(y))


def naive_map_numpy(x):
    e = np.exp(x)
    return np.sum(np.sin(np.cos(e))), -np.cos(np.cos(e)) * np.sin(e) * e


def ref_accumulator(W, xs):
    """An accumulator ref that a fori_loop adds `tanh(W @ x_n)` into at every step."""
    acc = inert.empty_ref(W.shape[0])

    def step(n, carry):
        acc[...] += inp.tanh(W @ xs[n])
        return carry

    lax.fori_loop(0, xs.shape[0], step, 0)
    return inp.sum(inert.freeze(acc))


def ref_accumulator_numpy(W, xs):
    t = np.tanh(xs @ W.T)
    return np.sum(t), (1.0 - t * t).T @ xs


# FFT: a spectral power loss -----------------------------------------------------
def fft_power(x, w):
    """The power of a windowed signal's 2-D spectrum: complex in the middle, real at
    both ends."""
    return inp.sum(inp.abs(inp.fft.fft2(x * w)) ** 2)


def fft_power_numpy(x, w):
    """By hand: the cotangent of the spectrum Y is 2 conj(Y) (JAX's convention), and
    the transpose of the DFT is the DFT (its matrix is symmetric): real(fft2(2 conj(Y)))
    is 2N·x·w (Parseval), but a hand-written gradient runs the transforms the program
    runs rather than rely on the identity."""
    spectrum = np.fft.fft2(x * w)
    value = np.sum(spectrum.real ** 2 + spectrum.imag ** 2)
    return value, np.real(np.fft.fft2(2.0 * np.conj(spectrum))) * w


def fft_minimum(args):
    """The window by reference (x's cotangent is scaled by it) and the complex
    spectrum (abs and the square together need 2 conj(Y), no more): 24 bytes an
    element."""
    x, w = _unwrap(args)
    return F64 * _size(w) + 2 * F64 * _size(x)


def _size(a) -> int:
    return np.asarray(a).size


def workloads(scale: float = 1.0, seed: int = 0) -> list[Workload]:
    """The workloads; `scale` shrinks the array sizes (1.0 is docs/benchmarks.md's)."""
    rng = np.random.default_rng(seed)
    n = max(10, int(10**6 * scale))
    batch, width = max(4, int(256 * scale)), max(4, int(512 * scale))
    inactive = inert.Inactive

    def mlp(active_all: bool):
        args = mlp_args(rng, batch, width, 10)
        if active_all:
            return (*args[:6], inactive(args[6]), inactive(args[7]))
        return (*(inactive(a) for a in args[:4]), args[4], inactive(args[5]),
                inactive(args[6]), inactive(args[7]))

    def mlp_min_w3(a):
        W1, b1, W2, b2, W3, b3, X, Y = _unwrap(a)
        return F64 * (X.shape[0] * W3.shape[0] + Y.size)  # h2 and out - Y

    def mlp_min_all(a):
        W1, b1, W2, b2, W3, b3, X, Y = _unwrap(a)
        hidden = X.shape[0] * W1.shape[1]
        return F64 * (X.size + 2 * hidden + W2.size + W3.size + Y.size)

    n_w9 = max(8, int(512 * np.sqrt(scale)))
    n_map = max(8, int(1000 * scale))
    steps, hidden = max(4, int(200 * scale)), max(4, int(128 * np.sqrt(scale)))
    n_w10, n_w11 = max(8, int(1024 * np.sqrt(scale))), max(8, int(512 * np.sqrt(scale)))
    m_w12, p_w12 = max(8, int(2048 * np.sqrt(scale))), max(4, int(512 * np.sqrt(scale)))
    n_fft = max(8, int(1024 * np.sqrt(scale)))

    def rnn(active_w: bool):
        W, h0, xs = rnn_args(rng, steps, hidden)
        return (W if active_w else inactive(W), h0, xs)
    return [
        Workload("W1", "sum(x*y), x active", w1,
                 lambda: (rng.standard_normal(n), inactive(rng.standard_normal(n))),
                 lambda a: F64 * _size(_unwrap(a)[1]), w1_numpy,
                 torch_grad=torch_gradient(peers.w1)),
        Workload("W2", "3-layer tanh MLP, W3 active", mlp_loss, lambda: mlp(False),
                 mlp_min_w3, w2_numpy, torch_grad=torch_gradient(peers.mlp, (4,))),
        Workload("W2-all", "3-layer tanh MLP, all weights active", mlp_loss,
                 lambda: mlp(True), mlp_min_all, w2_all_numpy,
                 torch_grad=torch_gradient(peers.mlp, tuple(range(6)))),
        Workload("W3", "tanh RNN by lax.scan, T=200, H=128, W inactive", rnn_loss,
                 lambda: rnn(False),
                 lambda a: F64 * (_size(a[2]) + _size(_unwrap(a)[0])), rnn_numpy,
                 torch_grad=torch_gradient(peers.rnn, (1, 2))),
        Workload("W4", "the same, W active", rnn_loss, lambda: rnn(True),
                 lambda a: F64 * (_size(a[2]) + _size(a[1]) + _size(a[0])), rnn_numpy,
                 torch_grad=torch_gradient(peers.rnn, (0, 1, 2))),
        Workload("W5", "sum(x*2+1)", w5, lambda: (rng.standard_normal(n),),
                 lambda a: 0, w5_numpy, torch_grad=torch_gradient(peers.w5)),
        Workload("W6", "sum(where(x>0, sqrt(x), 0)), 10% zeros", w6, lambda: w6_args(rng, n),
                 lambda a: 9 * _size(a[0]), w6_numpy, torch_grad=torch_gradient(peers.w6)),
        Workload("W7", "2000 chained scalar ops", w7, lambda: (np.float64(0.3),),
                 lambda a: F64 * len(range(0, 2000, 3)), w7_numpy,
                 torch_grad=torch_gradient(peers.w7)),
        Workload("W8", "extended Rosenbrock, n=1e4 (residuals of its grad)", rosenbrock,
                 lambda: (rng.standard_normal(max(4, int(10**4 * scale)) // 2 * 2),),
                 lambda a: F64 * 3 * (_size(a[0]) // 2), rosenbrock_grad_numpy,
                 torch_grad=torch_gradient(peers.rosenbrock)),
        Workload("W9", "tanh loss with a matmul aux output", w9,
                 lambda: (rng.standard_normal((n_w9, n_w9)),),
                 lambda a: F64 * _size(a[0]), w9_numpy, has_aux=True,
                 torch_grad=torch_gradient(peers.w9)),
        Workload("W10", "sum((A@x+b)**2), A 1024x1024 inactive", w10,
                 lambda: (rng.standard_normal(n_w10), inactive(rng.standard_normal(
                     (n_w10, n_w10)) / np.sqrt(n_w10)), inactive(rng.standard_normal(n_w10))),
                 lambda a: F64 * (_size(_unwrap(a)[1]) + _size(a[0])), w10_numpy),
        Workload("W11", "GP log marginal likelihood, 512 points, Cholesky", gp_nlml,
                 lambda: gp_args(rng, n_w11), gp_minimum, gp_nlml_numpy),
        Workload("W12", "least squares sum((A@w-y)**2), A 2048x512 inactive", w12,
                 lambda: (rng.standard_normal(p_w12), inactive(rng.standard_normal(
                     (m_w12, p_w12))), inactive(rng.standard_normal(m_w12))),
                 lambda a: F64 * (_size(_unwrap(a)[1]) + m_w12), w12_numpy),


        Workload("W13", "naive_map_sin_cos_exp: y[n] = sin(cos(exp(x[n]))), Python loop",
                 naive_map_sin_cos_exp, lambda: (rng.standard_normal(n_map),),
                 lambda a: F64 * 3 * _size(a[0]), naive_map_numpy),
        Workload("W14", "acc[...] += tanh(W @ x_n) in a fori_loop, W active", ref_accumulator,
                 lambda: (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
                          inactive(rng.standard_normal((steps, hidden)))),
                 lambda a: F64 * 2 * _size(_unwrap(a)[1]), ref_accumulator_numpy),
        Workload("CNN", "2x (conv 3x3, ReLU, 2x2 max pool), dense; 64 28x28 images",
                 cnn_loss, lambda: _with_inactive_data(cnn_args(rng, max(2, int(64 * scale)))),
                 lambda a: cnn_minimum_bytes(*_unwrap(a)), cnn_numpy,
                 torch_grad=torch_gradient(torch_loss, tuple(range(6)))),
        Workload("FFT", "sum(abs(fft2(x*w))**2), 1024x1024, w inactive", fft_power,
                 lambda: (rng.standard_normal((n_fft, n_fft)),
                          inactive(np.hanning(n_fft)[:, None] * np.hanning(n_fft))),
                 fft_minimum, fft_power_numpy, torch_grad=torch_gradient(peers.fft_power)),
    ]


def _with_inactive_data(args):
    """All weights active, the images and targets (the last two) inactive."""
    return (*args[:-2], *(inert.Inactive(a) for a in args[-2:]))
