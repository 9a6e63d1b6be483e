"""The higher-order functions users call directly — `checkpoint` (and `checkpoint_name`),
`custom_jvp`, `custom_vjp` — as `primitives.control` defines them, with their eager results
immutable `Array`s, like every value inert returns (see `api.numpy._array`)."""

from __future__ import annotations

from typing import Any, Callable

from ..core.pytree import tree_map
from ..primitives.control import checkpoint as _checkpoint
from ..primitives.control import custom_jvp as _custom_jvp
from ..primitives.control import custom_vjp as _custom_vjp
from .numpy._array import returned, returning_arrays


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, whose intermediates the backward pass recomputes instead of keeping, but
    for the values `policy` (one of `inert.checkpoint_policies`) calls saveable.
    `inert.remat` is this function, as `jax.remat` is.

    Args:
        fun: the function whose intermediates to recompute.
        prevent_cse: JAX's, kept for its signature: inert does no common-subexpression
            elimination across the passes.
        policy: `policy(prim, *avals, **params) -> bool` for each equation whose outputs
            the backward pass reads: True saves them; by default nothing is saved.
        static_argnums: positions of arguments passed to `fun` as they are.

    Returns:
        The function, with `fun`'s values and derivatives.

    Example:
        >>> f = lambda x: jnp.sum(jnp.sin(jnp.sin(x)))
        >>> inert.print_saved_residuals(f, np.ones(3))  # the two cosines
        shape   dtype    bytes  produced by  source
        f64[3]  float64     24  cos          ...
        f64[3]  float64     24  cos          ...
        2 residuals, 48 bytes in total
        recomputed in the backward pass: 0 equations, about 0 flops
        >>> inert.print_saved_residuals(inert.checkpoint(f), np.ones(3))  # only x
        shape   dtype    bytes  produced by  source
        f64[3]  float64     24  input 0
        1 residual, 24 bytes in total
        recomputed in the backward pass: 3 equations, about 9 flops
    """
    return returning_arrays(_checkpoint.checkpoint(
        fun, policy=policy, prevent_cse=prevent_cse, static_argnums=static_argnums))


remat = checkpoint


def checkpoint_name(x: Any, name: str) -> Any:
    """`x` (a pytree), named `name` for the policies `save_only_these_names` and kin.

    Example:
        >>> def f(x):
        ...     y = inert.checkpoint_name(jnp.sin(x), "y")
        ...     return jnp.sum(jnp.sin(y))
        >>> keep_y = inert.checkpoint_policies.save_only_these_names("y")
        >>> inert.print_saved_residuals(inert.checkpoint(f, policy=keep_y), np.ones(3))
        shape   dtype    bytes  produced by  source
        f64[3]  float64     24  input 0
        f64[3]  float64     24  name         ...
        2 residuals, 48 bytes in total
        recomputed in the backward pass: 2 equations, about 6 flops
    """
    return returned(tree_map(lambda leaf: _checkpoint.checkpoint_name(leaf, name), x), (x,))


class custom_jvp(_custom_jvp.custom_jvp):  # noqa: N801 — JAX's name
    __doc__ = _custom_jvp.custom_jvp.__doc__

    def __call__(self, *args):
        return returned(super().__call__(*args), args)


class custom_vjp(_custom_vjp.custom_vjp):  # noqa: N801 — JAX's name
    __doc__ = _custom_vjp.custom_vjp.__doc__

    def __call__(self, *args):
        return returned(super().__call__(*args), args)
