"""`inert.example_libraries.optimizers`: jax.example_libraries.optimizers' API.

An optimizer is a triple `(init_fun, update_fun, get_params)`:
`opt_state = init_fun(params)`, `opt_state = update_fun(step, grads, opt_state)`,
`params = get_params(opt_state)`, over any pytree of parameters. Each optimizer below
is written for one array (its state a tuple of arrays) and lifted to pytrees by
`optimizer`; the state is an `OptimizerState`, a pytree whose leaves are the arrays,
so a whole update step can be `jit`-ted. A step size is a number or a schedule: a
function of the step number (which may be traced).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple

import numpy as np

from ...core.pytree import PyTreeDef, register_pytree_node, tree_flatten, tree_unflatten
from ...core.typing import ArrayLike
from .. import numpy as jnp
from ..numpy._array import Array

Schedule = Callable[[Any], Any]


class OptimizerState(NamedTuple):
    """Per parameter leaf, the flat leaves of its state, and the structures to rebuild
    the parameters (`tree_def`) and each leaf's state (`subtree_defs`)."""

    packed_state: list
    tree_def: PyTreeDef
    subtree_defs: tuple


register_pytree_node(
    OptimizerState,
    lambda s: ([s.packed_state], (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker: Callable) -> Callable:
    """Lift `opt_maker(...) -> (init, update, get_params)` on single arrays to pytrees."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(params):
            leaves, tree = tree_flatten(params)
            states = [tree_flatten(init(jnp.asarray(x))) for x in leaves]
            return OptimizerState([s for s, _ in states], tree, tuple(d for _, d in states))

        def tree_update(i, grads, opt_state: OptimizerState):
            grad_leaves, tree = tree_flatten(grads)
            if tree != opt_state.tree_def:
                raise TypeError(f"optimizer update: the gradients have structure {tree}, but "
                                f"the parameters have {opt_state.tree_def}")
            packed = []
            for g, state, subtree in zip(grad_leaves, opt_state.packed_state,
                                         opt_state.subtree_defs):
                new_state, new_subtree = tree_flatten(update(i, g, tree_unflatten(subtree, state)))
                assert new_subtree == subtree, "an optimizer changed its state's structure"
                packed.append(new_state)
            return OptimizerState(packed, opt_state.tree_def, opt_state.subtree_defs)

        def tree_get_params(opt_state: OptimizerState):
            params = [get_params(tree_unflatten(subtree, state)) for state, subtree in
                      zip(opt_state.packed_state, opt_state.subtree_defs)]
            return tree_unflatten(opt_state.tree_def, params)

        return Optimizer(tree_init, tree_update, tree_get_params)

    # opt_maker's signature (as help() and the docs show it), with what the lifted maker returns
    tree_opt_maker.__annotations__ = {**opt_maker.__annotations__, "return": Optimizer}
    tree_opt_maker.__signature__ = inspect.signature(opt_maker).replace(
        return_annotation="Optimizer")
    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size: float | Schedule) -> tuple[Callable, Callable, Callable]:
    """Stochastic gradient descent: `x <- x - step_size(i) * g`. The state is the
    parameters.

    Example:
        >>> opt_init, opt_update, get_params = inert.example_libraries.optimizers.sgd(0.5)
        >>> state = opt_update(0, np.array([1.0, -2.0]), opt_init(np.zeros(2)))
        >>> print(get_params(state))
        [-0.5  1. ]
    """
    step_size = make_schedule(step_size)
    return (lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Gradient descent with momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    """Nesterov's accelerated gradient: v <- mass * v + g; x <- x - step_size(i) * (mass * v +
    g)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


@optimizer
def adagrad(step_size: float | Schedule,
            momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """Adagrad with momentum on the scaled gradient, as in JAX."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(jnp.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9,
            eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    """RMSProp: x moves by step_size(i) * g / sqrt(avg_sq_grad + eps), the squared gradients
    averaged with decay `gamma`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + g * g * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return lambda x0: (x0, jnp.zeros_like(x0)), update, _first


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """RMSProp with momentum: the RMSProp step accumulated in a velocity of decay `momentum`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + g * g * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


def _bias_correction(b, i, like):
    """1 - b^(i+1), in the parameters' dtype (`i` may be traced)."""
    return 1.0 - jnp.power(jnp.asarray(b, jnp.asarray(like).dtype), i + 1)


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    """Adam (Kingma and Ba): bias-corrected moving averages of the gradient (decay `b1`) and of
    its square (decay `b2`); `x <- x - step_size(i) * m_hat / (sqrt(v_hat) + eps)`. As
    jax.example_libraries.optimizers.adam, over any pytree of parameters.

    Returns:
        `(opt_init, opt_update, get_params)`, JAX's triple: `opt_init(params)` is the
        first state, `opt_update(step, grads, state)` the next, `get_params(state)` the
        parameters.

    Example:
        >>> opt_init, opt_update, get_params = inert.example_libraries.optimizers.adam(0.1)
        >>> loss = lambda p: jnp.sum(p ** 2)
        >>> state = opt_init(np.array([1.0, -1.0]))
        >>> for step in range(100):
        ...     state = opt_update(step, inert.grad(loss)(get_params(state)), state)
        >>> bool(loss(get_params(state)) < 1e-3)
        True
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1.0 - b1) * g + b1 * m
        v = (1.0 - b2) * g * g + b2 * v
        m_hat = m / _bias_correction(b1, i, m)
        v_hat = v / _bias_correction(b2, i, v)
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    """Adamax (Kingma and Ba): Adam with the infinity norm: `u <- max(b2 * u, |g|)`;
    `x <- x - step_size(i) / (1 - b1^(i+1)) * m / (u + eps)`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1.0 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / _bias_correction(b1, i, m)) * m / (u + eps), m, u

    return lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0)), update, _first


