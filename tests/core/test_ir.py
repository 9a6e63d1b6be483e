"""The IR: printing, checking, and the tracing machinery's invariants."""

import collections

import attrs
import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.core.avals import ShapedArray
from inert.core.check import JaxprTypeError, check_jaxpr
from inert.core.ir import Jaxpr, JaxprEqn, Var
from inert.core.rules import RuleTable
from inert.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten


def test_print_one_equation_on_one_line():
    closed = inert.make_jaxpr(inp.sin)(np.ones(3))
    assert str(closed) == "{ lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }"


def test_print_params_literals_and_consts():
    c = np.arange(3.0)
    closed = inert.make_jaxpr(lambda x: inp.sum(x * 2.0 + c))(np.ones(3, np.float32))
    assert str(closed) == (
        "{ lambda a:f64[3]; b:f32[3]. let\n"
        "    c:f32[3] = mul b 2.0:f64[]\n"
        "    d:f64[3] = add c a\n"
        "    e:f64[] = reduce_sum[axes=(0,)] d\n"
        "  in (e,) }")


def test_print_multiple_outputs_and_marks():
    closed = inert.make_jaxpr(lambda x, y: (x, inp.exp(y)))(1.0, 2.0)
    assert str(closed).endswith("in (a, c) }")


def test_weak_python_scalars_follow_numpy_promotion():
    closed = inert.make_jaxpr(lambda x: x * 2)(np.ones(2, np.float32))
    assert closed.out_avals[0].dtype == np.float32
    closed = inert.make_jaxpr(lambda x: x * 2.5)(np.ones(2, np.int32))
    assert closed.out_avals[0].dtype == np.float64


def _eqn(prim, inputs, outputs, **params):
    return JaxprEqn(prim, tuple(inputs), tuple(outputs), params)


def test_check_jaxpr_catches_use_before_definition():
    a, b, c = (Var(ShapedArray((3,), np.float64)) for _ in range(3))
    sin_p = inert.make_jaxpr(inp.sin)(1.0).jaxpr.eqns[0].primitive
    bad = Jaxpr((), (a,), (_eqn(sin_p, [b], [c]),), (c,))
    with pytest.raises(JaxprTypeError, match="before it is defined"):
        check_jaxpr(bad)


def test_check_jaxpr_catches_double_assignment_and_wrong_types():
    a = Var(ShapedArray((3,), np.float64))
    sin_p = inert.make_jaxpr(inp.sin)(1.0).jaxpr.eqns[0].primitive
    with pytest.raises(JaxprTypeError, match="assigned twice"):
        check_jaxpr(Jaxpr((), (a,), (_eqn(sin_p, [a], [a]),), (a,)))
    wrong = Var(ShapedArray((4,), np.float64))
    with pytest.raises(JaxprTypeError, match="abstract eval"):
        check_jaxpr(Jaxpr((), (a,), (_eqn(sin_p, [a], [wrong]),), (wrong,)))


def test_rule_tables_refuse_a_second_registration():
    table = RuleTable("test")
    p = _NotAPrimitive("test_only")  # a real Primitive would join ALL_PRIMITIVES
    table[p] = len
    with pytest.raises(ValueError, match="already has a test rule"):
        table[p] = len
    with pytest.raises(NotImplementedError, match="'test_only' has no test rule"):
        RuleTable("test")[p]


@attrs.frozen(eq=False)
class _NotAPrimitive:
    name: str


Point = collections.namedtuple("Point", "x y")


@attrs.frozen
class Params:
    w: object
    b: object


class Box:
    def __init__(self, v):
        self.v = v


register_pytree_node(Box, lambda b: ([b.v], None), lambda _, c: Box(*c))


def test_pytrees_round_trip():
    tree = {"b": [1, (2, None)], "a": Point(3, Params(4, 5)), "c": Box(6)}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [3, 4, 5, 1, 2, 6]
    rebuilt = tree_unflatten(treedef, leaves)
    assert rebuilt["a"] == tree["a"] and rebuilt["b"] == tree["b"] and rebuilt["c"].v == 6
    assert tree_map(lambda v: v * 10, tree)["a"].y.b == 50


def test_grad_over_pytree_arguments():
    params = {"w": np.ones((2, 3)), "b": np.zeros(3)}
    g = inert.grad(lambda p, x: inp.sum(inp.tanh(x @ p["w"] + p["b"])))(params, np.ones(2))
    t = np.tanh(np.ones(2) @ params["w"])
    np.testing.assert_allclose(g["b"], 1 - t * t)
    np.testing.assert_allclose(g["w"], np.outer(np.ones(2), 1 - t * t))


def test_tracing_is_linear_and_does_not_recurse():
    def chain(x):
        for _ in range(5000):
            x = x * 1.0001 + 0.5
        return x

    closed = inert.make_jaxpr(chain)(1.0)
    assert len(closed.jaxpr.eqns) == 10000
    out = inert.eval_jaxpr(closed.jaxpr, closed.consts, [1.0])[0]
    np.testing.assert_allclose(out, chain(1.0))
    g = inert.grad(chain)(1.0)
    np.testing.assert_allclose(g, 1.0001 ** 5000)
