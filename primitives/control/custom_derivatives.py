"""`custom_jvp` and `custom_vjp`: functions with derivative rules written by hand.

`f = custom_jvp(fun)` with `@f.defjvp def f_jvp(primals, tangents): ...` (JAX's API)
runs `fun` as one `custom_jvp_call` equation. Forward mode calls the user's rule
instead of differentiating `fun`; reverse mode follows, since inert builds it from
forward mode (the rule's tangent computations are ordinary, linear primitives that
partial evaluation and transposition handle). Under `vmap` the rule is vmapped too.

`fun` may close over constants; it must not close over a value being
differentiated (its rule could not see that derivative): that is an error. The rule
is kept as a Python function, called when the jvp happens, as in JAX; unlike JAX,
inert does not convert its closure, so a rule that closes over a traced value (an
argument of an enclosing `jit` or `vmap`) fails with a clear error when it runs:
pass such values to the function as arguments.
"""

from __future__ import annotations

import functools
import operator
from typing import Callable

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import float0, is_float, tangent_aval
from ...core.errors import (
    DTypeError,
    EscapedTracerError,
    NonDifferentiableError,
    ShapeError,
    TypeMismatchError,
)
from ...core.pytree import PyTreeDef, tree_flatten, tree_map, tree_unflatten
from ...core.trace import (
    Primitive,
    Tracer,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    trace_depth,
    user_source_info,
)
from ...interpreters.ad import instantiate_zeros, jvp_rules
from ...interpreters.batching import batch_rules, batch_size, batched_aval, vmap_flat
from ...interpreters.eval import compiled
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from ..shape.structural import convert_element_type, matchaxis, reduce_sum
from .common import batch_jaxpr, check_same_types, no_refs, stage_body, with_consts_as_invars

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


class custom_jvp:  # noqa: N801 — JAX's name
    """A function whose derivative is `defjvp`'s rule, not that of its body.

    Arguments at `nondiff_argnums` (functions, static settings) are not
    differentiated: the rule receives them first, `jvp(*nondiff, primals, tangents)`,
    with `primals` and `tangents` for the other arguments only, as in JAX."""

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        """`jvp(primals, tangents) -> (primal_out, tangent_out)`, pytrees like `fun`'s."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `jvp_i(tangent_i, primal_out, *primals)`, giving that
        argument's contribution to the output tangent (`None`: no contribution)."""

        def jvp(primals, tangents):
            out = self.fun(*primals)
            contributions = [rule(t, out, *primals) for rule, t in zip(jvps, tangents)
                             if rule is not None and get_aval(t).dtype != float0]
            if not contributions:
                return out, tree_map(lambda o: instantiate_zeros(
                    Zero(tangent_aval(get_aval(o)))), out)
            return out, functools.reduce(lambda a, b: tree_map(operator.add, a, b),
                                         contributions)

        jvp.__name__ = f"{self.fun.__name__}_jvps"
        self.jvp = jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp {self.fun.__name__} has no rule: define one with "
                            "@f.defjvp")
        nondiff, fun, diff_args = _without_nondiff(self.fun, args, self.nondiff_argnums)
        jvp = _named(lambda primals, tangents: self.jvp(*nondiff, primals, tangents), self.jvp)
        return _bind_with_rule(custom_jvp_call_p, fun, diff_args,
                               lambda in_tree, body: _flat_rule(jvp, in_tree, body))


def _without_nondiff(fun: Callable, args: tuple, nondiff_argnums: tuple[int, ...]):
    """`(nondiff, fun_of_the_rest, rest)`: `fun` with the arguments at
    `nondiff_argnums` bound, as constants of its body."""
    if not nondiff_argnums:
        return (), fun, args
    nums = {i % len(args) for i in nondiff_argnums}
    nondiff = tuple(args[i] for i in sorted(nums))
    rest = tuple(a for i, a in enumerate(args) if i not in nums)

    def of_rest(*diff):
        it, fixed = iter(diff), iter(nondiff)
        return fun(*(next(fixed) if i in nums else next(it) for i in range(len(args))))

    return nondiff, _named(of_rest, fun), rest


