"""`inert.tree`: jax.tree's short names for the pytree functions of `inert.tree_util`."""

from ...core.pytree import tree_all as all  # noqa: A004 — JAX's name
from ...core.pytree import tree_flatten as flatten
from ...core.pytree import tree_flatten_with_path as flatten_with_path
from ...core.pytree import tree_leaves as leaves
from ...core.pytree import tree_leaves_with_path as leaves_with_path
from ...core.pytree import tree_map as map  # noqa: A004
from ...core.pytree import tree_map_with_path as map_with_path
from ...core.pytree import tree_reduce as reduce
from ...core.pytree import tree_structure as structure
from ...core.pytree import tree_transpose as transpose
from ...core.pytree import tree_unflatten as unflatten

__all__ = [
    "all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
    "map_with_path", "reduce", "structure", "transpose", "unflatten",
]


def __dir__():
    return __all__
