"""Pytree utilities: tree_map over several trees (prefix structures, is_leaf), paths
and keystr, reduce/all, Partial through transforms, registering dataclasses, keyed
and static nodes, transposing trees, and inert.tree's short names."""

import dataclasses
from typing import NamedTuple

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.tree as jtree
from inert import tree_util as tu


class Point(NamedTuple):
    x: object
    y: object


@attrs.frozen
class Layer:
    w: object
    b: object


TREE = {"layers": [Layer(np.ones(2), 0.5)], "p": Point(1.0, (2.0, None))}


def test_tree_map_over_several_trees_and_prefixes():
    doubled = tu.tree_map(lambda a, b: a + b, TREE, TREE)
    assert doubled["p"].y[0] == 4.0 and doubled["p"] == Point(2.0, (4.0, None))
    # the second tree may hold whole subtrees where the first has leaves
    got = tu.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, {"a": [1, 2], "b": {"c": 3}})
    assert got == {"a": (1, [1, 2]), "b": (2, {"c": 3})}
    with pytest.raises(ValueError, match="prefix"):
        tu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match="prefix"):
        tu.tree_map(lambda a, b: a, [1, 2], [1, 2, 3])


def test_is_leaf_stops_flattening():
    got = tu.tree_map(lambda p: p.x, [Point(1, 2), Point(3, 4)],
                      is_leaf=lambda n: isinstance(n, Point))
    assert got == [1, 3]
    assert tu.tree_leaves([(1, 2), (3,)], is_leaf=lambda n: isinstance(n, tuple)) == [(1, 2), (3,)]


def test_paths_name_every_leaf_as_python_would_index_it():
    with_path, treedef = tu.tree_flatten_with_path(TREE)
    assert [tu.keystr(p) for p, _ in with_path] == [
        "['layers'][0].w", "['layers'][0].b", "['p'].x", "['p'].y[0]"]
    assert treedef == tu.tree_structure(TREE)
    assert [leaf for _, leaf in with_path][1:] == tu.tree_leaves(TREE)[1:]
    named = tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": [1, 2]})
    assert named == {"a": ["['a'][0]", "['a'][1]"]}
    assert tu.tree_leaves_with_path([5])[0] == ((tu.SequenceKey(0),), 5)


def test_registered_nodes_have_flat_index_keys():
    @tu.register_pytree_node_class
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return [self.a, self.b], None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(Box(1, 2))[0]]
    assert paths == ["[<flat index 0>]", "[<flat index 1>]"]
    assert tu.tree_map(lambda x: x * 10, Box(1, 2)).b == 20


def test_reduce_all_and_unflatten():
    assert tu.tree_reduce(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 7) == 7
    assert tu.tree_all([True, (1, 2.0)]) and not tu.tree_all({"a": True, "b": 0})
    leaves, treedef = tu.tree_flatten(TREE)
    assert treedef.unflatten(leaves)["p"] == TREE["p"]


def test_partial_is_a_pytree_through_jit_grad_and_vmap():
    f = tu.Partial(lambda w, x, scale=1.0: scale * w * x, 3.0, scale=2.0)
    assert tu.tree_leaves(f) == [3.0, 2.0]
    assert inert.jit(lambda g, x: g(x))(f, 4.0) == 24.0
    # the bound arguments are leaves: the gradient flows into them
    grads = inert.grad(lambda g: g(4.0))(f)
    assert isinstance(grads, tu.Partial)
    assert grads.args == (8.0,) and grads.keywords["scale"] == 12.0
    np.testing.assert_allclose(inert.vmap(lambda x: f(x))(np.arange(3.0)), [0.0, 6.0, 12.0])
    nested = tu.Partial(tu.Partial(lambda a, b, c: a + b + c, 1.0), 2.0)
    assert nested.func is not None and nested.args == (1.0, 2.0) and nested(3.0) == 6.0


def test_inert_tree_short_names_are_the_tree_util_functions():
    assert jtree.map is tu.tree_map and jtree.leaves is tu.tree_leaves
    assert jtree.structure is tu.tree_structure and jtree.reduce is tu.tree_reduce
    assert jtree.flatten is tu.tree_flatten and jtree.unflatten is tu.tree_unflatten
    assert jtree.all is tu.tree_all and jtree.flatten_with_path is tu.tree_flatten_with_path
    leaves, treedef = jtree.flatten({"a": 1, "b": (2, 3)})
    assert jtree.unflatten(treedef, [x * 2 for x in leaves]) == {"a": 2, "b": (4, 6)}


