"""`inert.debug`: jax.debug's `print` and `callback`, which see the values a program
computes while it runs — eagerly, under `jit`, `grad`, `vmap` and inside loops — in
program order (`primitives/debugging.py`)."""

from __future__ import annotations

import builtins
from typing import Any, Callable

import attrs

from ..core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from ..primitives.debugging import debug_callback
from .numpy._array import returned_leaves


@attrs.frozen
class _Unflattened:
    """`callback(*args, **kwargs)` from the flat values of `(args, kwargs)`, as
    immutable Arrays (what inert returns everywhere)."""

    callback: Callable
    tree: PyTreeDef

    def __call__(self, *values):
        args, kwargs = tree_unflatten(self.tree, returned_leaves(list(values), []))
        self.callback(*args, **kwargs)


def callback(callback: Callable, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """jax.debug.callback: `callback(*args, **kwargs)` with the arrays' values, each
    time the program runs this line (once per lane under `vmap`, per iteration in a
    loop); under `grad` it sees the primal values. Calls run in program order whether
    or not `ordered` is asked (inert runs one operation at a time)."""
    del ordered
    leaves, tree = tree_flatten((args, kwargs))
    debug_callback(_Unflattened(callback, tree), *leaves)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """jax.debug.print: `fmt.format(*args, **kwargs)` printed with the values, also
    under `jit`, `vmap` and `grad`, where plain `print` would show tracers.

    Example:
        >>> inert.jit(lambda x: inert.debug.print("x = {}", x))(np.arange(2.0))
        x = [0. 1.]
    """
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, ordered=ordered,
             **kwargs)


__all__ = ["callback", "print"]


def __dir__():
    return __all__
