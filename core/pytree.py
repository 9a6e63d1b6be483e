"""Pytrees: nested containers of arrays, flattened to lists at the API edge.

Tuples, lists, dicts (sorted by key, as JAX does), None, namedtuples and attrs
classes are containers; `register_pytree_node` adds more (`register_pytree_with_keys`
with a key per child, `register_dataclass`, `register_static`). Everything else is a
leaf. Interpreters only ever see the flat lists. Paths (`tree_flatten_with_path`) name
each leaf by JAX's key classes; `Partial` is a function with bound arguments as a pytree.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Iterable, NamedTuple

import attrs


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[list, Any]]
    unflatten: Callable[[Any, list], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(cls: type, flatten_func: Callable[[Any], tuple[Iterable, Any]],
                         unflatten_func: Callable[[Any, Iterable], Any]) -> None:
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

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

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


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """`(leaves, treedef)`: the leaves of `tree` in order and its structure; `is_leaf(x)` true
    stops the descent at x. None is a node with no children, as in JAX, and a dict's
    leaves come in the order of its sorted keys.

    Example:
        >>> leaves, treedef = inert.tree_util.tree_flatten({"b": (2.0, None), "a": 1.0})
        >>> leaves
        [1.0, 2.0]
        >>> inert.tree_util.tree_unflatten(treedef, [10.0, 20.0])
        {'a': 10.0, 'b': (20.0, None)}
    """
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


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """The pytree of structure `treedef` with `leaves` (as many as it has) in place of its
    leaves."""
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


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, in `tree_flatten`'s order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The `PyTreeDef` of `tree` (its structure without the leaves)."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f` of the leaves of `tree` and the matching subtrees of `rest`: each of `rest`
    has `tree`'s structure, or `tree`'s structure as a prefix (JAX's rule).

    Example:
        >>> inert.tree_util.tree_map(lambda x, y: x + y, {"a": 1.0, "b": (2.0, 3.0)},
        ...                          {"a": 10.0, "b": (20.0, 30.0)})
        {'a': 11.0, 'b': (22.0, 33.0)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def flatten_up_to(treedef: PyTreeDef, tree) -> list:
    """The subtrees of `tree` at the leaves of `treedef`, which must be a prefix of
    `tree`'s structure."""
    out: list = []
    _flatten_up_to(treedef, tree, out, treedef)
    return out


def _flatten_up_to(treedef: PyTreeDef, tree, out: list, whole: PyTreeDef) -> None:
    if treedef.node_type is None:
        out.append(tree)
        return
    node = _node_type(type(tree))
    children, aux = node.flatten(tree) if node is not None else (None, None)
    if type(tree) is not treedef.node_type or aux != treedef.node_data or \
            len(children) != len(treedef.children):
        raise ValueError(f"tree structures differ: {tree_structure(tree)} does not have "
                         f"{whole} as a prefix (at {treedef})")
    for sub, child in zip(treedef.children, children):
        _flatten_up_to(sub, child, out, whole)


