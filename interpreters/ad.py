"""Forward mode: the jvp interpreter.

Rule signature::

    jvp_rules[prim](primals: list, tangents: list, **params) -> (primals_out, tangents_out)

A tangent is either a value or `Zero(aval, level)`: the symbolic tangent of a value
that is inactive at this level. Rules see `Zero` for inactive operands and emit no
work for them; the trace skips an equation whose operands are all inactive without
calling its rule at all. `defjvp` reduces most rules to one line per operand.

A value from an outer level (or a plain constant) seen here is lifted with a `Zero`
tangent of *this* level: it is inactive here and keeps its own derivative at its own
level. That is why nested derivatives need no special care.

Refs follow the same rule, fixed when the ref is created: a ref created while this
jvp runs is active here (its tangent is a ref of the same type, zeros to start with);
a ref from outside is lifted with a `Zero` tangent, so reading it gives inactive
values, and writing an active value into it raises `ActivityError` naming this level.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray, is_python_scalar, tangent_aval
from ..core.backends import operator_impl
from ..core.check import checks_enabled
from ..core.errors import ActivityError, ConcretizationError, DTypeError, NonDifferentiableError
from ..core.ir import Jaxpr, Literal, Var
from ..core.rules import RuleTable
from ..core.staging import StagingTracer, stage
from ..core.trace import (
    Primitive,
    Trace,
    Tracer,
    abstract_eval_rules,
    bind,
    binding_below,
    describe_level,
    escaped_error,
    get_aval,
    impl_rules,
    new_main,
    quietly,
    user_source_info,
)
from .eval import eval_jaxpr
from .fusion import deffused_ufunc

jvp_rules = RuleTable("jvp")


def defjvp(prim: Primitive, *operand_rules) -> None:
    """One rule per operand: `rule(tangent, out, *primals, **params)` gives that
    operand's contribution to the output tangent; `None` marks an operand with no
    derivative (an order, an index): an error if it is active, nothing if not."""

    def rule(primals, tangents, **params):
        out = bind(prim, primals, params)
        tangent_out = None
        for i, (operand_rule, t) in enumerate(zip(operand_rules, tangents)):
            if type(t) is Zero:
                continue
            if operand_rule is None:
                raise_non_differentiable(prim, i)
            contribution = operand_rule(t, out, *primals, **params)
            tangent_out = contribution if tangent_out is None else \
                add_tangents(tangent_out, contribution)
        if tangent_out is None:
            tangent_out = Zero(tangent_aval(get_aval(out)))
        return [out], [tangent_out]

    jvp_rules[prim] = rule


def defjvp_zero(prim: Primitive) -> None:
    """Piecewise-constant operations (floor, sign, comparisons): zero derivative."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]

    jvp_rules[prim] = rule


