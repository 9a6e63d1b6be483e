"""When a transformation replays instead of tracing the function again: the policy over
`interpreters.replay`, one for every transformation a loop calls repeatedly (`grad`,
`value_and_grad`, `vjp`, `jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian`, `vmap`).

Each transformation writes its flat core once, as `apply(fun, leaves, extras,
out_store) -> (outputs, static)`: the transformation of the flat function `fun` at
`leaves` (with `extras`, the arrays it takes besides the function's arguments: jvp's
tangents; `out_store` is `flat_fun`'s, filled once `fun` has run). The
plain path applies it to the user's function; `transformed` may instead apply it to a
recording of the program the function runs (`interpreters.replay`). The first call
takes the plain path: a function transformed once pays nothing for what follows. The
second call with the same argument types records the program and applies the
transformation to the recording. Later calls run the function under a trace that only
checks that it does the same operations, then the transformation of the recording,
compiled when the recording first repeats: about the cost of the function's own Python
plus `jit`'s of the transformation. A call where the function does something else is
recorded and transformed afresh; a function that does something else more often than
not (three times at least), uses refs, or records over 100,000 equations, is left to
the plain path.

A transformation called inside another one's replay (`jvp(grad(f))`, `hessian`'s inner
`jacrev`) replays too: its recording's transformation is bound at the outer level, one
equation each, so the outer recording holds it and the inner function is not traced
again per call.

Functions are told apart by their code object (and those of the functions they
close over: a decorator's wrapper), not their identity: a lambda made anew in a
loop (`grad(lambda x: loss(x, batch))`) is the same program each time, and what it
closes over reaches the program only as constants, which are checked.
"""

from __future__ import annotations

import threading
import types
from typing import Callable

import attrs
import numpy as np

from ..core.avals import AbstractRef, is_python_scalar
from ..core.check import checks_enabled
from ..core.config import config
from ..core.errors import ConcretizationError, EscapedTracerError, InertError
from ..core.trace import Tracer, get_aval, trace_depth, trace_stack
from ..interpreters.replay import (
    Recording,
    ReplayTrace,
    TransformProgram,
    applied,
    record,
    transform_program,
)
from .arguments import FlatArgs, Static, flat_fun


def transformed(name: str, params: tuple, f: Callable, flat: FlatArgs, has_aux: bool,
                apply: Callable, extras: list = (), active: list[bool] | None = None,
                markers: bool = False, lanes: list | None = None
                ) -> tuple[list, object, list]:
    """`(outputs, static, out_store)` of `apply` (see the module docstring) on the flat
    function of `f` at `flat`'s leaves: on the plain path, or by replaying. `params`
    (hashable) is what else makes `name`'s program differ; None: never replayed.
    `active` (`flat.active` by default) are the leaves differentiated: which values
    Python may not convert (`interpreters.replay.record`). For vmap, `lanes` are the
    leaves as the function sees them: its mapped leaves' lane avals, the others.
    `markers` and `has_aux` are `flat_fun`'s."""
    extras = list(extras)

    def plain() -> tuple[list, object, list]:
        out_store: list = []
        fun = flat_fun(f, flat, out_store, has_aux, markers)
        return (*apply(fun, flat.leaves, extras, out_store), out_store)

    key = _cache_key(name, params, f, flat, has_aux, extras)
    if key is None:
        return plain()
    nested = trace_depth() > 0
    entry, first = _entry(key)
    if entry.plain or (first and not nested):
        return plain()
    compiled, out_store = entry.compiled, []
    try:
        recording, matched, consts, replayable = record(
            flat_fun(f, flat, out_store, has_aux, markers),
            flat.leaves if lanes is None else lanes,
            flat.active if active is None else active, out_store,
            compiled[0] if compiled else None, name, mapped=lanes is not None)
    except ConcretizationError:
        if lanes is None:
            raise
        # the recording takes every value computed from a mapped input to be mapped;
        # vmap itself may know better (a `cond` whose output ignores the mapped operand)
        entry.plain, entry.compiled = True, None
        return plain()
    if compiled is not None:
        entry.count(matched)
    entry.plain |= not replayable or len(recording.jaxpr.eqns) > _MAX_EQNS
    program = compiled[1] if matched else None
    # compiled when a recording first repeats (most functions called again do), or at
    # once inside an outer replay, whose recording then holds the same equations
    if program is None and not entry.plain and (matched or nested):
        program = _compiled(entry, recording, apply, flat.leaves, extras, out_store)
    # a recording never replayed is not kept (what it closes over)
    entry.compiled = None if entry.plain else (recording, program)
    if program is not None:
        return (*program(consts, flat.leaves, extras), out_store)
    try:
        return (*applied(recording, consts, apply, flat.leaves, extras, out_store), out_store)
    except EscapedTracerError:  # a custom rule closes over a value f traced (or an inner
        # vmap's): it runs only while f is traced, as on the plain path, where f runs again
        entry.plain, entry.compiled = True, None
        return plain()


def _compiled(entry: _Entry, recording: Recording, apply, leaves, extras, out_store
              ) -> TransformProgram | None:
    try:
        return transform_program(recording, apply, leaves, extras, out_store)
    except InertError:  # at this call's values it may have a meaning (a `cond`)
        entry.plain = True
        return None


@attrs.define(eq=False)
class _Entry:
    compiled: tuple[Recording, TransformProgram | None] | None = None  # one write
    hits: int = 0  # calls that did what the recording did
    misses: int = 0  # calls that did not
    plain: bool = False  # replaying does not pay (or cannot be done): the plain path

    def count(self, matched: bool) -> None:
        """A function that diverges more often than it matches (three times at least)
        pays a recording each time, more than the plain path: it takes that path."""
        if matched:
            self.hits += 1
        else:
            self.misses += 1
            # (or'ed: a recording that cannot be replayed has set it already)
            self.plain |= self.misses >= _MAX_MISSES and self.misses > self.hits


_entries: dict = {}  # cache key -> _Entry, least recently used first
_entries_lock = threading.Lock()
_MAX_ENTRIES = 256
_MAX_MISSES = 3
_MAX_EQNS = 100_000  # a longer recording is not kept (the cache's memory stays small)


def _entry(key) -> tuple[_Entry, bool]:
    """The entry of `key`, made most recently used, and whether this is its first call
    (which makes it)."""
    with _entries_lock:  # threads may differentiate at once (a Dask worker's)
        entry = _entries.pop(key, None)
        _entries[key] = entry or _Entry()
        if len(_entries) > _MAX_ENTRIES:
            del _entries[next(iter(_entries))]
        return _entries[key], entry is None


def _cache_key(name: str, params: tuple, f: Callable, flat: FlatArgs, has_aux: bool,
               extras) -> tuple | None:
    code = _code_of(f)
    if code is None or params is None or not _replaying_allowed() or config.jax_debug_nans or \
            not config.inert_grad_replay:
        return None
    types = []
    for x in (*flat.leaves, *extras):
        if not (isinstance(x, (np.ndarray, np.generic, Tracer)) or is_python_scalar(x)):
            return None  # a ref, or another library's array
        aval = get_aval(x)  # (a tracer is an outer replay's value: `_replaying_allowed`)
        if type(aval) is AbstractRef:
            return None
        types.append(aval)
    try:  # the structure's hash only: the cache keeps no static data (a Partial's function)
        structure = hash((flat.treedef, tuple(map(_item_kind, flat.items))))
    except TypeError:  # a pytree node's static data is not hashable (a list)
        return None
    key = (name, params, code, structure, tuple(flat.active), tuple(types), has_aux,
           checks_enabled(), trace_depth())
    try:
        hash(key)
    except TypeError:  # a transformation's param (vmap's axis name) that is not hashable
        return None
    return key


def _replaying_allowed() -> bool:
    """No transformation in progress, or only replays: an inner transformation's program
    is then bound at the outer replay's level, as its plain path's would be."""
    return trace_depth() == 0 or all(m.trace_type is ReplayTrace for m in trace_stack()[1:])


def _item_kind(item):
    """What an item of the arguments' structure contributes to the cache key. A static
    leaf (a function, a Python int passed as it is) gives its kind: its type, a
    function's code, the value of a flag or a string; the replay compares what reaches
    the program from it anyway (it passes `bind`), but calls alternating between two
    modes (`training=True`, then False) then each have their recording. A Python number
    contributes its type only: a step counter or a time would otherwise make every
    call a new entry, where the recording takes a changing scalar as an input."""
    if type(item) is tuple:  # an Inactive marker's
        return item[0], tuple(None if p is None else _static_kind(p.value) for p in item[1])
    return _static_kind(item.value) if type(item) is Static else item


def _static_kind(value):
    kind = type(value)
    if kind in (bool, str, type(None)):
        return kind, value
    if kind is types.FunctionType:
        return _code_of(value)
    return kind


def _code_of(f, depth: int = 4):
    """`f`'s code object, with those of the functions it closes over: a wrapper
    (a decorator's, `jit`'s, `grad`'s) has one code for every function it wraps, and
    functions taking turns on one entry would each send the other to the plain path."""
    code = getattr(f, "__code__", None)
    if code is None:
        return _wrapper_code(f, depth)
    cells = getattr(f, "__closure__", None)
    if not cells or not depth:
        return code
    inner = []
    for cell in cells:
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
        if isinstance(value, types.FunctionType):  # (no attribute asked of other objects)
            inner.append(_code_of(value, depth - 1))
    return (code, *inner) if inner else code


def _wrapper_code(f, depth: int):
    """A callable object wrapping a function (`custom_vjp(fun)`, `functools.wraps`'d):
    its class's `__call__` and the function's code; None for other objects."""
    call = vars(type(f)).get("__call__")
    wrapped = getattr(f, "__wrapped__", None)
    if not isinstance(call, types.FunctionType) or wrapped is None or not depth:
        return None
    inner = _code_of(wrapped, depth - 1)
    return None if inner is None else (call.__code__, inner)
