"""Staging: tracing a Python function into a jaxpr.

The staging trace records every operation as an equation. It can also know some
values: an equation whose inputs are all known is *known*. This one mechanism serves

* `make_jaxpr`/`jit` (`stage`): no input is known; the trace only records;
* linearization (`stage_with_known`): primal inputs are known and tangents are not,
  so the whole program, known and unknown, is recorded for partial evaluation to
  choose the residuals from.

Known values are computed *lazily*: a known equation is only recorded, and runs
when its value is asked for — by Python control flow on a primal value (`if x > 0`
works under `grad`, as in JAX's eager mode), or at the end for the values the
backward pass keeps and the outputs. So work that turns out not to be needed (the
known half of a tangent rule feeding only a `has_aux` output, a coefficient partial
evaluation chose to recompute from a saved value) never runs, and the forward pass
frees each intermediate after its last use.

The staging trace is *dynamic*: operations on plain constants (`zeros`, a broadcast
of a literal in a jvp rule) are recorded too, so partial evaluation sees where every
value came from and can recompute cheap ones instead of saving them.

Refs. `make_jaxpr`/`jit` record the operations on refs as equations with a state
effect. A staging trace that *discharges* refs (linearization, and turning a body
that uses refs into a functional one) records none: a ref it creates is a
`DischargedRef` holding its current contents, a read is an indexing equation on them
and a write a functional update (`discharge_rules`), so what partial evaluation and
transposition see is an ordinary functional program. A ref from outside (closed over,
or an input the caller does not differentiate) is acted on at once, one level down,
in program order: what is written into it must be known then.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Any

import attrs
import numpy as np

from .avals import ShapedArray
from .check import check_jaxpr, checks_enabled
from .errors import DTypeError
from .ir import Jaxpr, JaxprEqn, Literal, Var, does_io, holds_program, is_literalable, literal
from .rules import RuleTable
from .trace import (
    REF_EFFECTS,
    MainTrace,
    Trace,
    Tracer,
    abstract_eval,
    at_dynamic,
    bind,
    bind_at,
    current_dynamic,
    eval_primitive,
    full_raise,
    get_aval,
    new_main,
    quietly,
    user_source_info,
)

discharge_rules = RuleTable("discharge")
"""`discharge(contents, *operands, **params) -> (new_contents, outs)`: a read or write
of a ref as a functional program on its contents (operand 0 is the ref)."""

staging_rules = RuleTable("staging")
"""`stage(trace, tracers, **params) -> outs`, for a primitive whose output types only
running Python can tell: a call of a `custom_jvp`/`custom_vjp` function, whose body is
traced (or run, on known values) only when a staging trace records the call."""


class StagingTracer(Tracer):
    __slots__ = ("aval", "atom", "is_known")  # a slot, not a property: read at every step

    def __init__(self, trace, aval: ShapedArray, atom, is_known: bool = False):
        self._trace = trace
        self.aval = aval
        self.atom = atom
        self.is_known = is_known

    def concrete_value(self, why: str, lossy: bool = False):
        if not self.is_known:
            return super().concrete_value(why, lossy)
        value = self._trace.main.global_data.values_of([self.atom], free=False)[0]
        return value.concrete_value(why, lossy) if isinstance(value, Tracer) else value


    def depends_on(self) -> str | None:
        builder = self._trace.main.global_data
        if builder.describe_args is None:
            return None
        return builder.describe_args(builder.args_reaching(self.atom))


class DischargedRef(Tracer):
    """A ref created under a staging trace that discharges refs: its current contents."""

    __slots__ = ("aval", "contents")
    is_known = False
    atom = None  # never staged: an operation on it is an error (`abstract_eval` says so)

    def __init__(self, trace, aval, contents):
        self._trace = trace
        self.aval = aval
        self.contents = contents


@attrs.define(eq=False)
class JaxprBuilder:
    """What a staging trace has recorded so far, and the known values it has computed."""

    parent_dynamic: MainTrace
    split_rules: dict = attrs.Factory(dict)
    eqns: list[JaxprEqn] = attrs.Factory(list)
    constvars: list[Var] = attrs.Factory(list)
    consts: list[Any] = attrs.Factory(list)
    const_index: dict[int, tuple] = attrs.Factory(dict)  # id -> (var, stored value, value)
    values: dict[Var, Any] = attrs.Factory(dict)  # known values computed so far
    known_defs: dict[Var, int] = attrs.Factory(dict)  # known var -> index of its equation
    discharge: bool = False  # refs as their contents (see the module docstring)
    # linearization: a call `staging_rules` handles runs at once on known operands, one
    # level down (they are primal values, which JAX computes eagerly)
    eager_calls: bool = False
    args: list[Var] = attrs.Factory(list)  # the staged function's arguments
    describe_args: Any = None  # `f(indices of args) -> str`, for a ConcretizationError

    def args_reaching(self, var) -> list[int]:
        """The positions of the arguments `var`'s value is computed from (an error's
        path: one sweep back over the equations recorded so far)."""
        needed = {var}
        for eqn in reversed(self.eqns):
            if needed.intersection(eqn.outputs):
                needed.update(a for a in eqn.inputs if isinstance(a, Var))
        return [i for i, a in enumerate(self.args) if a in needed]

    def const_var(self, val) -> Var:
        """The constvar of a closed-over value."""
        var = self.known_const(val)
        if var is None:
            var = Var(get_aval(val))
            self.store_const(var, val)
        return var

    def known_const(self, val) -> Var | None:
        """The constvar `val` already has: the same object, with the same contents."""
        entry = self.const_index.get(id(val))
        if entry is not None:
            var, stored, _ = entry
            if stored is val or np.array_equal(stored, val):
                return var
        return None

    def store_const(self, var: Var, val) -> None:
        """Make `val` the value of the constvar `var`. An array whose contents can change
        is snapshotted: the program must see the value it had when traced, even if the
        caller mutates the array afterwards (before the lazy forward pass, or the next
        jit call)."""
        stored = snapshot(val) if may_change(val) else val
        self.const_index[id(val)] = (var, stored, val)  # `val` kept: its id stays unique
        self.constvars.append(var)
        self.consts.append(stored)
        self.values[var] = stored

    def add_eqn(self, eqn: JaxprEqn, known: bool) -> None:
        if known:
            known_defs, index = self.known_defs, len(self.eqns)
            for v in eqn.outputs:
                known_defs[v] = index
        self.eqns.append(eqn)

    def values_of(self, atoms, free: bool = True) -> list:
        """The values of known atoms: runs the known equations they need that have not
        run yet, in program order, one level down. With `free`, each intermediate this
        call computes is dropped after its last use (the final forward pass); without,
        every value is kept, since Python control flow asking for one value may ask
        for the next."""
        return quietly(at_dynamic, self.parent_dynamic, self._values_of, atoms, free)

    def _values_of(self, atoms, free: bool) -> list:
        env = self.values
        wanted = [a for a in atoms if type(a) is Var and a not in env]
        if wanted:
            self._run(self._final_steps(wanted, atoms) if free else
                      [(self.eqns[i], ()) for i in self._needed_eqns(wanted)])
        return [a.val if type(a) is Literal else env[a] for a in atoms]

    def _run(self, steps: list[tuple[JaxprEqn, Any]]) -> None:
        """Run each step's known equation, then drop the values it lists. On plain values
        one level down each impl runs directly (what `bind` would do), without asking
        `bind` which trace each value belongs to."""
        env = self.values
        at_eval = self.parent_dynamic.level == 0
        for eqn, dead in steps:
            args = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
            plain = at_eval
            if plain:
                for a in args:  # `has_tracer`, inline: once per equation run
                    if isinstance(a, Tracer):
                        plain = False
                        break
            if plain:
                out = eval_primitive(eqn.primitive, args, eqn.params, eqn.source_info)
            else:
                out = bind(eqn.primitive, args, eqn.params, eqn.source_info)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outputs, out))
            else:
                env[eqn.outputs[0]] = out
            for v in dead:
                del env[v]

    def _needed_eqns(self, wanted: list[Var]) -> list[int]:
        """Indices of the not-yet-run known equations the wanted values depend on: a
        search from them, so Python control flow asking for one value after another
        costs what it computes, not the program's length each time."""
        known_defs, env, eqns = self.known_defs, self.values, self.eqns
        needed: set[int] = set()
        stack = [known_defs[v] for v in wanted]
        while stack:
            i = stack.pop()
            if i in needed:
                continue
            needed.add(i)
            for a in eqns[i].inputs:
                if type(a) is Var and a not in env:
                    stack.append(known_defs[a])
        return sorted(needed)

    def _final_steps(self, wanted: list[Var], keep) -> list[tuple[JaxprEqn, list[Var]]]:
        """The final forward pass's steps: each not-yet-run known equation the wanted
        values need, with the values it computes or reads that no later step (nor
        `keep`) needs. One backward sweep over the program finds both: an equation is
        needed iff an output is, and a value's first sighting is its last use. Values
        computed before (for Python control flow) are never dropped."""
        env, eqns = self.values, self.eqns
        need = {a for a in keep if type(a) is Var and a not in env}
        steps = []
        for i in range(max(self.known_defs[v] for v in wanted), -1, -1):
            eqn = eqns[i]
            outputs = eqn.outputs
            if len(outputs) == 1:  # the usual case first
                if outputs[0] not in need:
                    continue
                gone = []
            elif any(v in need for v in outputs):
                gone = [v for v in outputs if v not in need]  # computed, never read
            else:
                continue
            for a in eqn.inputs:
                if type(a) is Var and a not in need and a not in env:
                    need.add(a)
                    gone.append(a)
            steps.append((eqn, gone))
        steps.reverse()
        return steps

    def build(self, in_tracers, out_tracers) -> tuple[Jaxpr, list]:
        if any(type(t) is DischargedRef for t in out_tracers):
            raise DTypeError("a ref created inside a function being differentiated cannot "
                             "be returned from it: return inert.freeze(ref), its contents"
                             ).with_source(user_source_info())
        jaxpr = Jaxpr(
            tuple(self.constvars),
            tuple(t.atom for t in in_tracers),
            tuple(self.eqns),
            tuple(t.atom for t in out_tracers),
        )
        return jaxpr, list(self.consts)


