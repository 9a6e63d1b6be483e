import numpy as np
from harness import check_grads, check_staged

import inert
import inert.numpy as inp


def test_tanh_mul_sum_grads(rng):
    f = lambda x, y: inp.sum(inp.tanh(x) * y / 2.0 - inp.sin(x))  # noqa: E731
    args = (rng.standard_normal(4), rng.standard_normal(4))
    check_grads(f, args, rng, order=2)
    check_staged(f, args)


def test_grad_matches_closed_form():
    x = np.linspace(-1, 1, 5)
    g = inert.grad(lambda x: inp.sum(inp.exp(x) * 3.0))(x)
    np.testing.assert_allclose(g, 3 * np.exp(x))
