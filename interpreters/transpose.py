"""Transposition: run a linear jaxpr backwards.

Rule signature::

    transpose_rules[prim](ct, *operands, **params) -> list  # one cotangent per operand

`ct` is the output cotangent (a list for multiple-result primitives). Each operand is
either a `LinearInput(aval)`, a value the program is linear in, or a known value
(a residual or a literal). The rule returns a cotangent for each `LinearInput` and
`None` for known operands. A cotangent nobody contributed to is the symbolic
`Zero`: an equation whose output cotangents are all zero is skipped, so zeros cost
nothing.

Equations of a linear jaxpr that read no linear input (cheap values recomputed
instead of saved) are evaluated forwards, each just before the first transposed
equation that needs it, and every known value is dropped after its last read.

A cotangent may also be `Masked`: zero outside a mask, which is what `select_n`
gives a case of the output's shape and dtype. It stays symbolic through transposes
that act elementwise on the cotangent, with operands of that same type
(`def_elementwise_transpose`), and the mask is applied when anything else reads it.
So where a case was not chosen, its cotangent is exactly 0 even if a coefficient on
that elementwise chain is infinite: the gradient of `where(x > 0, sqrt(x), 0)` is 0
at 0, not 0 * inf = NaN. A chain that broadcasts, reshapes or changes dtype applies
the mask earlier, and there such a coefficient still gives NaN, as in JAX.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import attrs

from ..core.activity import Zero
from ..core.avals import ShapedArray, tangent_aval
from ..core.ir import Jaxpr, Literal, Var, sub_jaxprs
from ..core.rules import RuleTable
from ..core.staging import cyclic_gc_paused, has_tracer, stage
from ..core.trace import (
    Primitive,
    at_source,
    bind,
    current_dynamic,
    eval_primitive,
    get_aval,
    quietly,
    trace_depth,
)
from .ad import add_any_p, add_tangents, zeros, zeros_p
from .cse import cse_jaxpr
from .dce import dce_jaxpr
from .eval import compile_jaxpr

transpose_rules = RuleTable("transpose")


@attrs.frozen
class LinearInput:
    """An operand the program is linear in (JAX's UndefinedPrimal)."""

    aval: ShapedArray


def is_linear(x) -> bool:
    return type(x) is LinearInput


linear_input = functools.lru_cache(maxsize=4096)(LinearInput)
"""`LinearInput(aval)`, one per aval (a value: rules only read its aval): a backward pass
makes one per linear operand it reads, and finding it costs half of making it."""


@attrs.frozen(eq=False)
class Masked:
    """A cotangent known to be zero outside a mask: `apply_mask(value)` is its value."""

    value: Any
    apply_mask: Callable[[Any], Any]


def materialize(ct):
    return ct.apply_mask(ct.value) if type(ct) is Masked else ct


_elementwise_transposes: set[Primitive] = set()


def def_elementwise_transpose(*prims: Primitive) -> None:
    """Primitives whose transpose is elementwise in the cotangent when no operand is
    broadcast (neg, a product with a known coefficient, ...): a masked cotangent
    passes through them still masked."""
    _elementwise_transposes.update(prims)


_user_code_transposes: set[Primitive] = set()


def def_transpose_runs_user_code(*prims: Primitive) -> None:
    """Primitives whose transpose runs the user's Python (a custom_vjp's `bwd`). As in
    JAX, it runs at every pullback and reads the state it reads then, so a backward pass
    holding one is interpreted every time (`repeated_backward_pass`), never staged once."""
    _user_code_transposes.update(prims)


def runs_user_code(jaxpr: Jaxpr) -> bool:
    """Whether transposing `jaxpr` runs user code: an equation of it or of a program in
    its params (a loop's body) is a `def_transpose_runs_user_code` primitive."""
    stack = [jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            if eqn.primitive in _user_code_transposes:
                return True
            stack.extend(sub_jaxprs(eqn))
    return False


transpose_rules[add_any_p] = lambda ct, x, y: [ct, ct]
def_elementwise_transpose(add_any_p)
# zeros is the zero linear map (of no inputs), as a rule; the backward pass itself
# evaluates a `zeros` equation as a known value, since it may be one (an inner backward
# pass's zero, read by a product): a loop whose linear carry starts at such a known zero
# stays linear in that carry (see scan's transpose)
transpose_rules[zeros_p] = lambda ct, **params: []


def backward_pass(jaxpr: Jaxpr, consts, known_args, linear_mask, cts_out,
                  observe: Callable | None = None) -> list:
    """Cotangents of the linear inputs of `jaxpr`, given those of its outputs.

    `known_args` are the values of the non-linear inputs, `linear_mask` says which
    inputs are linear; cotangents may be `Zero`. One pass each way, no recursion.
    Floating-point warnings are off (`quietly`): an infinite coefficient where a
    `Masked` cotangent is zero is expected, and the user did not write these
    operations. Each equation's transpose binds with the equation's source line, so
    an error (or a NaN under `jax_debug_nans`) names the user's line it came from.
    `observe(eqn, env, ct_env)`, if given, is called after each equation with the known
    values and the cotangents then alive (`memory_profile`).
    """
    with cyclic_gc_paused():
        return quietly(_backward_pass, jaxpr, consts, known_args, linear_mask, cts_out,
                       observe)


def _backward_pass(jaxpr: Jaxpr, consts, known_args, linear_mask, cts_out, observe) -> list:
    env = dict(zip(jaxpr.constvars, consts))
    linear_vars = set()
    known = iter(known_args)
    for var, is_lin in zip(jaxpr.invars, linear_mask):
        if is_lin:
            linear_vars.add(var)
        else:
            env[var] = next(known)
    events = _backward_schedule(jaxpr, env, linear_vars)

    ct_env: dict[Var, object] = {}
    for var, ct in zip(jaxpr.outvars, cts_out):
        if type(var) is Var and var in linear_vars and type(ct) is not Zero:
            _accumulate(ct_env, var, ct)
    at_eval = current_dynamic().level == 0
    for eqn, is_linear_eqn, dead in events:
        if not is_linear_eqn:  # plain values with no transformation run their impl directly
            args = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
            if at_eval and not has_tracer(args):
                out = eval_primitive(eqn.primitive, args, eqn.params, eqn.source_info)
            else:
                out = bind(eqn.primitive, args, eqn.params, eqn.source_info)
            env.update(zip(eqn.outputs, out if eqn.primitive.multiple_results else [out]))
            del out, args  # each value dies after its last use
        else:
            _transpose_into(ct_env, eqn, env, linear_vars)
        if observe is not None:
            observe(eqn, env, ct_env)
        for v in dead:
            del env[v]
    return [materialize(ct_env.pop(v, Zero(v.aval)))
            for v, lin in zip(jaxpr.invars, linear_mask) if lin]


def repeated_backward_pass(jaxpr: Jaxpr, known_args: list, linear_mask: list,
                           cts_out: list) -> list:
    """`backward_pass` (without consts) of a linear function transposed again and again:
    a replayed `vjp` returns the same linear jaxpr at every call, and one `vjp_fn` may
    pull back many cotangents. The second transpose at the same types stages the pass
    and compiles it, as a replayed `grad`'s program is (`interpreters.replay`); later
    ones run the compiled program: the same operations in the same order, without
    interpreting the rules. Under a transformation it is interpreted (its operations
    are the transformation's); so is a pass that runs user code (`runs_user_code`: a
    custom_vjp's `bwd` runs at every pullback), and one that cannot be staged (a rule
    that needs a value, user code that fails on a traced value)."""
    if trace_depth() > 0:
        return backward_pass(jaxpr, (), known_args, linear_mask, cts_out)
    key = (tuple(linear_mask), *(Zero if type(c) is Zero else get_aval(c) for c in cts_out))
    programs = _repeated.setdefault(jaxpr, {})
    program = programs.get(key)
    if program is None and key in programs:  # the second time: compile it
        programs[key] = program = _compiled_transpose(jaxpr, linear_mask, cts_out)
    elif program is None:
        programs[key] = None
    if program is None or program is _INTERPRETED:
        return backward_pass(jaxpr, (), known_args, linear_mask, cts_out)
    return program(known_args, cts_out)


def _compiled_transpose(jaxpr: Jaxpr, linear_mask: list, cts_out: list):
    """The pass's `_CompiledTranspose`, or `_INTERPRETED` where it is not to be staged.
    Staging runs the rules on tracers: whatever fails there (an `InertError`, user code
    calling a numpy method on a tracer) fails only there, and the pass is interpreted."""
    if runs_user_code(jaxpr):
        return _INTERPRETED
    try:
        return _CompiledTranspose.of(jaxpr, linear_mask, cts_out)
    except Exception:  # noqa: BLE001 — the interpreted pass is the reference; it runs
        return _INTERPRETED


_repeated: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""A linear jaxpr -> {(its linear mask, its cotangents' avals (`Zero` for a symbolic
zero)): None, after the first transpose; then its `_CompiledTranspose`, or
`_INTERPRETED`}."""
_INTERPRETED = "interpreted"


@attrs.frozen(eq=False)
class _CompiledTranspose:
    """A backward pass staged and compiled: `(known_args, cts) -> cotangents`. Which
    input cotangents are symbolic zeros is the same on every call (`fixed`)."""

    run: Callable
    consts: list  # the staged program's own (its rules' constants)
    fixed: tuple  # per input cotangent: its `Zero`, or None: the program computes it

    @classmethod
    def of(cls, jaxpr: Jaxpr, linear_mask: list, cts_out: list) -> _CompiledTranspose:
        zero_cts = [c if type(c) is Zero else None for c in cts_out]
        n_known = linear_mask.count(False)
        fixed: list = []

        def transposed(*args):
            given = iter(args[n_known:])
            cts_in = backward_pass(jaxpr, (), list(args[:n_known]), linear_mask,
                                   [next(given) if z is None else z for z in zero_cts])
            fixed[:] = [c if type(c) is Zero else None for c in cts_in]
            return [c for c in cts_in if type(c) is not Zero]

        in_avals = [v.aval for v, lin in zip(jaxpr.invars, linear_mask) if not lin] + [
            get_aval(c) for c in cts_out if type(c) is not Zero]
        staged, consts = stage(transposed, in_avals)
        staged, _ = dce_jaxpr(cse_jaxpr(staged), [True] * len(staged.outvars))
        return cls(compile_jaxpr(staged), consts, tuple(fixed))

    def __call__(self, known_args: list, cts_out: list) -> list:
        args = [*known_args, *(c for c in cts_out if type(c) is not Zero)]
        outs = iter(self.run(self.consts, args))
        return [next(outs) if z is None else z for z in self.fixed]


def _transpose_into(ct_env: dict, eqn, env: dict, linear_vars: set) -> None:
    """Transpose one linear equation: its output cotangents into its linear inputs'."""
    outputs = eqn.outputs
    if len(outputs) == 1:  # the usual case, without building lists first
        ct = ct_env.pop(outputs[0], None)
        if ct is None:
            return
        cts = [ct]
    else:
        cts = [ct_env.pop(v, None) for v in outputs]
        if all(ct is None for ct in cts):
            return
        cts = [Zero(v.aval) if ct is None else ct for v, ct in zip(outputs, cts)]
    operands = [linear_input(a.aval) if a in linear_vars else
                a.val if type(a) is Literal else env[a] for a in eqn.inputs]
    cts_in = at_source(eqn.source_info, _transpose_eqn, eqn, cts, operands)
    for atom, ct in zip(eqn.inputs, cts_in):
        if ct is not None and type(ct) is not Zero and atom in linear_vars:
            if atom in ct_env:
                _accumulate(ct_env, atom, ct)
            else:  # the first contribution (a chain's only one): `_accumulate`'s first case
                ct_env[atom] = ct


def _backward_schedule(jaxpr: Jaxpr, env: dict, linear_vars: set) -> list:
    """The backward pass's steps in order, `(eqn, is_linear, values dead after it)`: the
    linear equations in reverse, each preceded by the equations that read no linear
    value (known values recomputed from the residuals) that it needs first. So a
    recomputed value is made just before its first use and dropped after its last,
    as the forward pass does, instead of all of them living through the whole pass;
    one that no linear equation needs is never made. Adds the linear equations'
    outputs to `linear_vars`; drops from `env` the known values no step reads."""
    recipes: dict[Var, object] = {}
    linear_eqns = []
    for eqn in jaxpr.eqns:
        for a in eqn.inputs:
            if a in linear_vars:  # a Literal hashes by identity: never in the set
                linear_vars.update(eqn.outputs)
                linear_eqns.append(eqn)
                break
        else:
            for v in eqn.outputs:
                recipes[v] = eqn
    linear_eqns.reverse()
    if recipes:
        steps, made = [], set()
        for eqn in linear_eqns:
            steps += [(e, False) for e in _recipes_needed(eqn.inputs, recipes, made)]
            steps.append((eqn, True))
    else:
        steps = [(eqn, True) for eqn in linear_eqns]
    # one sweep from the end: a known value's first sighting is its last read
    read: set[Var] = set()
    events = []
    for eqn, is_linear_eqn in reversed(steps):
        # a recomputed value nothing reads dies at once
        dead = [] if is_linear_eqn else [v for v in eqn.outputs if v not in read]
        for a in eqn.inputs:
            if type(a) is Var and a not in read and a not in linear_vars:
                read.add(a)
                dead.append(a)
        events.append((eqn, is_linear_eqn, dead))
    events.reverse()
    for v in [v for v in env if v not in read]:
        del env[v]
    return events


def _recipes_needed(atoms, recipes: dict, made: set) -> list:
    """The equations not made yet that compute `atoms`, dependencies first."""
    order, stack = [], [(a, False) for a in atoms if type(a) is Var]
    while stack:
        var, expanded = stack.pop()
        eqn = recipes.get(var)
        if eqn is None or (id(eqn) in made and not expanded):
            continue
        if expanded:
            order.append(eqn)
            continue
        made.add(id(eqn))
        stack.append((var, True))
        stack += [(a, False) for a in eqn.inputs if type(a) is Var]
    return order


def _transpose_eqn(eqn, cts: list, operands: list) -> list:
    rule = transpose_rules[eqn.primitive]
    if eqn.primitive.multiple_results:
        return rule([materialize(ct) for ct in cts], *operands, **eqn.params)
    (ct,) = cts
    if type(ct) is not Masked:
        return rule(ct, *operands, **eqn.params)
    if eqn.primitive in _elementwise_transposes and all(
            o.aval.strong() == eqn.outputs[0].aval.strong() for o in operands if is_linear(o)):
        return [_still_masked(c, ct.apply_mask)
                for c in rule(ct.value, *operands, **eqn.params)]
    return rule(ct.apply_mask(ct.value), *operands, **eqn.params)


def _still_masked(ct, outer: Callable):
    """An operand's cotangent from a masked one: masked too (by both masks, if the
    primitive masks it again: a `where` inside a `where`)."""
    if ct is None or type(ct) is Zero:
        return ct
    if type(ct) is Masked:
        inner = ct.apply_mask
        return Masked(ct.value, lambda v: outer(inner(v)))
    return Masked(ct, outer)


def _accumulate(ct_env: dict, var: Var, ct) -> None:
    old = ct_env.get(var)
    if old is None:
        ct_env[var] = ct
    elif type(old) is Masked and type(ct) is Masked and old.apply_mask is ct.apply_mask:
        ct_env[var] = Masked(add_tangents(old.value, ct.value), ct.apply_mask)
    else:
        ct_env[var] = add_tangents(materialize(old), materialize(ct))


def transpose_jaxpr(jaxpr: Jaxpr, linear_mask: list[bool]) -> tuple[Jaxpr, list]:
    """The transpose of `jaxpr` as a jaxpr: `(*known inputs, *output cotangents) ->
    (*cotangents of the linear inputs)`, zeros instantiated. For control flow."""
    n_known = len(linear_mask) - sum(linear_mask)

    def transposed(*args):
        cts = backward_pass(jaxpr, (), args[:n_known], linear_mask, args[n_known:])
        return [zeros(ct.aval) if type(ct) is Zero else ct for ct in cts]

    known_avals = [v.aval for v, lin in zip(jaxpr.invars, linear_mask) if not lin]
    ct_avals = [tangent_aval(v.aval) for v in jaxpr.outvars]
    new_jaxpr, consts = stage(transposed, [*known_avals, *ct_avals])
    return new_jaxpr, consts