class StagingTrace(Trace):
    __slots__ = ("literals", "ordinary")
    tracer_type = StagingTracer

    def __init__(self, main):
        super().__init__(main)
        self.literals: dict = {}  # (type, value) -> its tracer: a loop's constants repeat
        self.ordinary: dict = {}  # primitive -> whether `direct_bind` may record it

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def finish(self) -> None:
        self.literals.clear()
        self.ordinary.clear()

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        var = Var(aval)
        self.builder.args.append(var)
        return self.tracer_type(self, aval, var)

    def lift(self, val) -> StagingTracer:
        if type(val) in _CACHED_LITERALS and val:  # the usual constant: one look-up
            tracer = self.literals.get((type(val), val))
            if tracer is not None:
                return tracer
        if is_literalable(val):
            return self.lift_literal(val)
        var = self.builder.const_var(val)
        return self.tracer_type(self, var.aval, var, True)

    def lift_literal(self, val) -> StagingTracer:
        # Python numbers, nonzero: -0.0 == 0.0, yet the two are different literals
        key = (type(val), val) if type(val) in _CACHED_LITERALS and val else None
        tracer = self.literals.get(key)
        if tracer is None:
            lit = literal(val)
            tracer = self.tracer_type(self, lit.aval, lit, True)
            if key is not None and len(self.literals) < 4096:
                self.literals[key] = tracer
        return tracer

    takes_binds_from_above = True

    def direct_bind(self, prim, args, params, source):
        """A bind from a rule of the trace above (`binding_below`: a jvp rule), recorded
        at once if it is an ordinary equation on this trace's tracers and constants,
        which is where `bind` would send it. Anything else is left to `bind`: another
        trace's operand, an effect, a primitive with a staging or split rule, or one
        with a program in its params (its known run, when it does io, is `bind`'s)."""
        ordinary = self.ordinary.get(prim)
        if ordinary is None:
            ordinary = self.ordinary[prim] = prim.effect is None and prim not in staging_rules \
                and prim not in self.main.global_data.split_rules
        if not ordinary or (params and holds_program(params)):
            return None
        constants = False
        for a in args:  # first: a constant lifted for a bind left to `bind` would stay
            if not isinstance(a, Tracer):  # here, an unused constvar
                constants = True
            elif a._trace is not self:
                return None
        if constants:
            args = [a if isinstance(a, Tracer) else self.lift(a) for a in args]
        outs = self.record(prim, args, params, source)
        return outs if prim.multiple_results else outs[0]

    def process_primitive(self, prim, tracers, params):
        builder = self.main.global_data
        if prim.effect in REF_EFFECTS and builder.discharge:
            return self._discharge(prim, tracers, params)
        staging = staging_rules.get(prim)
        if staging is not None:
            return staging(self, tracers, **params)
        return self.record(prim, tracers, params)

    def record(self, prim, tracers, params, source=None):
        """Stage the equation (what a primitive without a staging rule gets): known if
        all its operands are; a control-flow one with known and unknown operands is split
        by its rule. `source` is the user's line, if the caller knows it."""
        builder = self.main.global_data
        avals, atoms = [], []
        known = unknown = False
        for t in tracers:
            avals.append(t.aval)
            atoms.append(t.atom)
            if t.is_known:
                known = True
            else:
                unknown = True
        is_known = not unknown
        if unknown and known and prim in builder.split_rules:
            return self._split(prim, tracers, params)
        avals_out = abstract_eval(prim, avals, params)  # first: it explains a ref operand
        if prim.multiple_results:
            outvars = tuple([Var(aval) for aval in avals_out])
        else:  # the usual case, without a comprehension
            outvars = (Var(avals_out[0]),)
        eqn = JaxprEqn(prim, tuple(atoms), outvars, params, source or user_source_info())
        if is_known:  # `builder.add_eqn(eqn, is_known)`, inline: the hottest call of a trace
            index = len(builder.eqns)
            for v in outvars:
                builder.known_defs[v] = index
        builder.eqns.append(eqn)
        if is_known and builder.eager_calls and params and does_io(eqn):  # linearizing, a
            # loop that prints runs now (partial evaluation would run it only if needed)
            builder.values_of(outvars, free=False)
        tracer = self.tracer_type
        if not prim.multiple_results:  # the usual case again, without a comprehension
            return [tracer(self, avals_out[0], outvars[0], is_known)]
        return [tracer(self, v.aval, v, is_known) for v in outvars]

    def _discharge(self, prim, tracers, params):
        if prim.effect == "new":
            (aval,) = abstract_eval(prim, [t.aval for t in tracers], params)
            return [DischargedRef(self, aval, tracers[0])]
        ref, *operands = tracers
        if type(ref) is not DischargedRef:
            return self._act_on_outside_ref(prim, tracers, params)
        contents, outs = discharge_rules[prim](ref.contents, *operands, **params)
        ref.contents = full_raise(self, contents)
        return [full_raise(self, o) for o in outs]

    def _act_on_outside_ref(self, prim, tracers, params):
        """A ref from outside: act on it now, one level down, with known operands."""
        builder = self.builder
        if not all(t.is_known for t in tracers):
            raise AssertionError(f"{prim.name}: an unknown value reached a ref from outside")
        values = builder.values_of([t.atom for t in tracers], free=False)
        out = bind_at(builder.parent_dynamic, prim, values, params)
        return [self.lift(o) for o in (out if prim.multiple_results else [out])]

    def _split(self, prim, tracers, params):
        """An equation with known and unknown inputs and a partial-eval rule (control
        flow): record the rule's known part and its unknown part."""
        builder = self.builder
        avals_out = abstract_eval(prim, [t.aval for t in tracers], params)
        outvars = tuple(Var(a) for a in avals_out)
        eqn = JaxprEqn(prim, tuple(t.atom for t in tracers), outvars, params,
                       user_source_info())
        known_eqns, unknown_eqns = builder.split_rules[prim](
            eqn, [not t.is_known for t in tracers])
        for e in known_eqns:
            builder.add_eqn(e, True)
            if builder.eager_calls and does_io(e):
                builder.values_of(e.outputs, free=False)
        for e in unknown_eqns:
            builder.add_eqn(e, False)
        return [self.tracer_type(self, v.aval, v, v in builder.known_defs) for v in outvars]