def deflinear(prim: Primitive) -> None:
    """Operations linear in their float operands jointly: the tangent is the same
    operation applied to the tangents (inactive ones as explicit zeros)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        tangents = [instantiate_zeros(t) for t in tangents]
        return [out], [prim.bind(*tangents, **params)]

    jvp_rules[prim] = rule


def raise_non_differentiable(prim: Primitive, i: int):
    raise NonDifferentiableError(
        f"{prim.name}: {prim.operand_name(i)} is active, but {prim.name} has no derivative "
        f"with respect to it. If it should be a constant, wrap it in inert.stop_gradient or "
        f"pass it to the transform as inert.Inactive(...)."
    ).with_source(user_source_info())


# ---------------------------------------------------------------------------------
# Two primitives of the tangent space itself: adding tangents and materialising zeros

add_any_p = Primitive("add_any")
"""Sum of two tangents of the same type; what jvp rules use to combine contributions."""


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add_any_p.bind(a, b)


impl_rules[add_any_p] = operator_impl(np.add, operator.add)
deffused_ufunc(add_any_p, np.add)


def add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.strong() != y.strong():
        raise DTypeError(f"add_any: tangents of different types {x} and {y}")
    return x


abstract_eval_rules[add_any_p] = add_any_abstract_eval


def add_any_jvp(primals, tangents):
    return [add_any_p.bind(*primals)], [add_tangents(*tangents)]


jvp_rules[add_any_p] = add_any_jvp
# transpose: registered by interpreters.transpose, which owns that table

zeros_p = Primitive("zeros")
"""An array of zeros: how a symbolic `Zero` becomes a value when one is needed. Having
no operands, it is always cheap to recompute, so it is never saved as a residual."""


def zeros(aval: ShapedArray):
    return zeros_p.bind(shape=aval.shape, dtype=aval.dtype)


impl_rules[zeros_p] = lambda *, shape, dtype: np.zeros(shape, dtype)
abstract_eval_rules[zeros_p] = lambda *, shape, dtype: ShapedArray(shape, dtype)
jvp_rules[zeros_p] = lambda primals, tangents, **params: (
    [zeros_p.bind(**params)], [Zero(tangent_aval(ShapedArray(**params)))])
# transpose: none needed, zeros has no operands


def instantiate_zeros(t):
    return zeros(t.aval) if type(t) is Zero else t


# ---------------------------------------------------------------------------------
# Tracer and trace


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def full_lower(self):
        if type(self.tangent) is Zero:
            return self.primal.full_lower() if isinstance(self.primal, Tracer) else self.primal
        return self

    def concrete_value(self, why: str, lossy: bool = False):
        if not self._trace.main.active:
            raise escaped_error(self._trace.main)
        if lossy and type(self.tangent) is not Zero:
            raise lost_derivative_error(why)
        if isinstance(self.primal, Tracer):
            return self.primal.concrete_value(why, lossy)
        return self.primal


def lost_derivative_error(why: str) -> ConcretizationError:
    return ConcretizationError(
        f"{why} of a value being differentiated would lose its derivative. Compute "
        "with inert.numpy functions instead of numpy/math ones, compare it to branch "
        "(`if x > 0:`), or wrap it in inert.stop_gradient if its derivative should "
        "indeed be dropped.").with_source(user_source_info())


class JVPTrace(Trace):
    __slots__ = ("zeros", "checking")
    family = "differentiation"

    def __init__(self, main):
        super().__init__(main)
        self.zeros: dict = {}  # aval (or Python number type) -> the Zero tangent of this level
        self.checking = checks_enabled()  # once per trace, not per operation

    def lift(self, val) -> JVPTracer:
        zero = self.zeros.get(type(val))  # a Python number's: its type says its aval
        if zero is None:
            aval = get_aval(val)
            zero = self.zeros.get(aval)
            if zero is None:
                zero = self.zeros[aval] = Zero(tangent_aval(aval), self.main.level)
            if is_python_scalar(val):
                self.zeros[type(val)] = zero
        return JVPTracer(self, val, zero)

    def process_primitive(self, prim, tracers, params):
        primals, tangents = [], []
        active = False
        for t in tracers:
            primals.append(t.primal)
            tangent = t.tangent
            tangents.append(tangent)
            if type(tangent) is not Zero:
                active = True
        if self.checking:
            self._check_levels(prim, tangents)
        effect = prim.effect
        if effect == "new":  # a ref of this level: its primal and tangent refs below
            primals_out, tangents_out = jvp_rules[prim](primals, tangents, **params)
            return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]
        if not active:
            out = bind(prim, primals, params)  # inactive: no tangent work at all
            return out if prim.multiple_results else [out]
        if effect == "write" and type(tangents[0]) is Zero:
            raise inactive_ref_write(self.main, get_aval(primals[0]),
                                     "differentiates the value written here", "argument")
        primals_out, tangents_out = binding_below(jvp_rules[prim], (primals, tangents), params)
        if not prim.multiple_results:  # the usual case, without a comprehension's cost
            (p,), (t,) = primals_out, tangents_out
            return [p if type(t) is Zero else JVPTracer(self, p, t)]
        return [p if type(t) is Zero else JVPTracer(self, p, t)
                for p, t in zip(primals_out, tangents_out)]


    def _check_levels(self, prim, tangents) -> None:
        level = self.main.level
        for t in tangents:
            if type(t) is Zero and t.level not in (None, level):
                raise AssertionError(f"{prim.name}: a Zero tangent of level {t.level} reached "
                                     f"the jvp of level {level}")


def inactive_ref_write(main, ref_aval, what: str, fix: str) -> ActivityError:
    """The error for writing a value that varies at `main`'s level (`what` it does to it)
    into a ref from outside that level, which does not vary there."""
    level = describe_level(main)
    where = ref_aval.source or "an unknown line"
    name = main.name or "the transformation"
    fixes = {
        "argument": f"pass the ref to {name} as a differentiated argument (in argnums, "
                    "not Inactive), or, if the value's derivative should not reach the ref, "
                    "write inert.stop_gradient(value) (or pass what it depends on as "
                    "inert.Inactive(...))",
        "mapped": f"create the ref inside the function {name} maps, or pass it to {name} "
                  "as an argument mapped along axis 0",
    }
    return ActivityError(
        f"{level} {what}, but the ref {ref_aval.str_short()} it is written into was "
        f"created outside {level} (at {where}), so {level} does not track it and the "
        f"value would be lost.\n  the write is at {user_source_info()}\n"
        f"  fix: {fixes[fix]}")


# ---------------------------------------------------------------------------------
# Flat API


def jvp_flat(fun, primals: list, tangents: list, name: str = "jvp") -> tuple[list, list]:
    """Push `tangents` (values, or `Zero` for inactive inputs) through `fun`, without
    floating-point warnings (`quietly`: the rules' operations are not the user's);
    `name` is the user's transformation, for error messages."""
    return quietly(_jvp_flat, fun, primals, tangents, name)


def _jvp_flat(fun, primals: list, tangents: list, name: str) -> tuple[list, list]:
    with new_main(JVPTrace, name=name) as main:
        trace = main.trace
        tracers_in = [p if type(t) is Zero else JVPTracer(trace, p, t)
                      for p, t in zip(primals, tangents)]
        outs = fun(*tracers_in)
        return _unzip(main, outs)


