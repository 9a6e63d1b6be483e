"""`inert.tree_util`: JAX's pytree functions, re-exported."""

from ...core.pytree import (  # noqa: F401
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_static,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey",
    "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_static", "tree_all", "tree_flatten",
    "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
    "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten",
]


def __dir__():
    return __all__