_CACHED_LITERALS = (int, float)  # the Python numbers a staging trace keeps one tracer of


def may_change(x) -> bool:
    """Whether a numpy array's contents can change behind the program's back: it is
    writeable, or a view (read-only, as `np.broadcast_to` gives) of memory a writeable
    array owns or shares, anywhere along its chain of bases."""
    while isinstance(x, np.ndarray):
        if x.flags.writeable:
            return True
        x = x.base
    return False


def snapshot(x: np.ndarray) -> np.ndarray:
    """A copy of `x`'s contents that nothing else can write. Of a broadcast (an axis of
    stride 0) only the elements it repeats are copied, then broadcast again: closing
    over `np.broadcast_to(v, (n, n))` keeps n elements, not n²."""
    if 0 in x.strides and x.size:
        repeated = tuple(slice(0, 1) if stride == 0 else slice(None) for stride in x.strides)
        compact = x[repeated].copy()
        compact.flags.writeable = False
        return np.broadcast_to(compact, x.shape, subok=True)
    return x.copy()


def has_tracer(values) -> bool:
    """Whether a value is a tracer: a loop, cheaper per equation than any(...)."""
    for x in values:
        if isinstance(x, Tracer):
            return True
    return False


@contextlib.contextmanager
def cyclic_gc_paused():
    """Tracing builds a long-lived list of equations; the cyclic collector would scan
    it again and again, making tracing superlinear. Nothing a trace creates is cyclic,
    so collection waits until the outermost trace is done (refcounting still frees).
    The forward and backward passes of reverse mode pause it too: their allocations
    would otherwise trigger collections that walk the program (15% of a scalar chain's
    gradient)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def stage(fun, in_avals, discharge: bool = False, describe_args=None) -> tuple[Jaxpr, list]:
    """Trace `fun` (flat list in, flat list out) into a jaxpr and its consts; with
    `discharge`, the refs `fun` creates become their contents (none is recorded).
    `describe_args(positions)` names arguments of `fun` in a ConcretizationError."""
    builder = JaxprBuilder(current_dynamic(), discharge=discharge, describe_args=describe_args)
    with cyclic_gc_paused(), new_main(StagingTrace, builder, dynamic=True) as main:
        in_tracers = [main.trace.new_arg(a) for a in in_avals]
        out_tracers = [full_raise(main.trace, o) for o in fun(*in_tracers)]
        jaxpr, consts = builder.build(in_tracers, out_tracers)
    if checks_enabled():
        check_jaxpr(jaxpr)
    return jaxpr, consts


@attrs.frozen
class KnownStaging:
    """A staged jaxpr some of whose values are known; `final_values` computes them."""

    jaxpr: Jaxpr
    consts: list
    out_known: list[bool]
    builder: JaxprBuilder

    def final_values(self, atoms) -> list:
        """The values of `atoms`: the forward pass. Every other known value the trace
        kept (those Python control flow asked for) is dropped then, not when the
        cyclic collector finds the finished trace."""
        values = self.builder.values_of(atoms)
        self.builder.values.clear()
        return values


def stage_with_known(fun, in_avals, knowns: list, split_rules: dict,
                     eager_calls: bool = False) -> KnownStaging:
    """Trace `fun` where input i has the known value `knowns[i]` (or is unknown where
    that is `None`); equations with `split_rules` and mixed inputs are split; with
    `eager_calls`, calls `staging_rules` handle run at once on known operands."""
    builder = JaxprBuilder(current_dynamic(), split_rules, discharge=True,
                           eager_calls=eager_calls)
    with cyclic_gc_paused(), new_main(StagingTrace, builder, dynamic=True) as main:
        in_tracers = [main.trace.new_arg(a) for a in in_avals]
        for t, k in zip(in_tracers, knowns):
            if k is not None:
                t.is_known = True
                builder.values[t.atom] = k
        out_tracers = [full_raise(main.trace, o) for o in fun(*in_tracers)]
        jaxpr, consts = builder.build(in_tracers, out_tracers)
    if checks_enabled():
        check_jaxpr(jaxpr)
    return KnownStaging(jaxpr, consts, [t.is_known for t in out_tracers], builder)
