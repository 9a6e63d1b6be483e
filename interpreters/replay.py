"""Replaying a recorded program: `grad` (or any transformation: `api.replaying`)
called again costs running the user's Python once more, not differentiating it again.

`grad(f)(x)` has to run `f` on every call: its Python control flow may depend on the
values of `x`, and it may print or append to a list. What need not happen on every call
is `f`'s differentiation (tracing its jvp, partial evaluation, transposition), which
costs far more per operation than the operation's own numpy call. So a call can
*record* the primal program `f` runs — a staging trace whose values are all known,
computed lazily as in `grad` when Python asks for one; an array constant is an input of
the program, not a value baked into it — and the recorded program's gradient (its
transformation) is compiled once, as `jit(grad)` compiles one (`transform_program`).
A later call runs `f`
again under a trace that *expects* the recording: each operation `f` performs must be
the next recorded equation (the same primitive, equal params, and operands that are the
same variables, scalars of the same value, or array constants of the same type), and
the recorded equation's variables stand for its results; nothing is computed. If `f`
did again what it did before, the compiled transformation runs on this call's inputs and
constants. If it does something else (an `if` went the other way), recording goes on
from that equation, and the new program is transformed instead.

Why the result is what re-tracing would give: everything that reaches a program from
Python passes through `bind` as a primitive, its params and its operands. Params are
compared; operands are the program's own variables (compared), scalars (compared) or
arrays (passed to the compiled transformation, never baked). What is not compared cannot
reach the program. A value `f` asks for (`if x > 0`) is computed from this call's
inputs; a lossy conversion (`float(x)`) of a value with a derivative is refused as the
jvp trace refuses it, by asking the jvp rules which values vary (`varied_vars`; for
vmap, which depend on a mapped input: `dependent_vars`).

What differs from the jvp trace: an error that only differentiation finds (a primitive
with no derivative rule reached by an active value) is raised when the recording is
differentiated, after `f` returned, naming the equation's source line.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import attrs
import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray
from ..core.check import check_jaxpr, checks_enabled
from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var, is_literalable
from ..core.staging import JaxprBuilder, StagingTrace, StagingTracer, stage, staging_rules
from ..core.trace import (
    Tracer,
    current_dynamic,
    escaped_error,
    full_raise,
    get_aval,
    new_main,
    take_binds,
    trace_depth,
)
from .ad import inactive_ref_write, lost_derivative_error, varied_vars
from .batching import mapped_value_error
from .cse import cse_jaxpr
from .dce import dce_jaxpr
from .eval import compile_jaxpr, eval_jaxpr

_PYTHON_SCALARS = (bool, int, float, complex)
_PLAIN_TYPES = frozenset((*_PYTHON_SCALARS, str, type(None)))


@attrs.frozen(eq=False)
class Recording:
    """A program `f` ran: constvars are the array constants it met, in order of first
    use; `out_store` is what `f`'s flattening recorded (its output structure)."""

    jaxpr: Jaxpr
    known_defs: dict  # var -> index of its equation (every equation is known)
    out_store: tuple


class ReplayTracer(StagingTracer):
    __slots__ = ()

    def concrete_value(self, why: str, lossy: bool = False):
        main = self._trace.main
        if not main.active:
            raise escaped_error(main)
        builder = main.global_data
        builder.asked += 1
        if builder.is_varied(self.atom):
            if builder.mapped:  # no value: one per lane
                raise mapped_value_error(why, self.aval)
            if lossy:
                raise lost_derivative_error(why)
        return super().concrete_value(why, lossy)


class _Pending(ReplayTracer):
    """An array constant lifted while replaying: whether it is one of the recording's
    constants is decided when its equation is matched."""

    __slots__ = ("value",)

    def __init__(self, trace, value):
        super().__init__(trace, get_aval(value), None, True)
        self.value = value

    def concrete_value(self, why: str, lossy: bool = False):
        return self.value