def _named(fn: Callable, like: Callable) -> Callable:
    """`fn` under the name of `like`, which error messages and printed rules use."""
    fn.__name__ = getattr(like, "__name__", type(like).__name__)
    return fn


def _bind_with_rule(prim: Primitive, fun: Callable, args: tuple, make_rule: Callable):
    """Stage `fun` on `args` and bind `prim` with the body and the rule
    `make_rule(in_tree, body)`: evaluation runs the body, differentiation the rule.
    Called with no transformation in progress, it just calls `fun`."""
    if trace_depth() == 0:  # no transformation in progress: only the value is asked for
        return fun(*args)  # (as in JAX; the body may use Python control flow on its inputs)
    leaves, in_tree = tree_flatten(args)
    body = no_refs(stage_body(fun, in_tree, [get_aval(x) for x in leaves], prim.name),
                   prim.name)
    outs = prim.bind(*body.consts, *leaves, jaxpr=body.jaxpr, rule=make_rule(in_tree, body),
                     num_consts=len(body.consts))
    return tree_unflatten(body.out_tree, outs)


@attrs.frozen(eq=False)
class JVPRule:
    """A jvp rule as an equation's param: compared by identity, printed by name."""

    fn: Callable
    name: str

    def __call__(self, primals, tangents):
        return self.fn(primals, tangents)

    def __str__(self) -> str:
        return self.name


def _flat_rule(jvp: Callable, in_tree, body) -> JVPRule:
    """The user's rule on flat lists: `(primals, tangents) -> outs + tangents_out`."""
    out_avals = [v.aval for v in body.jaxpr.outvars]

    def rule(primals, tangents):
        try:
            out, t_out = jvp(tree_unflatten(in_tree, primals),
                             tree_unflatten(in_tree, tangents))
        except EscapedTracerError as e:
            raise EscapedTracerError(
                f"the custom jvp rule {jvp.__name__} closes over a traced value of a "
                "transformation that has finished (an enclosing jit or vmap); pass that "
                "value to the function as an argument instead") from e
        outs, out_tree = tree_flatten(out)
        touts, t_tree = tree_flatten(t_out)
        if out_tree != body.out_tree or t_tree != body.out_tree:
            raise TypeError(f"the custom jvp rule of {jvp.__name__} returned structures "
                            f"{out_tree} and {t_tree}, but the function returns "
                            f"{body.out_tree}")
        check_same_types(f"custom jvp rule {jvp.__name__}: outputs",
                         [a.strong() for a in out_avals], [get_aval(o).strong() for o in outs])
        check_same_types(f"custom jvp rule {jvp.__name__}: tangents",
                         [tangent_aval(a.strong()) for a in out_avals],
                         [get_aval(t).strong() for t in touts])
        return [*outs, *touts]

    return JVPRule(rule, jvp.__name__)


impl_rules[custom_jvp_call_p] = lambda *args, jaxpr, rule, num_consts: compiled(jaxpr)((), args)
abstract_eval_rules[custom_jvp_call_p] = lambda *avals, jaxpr, rule, num_consts: [
    v.aval for v in jaxpr.outvars]


def custom_jvp_call_jvp(primals, tangents, *, jaxpr, rule, num_consts):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise NonDifferentiableError(
            "custom_jvp_call: the function closes over a value being differentiated, whose "
            "derivative its jvp rule cannot see; pass that value as an argument"
        ).with_source(user_source_info())
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    arg_tangents = [_zeros_for(t) for t in arg_tangents]
    outs = rule(args, arg_tangents)
    if _level(outs) > _level([*args, *arg_tangents]):
        raise EscapedTracerError(
            "custom_jvp_call: the jvp rule closes over a traced value of a transformation "
            "inside the differentiation (a vmap or jit around the function); pass that "
            "value to the function as an argument instead").with_source(user_source_info())
    n = len(jaxpr.outvars)
    return outs[:n], outs[n:]