# ---------------------------------------------------------------------------------
# Schedules: step number -> step size


def constant(step_size: float) -> Schedule:
    """The schedule whose step size is `step_size` at every step."""
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """The schedule step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """The schedule step_size / (1 + decay_rate * i / decay_steps) (with `staircase`, i /
    decay_steps rounded down)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: float, decay_steps: float, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """The schedule going from `step_size` to `final_step_size` over `decay_steps` steps as (1
    - i / decay_steps) ** power, then staying there."""
    def schedule(i):
        fraction = jnp.minimum(i, decay_steps) / decay_steps
        return (1 - fraction) ** power * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: ArrayLike, values: ArrayLike) -> Schedule:
    """`values[k]` for steps after `k` of the `boundaries` (one more value than those)."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if values.shape != (len(boundaries) + 1,):
        raise ValueError(f"piecewise_constant: {len(boundaries)} boundaries need "
                         f"{len(boundaries) + 1} values, not {values.shape}")
    return lambda i: jnp.take(values, jnp.sum(jnp.asarray(i) > boundaries))


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a step size: a callable is one already, a number is `constant(number)`."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size is a number or a schedule, not "
                    f"{type(scalar_or_schedule).__name__}")


# ---------------------------------------------------------------------------------
# Utilities


def l2_norm(tree: Any) -> Array:
    """The l2 norm of all the leaves of `tree` together."""
    return jnp.sqrt(sum(jnp.sum(x * x) for x in tree_flatten(tree)[0]))


def clip_grads(grad_tree: Any, max_norm: ArrayLike) -> Any:
    """Scale the gradients down to l2 norm `max_norm` if it is larger."""
    norm = l2_norm(grad_tree)
    scale = jnp.where(norm < max_norm, 1.0, max_norm / jnp.where(norm < max_norm, 1.0, norm))
    leaves, tree = tree_flatten(grad_tree)
    return tree_unflatten(tree, [g * scale for g in leaves])


__all__ = [
    "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "clip_grads", "constant",
    "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum",
    "nesterov", "optimizer", "piecewise_constant", "polynomial_decay", "rmsprop",
    "rmsprop_momentum", "sgd",
]


def __dir__():
    return __all__
