"""The integration test of the whole system: realistic numerical functions written as
one would with jax.numpy. Each must trace to a well-typed jaxpr, evaluate (eagerly
and staged) to what plain numpy computes, and have correct derivatives: jvp against
finite differences and vjp by the dot-product test (`check_grads`).

Most functions are written once against a namespace `xp`: with `xp=inert.numpy` they
are the code under test, with `xp=numpy` they are the reference. Functions using
what numpy lacks (`x.at[...]`) have a numpy reference written out.
"""

import functools

import attrs
import numpy as np
import pytest
from harness import assert_allclose, check_grads

import inert
import inert.numpy as inp
from inert.core.check import check_jaxpr
from inert.tree_util import tree_leaves

R = np.random.default_rng(42)


def normal(*shape, scale=1.0):
    return scale * R.standard_normal(shape)


# ---------------------------------------------------------------------------------
# Functions written against a numpy-like namespace `xp`


def softmax(x, xp):
    z = x - xp.max(x, axis=-1, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=-1, keepdims=True)


def logsumexp(x, xp, axis=-1):
    m = xp.max(x, axis=axis, keepdims=True)
    return xp.squeeze(m, axis) + xp.log(xp.sum(xp.exp(x - m), axis=axis))


def mlp_layer(w, b, x, xp):
    return xp.tanh(x @ w + b)


def mlp_loss(params, x, y, xp):
    (w1, b1), (w2, b2) = params
    h = xp.maximum(x @ w1 + b1, 0.0)
    out = xp.dot(h, w2) + b2
    return xp.mean((out - y) ** 2)


def rosenbrock(x, xp):
    return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def extended_rosenbrock(x, xp):
    odd, even = x[::2], x[1::2]
    return xp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


def gaussian_log_likelihood(mu, log_sigma, data, xp):
    sigma = xp.exp(log_sigma)
    n = data.shape[0]
    z = (data - mu) / sigma
    return -0.5 * xp.sum(z ** 2, axis=0) - n * log_sigma - 0.5 * n * xp.log(2 * xp.pi)


def cross_entropy(logits, labels, xp):
    logp = logits - logsumexp(logits, xp, axis=1)[:, None]
    return -xp.mean(logp[xp.arange(logits.shape[0]), labels])


def cross_entropy_take_along_axis(logits, labels, xp):
    logp = logits - logsumexp(logits, xp, axis=1)[:, xp.newaxis]
    return -xp.mean(xp.take_along_axis(logp, labels[:, None], axis=1))


def rbf_kernel(x, lengthscale, xp):
    sq = xp.sum(x ** 2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * x @ x.T
    return xp.exp(-0.5 * d2 / lengthscale ** 2)


def pairwise_rbf(x, y, xp):
    diff = x[:, None, :] - y[None, :, :]
    return xp.exp(-xp.sum(diff * diff, axis=-1))


def attention(q, k, v, xp):
    scores = q @ xp.swapaxes(k, -1, -2) / xp.sqrt(q.shape[-1])
    return softmax(scores, xp) @ v


def causal_attention(q, k, v, xp):
    scores = xp.einsum("qd,kd->qk", q, k) / np.sqrt(q.shape[-1])
    mask = xp.tril(xp.ones((q.shape[0], k.shape[0]), dtype=bool))
    scores = xp.where(mask, scores, -1e9)
    return xp.einsum("qk,kd->qd", softmax(scores, xp), v)


def layer_norm(x, gamma, beta, xp, eps=1e-5):
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + eps) * gamma + beta


def polynomial(c, x, xp):
    return c[0] + c[1] * x + c[2] * x ** 2 + c[3] * x ** 3 + xp.polyval(c, x)


def polynomial_features(x, xp):
    powers = x[:, None] ** xp.arange(1, 4)
    return xp.sum(xp.concatenate([powers, xp.stack([xp.sin(x), x ** -1], axis=1)], axis=1))


def cumulative(x, w, xp):
    running = xp.cumsum(x * w)
    growth = xp.cumprod(1.0 + 0.1 * xp.tanh(x))
    return xp.sum(running * growth) + xp.cumsum(x[::-1])[-1]


