"""Which arguments of a traced function a value depends on, in words: for the
`ConcretizationError` of `if x > 0` under `jit`, as JAX's says "it depends on the value of
the argument x". The staging trace finds the flat inputs a value is computed from
(`core.staging.JaxprBuilder.args_reaching`); this names them after the function's
signature, only when an error asks.
"""

from __future__ import annotations

import inspect
from typing import Callable

from ..core.activity import Inactive
from ..core.pytree import tree_flatten, tree_leaves


def argument_describer(f: Callable, args: tuple, static) -> Callable[[list[int]], str | None]:
    """`describe(flat input positions) -> sentence` for `f` traced at `args` (the flat
    inputs being the leaves of the arguments not in `static`, in order)."""

    def describe(positions: list[int]) -> str | None:
        if not positions:
            return None
        owners = _leaf_owners([i for i in range(len(args)) if i not in static], args)
        names = _parameter_names(f)
        described = []
        for i in dict.fromkeys(owners[p] for p in positions if p < len(owners)):
            described.append(f"`{names[i]}`" if i < len(names) else f"{i}")
        if not described:
            return None
        noun = "argument" if len(described) == 1 else "arguments"
        return (f"The value depends on the {noun} {', '.join(described)} of "
                f"{_function_name(f)}.")

    return describe


def _leaf_owners(dynamic: list[int], args: tuple) -> list[int]:
    """For each flat input, the position of the argument it is a leaf of."""
    owners = []
    for i in dynamic:
        items, _ = tree_flatten(args[i], is_leaf=lambda x: isinstance(x, Inactive))
        count = sum(len(tree_leaves(x.value)) if isinstance(x, Inactive) else 1 for x in items)
        owners += [i] * count
    return owners


def _parameter_names(f: Callable) -> list[str]:
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):  # a builtin, a callable object without a signature
        return []
    return [p.name for p in parameters
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _function_name(f: Callable) -> str:
    code = getattr(inspect.unwrap(f), "__code__", None)
    name = getattr(f, "__qualname__", None) or type(f).__name__
    where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"`{name}`{where}"