@attrs.define(eq=False)
class ReplayBuilder(JaxprBuilder):
    """A staging builder that first checks the operations against `expected`."""

    expected: Recording | None = None
    pos: int = 0  # the next expected equation
    varied: set = attrs.Factory(set)  # variables with a derivative, as far as analysed
    analysed: int = 0  # equations `varied` covers
    replayable: bool = True  # False for an effect (a ref), or a param that is not data
    mapped: bool = False  # for vmap: `varied` are the values depending on a mapped input,
    # whose inputs are their lanes' avals, with no value
    lift_scalars: bool = False  # Python scalars as constant inputs too (after `diverge`)
    asked: int = 0  # how many values Python has asked for

    def start(self, active: list[bool], leaves: list) -> list[Var]:
        """The input variables (the recording's, when replaying one) with their values
        (an aval: none)."""
        if self.expected is not None:
            self.eqns = self.expected.jaxpr.eqns  # read only (the lazy values), until `diverge`
            self.known_defs = self.expected.known_defs
            invars = list(self.expected.jaxpr.invars)
        else:
            invars = [Var(get_aval(x)) for x in leaves]
        self.values.update((v, x) for v, x in zip(invars, leaves) if type(x) is not ShapedArray)
        self.varied.update(v for v, act in zip(invars, active) if act)
        return invars

    def replay(self, trace, prim, args, params) -> list | None:
        """The outputs of the expected equation, if `prim` on `args` (operands as
        `bind` has them) is it; else None, and recording goes on from here."""
        pos = self.pos
        if pos < len(self.eqns):
            eqn = self.eqns[pos]
            if eqn.primitive is prim and (eqn.params == params if not params else
                                          _same_params(eqn.params, params)) and \
                    self.match(trace, args, eqn.inputs):
                self.pos = pos + 1
                return eqn.outputs
        self.diverge()
        return None

    def replay_call(self, trace, args, params) -> list | None:
        """A custom function's call (`custom_vjp`, `custom_jvp`: a staging rule records
        its body), if the expected equation is its recorded call and the body closes
        over nothing: the same rule (`same_as`: the same function, rules and
        non-differentiated arguments) on the same operands. Its body does not run
        again, as its rules do not (they ran when the recording was differentiated):
        a custom function is traced once, as under `jit` (one whose body asked Python
        for a value is never replayed: `ReplayTrace.process_primitive`). Else None, and
        the call is staged (the body runs) and matched as it is recorded."""
        pos, rule = self.pos, params.get("rule")
        if pos < len(self.eqns) and rule is not None:
            eqn = self.eqns[pos]
            recorded = eqn.params.get("rule")
            if eqn.params.get("num_consts") == 0 and recorded is not None and \
                    rule.same_as(recorded) and self.match(trace, args, eqn.inputs):
                self.pos = pos + 1
                rule.set_out_tree(recorded.out_tree)
                return eqn.outputs
        return None

    def match(self, trace, args, atoms) -> bool:
        """Whether operands are the recorded atoms: this trace's tracers of the same
        variables, Python and numpy scalars of the same value (`_same_scalar`, its usual
        case inline), constants (`bind_const`): arrays, or values of an outer replay that
        the function closes over (a nested `grad(lambda x: f(x, y))` of an outer `y`)."""
        if len(args) != len(atoms):
            return False
        for x, a in zip(args, atoms):
            kind = type(x)
            if kind is ReplayTracer and x._trace is trace:
                if x.atom is not a:
                    return False
            elif kind in _PYTHON_SCALARS and type(a) is Literal:
                value = a.val
                if kind is not type(value) or x != value or not (x or _same_scalar(x, value)):
                    return False
            elif isinstance(x, np.generic) and type(a) is Literal:
                if not _same_scalar(x, a.val):
                    return False
            elif isinstance(x, Tracer) and not _outer(x, trace) or not self.bind_const(x, a):
                return False  # another trace's tracer: `bind` will say what it is
        return True

    def bind_const(self, value, var) -> bool:
        """Whether the constant `value` (an array, or a Python scalar where the
        recording lifted one) is the recording's constant `var`: the one it was bound
        to before in this call, or else the next one, of its type."""
        known = self.known_const(value)
        if known is not None:
            return known is var
        constvars = self.expected.jaxpr.constvars
        n = len(self.constvars)
        if n == len(constvars) or constvars[n] is not var or get_aval(value) != var.aval:
            return False
        self.store_const(var, value)
        return True

    def diverge(self) -> None:
        """This call stopped doing what the recording did: record from here on. Its
        Python scalars become constant inputs from here on: if one that changed made
        it diverge (a closed-over time step), the new recording will match the next
        call."""
        pos, self.expected, self.lift_scalars = self.pos, None, True
        self.eqns = list(self.eqns[:pos])
        self.known_defs = {v: i for i, eqn in enumerate(self.eqns) for v in eqn.outputs}
        take_binds(None)

    def is_varied(self, atom) -> bool:
        """Whether the jvp rules would give `atom` a derivative (incrementally: a loop
        converting a value each iteration analyses each equation once). A rule may use
        a value, as it does on the plain path (`cond` with a known index differentiates
        only its branch): that one is computed when the rule asks, and no other (a
        singular `solve` nothing needs must not raise here)."""
        end = self.pos if self.expected is not None else len(self.eqns)
        if self.analysed < end:
            eqns = self.eqns[self.analysed:end]
            if self.mapped:
                self.varied |= dependent_vars(eqns, self.varied)
            else:
                self.varied |= varied_vars(eqns, self.varied, self.values, self.value_of)
            self.analysed = end
        return atom in self.varied

    def tracer(self, trace, var: Var) -> ReplayTracer:
        """A tracer of a recorded variable, known unless it is mapped."""
        return ReplayTracer(trace, var.aval, var, not (self.mapped and self.is_varied(var)))

    def value_of(self, var: Var):
        return self.values_of([var], free=False)[0]

    def finish(self, trace, in_vars, outs, out_store: list) -> tuple[Recording, bool]:
        """The program this call ran, and whether it is the expected recording."""
        expected = self.expected
        if expected is not None:
            if self.pos == len(self.eqns) and _same_trees(out_store, expected.out_store) \
                    and self.match(trace, outs, expected.jaxpr.outvars):
                return expected, True
            self.diverge()
        out_tracers = [full_raise(trace, o) for o in outs]
        jaxpr, _ = self.build([ReplayTracer(trace, v.aval, v, True) for v in in_vars],
                              out_tracers)
        if not all(_plain_params(eqn.params) for eqn in self.eqns):
            self.replayable = False
        if checks_enabled():
            check_jaxpr(jaxpr)
        return Recording(jaxpr, dict(self.known_defs), tuple(out_store)), False


