"""Staging: tracing a Python function into a jaxpr.

The staging trace records every operation as an equation. It can also carry *known*
values: a tracer whose inputs are all known gets its value computed at once, one
level down, while the equation is still recorded. This one mechanism serves

* `make_jaxpr`/`jit`: no input is known; the trace only records;
* linearization (`vjp`, `grad`): primal inputs are known and tangents are not, so
  the forward pass runs eagerly (Python `if` on a primal works, as in JAX's eager
  grad) while the whole program, known and unknown, is recorded for partial
  evaluation to choose the residuals from. The values of known variables read by
  unknown equations, or by the known equations that partial evaluation may
  recompute (`keep_inputs_of`), are kept in `JaxprBuilder.known_values`: they are
  the only candidates for residuals. Every other known value is dropped as soon as
  the user's code drops it.

The staging trace is *dynamic*: operations on plain constants (`zeros`, a broadcast
of a literal in a jvp rule) are recorded too, so partial evaluation sees where every
value came from and can recompute cheap ones instead of saving them.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .avals import ShapedArray
from .ir import Jaxpr, JaxprEqn, Var, is_literalable, literal
from .trace import (
    MainTrace,
    Trace,
    Tracer,
    abstract_eval,
    bind_at,
    current_dynamic,
    full_raise,
    get_aval,
    new_main,
    user_source_info,
)


class _NotKnown:
    def __repr__(self) -> str:
        return "NOT_KNOWN"


NOT_KNOWN = _NotKnown()


class StagingTracer(Tracer):
    __slots__ = ("_aval", "atom", "known")

    def __init__(self, trace, aval: ShapedArray, atom, known=NOT_KNOWN):
        self._trace = trace
        self._aval = aval
        self.atom = atom
        self.known = known

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def concrete_value(self, why: str):
        if self.known is NOT_KNOWN:
            return super().concrete_value(why)
        if isinstance(self.known, Tracer):
            return self.known.concrete_value(why)
        return self.known


@attrs.define(eq=False)
class JaxprBuilder:
    """What a staging trace has recorded so far."""

    parent_dynamic: MainTrace
    track_known: bool
    keep_inputs_of: Callable[[Any], bool] = staticmethod(lambda prim: False)
    split_rules: dict = attrs.Factory(dict)
    eqns: list[JaxprEqn] = attrs.Factory(list)
    constvars: list[Var] = attrs.Factory(list)
    consts: list[Any] = attrs.Factory(list)
    const_index: dict[int, Var] = attrs.Factory(dict)
    known_values: dict[Var, Any] = attrs.Factory(dict)

    def const_var(self, val) -> Var:
        var = self.const_index.get(id(val))
        if var is None:
            var = Var(get_aval(val))
            self.const_index[id(val)] = var
            self.constvars.append(var)
            self.consts.append(val)  # also keeps id(val) from being reused
        return var

    def build(self, in_tracers, out_tracers) -> tuple[Jaxpr, list]:
        jaxpr = Jaxpr(
            tuple(self.constvars),
            tuple(t.atom for t in in_tracers),
            tuple(self.eqns),
            tuple(t.atom for t in out_tracers),
        )
        return jaxpr, list(self.consts)


class StagingTrace(Trace):
    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def new_arg(self, aval: ShapedArray, known=NOT_KNOWN) -> StagingTracer:
        return StagingTracer(self, aval, Var(aval), known)

    def lift(self, val) -> StagingTracer:
        if is_literalable(val):
            lit = literal(val)
            return StagingTracer(self, lit.aval, lit, val)
        var = self.builder.const_var(val)
        return StagingTracer(self, var.aval, var, val)

    def process_primitive(self, prim, tracers, params):
        builder = self.builder
        if builder.track_known and prim in builder.split_rules and _mixed(tracers):
            return self._split(prim, tracers, params)
        known_out = self._known_outputs(prim, tracers, params)
        if known_out is None:
            avals_out = abstract_eval(prim, [t.aval for t in tracers], params)
            known_out = [NOT_KNOWN] * len(avals_out)
        else:  # computed already: its type is the value's (no abstract eval needed)
            avals_out = [get_aval(k) for k in known_out]
        outvars = [Var(aval) for aval in avals_out]
        eqn = JaxprEqn(prim, tuple(t.atom for t in tracers), tuple(outvars), params,
                       user_source_info())
        self.builder.eqns.append(eqn)
        return [StagingTracer(self, v.aval, v, k) for v, k in zip(outvars, known_out)]

    def _known_outputs(self, prim, tracers, params) -> list | None:
        """The outputs' values if every input is known, else None."""
        builder = self.builder
        if not builder.track_known:
            return None
        all_known = all(t.known is not NOT_KNOWN for t in tracers)
        if not all_known or builder.keep_inputs_of(prim):
            for t in tracers:  # residual candidates
                if t.known is not NOT_KNOWN and isinstance(t.atom, Var):
                    builder.known_values[t.atom] = t.known
        if not all_known:
            return None
        out = bind_at(builder.parent_dynamic, prim, [t.known for t in tracers], params)
        return out if prim.multiple_results else [out]


    def _split(self, prim, tracers, params):
        """An equation with known and unknown inputs and a partial-eval rule (control
        flow): record the rule's known part, run it now, and record the unknown part."""
        builder = self.builder
        avals_out = abstract_eval(prim, [t.aval for t in tracers], params)
        outvars = tuple(Var(a) for a in avals_out)
        eqn = JaxprEqn(prim, tuple(t.atom for t in tracers), outvars, params,
                       user_source_info())
        known_eqns, unknown_eqns = builder.split_rules[prim](
            eqn, [t.known is NOT_KNOWN for t in tracers])
        values = {t.atom: t.known for t in tracers if t.known is not NOT_KNOWN}
        for e in known_eqns:
            builder.eqns.append(e)
            args = [values[a] if isinstance(a, Var) else a.val for a in e.inputs]
            out = bind_at(builder.parent_dynamic, e.primitive, args, e.params)
            values.update(zip(e.outputs, out if e.primitive.multiple_results else [out]))
        for e in unknown_eqns:
            builder.eqns.append(e)
            builder.known_values.update((a, values[a]) for a in e.inputs if a in values)
        return [StagingTracer(self, v.aval, v, values.get(v, NOT_KNOWN)) for v in outvars]


def _mixed(tracers) -> bool:
    known = [t.known is not NOT_KNOWN for t in tracers]
    return any(known) and not all(known)


def stage(fun, in_avals, knowns=None, keep_inputs_of=None, split_rules=None):
    """Trace `fun` (flat list in, flat list out) into a jaxpr.

    With `knowns` (one value or NOT_KNOWN per input), known values are computed as
    the trace goes. Returns the jaxpr, its consts, the known value of each output
    and the builder's `known_values`.
    """
    builder = JaxprBuilder(current_dynamic(), track_known=knowns is not None)
    if keep_inputs_of is not None:
        builder.keep_inputs_of = keep_inputs_of
    if split_rules is not None:
        builder.split_rules = split_rules
    knowns = knowns if knowns is not None else [NOT_KNOWN] * len(in_avals)
    with new_main(StagingTrace, builder, dynamic=True) as main:
        in_tracers = [main.trace.new_arg(a, k) for a, k in zip(in_avals, knowns)]
        outs = fun(*in_tracers)
        out_tracers = [full_raise(main.trace, o) for o in outs]
        jaxpr, consts = builder.build(in_tracers, out_tracers)
    return jaxpr, consts, [t.known for t in out_tracers], builder.known_values
