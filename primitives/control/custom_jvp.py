"""`custom_jvp`: a function whose derivative is a rule written by hand.

`f = custom_jvp(fun)` with `@f.defjvp def f_jvp(primals, tangents): ...` (JAX's API).
Forward mode calls the user's rule instead of differentiating `fun`; reverse mode
follows, since inert builds it from forward mode (the rule's tangent computations are
ordinary, linear primitives that partial evaluation and transposition handle). Under
`vmap` the rule is vmapped too. How a call is traced — the rule on the primal values,
the body only where JAX runs it — is `custom_derivatives`' docstring.

Two primitives: `custom_jvp` is a call from Python (its param, a `JVPRule`, holds the
body and the rule as Python functions), `custom_jvp_call` the call as a staging
trace records it, with the body's jaxpr. The rule is kept as a Python function,
called when the jvp happens, as in JAX; unlike JAX, inert does not convert its
closure, so a rule that closes over a traced value (an argument of an enclosing `jit`
or `vmap`) fails with a clear error when it runs: pass such values to the function as
arguments.
"""

from __future__ import annotations

import functools
import operator
from typing import Callable

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import float0, tangent_aval
from ...core.errors import EscapedTracerError
from ...core.pytree import PyTreeDef, tree_flatten, tree_map, tree_unflatten
from ...core.staging import staging_rules
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import instantiate_zeros, jvp_rules
from ...interpreters.batching import batch_rules, batch_size, vmap_flat
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from ..shape.structural import matchaxis
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


class custom_jvp:  # noqa: N801 — JAX's name
    """A function whose derivative is `defjvp`'s rule, not that of its body.

    Arguments at `nondiff_argnums` (functions, static settings) are not
    differentiated: the rule receives them first, `jvp(*nondiff, primals, tangents)`,
    with `primals` and `tangents` for the other arguments only, as in JAX. Reverse
    mode transposes the rule's linear part, as JAX's does.

    Args:
        fun: the function, whose body computes the value (and is what `jit` and
            `vmap` see).
        nondiff_argnums: positions of arguments that are not differentiated.

    Example:
        A derivative that stays finite where the body's overflows:

        >>> @inert.custom_jvp
        ... def log1pexp(x):
        ...     return jnp.log1p(jnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1 - 1 / (1 + jnp.exp(x)))
        >>> print(inert.grad(log1pexp)(1000.0), inert.grad(log1pexp.fun)(1000.0))
        1.0 nan
    """

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
        nondiff, fun, diff_args = without_nondiff(self.fun, args, self.nondiff_argnums)
        if is_called_eagerly():
            return fun(*diff_args)
        leaves, in_tree = tree_flatten(diff_args)
        jvp = named(lambda primals, tangents: self.jvp(*nondiff, primals, tangents), self.jvp)
        store: list = []
        rule = JVPRule(fun, in_tree, store, origin_of(self, (self.fun, self.jvp), nondiff),
                       _flat_rule(jvp, in_tree, store), jvp.__name__)
        return call_custom(custom_jvp_p, rule, leaves)


@attrs.frozen(eq=False)
class JVPRule(CustomRule):
    """The body and the rule on flat lists: `jvp(primals, tangents) -> outs + tangents`."""

    jvp: Callable
    name: str

    def __str__(self) -> str:
        return self.name


def _flat_rule(jvp: Callable, in_tree: PyTreeDef, store: list) -> Callable:
    """The user's rule on flat lists, its outputs checked: a tangent per output, of
    the output's tangent type."""

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
        if t_tree != out_tree:
            raise TypeError(f"the custom jvp rule of {jvp.__name__} returned structures "
                            f"{out_tree} and {t_tree} for the outputs and their tangents")
        check_same_types(f"custom jvp rule {jvp.__name__}: tangents",
                         [tangent_aval(get_aval(o).strong()) for o in outs],
                         [get_aval(t).strong() for t in touts])
        store[:] = [out_tree]
        return [*outs, *touts]

    return rule


def _batched_rule(rule: JVPRule, dims, size: int) -> JVPRule:
    """`rule` on every lane at once: its body and its jvp rule vmapped, lazily."""

    def jvp(primals, tangents):
        n = len(primals)
        outs, out_dims = vmap_flat(lambda *xs: rule.jvp(xs[:n], xs[n:]),
                                   [*primals, *tangents], [*dims, *dims])
        return [matchaxis(o, d, 0, size) for o, d in zip(outs, out_dims)]

    return JVPRule(batched_body(rule, dims, size), rule.in_tree, rule.out_tree_store,
                   batched_origin(rule, dims, size), jvp, f"vmap({rule.name})")


def _zeros_for(t):
    """The user's rule gets arrays: zeros for an inactive tangent (float0 for ints)."""
    if type(t) is Zero and t.aval.dtype == float0:
        return np.zeros(t.aval.shape, float0)
    return instantiate_zeros(t)


# ---------------------------------------------------------------------------------
# custom_jvp: a call from Python

custom_jvp_p = Primitive("custom_jvp", multiple_results=True)

impl_rules[custom_jvp_p] = lambda *args, rule: rule.run(*args)
abstract_eval_rules[custom_jvp_p] = unstaged_abstract_eval


def custom_jvp_jvp(primals, tangents, *, rule):
    """The rule on the primal values; the body runs only if the rule calls it."""
    tangents = [_zeros_for(t) for t in tangents]
    outs = rule.jvp(primals, tangents)
    check_no_closure(f"the custom jvp rule {rule.name}", outs, level_of([*primals, *tangents]))
    n = len(outs) // 2
    return outs[:n], outs[n:]


jvp_rules[custom_jvp_p] = custom_jvp_jvp
# transpose: none; a linear program is staged, where a call is `custom_jvp_call`


def custom_jvp_batch(vals, dims, *, rule):
    outs = custom_jvp_p.bind(*vals, rule=_batched_rule(rule, dims, batch_size(vals, dims)))
    return outs, [0] * len(outs)


batch_rules[custom_jvp_p] = custom_jvp_batch


def custom_jvp_staging(trace, tracers, *, rule):
    return stage_call(trace, tracers, custom_jvp_p, rule, lambda body: custom_jvp_call_p.bind(
        *body.consts, *tracers, jaxpr=body.jaxpr, rule=rule, num_consts=len(body.consts)))


staging_rules[custom_jvp_p] = custom_jvp_staging

# ---------------------------------------------------------------------------------
# custom_jvp_call: a call as a staging trace records it, with the body's jaxpr

custom_jvp_call_p = staged_call_primitive("custom_jvp_call")


def custom_jvp_call_jvp(primals, tangents, *, jaxpr, rule, num_consts):
    refuse_active_closure(custom_jvp_call_p, tangents[:num_consts], rule)
    outs, touts = custom_jvp_jvp(primals[num_consts:], tangents[num_consts:], rule=rule)
    check_same_types(f"custom jvp rule {rule.name}: outputs",
                     [v.aval.strong() for v in jaxpr.outvars],
                     [get_aval(o).strong() for o in outs])
    return outs, touts


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
    outs = custom_jvp_call_p.bind(*consts, *vals, jaxpr=with_consts_as_invars(body),
                                  rule=_batched_rule(rule, dims[num_consts:], size),
                                  num_consts=len(consts) + num_consts)
    return outs, [0] * n_out


batch_rules[custom_jvp_call_p] = custom_jvp_call_batch