def bilinear(x, a, y, xp):
    return xp.einsum("i,ij,j->", x, a, y) + xp.sum(xp.einsum("bi,ij,bj->b", a, a, a))


def huber(residual, xp, delta=1.0):
    r = xp.abs(residual)
    return xp.sum(xp.where(r < delta, 0.5 * r ** 2, delta * (r - 0.5 * delta)))


def logistic_regression(w, x, y, xp):
    z = x @ w
    loss = xp.mean(xp.logaddexp(0.0, z) - y * z)
    return loss + 0.01 * xp.linalg.norm(w) ** 2


def laplacian_energy(u, xp):
    lap = xp.roll(u, 1, axis=0) + xp.roll(u, -1, axis=0) + xp.roll(u, 1, axis=1) \
        + xp.roll(u, -1, axis=1) - 4 * u
    return 0.5 * xp.sum(lap ** 2) + xp.linalg.norm(u, ord=1)


def rnn(w, u, xs, xp):
    h = xp.zeros(w.shape[0])
    for x_t in xs:
        h = xp.tanh(w @ h + u @ x_t)
    return xp.sum(h ** 2)


def gmm_log_likelihood(means, log_weights, x, xp):
    log_w = log_weights - logsumexp(log_weights, xp, axis=0)
    sq = (x[:, None] - means[None, :]) ** 2
    return xp.sum(logsumexp(log_w - 0.5 * sq, xp, axis=1))


def cosine_similarity(a, b, xp):
    na = xp.linalg.norm(a, axis=1, keepdims=True)
    nb = xp.linalg.norm(b, axis=1, keepdims=True)
    return xp.sum((a / na) * (b / nb), axis=1)


def batch_stats(x, xp):
    centred = x - x.mean(axis=0)
    cov = centred.T @ centred / (x.shape[0] - 1)
    return xp.trace(cov) + x.std(axis=0, ddof=1).sum() + xp.max(xp.abs(x)) * x.min()


def reshapes_and_joins(x, xp):
    blocks = xp.split(x.reshape(4, 6), 2, axis=1)
    y = xp.vstack([blocks[0], blocks[1][::-1]]).T
    return xp.sum(xp.tile(y, (1, 2)) * xp.repeat(xp.flip(y, 0), 2, axis=1)) + \
        xp.moveaxis(x.reshape(2, 3, 4), 0, -1)[1, 2, 0]


# ---------------------------------------------------------------------------------
# Functions with index updates, and their numpy references


def tridiagonal_quadratic_form(d, off, x):
    n = d.shape[0]
    i = np.arange(n)
    a = inp.zeros((n, n)).at[i, i].set(d)
    a = a.at[i[:-1], i[1:]].set(off).at[i[1:], i[:-1]].add(off)
    return x @ a @ x


def tridiagonal_quadratic_form_np(d, off, x):
    a = np.diag(d) + np.diag(off, 1) + np.diag(off, -1)
    return x @ a @ x


def segment_sums(values, weights):
    labels = np.array([0, 2, 1, 2, 0, 2])
    totals = inp.zeros(3).at[labels].add(values * weights)
    scaled = totals.at[1:].multiply(totals[:2])
    return inp.sum(scaled ** 2) + values.at[-1].get()


def segment_sums_np(values, weights):
    labels = np.array([0, 2, 1, 2, 0, 2])
    totals = np.zeros(3)
    np.add.at(totals, labels, values * weights)
    totals[1:] *= totals[:2].copy()
    return np.sum(totals ** 2) + values[-1]


# ---------------------------------------------------------------------------------


@attrs.frozen
class Case:
    name: str
    f: object  # the code under test
    reference: object  # plain numpy
    args: tuple
    eager: bool = True  # False: uses `.at`, which only traced values have


def generic(name, fn, *args, **kwargs):
    return Case(name, functools.partial(fn, xp=inp, **kwargs),
                functools.partial(fn, xp=np, **kwargs), args)


