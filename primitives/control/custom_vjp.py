"""`custom_vjp`: a function whose backward pass is written by hand.

`f = custom_vjp(fun)` with `f.defvjp(fwd, bwd)` (JAX's API). Differentiating a call
runs `fwd` on the primal values for the outputs and the residuals (never the body,
unless `fwd` calls it) and gives the output tangents as a `custom_lin` of the
residuals, a linear map only `bwd` knows: transposing it calls `bwd`. How a call is
traced is `custom_derivatives`' docstring.

Three primitives: `custom_vjp` is a call from Python (its param, a `VJPRule`, holds
the body, `fwd` and `bwd`), `custom_vjp_call` the call as a staging trace records it,
with the body's jaxpr, and `custom_lin` the tangent map.
"""

from __future__ import annotations

import functools
from typing import Callable

import attrs

from ...core.activity import Zero
from ...core.avals import is_float, tangent_aval
from ...core.errors import DTypeError, ShapeError, TypeMismatchError
from ...core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from ...core.staging import staging_rules
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import instantiate_zeros, jvp_rules
from ...interpreters.batching import batch_rules, batch_size, batched_aval, vmap_flat
from ...interpreters.transpose import def_transpose_runs_user_code, transpose_rules
from ..shape.structural import convert_element_type, matchaxis, reduce_sum
from .common import batch_jaxpr, check_same_types, with_consts_as_invars
from .custom_derivatives import (
    CustomRule,
    batched_body,
    batched_origin,
    call_custom,
    check_no_closure,
    is_called_eagerly,
    level_of,
    named,
    origin_of,
    refuse_active_closure,
    stage_call,
    staged_call_primitive,
    unstaged_abstract_eval,
    without_nondiff,
)


class custom_vjp:  # noqa: N801 — JAX's name
    """A function whose reverse-mode derivative is `defvjp`'s pair of functions:
    `fwd(*args) -> (out, residuals)` and `bwd(residuals, ct_out) -> ct_args` (a tuple,
    one cotangent per argument). What `fwd` returns as residuals is exactly what the
    backward pass keeps for this function. Forward mode (`jvp`) is an error, as in JAX.

    Args:
        fun: the function, whose body computes the value.
        nondiff_argnums: positions of arguments that are not differentiated; `fwd`
            takes them as `fun` does, and `bwd` receives them first.

    Example:
        The identity, with its cotangent clipped to [-1, 1]:

        >>> @inert.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> def fwd(x):
        ...     return x, None  # nothing to keep
        >>> def bwd(_, ct):
        ...     return (jnp.clip(ct, -1.0, 1.0),)
        >>> clip_gradient.defvjp(fwd, bwd)
        >>> print(inert.grad(lambda x: 3.0 * clip_gradient(x))(2.0))
        1.0
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
        nondiff, fun, diff_args = without_nondiff(self.fun, args, self.nondiff_argnums)
        if is_called_eagerly():
            return fun(*diff_args)
        fwd = without_nondiff(self.fwd, args, self.nondiff_argnums)[1]
        bwd = named(lambda res, ct: self.bwd(*nondiff, res, ct), self.bwd)
        leaves, in_tree = tree_flatten(diff_args)
        origin = origin_of(self, (self.fun, self.fwd, self.bwd), nondiff)
        rule = VJPRule(fun, in_tree, [], origin, fwd, bwd, tuple(get_aval(x) for x in leaves))
        return call_custom(custom_vjp_p, rule, leaves)


@attrs.frozen(eq=False)
class VJPRule(CustomRule):
    """The body, `fwd` and `bwd`; `out_avals` are the outputs' types where known (the
    staged body's, which `fwd` must match, or `fwd`'s own once it ran)."""

    fwd: Callable
    bwd: Callable
    in_avals: tuple  # the arguments' leaves, which the cotangents must fit
    out_avals: tuple | None = None

    def forward(self, args) -> tuple[list, list, PyTreeDef, VJPRule]:
        """`fwd` on flat lists: the outputs, the residuals, their structure, and this
        rule knowing the outputs' types (for `custom_lin`)."""
        out, res = self.fwd(*tree_unflatten(self.in_tree, args))
        outs, out_tree = tree_flatten(out)
        if self.out_avals is not None:
            if out_tree != self.out_tree:
                raise TypeError(f"custom_vjp fwd {self.fwd.__name__} returned structure "
                                f"{out_tree}, but the function returns {self.out_tree}")
            check_same_types(f"custom_vjp fwd {self.fwd.__name__}: outputs",
                             [a.strong() for a in self.out_avals],
                             [get_aval(o).strong() for o in outs])
        self.set_out_tree(out_tree)
        res_leaves, res_tree = tree_flatten(res)
        typed = attrs.evolve(self, out_avals=tuple(get_aval(o) for o in outs))
        return outs, res_leaves, res_tree, typed

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


