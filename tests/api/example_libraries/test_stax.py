"""stax: every layer's init shape matches its apply shape; layer values against numpy;
a small CNN's gradients against finite differences; the combinators; keys."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from harness import check_jvp, check_vjp

import inert
import inert.numpy as inp
from inert import random
from inert.example_libraries import stax

LAYERS = {
    "Dense": (stax.Dense(5), (3, 4)),
    "Conv_same_strided": (stax.Conv(3, (3, 2), (2, 1), "SAME"), (2, 7, 6, 2)),
    "Conv_valid": (stax.Conv(4, (2, 2)), (2, 5, 5, 3)),
    "GeneralConv_nchw": (stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 3)), (2, 2, 6, 5)),
    "GeneralConv_1d": (stax.GeneralConv(("NHC", "HIO", "NHC"), 2, (3,), padding="SAME"),
                       (2, 7, 3)),
    "Conv1DTranspose": (stax.Conv1DTranspose(2, (3,), (2,)), (2, 5, 3)),
    "ConvTranspose_same": (stax.ConvTranspose(3, (3, 3), (2, 2), "SAME"), (2, 4, 4, 2)),
    "ConvTranspose_valid": (stax.ConvTranspose(2, (2, 3), (2, 1)), (1, 3, 4, 2)),
    "MaxPool": (stax.MaxPool((2, 2), (2, 2)), (2, 6, 5, 3)),
    "SumPool_same": (stax.SumPool((3, 3), (1, 2), "SAME"), (2, 5, 6, 2)),
    "AvgPool_nchw": (stax.AvgPool((2, 2), spec="NCHW"), (2, 3, 5, 4)),
    "BatchNorm": (stax.BatchNorm(), (4, 3, 3, 2)),
    "Flatten": (stax.Flatten, (2, 3, 4)),
    "serial": (stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(2)), (3, 5)),
    "parallel_fan_in_sum": (stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3),
                                                                      stax.Identity),
                                        stax.FanInSum), (2, 3)),
    "fan_in_concat": (stax.serial(stax.FanOut(3), stax.FanInConcat(axis=1)), (2, 3, 2)),
    "shape_dependent": (stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2)), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_init_shape_matches_apply_shape(name, rng):
    (init_fun, apply_fun), shape = LAYERS[name]
    out_shape, params = init_fun(1, shape)
    out = apply_fun(params, rng.standard_normal(shape))
    assert tuple(out_shape) == np.shape(out)


def test_dense_and_conv_values(rng):
    x = rng.standard_normal((2, 5, 6, 3))
    _, (W, b) = stax.Dense(4)[0](0, (2, 3))
    np.testing.assert_allclose(stax.Dense(4)[1]((W, b), x[0, 0]), x[0, 0] @ W + b, rtol=1e-12)
    init_fun, apply_fun = stax.Conv(4, (2, 3))
    _, (W, b) = init_fun(0, x.shape)
    assert W.shape == (2, 3, 3, 4) and b.shape == (1, 1, 1, 4)
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(1, 2))
    want = np.einsum("nhwcij,ijco->nhwo", windows, W) + b
    np.testing.assert_allclose(apply_fun((W, b), x), want, rtol=1e-12)


def test_avg_pool_counts_only_input_elements(rng):
    x = rng.standard_normal((1, 5, 5, 1))
    _, apply_fun = stax.AvgPool((3, 3), (2, 2), "SAME")
    out = apply_fun((), x)
    padded = np.pad(x[0, :, :, 0], 1, constant_values=np.nan)
    want = [[np.nanmean(padded[i:i + 3, j:j + 3]) for j in range(0, 5, 2)]
            for i in range(0, 5, 2)]
    np.testing.assert_allclose(out[0, :, :, 0], want, rtol=1e-12)


def test_batch_norm_standardises(rng):
    x = 3 + 2 * rng.standard_normal((8, 4, 4, 3))
    init_fun, apply_fun = stax.BatchNorm()
    _, params = init_fun(0, x.shape)
    out = apply_fun(params, x)
    np.testing.assert_allclose(out.mean((0, 1, 2)), 0, atol=1e-12)
    np.testing.assert_allclose(out.var((0, 1, 2)), 1, rtol=1e-4)


@pytest.mark.parametrize("layer, reference", [
    (stax.Relu, lambda x: np.maximum(x, 0)),
    (stax.LeakyRelu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    (stax.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    (stax.Selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 *
                                                        np.expm1(x))),
    (stax.Gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
    (stax.Softplus, lambda x: np.logaddexp(x, 0)),
    (stax.Sigmoid, scipy.special.expit),
    (stax.Tanh, np.tanh),
    (stax.Exp, np.exp),
    (stax.Softmax, lambda x: scipy.special.softmax(x, axis=-1)),
    (stax.LogSoftmax, lambda x: scipy.special.log_softmax(x, axis=-1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_elementwise_layers(layer, reference, rng):
    x = 3 * rng.standard_normal((4, 5))
    init_fun, apply_fun = layer
    assert init_fun(0, x.shape) == (x.shape, ())
    np.testing.assert_allclose(apply_fun((), x), reference(x), rtol=1e-12, atol=1e-12)
    check_jvp(lambda x: apply_fun((), x), (x,), rng)


def _cnn():
    return stax.serial(stax.Conv(3, (3, 3), padding="SAME"), stax.Relu,
                       stax.MaxPool((2, 2), (2, 2)), stax.Conv(4, (2, 2)), stax.Elu,
                       stax.AvgPool((2, 2)), stax.Flatten, stax.Dense(3), stax.LogSoftmax)


def test_cnn_gradients_match_finite_differences(rng):
    init_fun, apply_fun = _cnn()
    x = rng.standard_normal((2, 6, 6, 2))
    _, params = init_fun(3, x.shape)
    labels = np.eye(3)[[0, 2]]
    loss = lambda params, x: -inp.mean(inp.sum(apply_fun(params, x) * labels, -1))  # noqa: E731
    check_jvp(loss, (params, x), rng)
    check_vjp(loss, (params, x), rng)
    jitted = inert.jit(inert.grad(loss))(params, x)
    for a, b in zip(inert.tree_util.tree_leaves(jitted),
                    inert.tree_util.tree_leaves(inert.grad(loss)(params, x))):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_per_example_gradients_by_vmap(rng):
    init_fun, apply_fun = _cnn()
    xs = rng.standard_normal((3, 1, 6, 6, 2))
    _, params = init_fun(0, xs.shape[1:])
    loss = lambda params, x: inp.sum(apply_fun(params, x))  # noqa: E731
    per_example = inert.vmap(inert.grad(loss), (None, 0))(params, xs)
    for i, x in enumerate(xs):
        for a, b in zip(inert.tree_util.tree_leaves(per_example),
                        inert.tree_util.tree_leaves(inert.grad(loss)(params, x))):
            np.testing.assert_allclose(a[i], b, rtol=1e-10, atol=1e-12)


def test_keys_make_parameters_reproducible():
    init_fun, _ = stax.serial(stax.Dense(3), stax.Dense(2))
    leaves = lambda key: inert.tree_util.tree_leaves(init_fun(key, (1, 4))[1])  # noqa: E731
    for a, b in zip(leaves(np.array([0, 7], np.uint32)), leaves(7)):
        np.testing.assert_array_equal(a, b)
    first, second = leaves(7)[0], leaves(8)[0]
    assert not np.allclose(first, second)
    w1, _, w2, _ = leaves(7)
    assert w1.shape == (4, 3) and w2.shape == (3, 2)


def test_frozen_backbone_keeps_only_the_features(rng):
    """Training only the head of a stax CNN: the backward pass keeps the features
    the head reads and the error, nothing of the frozen convolution or pooling."""
    init_fun, apply_fun = stax.serial(stax.Conv(4, (3, 3)), stax.Relu,
                                      stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(3))
    x, y = rng.standard_normal((5, 8, 8, 2)), rng.standard_normal((5, 3))
    _, params = init_fun(0, x.shape)
    loss = lambda head, body: 0.5 * inp.sum((apply_fun([*body, head], x) - y) ** 2)  # noqa: E731
    kept = inert.saved_residuals(loss, params[-1], inert.Inactive(params[:-1]))
    features = 5 * 3 * 3 * 4
    assert sorted(r.nbytes for r in kept) == sorted([8 * features, 8 * y.size])


def test_dropout_keeps_the_rate_scaled_and_is_the_identity_outside_training():


    init, apply = stax.Dropout(0.8)
    shape, params = init(random.PRNGKey(0), (4000,))
    x = np.ones(4000)
    y = apply(params, x, rng=random.PRNGKey(1))
    kept = np.asarray(y) != 0
    assert shape == (4000,) and abs(kept.mean() - 0.8) < 0.03
    np.testing.assert_allclose(np.asarray(y)[kept], 1 / 0.8)
    np.testing.assert_array_equal(apply(params, x, rng=random.PRNGKey(1)), y)  # same key
    np.testing.assert_array_equal(stax.Dropout(0.8, mode="test")[1](params, x), x)
    with pytest.raises(ValueError, match="key"):
        apply(params, x)
    g = inert.grad(lambda x: inert.numpy.sum(apply(params, x, rng=random.PRNGKey(1))))(x)
    np.testing.assert_allclose(g, np.where(kept, 1 / 0.8, 0.0))


def test_stax_reexports_jax_nns_activations_and_logsoftmax():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])
    want = x - np.log(np.exp(x).sum(-1, keepdims=True))
    np.testing.assert_allclose(stax.logsoftmax(x), want, rtol=1e-12)
    assert stax.logsoftmax is stax.log_softmax is inert.nn.log_softmax
    assert stax.relu is inert.nn.relu and stax.Relu[1]((), x)[1, 1] == 0.0