LABELS = np.array([2, 0, 3, 3, 1])
CASES = [
    generic("softmax", softmax, normal(3, 5)),
    generic("logsumexp", logsumexp, normal(4, 6)),
    generic("mlp_layer", mlp_layer, normal(3, 4), normal(4), normal(5, 3)),
    generic("mlp_loss", mlp_loss, ((normal(3, 8), normal(8)), (normal(8, 2), normal(2))),
            normal(6, 3), normal(6, 2)),
    generic("rosenbrock", rosenbrock, normal(6, scale=0.5)),
    generic("extended_rosenbrock", extended_rosenbrock, normal(8, scale=0.5)),
    generic("gaussian_log_likelihood", gaussian_log_likelihood, normal(3), normal(3, scale=0.1),
            normal(10, 3)),
    generic("cross_entropy", cross_entropy, normal(5, 4), LABELS),
    generic("cross_entropy_take_along_axis", cross_entropy_take_along_axis, normal(5, 4),
            LABELS),
    generic("rbf_kernel", rbf_kernel, normal(5, 3), np.float64(1.3)),
    generic("pairwise_rbf", pairwise_rbf, normal(4, 2), normal(3, 2)),
    generic("attention", attention, normal(2, 4, 8), normal(2, 5, 8), normal(2, 5, 3)),
    generic("causal_attention", causal_attention, normal(4, 8), normal(4, 8), normal(4, 3)),
    generic("layer_norm", layer_norm, normal(3, 6), normal(6), normal(6)),
    generic("polynomial", polynomial, normal(4), normal(7)),
    generic("polynomial_features", polynomial_features, R.uniform(0.5, 2.0, 5)),
    generic("cumulative", cumulative, normal(6), normal(6)),
    generic("bilinear", bilinear, normal(4), normal(4, 4), normal(4)),
    generic("huber", huber, normal(10, scale=2.0)),
    generic("logistic_regression", logistic_regression, normal(3), normal(8, 3),
            (R.uniform(size=8) > 0.5).astype(np.float64)),
    generic("laplacian_energy", laplacian_energy, normal(4, 5)),
    generic("rnn", rnn, normal(4, 4, scale=0.5), normal(4, 2), normal(5, 2)),
    generic("gmm_log_likelihood", gmm_log_likelihood, normal(3), normal(3), normal(7)),
    generic("cosine_similarity", cosine_similarity, normal(4, 3), normal(4, 3)),
    generic("batch_stats", batch_stats, normal(6, 3)),
    generic("reshapes_and_joins", reshapes_and_joins, normal(24)),
    Case("tridiagonal_quadratic_form", tridiagonal_quadratic_form,
         tridiagonal_quadratic_form_np, (normal(5), normal(4), normal(5)), eager=False),
    Case("segment_sums", segment_sums, segment_sums_np, (normal(6), normal(6)), eager=False),
]
SECOND_ORDER = {"softmax", "rosenbrock", "mlp_layer", "layer_norm", "cross_entropy",
                "attention", "tridiagonal_quadratic_form"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_traces_to_a_well_typed_jaxpr_with_numpys_value(case):
    closed = inert.make_jaxpr(case.f)(*case.args)
    check_jaxpr(closed)
    got = inert.eval_jaxpr(closed.jaxpr, closed.consts, tree_leaves(case.args))
    want = case.reference(*case.args)
    assert_allclose(got[0] if len(got) == 1 else got, want, rtol=1e-10, atol=1e-10)
    if case.eager:
        assert_allclose(case.f(*case.args), want, rtol=1e-10, atol=1e-10)
    assert_allclose(inert.jit(case.f)(*case.args), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_derivatives(case, rng):
    f = case.f if case.eager else inert.jit(case.f)
    order = 2 if case.name in SECOND_ORDER else 1
    check_grads(f, case.args, rng, order=order)


def test_grad_of_a_training_step_matches_finite_differences(rng):
    """A step of gradient descent, differentiated again (meta-learning style)."""
    x, y = normal(6, 3), normal(6, 2)
    params = ((normal(3, 8), normal(8)), (normal(8, 2), normal(2)))
    loss = functools.partial(mlp_loss, xp=inp)

    def after_one_step(params, x, y):
        grads = inert.grad(loss)(params, x, y)
        stepped = inert.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return loss(stepped, x, y)

    check_grads(after_one_step, (params, x, y), rng)