class ReplayTrace(StagingTrace):
    """Stages with every value known; scalars are literals (as staging makes them: the
    transformation's program is the plain path's), anything else a constant input.
    With an expected recording, it takes every bind first and matches it
    (`ReplayBuilder.replay`), recording nothing."""

    __slots__ = ()
    tracer_type = ReplayTracer
    family = "differentiation"  # the outer grad, in error messages of an inner one
    takes_binds_from_above = False  # its direct_bind matches the function's own binds

    def lift(self, val):
        builder = self.main.global_data
        if is_literalable(val) and not builder.lift_scalars:  # a literal, as staging makes it
            return self.lift_literal(val)
        if builder.expected is not None:
            return _Pending(self, val)
        var = builder.const_var(val)
        return ReplayTracer(self, var.aval, var, True)

    def direct_bind(self, prim, args, params, source):
        builder = self.main.global_data
        if builder.expected is None:  # diverged inside an `at_dynamic`, which restored us
            return None
        if prim in staging_rules:  # staged by its rule (a custom function's call, a
            # callback): matched in `process_primitive`, as `stage` hands it over
            return None
        outvars = builder.replay(self, prim, args, params)
        if outvars is None:
            return None
        if prim.multiple_results:
            return [builder.tracer(self, v) for v in outvars]
        return builder.tracer(self, outvars[0])

    def process_primitive(self, prim, tracers, params):
        """Binds `direct_bind` did not take: those of a transformation inside `f`
        reaching this level, and every one after the call diverged."""
        builder = self.main.global_data
        if builder.expected is not None:
            args = [_unlifted(t) for t in tracers]
            outvars = builder.replay_call(self, args, params) if prim in staging_rules \
                else builder.replay(self, prim, args, params)
            if outvars is not None:
                return [builder.tracer(self, v) for v in outvars]
        for t in tracers:
            if type(t) is _Pending and t.atom is None:
                t.atom = builder.const_var(t.value)
        if prim.effect is not None:
            builder.replayable = False
        if prim not in staging_rules:
            return super().process_primitive(prim, tracers, params)
        asked = builder.asked
        outs = super().process_primitive(prim, tracers, params)
        # a custom function whose body asks Python for a value (a `while` on its input)
        # may do otherwise on another call, and its rules most likely ask too: it runs
        # on the plain path, where its rules run on every call as JAX's eager ones do
        builder.replayable &= builder.asked == asked
        return outs

    def _act_on_outside_ref(self, prim, tracers, params):
        """As the jvp trace, refuse to write a value with a derivative into a ref from
        outside, which does not carry one."""
        builder = self.main.global_data
        if prim.effect == "write" and any(builder.is_varied(t.atom) for t in tracers[1:]):
            raise inactive_ref_write(self.main, tracers[0].aval,
                                     "differentiates the value written here", "argument")
        return super()._act_on_outside_ref(prim, tracers, params)