def _primal_and_tangent(main, out):
    if isinstance(out, JVPTracer) and out._trace.main is main:
        return out.primal, out.tangent
    return out, Zero(tangent_aval(get_aval(out)), main.level)


def _unzip(main, outs) -> tuple[list, list]:
    pairs = [_primal_and_tangent(main, o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def active_vars(jaxpr: Jaxpr, consts, active: list[bool]) -> set[Var]:
    """The variables of `jaxpr` that carry a derivative when the `active` inputs do:
    varied (the jvp rules give them a non-zero tangent, so `stop_gradient`, `floor`
    and integer results are not) and useful (some output reads them)."""
    varied = {v for v, act in zip(jaxpr.invars, active) if act}
    varied |= varied_vars(jaxpr.eqns, varied, dict(zip(jaxpr.constvars, consts)))
    return varied & _useful_vars(jaxpr)


def varied_vars(eqns, varied: set[Var], values: dict, value_of=None) -> set[Var]:
    """The variables `eqns` define that the jvp rules give a non-zero tangent when the
    variables in `varied` have one. A variable they read but do not define is the
    value `values` has for it, else abstract: the rules run on a staged program. With
    `value_of`, an abstract value a rule asks for (`cond`'s index: it differentiates
    only the branch taken when that is known) is `value_of(var)`, computed then: values
    no rule asks for are not computed, as on the plain path."""
    defined = {v for eqn in eqns for v in eqn.outputs}
    free = list(dict.fromkeys(a for eqn in eqns for a in eqn.inputs
                              if type(a) is Var and a not in defined))
    abstract = [v for v in free if v not in values]
    with_tangent = [v for v in free if v in varied]
    found: set[Var] = set()

    def run(*args):
        env = {v: values[v] for v in free if v in values}
        env.update(zip(abstract, args if value_of is None else
                       [_Lazy(t, v, value_of) for t, v in zip(args, abstract)]))
        tangents = iter(args[len(abstract):])
        with new_main(JVPTrace) as main:
            for v in with_tangent:
                env[v] = JVPTracer(main.trace, env[v], next(tangents))
            for eqn in eqns:
                out = bind(eqn.primitive, [_read(env, a) for a in eqn.inputs], eqn.params)
                for v, o in zip(eqn.outputs, out if eqn.primitive.multiple_results else [out]):
                    if isinstance(o, JVPTracer) and o._trace.main is main:
                        found.add(v)
                    elif value_of is not None and type(o) is StagingTracer:
                        o = _Lazy(o, v, value_of)
                    env[v] = o
        return []

    stage(run, [v.aval for v in abstract] + [tangent_aval(v.aval) for v in with_tangent])
    return found


class _Lazy(StagingTracer):
    """A staged value `varied_vars` can compute if a rule asks for it: `value_of(var)`."""

    __slots__ = ("var", "value_of")

    def __init__(self, tracer: StagingTracer, var: Var, value_of):
        super().__init__(tracer._trace, tracer.aval, tracer.atom)
        self.var, self.value_of = var, value_of

    def concrete_value(self, why: str, lossy: bool = False):
        return self.value_of(self.var)


def _read(env, atom):
    return atom.val if type(atom) is Literal else env[atom]


def _useful_vars(jaxpr: Jaxpr) -> set[Var]:
    """What some output reads, directly or through a ref written and read after."""
    useful = {v for v in jaxpr.outvars if type(v) is Var}
    for eqn in reversed(jaxpr.eqns):
        if any(v in useful for v in eqn.outputs) or (
                eqn.primitive.effect == "write" and eqn.inputs[0] in useful):
            useful.update(a for a in eqn.inputs if type(a) is Var)
    return useful


def jvp_jaxpr(jaxpr: Jaxpr, nonzeros: list[bool], instantiate: list[bool]
              ) -> tuple[Jaxpr, list, list[bool]]:
    """The jvp of `jaxpr` as a jaxpr: `(*primals, *nonzero tangents) -> (*primal outs,
    *nonzero tangent outs)`; tangents flagged in `instantiate` are always output.

    Returns the jaxpr (its constvars hold constants the rules introduced), their
    values, and which output tangents are nonzero. For control flow, whose bodies
    are differentiated as programs.
    """
    n = len(jaxpr.invars)
    out_nonzeros: list[bool] = []

    def jvp_fun(*args):
        tangents_in = iter(args[n:])
        tangents = [next(tangents_in) if nz else Zero(tangent_aval(v.aval))
                    for v, nz in zip(jaxpr.invars, nonzeros)]
        outs, tangents_out = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, (), xs), args[:n], tangents)
        tangents_out = [instantiate_zeros(t) if inst else t
                        for t, inst in zip(tangents_out, instantiate)]
        out_nonzeros[:] = [type(t) is not Zero for t in tangents_out]
        return [*outs, *(t for t in tangents_out if type(t) is not Zero)]

    in_avals = [v.aval for v in jaxpr.invars]
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    new_jaxpr, consts = stage(jvp_fun, [*in_avals, *tangent_avals])
    return new_jaxpr, consts, out_nonzeros
