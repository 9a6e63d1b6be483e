"""`inert.tree_util`: JAX's pytree functions, re-exported."""

from ..core.pytree import (  # noqa: F401
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = [
    "PyTreeDef", "register_pytree_node", "tree_flatten", "tree_leaves", "tree_map",
    "tree_structure", "tree_unflatten",
]


def __dir__():
    return __all__