def _outer(x: Tracer, trace) -> bool:
    """Whether `x` is a value of a transformation in progress below `trace`'s."""
    main = x._trace.main
    return main.active and main.level < trace.main.level


def _unlifted(t):
    """A lifted operand as `bind` had it."""
    if type(t) is _Pending:
        return t.value
    return t.atom.val if type(t.atom) is Literal else t


def dependent_vars(eqns, dependent: set) -> set:
    """The variables `eqns` compute from `dependent` ones: every output of an equation
    with a dependent operand (what vmap maps, or more)."""
    found: set = set()
    for eqn in eqns:
        if any(type(a) is Var and (a in dependent or a in found) for a in eqn.inputs):
            found.update(eqn.outputs)
    return found


def record(fun, leaves: list, active: list[bool], out_store: list,
           expected: Recording | None, name: str = "grad", mapped: bool = False
           ) -> tuple[Recording, bool, list, bool]:
    """Run `fun` (flat) at `leaves`, matching `expected` if given. Returns the
    recording, whether it is `expected`, the values of its constants in this call,
    and whether it may be replayed. `active` are the inputs `name` (the user's
    transformation) differentiates: a lossy conversion of a value depending on one is
    refused, as the jvp trace refuses it. With `mapped`, they are those vmap maps,
    given as their lanes' avals: Python asking for a value depending on one gets
    vmap's error (every equation with a mapped operand is taken to be mapped)."""
    builder = ReplayBuilder(current_dynamic(), discharge=True, expected=expected,
                            mapped=mapped)
    with new_main(ReplayTrace, builder, dynamic=True, name=name) as main:
        trace = main.trace
        in_vars = builder.start(active, leaves)
        if expected is not None:
            take_binds(trace)
        outs = fun(*[ReplayTracer(trace, v.aval, v, type(x) is not ShapedArray)
                     for v, x in zip(in_vars, leaves)])
        recording, matched = builder.finish(trace, in_vars, outs, out_store)
    consts = [builder.values[v] for v in recording.jaxpr.constvars]
    return recording, matched, consts, builder.replayable