def _batched_rule(rule: VJPRule, vals, dims, size: int) -> VJPRule:
    """`fwd` and `bwd` run on every lane, their residuals stacked on axis 0 (and the
    body, should it run, too)."""
    lane: list = []  # the lanes' residual structure and output count, once fwd has run

    def fwd(*args):
        def lane_fwd(*leaves):
            outs, res, res_tree, _ = rule.forward(leaves)
            lane[:] = [res_tree, len(outs)]
            return [*outs, *res]

        flat, out_dims = vmap_flat(lane_fwd, tree_flatten(args)[0], list(dims))
        flat = [matchaxis(x, d, 0, size) for x, d in zip(flat, out_dims)]
        n = lane[1]
        return tree_unflatten(rule.out_tree, flat[:n]), flat[n:]

    def bwd(res, cts):
        ct_leaves = tree_flatten(cts)[0]
        flat, ct_dims = vmap_flat(
            lambda *xs: rule.backward(lane[0], xs[:len(res)], xs[len(res):]),
            [*res, *ct_leaves], [0] * (len(res) + len(ct_leaves)))
        # an argument the same for every lane gets the sum of the lanes' cotangents
        return tuple(None if c is None else
                     reduce_sum(matchaxis(c, d, 0, size), (0,)) if want is None else
                     matchaxis(c, d, want, size)
                     for c, d, want in zip(flat, ct_dims, dims))

    fwd.__name__ = f"vmap({rule.fwd.__name__})"
    bwd.__name__ = f"vmap({rule.bwd.__name__})"
    out_avals = None if rule.out_avals is None else tuple(
        batched_aval(a, 0, size) for a in rule.out_avals)
    return VJPRule(batched_body(rule, dims, size), rule.in_tree, rule.out_tree_store,
                   batched_origin(rule, dims, size), fwd, bwd,
                   tuple(get_aval(v) for v in vals), out_avals)


# ---------------------------------------------------------------------------------
# custom_vjp: a call from Python

custom_vjp_p = Primitive("custom_vjp", multiple_results=True)

impl_rules[custom_vjp_p] = lambda *args, rule: rule.run(*args)
abstract_eval_rules[custom_vjp_p] = unstaged_abstract_eval


def custom_vjp_jvp(primals, tangents, *, rule):
    """Run `fwd` for the outputs and residuals; the tangents are a `custom_lin` of the
    residuals, which only transposes (into `bwd`)."""
    outs, res, res_tree, typed = rule.forward(primals)
    check_no_closure(f"the custom_vjp fwd {rule.fwd.__name__}", [*outs, *res],
                     level_of([*primals, *tangents]))
    active = tuple(type(t) is not Zero for t in tangents)
    tangents_out = custom_lin_p.bind(*res, *(t for t in tangents if type(t) is not Zero),
                                     rule=typed, res_tree=res_tree, active=active)
    return outs, tangents_out


jvp_rules[custom_vjp_p] = custom_vjp_jvp
# transpose: none; a linear program is staged, where a call is `custom_vjp_call`


def custom_vjp_batch(vals, dims, *, rule):
    outs = custom_vjp_p.bind(*vals, rule=_batched_rule(rule, vals, dims,
                                                       batch_size(vals, dims)))
    return outs, [0] * len(outs)


batch_rules[custom_vjp_p] = custom_vjp_batch


def custom_vjp_staging(trace, tracers, *, rule):
    def bind_staged(body):
        typed = attrs.evolve(rule, out_avals=tuple(v.aval for v in body.jaxpr.outvars))
        return custom_vjp_call_p.bind(*body.consts, *tracers, jaxpr=body.jaxpr, rule=typed,
                                      num_consts=len(body.consts))

    return stage_call(trace, tracers, custom_vjp_p, rule, bind_staged)


staging_rules[custom_vjp_p] = custom_vjp_staging

# ---------------------------------------------------------------------------------
# custom_vjp_call: a call as a staging trace records it, with the body's jaxpr

custom_vjp_call_p = staged_call_primitive("custom_vjp_call")


def custom_vjp_call_jvp(primals, tangents, *, jaxpr, rule, num_consts):
    refuse_active_closure(custom_vjp_call_p, tangents[:num_consts], rule)
    return custom_vjp_jvp(primals[num_consts:], tangents[num_consts:], rule=rule)


jvp_rules[custom_vjp_call_p] = custom_vjp_call_jvp


def custom_vjp_call_batch(vals, dims, *, jaxpr, rule, num_consts):
    """Batch the body for the outputs; differentiating the batched function runs `fwd`
    and `bwd` once per lane, as `vmap` of them."""
    size = batch_size(vals, dims)
    n_out = len(jaxpr.outvars)
    body, consts, _ = batch_jaxpr(jaxpr, size, dims, [0] * n_out)
    lanes = _batched_rule(rule, vals[num_consts:], dims[num_consts:], size)
    outs = custom_vjp_call_p.bind(*consts, *vals, jaxpr=with_consts_as_invars(body),
                                  rule=lanes, num_consts=len(consts) + num_consts)
    return outs, [0] * n_out


batch_rules[custom_vjp_call_p] = custom_vjp_call_batch

# ---------------------------------------------------------------------------------
# custom_lin: the tangent map of a custom_vjp function

custom_lin_p = Primitive("custom_lin", multiple_results=True)


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
def_transpose_runs_user_code(custom_lin_p)
# jvp: none (it is a linear map of the tangents that only `bwd` knows); forward mode
# under vmap is the same error as evaluating it, raised by its batching rule; transposed
# under vmap, `bwd` simply runs on batched values.
batch_rules[custom_lin_p] = lambda vals, dims, **params: custom_lin_impl(**params)
