"""Train a small convolutional network, built with stax, on synthetic images.

The images are noise with a bright bar, horizontal (class 0) or vertical (class 1);
the network is Conv-ReLU-MaxPool-Conv-ReLU-MaxPool-Dense-LogSoftmax, trained by
plain gradient descent on the cross-entropy for a few steps under `inert.jit`.

    python examples/cnn_stax.py
"""

from __future__ import annotations

import numpy as np

import inert
import inert.numpy as jnp
from inert.example_libraries import stax


def synthetic_images(rng, n: int, side: int = 12):
    """`n` NHWC images with a bar across the middle, and one-hot labels."""
    labels = rng.integers(0, 2, n)
    images = 0.3 * rng.standard_normal((n, side, side, 1))
    middle = slice(side // 2 - 1, side // 2 + 1)
    images[labels == 0, middle, :, 0] += 1.0
    images[labels == 1, :, middle, 0] += 1.0
    return images, np.eye(2)[labels]


def make_network():
    return stax.serial(
        stax.Conv(8, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.Conv(8, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.Flatten, stax.Dense(2), stax.LogSoftmax)


def train(steps: int = 20, learning_rate: float = 0.5, seed: int = 0):
    """Returns the loss before each step and the trained network's accuracy."""
    rng = np.random.default_rng(seed)
    images, labels = synthetic_images(rng, 64)
    init_fun, apply_fun = make_network()
    _, params = init_fun(seed, images.shape)

    def loss(params, images, labels):
        return -jnp.mean(jnp.sum(apply_fun(params, images) * labels, axis=-1))

    @inert.jit
    def step(params, images, labels):
        value, grads = inert.value_and_grad(loss)(params, images, labels)
        new = inert.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        return value, new

    losses = []
    for _ in range(steps):
        value, params = step(params, images, labels)
        losses.append(float(value))
    predictions = np.argmax(apply_fun(params, images), axis=-1)
    return losses, float(np.mean(predictions == np.argmax(labels, axis=-1)))


if __name__ == "__main__":
    losses, accuracy = train()
    for i, value in enumerate(losses):
        print(f"step {i:2d}  loss {value:.4f}")
    print(f"training accuracy {accuracy:.2f}")