@attrs.frozen(eq=False)
class TransformProgram:
    """A transformation of a recording, staged and compiled as `jit` of it would be:
    `(consts, leaves, extras) -> (outputs, static)`. `apply` (see `applied`) gives
    arrays, `Zero`s and avals, which are the same on every call (`fixed`), and static
    data (jacobian block counts, vmap's output axes), kept from staging. Called under
    an outer transformation (a nested `grad` replaying inside an outer replay), its
    jaxpr is bound there, equation by equation, instead of being run compiled."""

    jaxpr: Jaxpr
    run: Any
    consts: list  # the staged program's own (its rules' constants), not the user's
    fixed: tuple  # per output: its `Zero` or aval, or None: the program computes it
    static: Any

    def __call__(self, consts: list, leaves: list, extras: list) -> tuple[list, Any]:
        args = [*consts, *leaves, *extras]
        if trace_depth() > 0:
            outs = iter(eval_jaxpr(self.jaxpr, self.consts, args))
        else:
            outs = iter(self.run(self.consts, args))
        return [next(outs) if z is None else z for z in self.fixed], self.static


def applied(recording: Recording, consts: list, apply, leaves: list, extras: list,
            out_store: list):
    """`apply(fun, leaves, extras, out_store) -> (outputs, static)`, a transformation of
    the flat function `fun` (whose output structure `out_store` holds), applied to the
    recording, at these values, as the plain path would apply it to the function: a
    rule may use a value known then (`cond` with a known index differentiates only the
    branch it takes)."""
    return apply(lambda *xs: eval_jaxpr(recording.jaxpr, consts, xs), leaves, extras,
                 out_store)


def transform_program(recording: Recording, apply, leaves: list, extras: list,
                      out_store: list) -> TransformProgram:
    """`applied` staged at the types of the recording's constants, of `leaves` (vmap's
    mapped ones whole, not their lanes as the recording has them) and of `extras`, and
    compiled. Raises an InertError
    where it cannot be staged (a `while_loop` under reverse mode in a branch a known
    index does not take): the call's values may still give it a meaning."""
    jaxpr = recording.jaxpr
    n_consts, n_leaves = len(jaxpr.constvars), len(jaxpr.invars)
    fixed: list = []
    static: list = []

    def apply_flat(*args):
        outs, kept = applied(recording, args[:n_consts], apply,
                             list(args[n_consts:n_consts + n_leaves]),
                             list(args[n_consts + n_leaves:]), out_store)
        fixed[:] = [o if type(o) in (Zero, ShapedArray) else None for o in outs]
        static[:] = [kept]
        return [o for o in outs if type(o) not in (Zero, ShapedArray)]

    in_avals = [v.aval for v in jaxpr.constvars] + [get_aval(x) for x in (*leaves, *extras)]
    staged, consts = stage(apply_flat, in_avals)
    staged, _ = dce_jaxpr(cse_jaxpr(staged), [True] * len(staged.outvars))
    return TransformProgram(staged, compile_jaxpr(staged), consts, tuple(fixed), static[0])


def _same_trees(out_store: list, expected: tuple) -> bool:
    """The same output structure; a pytree node's static data that cannot be compared
    (an array) is taken to differ."""
    try:
        return tuple(out_store) == expected
    except (TypeError, ValueError):
        return False


def _same_params(a: dict, b: dict) -> bool:
    """Equal params: equal as dicts (at C speed), each of the same type (`0` is not
    `False`); an array param is never taken to be equal to another object."""
    try:
        if a == b:
            for x, y in zip(a.values(), b.values()):
                if type(x) is not type(y):
                    return False
            return True
    except (TypeError, ValueError):  # an array param
        return False
    if len(a) != len(b):
        return False
    for key, x in a.items():  # a control-flow body is another object, traced anew
        if key not in b or not _same_value(x, b[key]):
            return False
    return True


