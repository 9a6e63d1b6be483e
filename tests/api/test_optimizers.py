"""inert.example_libraries.optimizers against hand-written numpy steps, eagerly and under
jit, over a pytree of parameters; the schedules against their formulas; and a jitted
step at compiled speed."""

import time

import numpy as np
import pytest

import inert
from inert.example_libraries import optimizers as opt


def numpy_steps(name, lr, x, grads):
    """The optimizer's update, written out in numpy for one array, over `grads`."""
    z = np.zeros_like(x)
    s1, s2 = z.copy(), z.copy()
    for i, g in enumerate(grads):
        if name == "sgd":
            x = x - lr * g
        elif name == "momentum":
            s1 = 0.9 * s1 + g
            x = x - lr * s1
        elif name == "nesterov":
            s1 = 0.9 * s1 + g
            x = x - lr * (0.9 * s1 + g)
        elif name == "adagrad":
            s1 = s1 + g * g
            s2 = 0.1 * g / np.sqrt(s1) + 0.9 * s2
            x = x - lr * s2
        elif name == "rmsprop":
            s1 = 0.9 * s1 + 0.1 * g * g
            x = x - lr * g / np.sqrt(s1 + 1e-8)
        elif name == "rmsprop_momentum":
            s1 = 0.9 * s1 + 0.1 * g * g
            s2 = 0.9 * s2 + lr * g / np.sqrt(s1 + 1e-8)
            x = x - s2
        elif name == "adam":
            s1 = 0.1 * g + 0.9 * s1
            s2 = 0.001 * g * g + 0.999 * s2
            m_hat, v_hat = s1 / (1 - 0.9 ** (i + 1)), s2 / (1 - 0.999 ** (i + 1))
            x = x - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        elif name == "adamax":
            s1 = 0.1 * g + 0.9 * s1
            s2 = np.maximum(0.999 * s2, np.abs(g))
            x = x - lr / (1 - 0.9 ** (i + 1)) * s1 / (s2 + 1e-8)
    return x


MAKERS = {
    "sgd": lambda lr: opt.sgd(lr), "momentum": lambda lr: opt.momentum(lr, 0.9),
    "nesterov": lambda lr: opt.nesterov(lr, 0.9), "adagrad": lambda lr: opt.adagrad(lr),
    "rmsprop": lambda lr: opt.rmsprop(lr), "rmsprop_momentum": lambda lr: opt.rmsprop_momentum(lr),
    "adam": lambda lr: opt.adam(lr), "adamax": lambda lr: opt.adamax(lr),
}


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("jitted", [False, True])
def test_steps_match_numpy_over_a_pytree(name, jitted, rng):
    lr = 0.05
    params = {"w": rng.standard_normal((3, 2)), "b": (rng.standard_normal(2), np.float64(0.5))}
    init, update, get_params = MAKERS[name](lr)
    leaves, tree = inert.tree_util.tree_flatten(params)
    grads = [[rng.standard_normal(np.shape(x)) for x in leaves] for _ in range(4)]
    step = inert.jit(update) if jitted else update
    state = init(params)
    for i, g in enumerate(grads):
        state = step(i, inert.tree_util.tree_unflatten(tree, g), state)
    got = inert.tree_util.tree_leaves(get_params(state))
    for k, (x, got_x) in enumerate(zip(leaves, got)):
        want = numpy_steps(name, lr, np.asarray(x), [g[k] for g in grads])
        np.testing.assert_allclose(got_x, want, rtol=1e-12, atol=1e-14)
    assert isinstance(get_params(state), dict)


def test_optimizer_state_is_a_pytree_and_structures_are_checked():
    init, update, _ = opt.adam(0.1)
    state = init({"a": np.ones(2), "b": np.zeros(3)})
    assert len(inert.tree_util.tree_leaves(state)) == 6
    with pytest.raises(TypeError, match="structure"):
        update(0, {"a": np.ones(2)}, state)


def test_schedules_match_their_formulas_eagerly_and_traced():
    schedules = [
        (opt.constant(0.3), lambda i: 0.3),
        (opt.exponential_decay(0.5, 10, 0.1), lambda i: 0.5 * 0.1 ** (i / 10)),
        (opt.inverse_time_decay(0.5, 10, 2.0), lambda i: 0.5 / (1 + 2.0 * i / 10)),
        (opt.inverse_time_decay(0.5, 10, 2.0, staircase=True),
         lambda i: 0.5 / (1 + 2.0 * (i // 10))),
        (opt.polynomial_decay(1.0, 20, 0.1, power=2.0),
         lambda i: (1 - min(i, 20) / 20) ** 2 * 0.9 + 0.1),
        (opt.piecewise_constant([5, 15], [1.0, 0.5, 0.1]),
         lambda i: 1.0 if i <= 5 else 0.5 if i <= 15 else 0.1),
    ]
    for schedule, formula in schedules:
        for i in (0, 5, 6, 15, 16, 30):
            np.testing.assert_allclose(schedule(i), formula(i), rtol=1e-12)
            np.testing.assert_allclose(inert.jit(schedule)(i), formula(i), rtol=1e-12)
    with pytest.raises(ValueError, match="values"):
        opt.piecewise_constant([1, 2], [1.0])


def test_a_schedule_drives_the_step_size():
    init, update, get_params = opt.sgd(opt.piecewise_constant([0], [1.0, 0.1]))
    state = update(1, np.ones(2), update(0, np.ones(2), init(np.zeros(2))))
    np.testing.assert_allclose(get_params(state), -1.1)


def test_clip_grads_and_l2_norm():
    tree = {"a": np.array([3.0]), "b": np.array([4.0])}
    assert opt.l2_norm(tree) == 5.0
    clipped = opt.clip_grads(tree, 1.0)
    np.testing.assert_allclose([clipped["a"][0], clipped["b"][0]], [0.6, 0.8])
    np.testing.assert_allclose(opt.clip_grads(tree, 10.0)["a"], tree["a"])


def _median_times(fs, repeat=21):
    """Medians of interleaved runs: a burst of load on the shared machine hits both."""
    times = [[] for _ in fs]
    for _ in range(repeat):
        for f, ts in zip(fs, times):
            start = time.perf_counter()
            f()
            ts.append(time.perf_counter() - start)
    return [float(np.median(ts)) for ts in times]


def test_jitted_adam_step_runs_near_numpy_speed(rng):
    """Compiled, an update is the numpy operations plus a little dispatch: on MLP-sized
    parameters it runs as fast as the hand-written numpy step (measured 1.2-1.4x on
    4 x 128x128 under load; about 1x at 512x512), with a generous bound here."""
    params = [rng.standard_normal((128, 128)) for _ in range(4)]
    grads = [rng.standard_normal(p.shape) for p in params]
    init, update, _ = opt.adam(1e-3)
    step = inert.jit(update)
    state = step(0, grads, init(params))
    moments = [(p, np.zeros_like(p), np.zeros_like(p)) for p in params]

    def numpy_step(i=1):
        new_state = []
        for (x, m, v), g in zip(moments, grads):
            m = (1 - 0.9) * g + 0.9 * m
            v = (1 - 0.999) * g * g + 0.999 * v
            m_hat, v_hat = m / (1 - 0.9 ** (i + 1)), v / (1 - 0.999 ** (i + 1))
            new_state.append((x - 1e-3 * m_hat / (np.sqrt(v_hat) + 1e-8), m, v))
        return new_state

    t_jit, t_numpy = _median_times([lambda: step(1, grads, state), numpy_step])
    ratio = t_jit / t_numpy
    assert ratio < 3.0, f"jitted adam step {ratio:.1f}x the numpy step"