def tree_reduce(function: Callable, tree: Any, *initializer: Any,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`functools.reduce(function, leaves[, initializer])`."""
    return functools.reduce(function, tree_leaves(tree, is_leaf), *initializer)


def tree_all(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of `tree` is true."""
    return all(tree_leaves(tree, is_leaf))


# ---------------------------------------------------------------------------------
# Paths: where each leaf sits, as a tuple of keys


@attrs.frozen
class SequenceKey:
    """A path entry: index `idx` of a list or tuple (prints as `[idx]`)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@attrs.frozen
class DictKey:
    """A path entry: key `key` of a dict (prints as `[key]`, the key's repr)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@attrs.frozen
class GetAttrKey:
    """A path entry: attribute `name` of a node (a namedtuple field, a dataclass field; prints
    as `.name`)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@attrs.frozen
class FlattenedIndexKey:
    """A child of a node registered with `register_pytree_node`, by position."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _child_keys(treedef: PyTreeDef) -> list:
    cls = treedef.node_type
    if cls in _keyed:
        return list(treedef.node_data.keys)
    if cls is dict:
        return [DictKey(k) for k in treedef.node_data]
    if cls in (tuple, list):
        return [SequenceKey(i) for i in range(len(treedef.children))]
    if cls not in _registry and hasattr(cls, "_fields"):
        return [GetAttrKey(f) for f in cls._fields]
    if cls not in _registry and attrs.has(cls):
        return [GetAttrKey(f.name) for f in attrs.fields(cls) if f.init]
    return [FlattenedIndexKey(i) for i in range(len(treedef.children))]


def tree_flatten_with_path(tree: Any,
                           is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """`([(path, leaf), ...], treedef)`; a path is a tuple of keys (see `keystr`)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    return list(zip(_paths(treedef, ()), leaves)), treedef


def _paths(treedef: PyTreeDef, prefix: tuple) -> list[tuple]:
    if treedef.node_type is None:
        return [prefix]
    keys = _child_keys(treedef)
    return [p for k, child in zip(keys, treedef.children) for p in _paths(child, (*prefix, k))]


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """`[(path, leaf), ...]`: each leaf with its key path (see `tree_flatten_with_path`)."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`f(path, leaf, *others)` for every leaf of `tree`."""
    with_path, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(with_path, *others)])


def keystr(path: tuple) -> str:
    """A path as Python would index it: `['w'][0].bias`."""
    return "".join(map(str, path))


# ---------------------------------------------------------------------------------
# Partial: a function with some arguments bound, whose arguments are its leaves


class Partial(functools.partial):
    """`functools.partial` as a pytree: the bound arguments are its children and the
    function its static part, so it can be passed through `jit` and `vmap`."""

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):  # flatten nested partials, as JAX does
            args, kwargs = (*func.args, *args), {**func.keywords, **kwargs}
            func = func.func
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ([p.args, p.keywords], p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


# ---------------------------------------------------------------------------------
# Nodes registered with keys, dataclasses, static classes


class _KeyedAux(NamedTuple):
    """A keyed node's aux data: its children's keys ride in the treedef, so paths are
    read from the structure alone, as for the built-in containers."""

    keys: tuple
    aux: Any


_keyed: set[type] = set()


def register_pytree_with_keys(nodetype: type,
                              flatten_with_keys: Callable[[Any], tuple[Iterable, Any]],
                              unflatten_func: Callable[[Any, Iterable], Any],
                              flatten_func: Callable[[Any], tuple[Iterable, Any]] | None = None
                              ) -> None:
    """jax.tree_util.register_pytree_with_keys: `flatten_with_keys(x) -> ([(key, child),
    ...], aux)` names each child for `tree_flatten_with_path`; `unflatten_func(aux,
    children)`. `flatten_func`, JAX's faster path without keys, is accepted: the keys
    are kept in the structure, so every flattening asks for them."""
    del flatten_func

    def flatten(x):
        keyed, aux = flatten_with_keys(x)
        return [child for _, child in keyed], _KeyedAux(tuple(k for k, _ in keyed), aux)

    register_pytree_node(nodetype, flatten, lambda kaux, children: unflatten_func(
        kaux.aux, children))
    _keyed.add(nodetype)


def register_dataclass(nodetype: type, data_fields: Iterable[str] | None = None,
                       meta_fields: Iterable[str] | None = None,
                       drop_fields: Iterable[str] = ()) -> type:
    """jax.tree_util.register_dataclass: the `data_fields` are children, the
    `meta_fields` static (part of the structure, so hashable); without either, a
    dataclass's fields with `metadata=dict(static=True)` are static and the others
    data. Returns `nodetype`, so it works as a class decorator."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                            "name its data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
    data, meta = tuple(data_fields), tuple(meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_with_keys(
        nodetype,
        lambda x: ([(GetAttrKey(n), getattr(x, n)) for n in data],
                   tuple(getattr(x, n) for n in meta)),
        unflatten)
    return nodetype


def register_static(cls: type) -> type:
    """jax.tree_util.register_static: instances of `cls` are pytrees with no leaves,
    the instance itself the structure (so it must be hashable); a class decorator."""
    register_pytree_node(cls, lambda x: ([], x), lambda x, _: x)
    return cls


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees as an inner tree of outer trees (jax.tree.transpose);
    `inner_treedef` None: the structure of the first inner tree."""
    subtrees = flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(subtrees[0]) if subtrees else _LEAF
    columns = [flatten_up_to(inner_treedef, sub) for sub in subtrees]
    if inner_treedef.num_leaves and not columns:
        raise ValueError("tree_transpose: the outer structure has no leaves")
    rows = zip(*columns) if columns else [[] for _ in range(inner_treedef.num_leaves)]
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, row) for row in rows])


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: `cls.tree_flatten(self) -> (children, aux)` and the
    classmethod `cls.tree_unflatten(aux, children)` make `cls` a pytree node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls
