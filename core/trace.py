"""Primitives, traces and tracers: how an operation finds the interpreter for it.

Every transformation in progress owns a `MainTrace` with a *level*: its position on
the trace stack. A tracer belongs to one main trace. `bind` gives an operation to
the highest-level trace among its operands (or the *dynamic* trace, which stages
even operations on plain constants), after *raising* lower-level operands into it.
A value from an outer transformation is therefore a constant to an inner one: it
is inactive for the inner level and stays active for its own. This is what keeps
nested differentiation free of perturbation confusion.

Level 0 is the eval trace: operations on plain numpy values run their `impl`.
The state is thread-local, so vjp functions can be called from several threads.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import attrs
import numpy as np

from .avals import AbstractRef, ShapedArray, concrete_aval
from .backends import PLAIN_TYPES, eval_on_backend, is_backend_array
from .config import config
from .errors import (
    ConcretizationError,
    DTypeError,
    EscapedTracerError,
    InertError,
    NaNError,
)
from .ir import SourceInfo
from .rules import RuleTable
from .traceback_util import ignoring_warnings, user_line_from, warn_at_user_line

ALL_PRIMITIVES: list[Primitive] = []

impl_rules = RuleTable("impl")
"""`impl(*values, **params) -> value` (a list of values if `multiple_results`)."""

abstract_eval_rules = RuleTable("abstract eval")
"""`abstract_eval(*avals, **params) -> aval` (a list if `multiple_results`)."""


@attrs.frozen(eq=False)
class Primitive:
    """An operation of the IR. `operand_names` name operands in error messages.

    `effect` marks the operations on mutable refs (`primitives.state`): "new" creates
    one (bound at the innermost transformation in progress, see `bind`), "read" and
    "write" act on the ref that is their first operand. "io" marks an operation that
    acts on the world (a debug callback): it has no outputs, is never dropped, and runs
    as soon as its operands' values are known. Every other primitive is pure.
    """

    name: str
    multiple_results: bool = False
    operand_names: tuple[str, ...] = ()
    effect: str | None = None

    def __attrs_post_init__(self):
        ALL_PRIMITIVES.append(self)

    def bind(self, *args, **params):
        return bind(self, args, params)

    def operand_name(self, i: int) -> str:
        if i < len(self.operand_names):
            return f"operand {i} ({self.operand_names[i]})"
        return f"operand {i}"

    def __repr__(self) -> str:
        return self.name


REF_EFFECTS = frozenset({"new", "read", "write"})  # the effects of operations on refs


# ---------------------------------------------------------------------------------
# The trace stack


@attrs.define(eq=False)
class MainTrace:
    """One transformation in progress. `global_data` is the interpreter's own state."""

    level: int
    trace_type: type
    global_data: Any = None
    active: bool = True
    trace: Any = None
    name: str = ""  # the user-facing transformation ("grad", "vmap"), for error messages

    def __attrs_post_init__(self):
        self.trace = self.trace_type(self)


class _TraceState:
    """One thread's trace state (`_thread.state`): a plain object, read and written
    at every bind, where each access to a `threading.local` costs four times as much;
    a function takes it from the thread-local once."""

    __slots__ = ("stack", "dynamic", "source", "ceiling", "quiet", "direct")

    def __init__(self):
        self.stack: list[MainTrace] = [MainTrace(0, EvalTrace)]
        self.dynamic: MainTrace = self.stack[0]
        self.source: SourceInfo | None = None  # the user's line of the bind in progress
        self.ceiling: int = sys.maxsize  # refs are created below this level (`bind`)
        self.quiet = False  # inside `quietly`: numpy's floating-point warnings are off
        self.direct: Trace | None = None  # takes every bind first (`take_binds`)


def new_main(trace_type: type, global_data: Any = None, dynamic: bool = False,
             name: str = "") -> _NewMain:
    """`with new_main(...) as main:` pushes a transformation for the block; with
    `dynamic`, even constant-only operations go to it."""
    main = MainTrace(len(_thread.state.stack), trace_type, global_data, name=name)
    return _NewMain(main, dynamic)


class _NewMain:
    """`new_main`'s context manager: a class, which costs a third of a generator's (a
    replayed `grad` enters one per call)."""

    __slots__ = ("main", "dynamic", "saved")

    def __init__(self, main: MainTrace, dynamic: bool):
        self.main, self.dynamic = main, dynamic

    def __enter__(self) -> MainTrace:
        state, main = _thread.state, self.main
        state.stack.append(main)
        self.saved = state.dynamic, state.ceiling, state.direct
        state.ceiling = sys.maxsize  # refs its function creates are its own (see `bind`)
        state.direct = None
        if self.dynamic:
            state.dynamic = main
        return main

    def __exit__(self, *exc) -> None:
        state, main = _thread.state, self.main
        state.dynamic, state.ceiling, state.direct = self.saved
        main.active = False
        main.trace.finish()
        main.trace = None  # main <-> trace was a cycle: refcounting now frees what it recorded
        state.stack.pop()


def bind_at(main: MainTrace, prim: Primitive, args, params, source=None):
    """Bind with `main` as the dynamic trace: how a staging trace computes known
    values one level down (nested binds, e.g. in a control-flow impl, go there too)."""
    return at_dynamic(main, bind, prim, args, params, source)


def at_dynamic(main: MainTrace, fn, *args):
    """`fn(*args)` with `main` as the dynamic trace (see `bind_at`): once around a
    whole pass over known equations instead of once per equation."""
    state = _thread.state
    previous, state.dynamic = state.dynamic, main
    previous_direct, state.direct = state.direct, None
    try:
        return fn(*args)
    finally:
        state.dynamic, state.direct = previous, previous_direct


def take_binds(trace: Trace | None) -> None:
    """Let `trace`, the top and dynamic one, take every `bind` first, through its
    `direct_bind(prim, args, params, source)`: the operands as they are, the user's
    line if one is known yet (else None), no ceiling. It returns the outputs, or None
    to let `bind` go on as usual. Until the next `new_main` or `at_dynamic` (which
    restore it when they end), or `take_binds(None)`."""
    _thread.state.direct = trace


def binding_below(fn, args, params):
    """`fn(*args, **params)`, a rule of the top trace whose binds all go to the traces
    below it, with the dynamic trace taking them first (`take_binds`) if it can: its
    `direct_bind` records an equation of its own operands without `bind` finding again
    the trace the operands already name (a jvp rule above a staging trace: half the
    binds of linearization)."""
    state = _thread.state
    below = state.dynamic.trace
    if not below.takes_binds_from_above:
        return fn(*args, **params)
    previous, state.direct = state.direct, below
    try:
        return fn(*args, **params)
    finally:
        state.direct = previous


def describe_level(main: MainTrace) -> str:
    """`main` in words, for error messages: "the grad", "the inner grad", ..."""
    family = main.trace_type.family or main.trace_type
    same = [m for m in _thread.state.stack if (m.trace_type.family or m.trace_type) is family]
    name = main.name or main.trace_type.__name__
    position = same.index(main) if main in same else 0
    if len(same) == 1:
        return f"the {name}"
    if position == len(same) - 1:
        return f"the inner {name}"
    if position == 0:
        return f"the outer {name}"
    return f"the {name} at depth {position + 1} of {len(same)}"


def current_dynamic() -> MainTrace:
    return _thread.state.dynamic


def trace_depth() -> int:
    """How many transformations are in progress (0 when none is)."""
    return len(_thread.state.stack) - 1


def trace_stack() -> tuple[MainTrace, ...]:
    """The transformations in progress, outermost (the eval trace) first."""
    return tuple(_thread.state.stack)


class Trace:
    """An interpreter at one level. Subclasses define `lift` and `process_primitive`."""

    __slots__ = ("main",)
    family: str | None = None  # traces of one family count as levels of one another
    takes_binds_from_above = False  # has a `direct_bind` for `binding_below`

    def __init__(self, main: MainTrace):
        self.main = main

    def lift(self, val) -> Tracer:
        """Wrap a plain value or a lower-level tracer as a tracer of this trace."""
        raise NotImplementedError

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        raise NotImplementedError

    def finish(self) -> None:
        """The transformation ended: drop caches of the trace's own tracers, which point
        back at it (a cycle would keep all it recorded alive until a collection)."""


class Tracer:
    """A value being traced. Operators and array methods are installed by
    `api.numpy._methods`, which owns the operations they call."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    __array_ufunc__ = None  # until api.numpy._methods installs numpy's dispatch to inert

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def full_lower(self):
        return self

    def concrete_value(self, why: str, lossy: bool = False):
        """The value as a numpy array, if this trace knows it; else a clear error.

        `lossy` conversions (float(), numpy arrays) keep computing with the number,
        which would silently drop a derivative: they are refused for active values.
        """
        depends_on = self.depends_on()
        error = ConcretizationError(
            f"{why} needs the concrete value of a traced array {self.aval.str_short()}, "
            "but its value is not known while tracing (it depends on an input of "
            "make_jaxpr/jit or is a derivative). Use inert.numpy.where for a "
            "data-dependent choice, inert.lax.cond for a branch, and "
            "inert.lax.while_loop/fori_loop for a loop." +
            (f" {depends_on}" if depends_on else ""))
        error.depends_on = depends_on
        raise error.with_source(user_source_info())

    def depends_on(self) -> str | None:
        """Which inputs of the transformation this value depends on, in words (a
        sentence), where its trace can tell: for a `ConcretizationError`."""
        return None

    def __bool__(self):
        return bool(self.concrete_value("bool() (an `if`, `while`, `and`/`or`)"))

    def __int__(self):
        return int(self.concrete_value("int()"))

    def __float__(self):
        return float(self.concrete_value("float()", lossy=True))

    def __complex__(self):
        return complex(self.concrete_value("complex()", lossy=True))

    def __index__(self):
        return int(self.concrete_value("using an array as a Python index"))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.concrete_value("converting to a numpy array (a numpy or math "
                                              "function)", lossy=True), dtype=dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{self.aval.str_short()}>"


def full_lower(val):
    return val.full_lower() if isinstance(val, Tracer) else val


def full_raise(trace: Trace, val) -> Tracer:
    """`val` as a tracer of `trace`: lifted if it is a constant or lower-level."""
    if not isinstance(val, Tracer):
        return trace.lift(val)
    main = val._trace.main
    if main is trace.main:
        return val
    if not main.active:
        raise escaped_error(main)
    if main.level < trace.main.level:
        return trace.lift(val)
    raise EscapedTracerError(
        f"a tracer of level {main.level} met a trace of level {trace.main.level}: "
        "a traced value escaped into an enclosing transformation"
    ).with_source(user_source_info())


def escaped_error(main: MainTrace) -> EscapedTracerError:
    return EscapedTracerError(
        f"a tracer of a finished transformation ({main.trace_type.__name__}) was used: a "
        "traced value escaped (e.g. stored in a global or a closure) and was used after "
        "the transformation that created it returned"
    ).with_source(user_source_info())


def bind(prim: Primitive, args, params, source: SourceInfo | None = None):
    """Apply a primitive: at the eval trace run its impl, else hand it to the top trace.

    The user's source line is found once per user-level operation (the outermost
    traced bind) and shared by the equations the rules emit for it; an interpreter
    re-binding a jaxpr's equation passes the equation's own `source`.

    A primitive creating a ref goes to the innermost transformation in progress,
    whatever its operands: the ref belongs to every transformation whose function
    creates it (a jvp gives it a tangent ref, a vmap one value per lane). Code a
    trace's rule runs (the primal and tangent refs of a jvp, a custom jvp rule) runs
    below that trace, so the refs it creates go below it: the *ceiling*.
    """
    state = _thread.state
    if state.direct is not None:
        outs = state.direct.direct_bind(prim, args, params, source or state.source)
        if outs is not None:
            return outs
    if prim.effect == "new":
        stack = state.stack
        main = stack[min(len(stack), state.ceiling) - 1]
    else:  # the top trace: the highest level among the operands' and the dynamic one
        main = state.dynamic
        level = main.level
        for x in args:
            if isinstance(x, Tracer):
                operand_main = x._trace.main
                if operand_main.level > level:
                    main, level = operand_main, operand_main.level
        if not main.active:
            raise escaped_error(main)
    if main.level == 0:
        return eval_primitive(prim, args, params, source)
    trace = main.trace
    outer_source, outer_ceiling = state.source, state.ceiling
    if source is not None:
        state.source = source
    elif outer_source is None:
        state.source = _walk_to_user_frame()
    state.ceiling = main.level
    try:
        tracers = []  # a loop: a comprehension's own call costs more than its work here
        for a in args:  # operands of the top trace already (the common case) need no raising
            if not isinstance(a, Tracer):
                tracers.append(trace.lift(a))  # a constant: what full_raise does with it
            else:
                tracers.append(a if a._trace is trace else full_raise(trace, a))
        outs = trace.process_primitive(prim, tracers, params)
    finally:
        state.source = outer_source
        state.ceiling = outer_ceiling
    if prim.multiple_results:
        return [o.full_lower() if isinstance(o, Tracer) else o for o in outs]
    out = outs[0]
    return out.full_lower() if isinstance(out, Tracer) else out


class EvalTrace(Trace):
    """Level 0: operations on concrete values run at once."""

    __slots__ = ()

    def lift(self, val):
        return val

    def process_primitive(self, prim, values, params):
        out = eval_primitive(prim, values, params)
        return out if prim.multiple_results else [out]


def eval_primitive(prim: Primitive, values, params, source: SourceInfo | None = None):
    """Run the impl (through a backend's namespace when an operand is a Dask, CuPy, ...
    array); if numpy fails, let abstract evaluation explain why."""
    weak = True  # Python scalars only (weakly typed)
    try:
        for v in values:
            kind = type(v)
            if kind not in _WEAK:
                weak = False
                if kind not in PLAIN_TYPES and is_backend_array(v):
                    out = eval_on_backend(prim, impl_rules[prim], values, params)
                    break
        else:
            out = impl_rules[prim](*values, **params)
    except InertError as e:
        raise e.with_source(source or user_source_info()) from None
    except RuntimeWarning as warning:  # numpy warned: at the user's line (traceback_util)
        warn_at_user_line(warning)
        out = ignoring_warnings(_impl, prim, values, params)
    except Exception as numpy_error:
        # Shape and dtype checks live in the abstract eval rules, run only on failure
        # so that eager evaluation pays nothing for them.
        try:
            abstract_eval(prim, [get_aval(v) for v in values], params)
        except InertError as e:
            raise e.with_source(source or user_source_info()) from None
        numpy_error.add_note(f"in primitive {prim.name}, at {source or user_source_info()}")
        raise numpy_error
    if config.jax_debug_nans and has_nan(out if prim.multiple_results else [out]):
        raise NaNError(f"invalid value (nan) encountered in {prim.name} (jax_debug_nans is on)"
                       ).with_source(source or user_source_info())
    if weak and values and type(out) in _NUMPY_SCALARS:
        return out.item()  # Python scalars in, a Python scalar out: it stays weakly typed
    return out


def _impl(prim: Primitive, values, params):
    """`eval_primitive`'s computation without its checks, for computing it again."""
    if any(type(v) not in PLAIN_TYPES and is_backend_array(v) for v in values):
        return eval_on_backend(prim, impl_rules[prim], values, params)
    return impl_rules[prim](*values, **params)