def _level(values) -> int:
    """The highest transformation level among `values` (-1 for plain values)."""
    return max((v._trace.main.level for v in values if isinstance(v, Tracer)), default=-1)


def _zeros_for(t):
    """The user's rule gets arrays: zeros for an inactive tangent (float0 for ints)."""
    if type(t) is Zero and t.aval.dtype == float0:
        return np.zeros(t.aval.shape, float0)
    return instantiate_zeros(t)


jvp_rules[custom_jvp_call_p] = custom_jvp_call_jvp


def custom_jvp_call_transpose(cts, *operands, jaxpr, rule, num_consts):
    """Linear in some arguments (a rule that applies the function to tangents):
    transpose its body."""
    mask = [is_linear(x) for x in operands]
    cts_in = iter(backward_pass(jaxpr, (), [x for x in operands if not is_linear(x)], mask,
                                cts))
    return [next(cts_in) if lin else None for lin in mask]


transpose_rules[custom_jvp_call_p] = custom_jvp_call_transpose


def custom_jvp_call_batch(vals, dims, *, jaxpr, rule, num_consts):
    """The body batched, every output on axis 0; the rule vmapped to match."""
    size = batch_size(vals, dims)
    n_out = len(jaxpr.outvars)
    body, consts, _ = batch_jaxpr(jaxpr, size, dims, [0] * n_out)
    arg_dims = dims[num_consts:]

    def batched_rule(primals, tangents):
        outs, out_dims = vmap_flat(lambda *xs: rule(xs[:len(primals)], xs[len(primals):]),
                                   [*primals, *tangents], [*arg_dims, *arg_dims])
        return [matchaxis(o, d, 0, size) for o, d in zip(outs, out_dims)]

    body = with_consts_as_invars(body)
    outs = custom_jvp_call_p.bind(*consts, *vals, jaxpr=body,
                                  rule=JVPRule(batched_rule, f"vmap({rule})"),
                                  num_consts=len(consts) + num_consts)
    return outs, [0] * n_out


batch_rules[custom_jvp_call_p] = custom_jvp_call_batch

# ---------------------------------------------------------------------------------
# custom_vjp: a hand-written backward pass

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)


