"""Pytrees: nested containers of arrays, flattened to lists at the API edge.

Tuples, lists, dicts (sorted by key, as JAX does), None, namedtuples and attrs
classes are containers; `register_pytree_node` adds more. Everything else is a leaf.
Interpreters only ever see the flat lists.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import attrs


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[list, Any]]
    unflatten: Callable[[Any, list], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(cls: type, flatten_func, unflatten_func) -> None:
    """`flatten_func(x) -> (children, aux)`, `unflatten_func(aux, children) -> x`."""
    if cls in _registry:
        raise ValueError(f"{cls.__name__} is already registered as a pytree node")
    _registry[cls] = _NodeType(flatten_func, unflatten_func)
    _node_type.cache_clear()


@functools.cache
def _node_type(cls: type) -> _NodeType | None:
    node = _registry.get(cls)
    if node is not None:
        return node
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # namedtuple
        return _NodeType(lambda t: (list(t), None), lambda _, c: cls(*c))
    if attrs.has(cls):
        names = tuple(f.name for f in attrs.fields(cls) if f.init)
        return _NodeType(
            lambda obj: ([getattr(obj, n) for n in names], None),
            lambda _, c: cls(**dict(zip(names, c))),
        )
    return None


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda _, c: list(c))
register_pytree_node(type(None), lambda _: ([], None), lambda _, c: None)
register_pytree_node(
    dict,
    lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
    lambda keys, c: dict(zip(keys, c)),
)


@attrs.frozen
class PyTreeDef:
    """The structure of a pytree: `node_type` None marks a leaf."""

    node_type: type | None
    node_data: Any
    children: tuple[PyTreeDef, ...]

    @property
    def num_leaves(self) -> int:
        if self.node_type is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(map(str, self.children))
        return f"{self.node_type.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(tree, leaves: list, is_leaf) -> PyTreeDef:
    node = None if is_leaf is not None and is_leaf(tree) else _node_type(type(tree))
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, aux = node.flatten(tree)
    return PyTreeDef(type(tree), aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    it = iter(leaves)
    tree = _unflatten(treedef, it)
    if next(it, _sentinel) is not _sentinel:
        raise ValueError(f"too many leaves for the tree structure {treedef}")
    return tree


_sentinel = object()


def _unflatten(treedef: PyTreeDef, it):
    if treedef.node_type is None:
        leaf = next(it, _sentinel)
        if leaf is _sentinel:
            raise ValueError("too few leaves for the tree structure")
        return leaf
    children = [_unflatten(c, it) for c in treedef.children]
    return _node_type(treedef.node_type).unflatten(treedef.node_data, children)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [_leaves_with_structure(r, treedef) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def _leaves_with_structure(tree, treedef: PyTreeDef) -> list:
    leaves, other = tree_flatten(tree)
    if other != treedef:
        raise ValueError(f"tree structures differ: {other} versus {treedef}")
    return leaves