def has_nan(values) -> bool:
    """Whether a float or complex value among `values` holds a NaN."""
    return any(np.asarray(v).dtype.kind in "fc" and np.isnan(v).any() for v in values)


def quietly(fn, *args):
    """`fn(*args)` with numpy's floating-point warnings off: inert evaluates programs
    as JAX does, giving inf and nan without warnings (an untaken `where` branch
    computing `sqrt(-1)` under `jit` is expected, and the user did not write the
    rules' operations). The `errstate` is entered once, by the outermost evaluation
    (`eval_jaxpr`, compiled code, a forward or backward pass); nested ones only check
    a flag, so a primitive costs nothing more. A single eager operation is numpy's
    own: it warns as the numpy function would (an errstate per operation would
    double its cost)."""
    state = _thread.state
    if state.quiet:
        return fn(*args)
    state.quiet = True
    try:
        return _ignoring_errors(fn, args)
    finally:
        state.quiet = False


_ignoring_errors = np.errstate(all="ignore")(lambda fn, args: fn(*args))
"""`fn(*args)` under an errstate entered as a decorator: half the cost of a `with` block
(0.5 µs against 1; jit dispatch on a small input is 6)."""


def at_source(source: SourceInfo | None, fn, *args):
    """`fn(*args)` with `source` as the user's line of what it binds: how an
    interpreter replaying an equation (its transpose) names the equation's line."""
    state = _thread.state
    previous, state.source = state.source, source or state.source
    try:
        return fn(*args)
    finally:
        state.source = previous