class custom_vjp:  # noqa: N801 — JAX's name
    """A function whose reverse-mode derivative is `defvjp`'s pair of functions:
    `fwd(*args) -> (out, residuals)` and `bwd(residuals, ct_out) -> ct_args` (a tuple,
    one cotangent per argument). What `fwd` returns as residuals is exactly what the
    backward pass keeps for this function. Forward mode (`jvp`) is an error, as in JAX.
    """

    def __init__(self, fun: Callable, nondiff_argnums: tuple[int, ...] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """With `nondiff_argnums`, `fwd` takes every argument and `bwd(*nondiff, res,
        ct)` returns cotangents for the other arguments only, as in JAX."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp {self.fun.__name__} has no rule: define one with "
                            "f.defvjp(fwd, bwd)")
        nondiff, fun, diff_args = _without_nondiff(self.fun, args, self.nondiff_argnums)
        fwd = _without_nondiff(self.fwd, args, self.nondiff_argnums)[1]
        bwd = _named(lambda res, ct: self.bwd(*nondiff, res, ct), self.bwd)
        return _bind_with_rule(
            custom_vjp_call_p, fun, diff_args,
            lambda in_tree, body: VJPRule(
                fwd, bwd, in_tree, body.out_tree,
                tuple(v.aval for v in body.jaxpr.outvars),
                tuple(v.aval for v in body.jaxpr.invars[len(body.consts):])))


@attrs.frozen(eq=False)
class VJPRule:
    """The user's `fwd` and `bwd` on flat lists, as an equation's param."""

    fwd: Callable
    bwd: Callable
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    out_avals: tuple
    in_avals: tuple  # the arguments' leaves, which the cotangents must fit

    def forward(self, args) -> tuple[list, list, PyTreeDef]:
        out, res = self.fwd(*tree_unflatten(self.in_tree, args))
        outs, out_tree = tree_flatten(out)
        if out_tree != self.out_tree:
            raise TypeError(f"custom_vjp fwd {self.fwd.__name__} returned structure "
                            f"{out_tree}, but the function returns {self.out_tree}")
        check_same_types(f"custom_vjp fwd {self.fwd.__name__}: outputs",
                         [a.strong() for a in self.out_avals], [get_aval(o).strong() for o in outs])
        res_leaves, res_tree = tree_flatten(res)
        return outs, res_leaves, res_tree

    def backward(self, res_tree: PyTreeDef, res, cts) -> list:
        ct_args = self.bwd(tree_unflatten(res_tree, res), tree_unflatten(self.out_tree, cts))
        return self._checked_cotangents(ct_args)

    def _checked_cotangents(self, ct_args) -> list:
        """One cotangent per argument, as JAX requires: `None` or a pytree of the
        argument's structure (`None` leaves allowed), each leaf of its argument's shape
        and a float dtype (cast to the argument's); never silently a wrong gradient."""
        bwd = f"custom_vjp bwd {self.bwd.__name__} ({_defined_at(self.bwd)})"
        arg_trees = self.in_tree.children
        if not isinstance(ct_args, (tuple, list)) or len(ct_args) != len(arg_trees):
            raise TypeMismatchError(
                f"{bwd} must return a tuple of {len(arg_trees)} cotangents, one per argument "
                f"of the function, but returned {tree_flatten(ct_args)[1]}"
            ).with_source(user_source_info())
        avals = iter(self.in_avals)
        leaves = []
        for i, (ct, arg_tree) in enumerate(zip(ct_args, arg_trees)):
            ct_leaves, ct_tree = tree_flatten(ct, is_leaf=lambda x: x is None)
            if ct is None:
                ct_leaves = [None] * arg_tree.num_leaves
            elif ct_tree != arg_tree:
                raise TypeMismatchError(f"{bwd}: the cotangent of argument {i} has structure "
                                        f"{ct_tree}, but the argument has {arg_tree}"
                                        ).with_source(user_source_info())
            leaves += [_checked_cotangent(bwd, i, c, next(avals)) for c in ct_leaves]
        return leaves

    def __str__(self) -> str:
        return f"{self.fwd.__name__}/{self.bwd.__name__}"


def _defined_at(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"defined at {code.co_filename}:{code.co_firstlineno}" if code else repr(fn)


def _checked_cotangent(bwd: str, i: int, ct, aval):
    """A cotangent from `bwd` for a leaf of argument `i` (of type `aval`); `None` for
    an integer argument, which has no cotangent."""
    if ct is None:
        return None
    ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape:
        raise ShapeError(f"{bwd}: the cotangent of argument {i} has shape "
                         f"{ct_aval.str_short()}, but the argument is {aval.str_short()}"
                         ).with_source(user_source_info())
    if not is_float(aval.dtype):
        return None
    if not is_float(ct_aval.dtype):
        raise DTypeError(f"{bwd}: the cotangent of argument {i} is {ct_aval.str_short()}, "
                         f"not a float like the argument {aval.str_short()}"
                         ).with_source(user_source_info())
    return ct if ct_aval.dtype == aval.dtype else convert_element_type(ct, aval.dtype)


impl_rules[custom_vjp_call_p] = lambda *args, jaxpr, rule, num_consts: compiled(jaxpr)((), args)
abstract_eval_rules[custom_vjp_call_p] = lambda *avals, jaxpr, rule, num_consts: [
    v.aval for v in jaxpr.outvars]


def custom_vjp_call_jvp(primals, tangents, *, jaxpr, rule, num_consts):
    """Run `fwd` for the outputs and residuals; the tangents are a `custom_lin` of the
    residuals, which only transposes (into `bwd`)."""
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise NonDifferentiableError(
            "custom_vjp_call: the function closes over a value being differentiated, whose "
            "cotangent its bwd cannot return; pass it as an argument"
        ).with_source(user_source_info())
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    outs, res, res_tree = rule.forward(args)
    active = tuple(type(t) is not Zero for t in arg_tangents)
    tangents_out = custom_lin_p.bind(*res, *(t for t in arg_tangents if type(t) is not Zero),
                                     rule=rule, res_tree=res_tree, active=active)
    return outs, tangents_out


jvp_rules[custom_vjp_call_p] = custom_vjp_call_jvp


def custom_vjp_call_batch(vals, dims, *, jaxpr, rule, num_consts):
    """Batch the body for the outputs; differentiating the batched function runs `fwd`
    and `bwd` once per lane, as `vmap` of them."""
    size = batch_size(vals, dims)
    n_out = len(jaxpr.outvars)
    body, consts, _ = batch_jaxpr(jaxpr, size, dims, [0] * n_out)
    arg_dims = dims[num_consts:]
    fwd, bwd = _vmapped_rule(rule, arg_dims, size)
    lanes = VJPRule(fwd, bwd, rule.in_tree, rule.out_tree,
                    tuple(batched_aval(a, 0, size) for a in rule.out_avals),
                    tuple(get_aval(v) for v in vals[num_consts:]))
    outs = custom_vjp_call_p.bind(*consts, *vals, jaxpr=with_consts_as_invars(body),
                                  rule=lanes, num_consts=len(consts) + num_consts)
    return outs, [0] * n_out


def _vmapped_rule(rule: VJPRule, arg_dims, size: int):
    """`fwd` and `bwd` run on every lane, their residuals stacked on axis 0."""
    lane_res_tree: list = []  # what the lanes' residuals look like, once fwd has run

    def fwd(*args):
        def lane(*leaves):
            outs, res, res_tree = rule.forward(leaves)
            lane_res_tree[:] = [res_tree]
            return [*outs, *res]

        flat, dims = vmap_flat(lane, tree_flatten(args)[0], list(arg_dims))
        flat = [matchaxis(x, d, 0, size) for x, d in zip(flat, dims)]
        n = rule.out_tree.num_leaves
        return tree_unflatten(rule.out_tree, flat[:n]), flat[n:]

    def bwd(res, cts):
        ct_leaves = tree_flatten(cts)[0]
        flat, dims = vmap_flat(
            lambda *xs: rule.backward(lane_res_tree[0], xs[:len(res)], xs[len(res):]),
            [*res, *ct_leaves], [0] * (len(res) + len(ct_leaves)))
        # an argument the same for every lane gets the sum of the lanes' cotangents
        return tuple(None if c is None else
                     reduce_sum(matchaxis(c, d, 0, size), (0,)) if want is None else
                     matchaxis(c, d, want, size)
                     for c, d, want in zip(flat, dims, arg_dims))

    fwd.__name__ = f"vmap({rule.fwd.__name__})"
    bwd.__name__ = f"vmap({rule.bwd.__name__})"
    return fwd, bwd


batch_rules[custom_vjp_call_p] = custom_vjp_call_batch


def custom_lin_impl(*args, rule, res_tree, active):
    raise TypeError(f"forward-mode differentiation (jvp, linearize, jacfwd) of the custom_vjp "
                    f"function with rule {rule} is not possible: it only has a backward pass")


impl_rules[custom_lin_p] = custom_lin_impl
abstract_eval_rules[custom_lin_p] = lambda *avals, rule, res_tree, active: [
    tangent_aval(a.strong()) for a in rule.out_avals]


def custom_lin_transpose(cts, *operands, rule, res_tree, active):
    n_res = res_tree.num_leaves
    res = operands[:n_res]
    ct_args = rule.backward(res_tree, res, [instantiate_zeros(ct) for ct in cts])
    return [*[None] * n_res, *(ct for ct, act in zip(ct_args, active) if act)]


transpose_rules[custom_lin_p] = custom_lin_transpose
# jvp: none (it is a linear map of the tangents that only `bwd` knows); batching: none
# either, as its forward evaluation is the error above; transposed under vmap, `bwd`
# simply runs on batched values.
