"""`inert.tree_util`: JAX's pytree functions, re-exported."""

from .pytree import (  # noqa: F401
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
