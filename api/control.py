"""The higher-order functions users call directly — `checkpoint` (and `checkpoint_name`),
`custom_jvp`, `custom_vjp` — as `primitives.control` defines them, with their eager results
immutable `Array`s, like every value inert returns (see `api.numpy._array`)."""

from __future__ import annotations

from typing import Callable

from ..core.pytree import tree_map
from ..primitives.control import checkpoint as _checkpoint
from ..primitives.control import custom_jvp as _custom_jvp
from ..primitives.control import custom_vjp as _custom_vjp
from .numpy._array import returned, returning_arrays


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, whose intermediates the backward pass recomputes instead of keeping, but
    for the values `policy` (one of `inert.checkpoint_policies`) calls saveable."""
    return returning_arrays(_checkpoint.checkpoint(
        fun, policy=policy, prevent_cse=prevent_cse, static_argnums=static_argnums))


remat = checkpoint


def checkpoint_name(x, name: str):
    """`x` (a pytree), named `name` for the policies `save_only_these_names` and kin."""
    return returned(tree_map(lambda leaf: _checkpoint.checkpoint_name(leaf, name), x), (x,))


class custom_jvp(_custom_jvp.custom_jvp):  # noqa: N801 — JAX's name
    __doc__ = _custom_jvp.custom_jvp.__doc__

    def __call__(self, *args):
        return returned(super().__call__(*args), args)


class custom_vjp(_custom_vjp.custom_vjp):  # noqa: N801 — JAX's name
    __doc__ = _custom_vjp.custom_vjp.__doc__

    def __call__(self, *args):
        return returned(super().__call__(*args), args)
