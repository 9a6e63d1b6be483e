"""Train an MLP classifier on three interleaved spirals, JAX-style, on inert.

Weights come from `inert.nn.initializers` with keys from `inert.random`, the network
uses `inert.nn`, and the whole training step (loss, gradient, Adam update) is one
`inert.jit`-ted function of the optimizer state. Run it:

    python examples/mlp_classifier.py [--steps 300] [--points 200]
"""

import argparse

import inert
import inert.numpy as jnp
from inert import nn, random
from inert.example_libraries import optimizers
from inert.nn import initializers

CLASSES = 3


def spirals(key, points_per_class: int):
    """Points on three spiral arms with a little noise, and their one-hot labels."""
    radius = jnp.tile(jnp.linspace(0.1, 1.0, points_per_class), CLASSES)
    arm = jnp.repeat(jnp.arange(CLASSES), points_per_class)
    angle = 4.0 * radius + arm * (2 * jnp.pi / CLASSES)
    angle = angle + 0.2 * random.normal(key, angle.shape)
    x = jnp.stack([radius * jnp.sin(angle), radius * jnp.cos(angle)], axis=1)
    return x, nn.one_hot(arm, CLASSES)


def init_params(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [(initializers.glorot_normal()(k, (m, n)), jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def log_probabilities(params, x):
    for w, b in params[:-1]:
        x = nn.relu(x @ w + b)
    w, b = params[-1]
    return nn.log_softmax(x @ w + b)


def loss(params, x, y):
    """Mean cross-entropy."""
    return -jnp.mean(jnp.sum(log_probabilities(params, x) * y, axis=1))


def accuracy(params, x, y):
    return jnp.mean(jnp.argmax(log_probabilities(params, x), axis=1) == jnp.argmax(y, axis=1))


def train(steps: int, points_per_class: int, seed: int = 0):
    data_key, init_key = random.split(random.PRNGKey(seed))
    x, y = spirals(data_key, points_per_class)
    opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(
        0.02, steps, 0.1))

    @inert.jit
    def step(i, opt_state, x, y):
        value, grads = inert.value_and_grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, grads, opt_state), value

    opt_state = opt_init(init_params(init_key, [2, 64, 64, CLASSES]))
    every = max(1, steps // 10)
    for i in range(steps):
        opt_state, value = step(i, opt_state, x, y)
        if i % every == 0 or i == steps - 1:
            print(f"step {i:5d}  loss {float(value):.4f}")
    params = get_params(opt_state)
    print(f"train accuracy {float(accuracy(params, x, y)):.3f}")
    return params


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--points", type=int, default=200, help="points per class")
    args = parser.parse_args()
    train(args.steps, args.points)