def _same_value(x, y) -> bool:
    if x is y:
        return True
    if type(x) is not type(y) or isinstance(x, np.ndarray):
        return False
    if type(x) is tuple:  # axes and shapes: small ints, the same objects
        if len(x) != len(y):
            return False
        for a, b in zip(x, y):
            if a is not b and not _same_value(a, b):
                return False
        return True
    if type(x) in _PYTHON_SCALARS:
        return _same_scalar(x, y)
    if type(x) is Jaxpr:  # a control-flow body, traced anew by each call
        return _same_jaxpr(x, y)
    if type(x) is ClosedJaxpr:  # constants of another object may differ: not compared
        return not x.consts and not y.consts and _same_jaxpr(x.jaxpr, y.jaxpr)
    same_as = getattr(x, "same_as", None)  # an object that says (a custom function's rule)
    if same_as is not None:
        return same_as(y)
    try:
        return bool(x == y)
    except (TypeError, ValueError):  # an object whose == is elementwise
        return False


def _same_scalar(x, y) -> bool:
    """The same Python (or numpy) scalar: type, value and the sign of a zero; a NaN
    the same NaN, bit for bit (a loop body's `where(m, x, nan)` is traced anew each
    call: unequal NaNs would never let it replay)."""
    if type(x) is not type(y):
        return False
    if x != y:
        return x != x and np.asarray(x).tobytes() == np.asarray(y).tobytes()
    if x:
        return True
    if isinstance(x, (complex, np.complexfloating)):
        return _same_zero(x.real, y.real) and _same_zero(x.imag, y.imag)
    return _same_zero(x, y)


def _same_zero(x, y) -> bool:
    return math.copysign(1.0, x) == math.copysign(1.0, y)


def _same_jaxpr(a: Jaxpr, b: Jaxpr) -> bool:
    """The same program up to the names of its variables."""
    if len(a.eqns) != len(b.eqns) or len(a.outvars) != len(b.outvars):
        return False
    names: dict[Var, Var] = {}  # a's variable -> b's
    if not _same_binders(a.constvars + a.invars, b.constvars + b.invars, names):
        return False
    for x, y in zip(a.eqns, b.eqns):
        if x.primitive is not y.primitive or not _same_atoms(x.inputs, y.inputs, names) \
                or not _same_params(x.params, y.params) or \
                not _same_binders(x.outputs, y.outputs, names):
            return False
    return _same_atoms(a.outvars, b.outvars, names)


def _same_binders(xs, ys, names: dict) -> bool:
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if x.aval != y.aval:
            return False
        names[x] = y
    return True


def _same_atoms(xs, ys, names: dict) -> bool:
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if type(x) is Literal:
            if type(y) is not Literal or not _same_scalar(x.val, y.val):
                return False
        elif names.get(x) is not y:
            return False
    return True



def _plain_params(params: dict) -> bool:
    return all(map(_is_plain, params.values()))


def _is_plain(value) -> bool:
    """Whether a param is data compared by value, or an object that says which others
    are the same (`same_as`: a custom function's rule, made of the same function and
    rules); not anything else `_same_value` cannot see into."""
    if type(value) in _PLAIN_TYPES or isinstance(value, (np.dtype, enum.Enum)) or \
            hasattr(value, "same_as"):
        return True
    if isinstance(value, tuple):  # named ones too (convolution dimension numbers)
        return all(map(_is_plain, value))
    if type(value) is Jaxpr:
        return all(_plain_params(eqn.params) for eqn in value.eqns)
    if type(value) is ClosedJaxpr:
        return _is_plain(value.jaxpr)
    if attrs.has(type(value)):  # a value object
        return all(_is_plain(getattr(value, a.name)) for a in attrs.fields(type(value)))
    return False