@dataclasses.dataclass
class Params:
    w: object
    b: object
    activation: str = dataclasses.field(default="tanh", metadata=dict(static=True))


tu.register_dataclass(Params)


def test_a_registered_dataclass_has_its_data_as_leaves_and_its_static_fields_in_the_structure():
    params = Params(np.ones(2), 0.5, "relu")
    leaves, treedef = tu.tree_flatten(params)
    assert len(leaves) == 2 and leaves[1] == 0.5
    assert treedef != tu.tree_structure(Params(np.ones(2), 0.5, "tanh"))
    doubled = tu.tree_map(lambda x: x * 2, params)
    assert isinstance(doubled, Params) and doubled.activation == "relu" and doubled.b == 1.0
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(params)[0]] == [".w", ".b"]
    grads = inert.grad(lambda p: inert.numpy.sum(p.w * p.b))(params)
    assert grads.activation == "relu"
    np.testing.assert_allclose(grads.w, [0.5, 0.5])
    np.testing.assert_allclose(grads.b, 2.0)


def test_register_dataclass_with_explicit_fields_and_its_errors():
    class Pair:
        def __init__(self, lo, hi, name):
            self.lo, self.hi, self.name = lo, hi, name

    tu.register_dataclass(Pair, data_fields=["lo", "hi"], meta_fields=["name"])
    out = tu.tree_map(lambda x: x + 1, Pair(1, 2, "p"))
    assert (out.lo, out.hi, out.name) == (2, 3, "p")
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(type("Plain", (), {}))
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        tu.register_dataclass(type("Half", (), {}), data_fields=["a"])


def test_nodes_registered_with_keys_name_their_children_by_those_keys():
    class Box:
        def __init__(self, items):
            self.items = dict(items)

    tu.register_pytree_with_keys(
        Box, lambda b: ([(tu.DictKey(k), v) for k, v in sorted(b.items.items())], None),
        lambda _, children: Box(zip(["p", "q"], children)))
    tree = [Box({"q": 2.0, "p": 1.0})]
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]] == ["[0]['p']",
                                                                              "[0]['q']"]
    assert tu.tree_map(lambda x: -x, tree)[0].items == {"p": -1.0, "q": -2.0}


def test_a_static_class_has_no_leaves_and_is_its_own_structure():
    @tu.register_static
    @dataclasses.dataclass(frozen=True)
    class Config:
        depth: int

    leaves, treedef = tu.tree_flatten((Config(3), 1.0))
    assert leaves == [1.0] and treedef != tu.tree_structure((Config(4), 1.0))
    assert tu.tree_unflatten(treedef, [2.0]) == (Config(3), 2.0)
    assert inert.grad(lambda c, x: x * c.depth, argnums=1)(Config(3), 1.0) == 3.0


def test_tree_transpose_swaps_an_outer_and_an_inner_structure():
    outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4), (5, 6)]) == ([1, 3, 5], [2, 4, 6])
    assert jtree.transpose(outer, None, [(1, 2), (3, 4), (5, 6)]) == ([1, 3, 5], [2, 4, 6])
    with pytest.raises(ValueError, match="tree structures differ"):
        tu.tree_transpose(outer, inner, [(1, 2), (3, 4), (5, 6, 7)])


# ---------------------------------------------------------------------------------
# Property tests on random trees

leaves_st = st.one_of(st.floats(-10, 10), st.integers(-5, 5),
                      st.builds(lambda n: np.arange(float(n)), st.integers(0, 3)))
trees_st = st.recursive(
    leaves_st,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.tuples(children, children),
        st.dictionaries(st.sampled_from("abcd"), children, max_size=3),
        st.builds(Point, children, children), st.just(None)),
    max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(trees_st)
def test_flatten_paths_and_unflatten_agree_on_random_trees(tree):
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert tu.tree_structure(rebuilt) == treedef
    with_path, treedef2 = tu.tree_flatten_with_path(tree)
    assert treedef2 == treedef and len(with_path) == len(leaves) == treedef.num_leaves
    assert all(got is leaf for (_, got), leaf in zip(with_path, leaves))
    assert len({tu.keystr(p) for p, _ in with_path}) == len(leaves)  # paths tell leaves apart
    sums = tu.tree_map(lambda a, b: a + b, tree, rebuilt)
    assert tu.tree_structure(sums) == treedef
    for total, leaf in zip(tu.tree_leaves(sums), leaves):
        np.testing.assert_array_equal(total, leaf + leaf)
