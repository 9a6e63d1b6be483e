"""PyTorch versions of the interpreted-speed workloads, timed where torch is installed.

Each port computes the workload's loss with torch's eager autograd from the same
plain arguments; `torch_gradient(port, active)` turns it into the `torch_grad` of a
`Workload`: given the arguments, a function computing the loss and its gradient with
respect to the `active` ones (one thread), or None without torch.
"""

from __future__ import annotations

from typing import Callable


def torch_gradient(port: Callable, active: tuple[int, ...] = (0,)) -> Callable:
    def make(plain_args):
        try:
            import torch  # noqa: PLC0415 — optional, never a dependency of inert
        except ImportError:
            return None
        torch.set_num_threads(1)
        tensors = [torch.tensor(a, requires_grad=i in active) for i, a in enumerate(plain_args)]
        params = [tensors[i] for i in active]

        def run():
            return torch.autograd.grad(port(torch, *tensors), params)

        return run

    return make


def w1(torch, x, y):
    return (x * y).sum()


def mlp(torch, W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803 — the workload's names
    h1 = torch.tanh(X @ W1 + b1)
    h2 = torch.tanh(h1 @ W2 + b2)
    return 0.5 * ((h2 @ W3 + b3 - Y) ** 2).sum() / X.shape[0]


def rnn(torch, W, h0, xs):  # noqa: N803
    h = h0
    for x in xs:
        h = torch.tanh(W @ h + x)
    return h.sum()


def w5(torch, x):
    return (x * 2.0 + 1.0).sum()


def w6(torch, x):
    return torch.where(x > 0, torch.sqrt(x), 0.0).sum()


def w7(torch, x, n_ops=2000):
    for i in range(n_ops):
        x = torch.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
    return x


def rosenbrock(torch, x):
    a, b = x[::2], x[1::2]
    return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()


def w9(torch, x):
    with torch.no_grad():  # the aux output: computed, never differentiated
        torch.sin(x @ x.T).mean()
    return torch.tanh(x).sum()


def fft_power(torch, x, w):
    return (torch.fft.fft2(x * w).abs() ** 2).sum()