_WEAK = (int, float, complex)
_NUMPY_SCALARS = (np.float64, np.int64, np.complex128)


def abstract_eval(prim: Primitive, avals, params):
    """The output avals (always a list), with the user's line on a rule's error."""
    if prim.effect is None:
        for a in avals:  # a loop: cheaper than `in map(...)`, and this runs per equation
            if type(a) is AbstractRef:
                raise _ref_operand_error(prim, avals)
    try:
        out = abstract_eval_rules[prim](*avals, **params)
    except InertError as e:
        raise e.with_source(user_source_info()) from None
    except TypeError:  # a rule cached by its params (most are) cannot take a list
        unhashable = [name for name, value in params.items() if not _hashable(value)]
        if not unhashable:
            raise
        raise DTypeError(f"{prim.name}: parameter {unhashable[0]} must be hashable (a "
                         f"tuple, not a list), got {params[unhashable[0]]!r:.60}"
                         ).with_source(user_source_info()) from None
    return out if prim.multiple_results else [out]


def _ref_operand_error(prim: Primitive, avals) -> DTypeError:
    i = [type(a) for a in avals].index(AbstractRef)
    return DTypeError(f"{prim.name}: {prim.operand_name(i)} is a ref {avals[i].str_short()}, "
                      "not an array: read it first (ref[...] or inert.freeze(ref))"
                      ).with_source(user_source_info())


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def get_aval(x) -> ShapedArray:
    return x.aval if isinstance(x, Tracer) else concrete_aval(x)


# ---------------------------------------------------------------------------------
# Source lines: the first frame outside inert's own machinery is the user's.

def user_source_info() -> SourceInfo | None:
    """The line of user code being traced or run."""
    return _thread.state.source or _walk_to_user_frame()


def at_user_line(fn, args):
    """`fn(*args)`, an operation inert's code calls for the user (an `inert.numpy`
    function, its operands converted) through frames of inert's only, which run no user
    code, down to `bind`: the user's line is found here, by a walk from this function's
    caller's caller, rather than by `bind` walking up through those frames (a frame
    object made for each). The same line: the innermost frame outside inert, for the
    outermost traced bind; with nothing traced, none is looked for, nor while a trace
    takes every bind first (`take_binds`: a replay, which compares no lines; where it
    lets a bind go on, `bind` finds the line)."""
    state = _thread.state
    if state.source is not None or state.direct is not None or len(state.stack) == 1:
        return fn(*args)
    state.source = user_line_from(sys._getframe(2))
    try:
        return fn(*args)
    finally:
        state.source = None


def _walk_to_user_frame() -> SourceInfo | None:
    """The innermost frame that is not inert's. The frame above is `bind` or
    `user_source_info`, never the user's: the walk starts at their caller."""
    return user_line_from(sys._getframe(2))


class _PerThread(threading.local):
    def __init__(self):
        self.state = _TraceState()


_thread = _PerThread()
