"""`grad` and `value_and_grad`.

Called with no transformation in progress, `grad(f)` also saves itself from
differentiating `f` again on later calls (`interpreters.replay`). The first call
takes the plain path: a function differentiated once pays nothing for what follows.
The second call with the same argument types records the program `f` runs (and
differentiates the recording). Later calls run `f` under a trace that only checks
that it does the same operations, then the recording's gradient, compiled when the
recording first repeats, on this call's values: about the cost of `f`'s own Python
plus `jit(grad(f))`'s. A call where `f` does something
else is recorded and differentiated afresh; a function that does something else more
often than not (three times at least), uses refs, or records over 100,000 equations,
is left to the plain path.

Functions are told apart by their code object (and those of the functions they
close over: a decorator's wrapper), not their identity: a lambda made anew in a
loop (`grad(lambda x: loss(x, batch))`) is the same program each time, and what it
closes over reaches the program only as constants, which are checked.
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from ..core.avals import is_python_scalar
from ..core.check import checks_enabled
from ..core.config import config
from ..core.errors import InertError
from ..core.pytree import PyTreeDef, tree_unflatten
from ..core.staging import cyclic_gc_paused
from ..core.trace import get_aval, trace_depth
from ..core.traceback_util import api_boundary
from ..interpreters.replay import (
    GradientProgram,
    Recording,
    gradient_program,
    record,
    value_and_gradient,
)
from ..primitives.control.custom_derivatives import custom_rule_runs
from .arguments import (
    FlatArgs,
    Static,
    as_tuple,
    check_argnums,
    flat_fun,
    flatten_args,
    with_keywords,
)
from .compiled import signature
from .holomorphic import check_inputs, check_outputs
from .numpy._array import returned_leaves
from .transforms import arg_cotangents, linearized, pull_back


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False) -> Callable[..., tuple[Any, Any]]:
    """`f` and its gradient in one call: `(f(*args), gradient)`.

    The gradient has the structure of the `argnums` args (a tuple of them if `argnums`
    is a sequence). Other arguments that are not arrays (functions, strings, Python
    numbers), and keyword arguments, reach `f` as they are (`arguments.passed_as_is`).

    Args:
        f: a function returning a real scalar (with `has_aux`, a pair `(scalar, aux)`).
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns auxiliary data beside the scalar.
        holomorphic: differentiate a complex function of complex inputs (`grad`).

    Returns:
        A function of `f`'s arguments returning `(value, gradient)`, or
        `((value, aux), gradient)` with `has_aux`, as JAX's.

    Example:
        >>> v, g = inert.value_and_grad(lambda x: jnp.sum(x ** 2))(np.array([1.0, 2.0]))
        >>> print(v, g)
        5.0 [2. 4.]
    """
    return api_boundary(_value_and_grad(f, argnums, has_aux, value=True,
                                        holomorphic=holomorphic))


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of a scalar function, by reverse mode.

    The forward pass computes only what the gradient (and `aux`) needs, not the value;
    the backward pass keeps only what the active derivatives read: an argument wrapped
    in `Inactive` is data, and nothing is kept for its derivative. A complex output
    needs `holomorphic` (its inputs complex too: `api.holomorphic`).

    Args:
        f: a function returning a real scalar (with `has_aux`, a pair `(scalar, aux)`).
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns auxiliary data beside the scalar.
        holomorphic: differentiate a complex function of complex inputs, as JAX's.

    Returns:
        A function of `f`'s arguments returning the gradient, with the structure of
        the `argnums` arguments (a tuple of them for a sequence); with `has_aux`,
        `(gradient, aux)`.

    Differences from JAX:
        Called again with arguments of the same types, and no transformation in
        progress, it replays the program it recorded and runs its compiled gradient
        (`inert_grad_replay`): about the cost of `jit(grad(f))` without the `jit`.

    Example:
        >>> def loss(w, x):
        ...     return jnp.sum((x @ w) ** 2)
        >>> w, x = np.array([1.0, -1.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> print(inert.grad(loss)(w, x))
        [ -8. -12.]
        >>> print(inert.grad(loss)(w, inert.Inactive(x)))  # x is data: nothing kept for it
        [ -8. -12.]
    """
    value_and_grad_f = _value_and_grad(f, argnums, has_aux, value=False,
                                       holomorphic=holomorphic)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return api_boundary(grad_f)


def _value_and_grad(f: Callable, argnums, has_aux: bool, value: bool, holomorphic: bool):
    """value_and_grad; without `value` the value is not computed (its aval stands in)
    when no transformation is in progress. Under one, grad's forward pass is part of
    the outer transformation's program and runs the whole function, as the user wrote
    it: the outer level sees every operation (and refuses one it cannot transform).
    The cyclic collector waits for the whole call, not just each pass: its first
    collection after the forward pass would walk the whole linear program."""
    argnums_t = as_tuple(argnums)

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        with cyclic_gc_paused():
            nums = check_argnums(argnums_t, len(args))
            call, args = with_keywords(f, args, kwargs)
            flat = flatten_args(args, nums, floats_only=True, keep_static=True)
            check_inputs("grad", [get_aval(x).dtype for x, a in zip(flat.leaves, flat.active)
                                  if a], holomorphic)
            outs, grads, (_, aux_tree, n_out) = _replayed(call, flat, has_aux, value) or \
                _differentiated(call, flat, has_aux, value)
            check_outputs("grad", [get_aval(outs[0]).dtype], holomorphic)
            grads = tuple(grads[i] for i in nums)
            g = grads if isinstance(argnums, (tuple, list)) else grads[0]
            if has_aux:
                return (outs[0], tree_unflatten(aux_tree, outs[n_out:])), g
            return outs[0], g

    return value_and_grad_f


def _differentiated(f: Callable, flat: FlatArgs, has_aux: bool, value: bool):
    """`(outputs, the arguments' cotangents, out_store)` by linearizing `f`."""
    outs, lin, out_store = linearized(f, flat, has_aux, "grad", value or trace_depth() > 0)
    aval = _scalar_output(out_store[0], [get_aval(o) for o in outs[:1]])
    # a scalar cotangent (staged as a literal) made here: no vjp function, no checks
    return outs, pull_back(lin, flat, [aval.dtype.type(1)]), out_store


def _scalar_output(out_tree: PyTreeDef, avals: list):
    """The output's aval, checked; `avals` has the first output's, if there is one."""
    aval = avals[0] if out_tree.node_type is None else None  # None, (): no output at all
    if aval is None or aval.shape != () or aval.dtype.kind not in "fc":
        raise TypeError("grad requires a function returning a real float scalar, but it "
                        f"returned {aval.str_short() if aval else out_tree}; use vjp or "
                        "jacrev for other outputs")
    return aval


# ---------------------------------------------------------------------------------
# Replaying (see the module docstring)


@attrs.define(eq=False)
class _Entry:
    compiled: tuple[Recording, GradientProgram | None] | None = None  # one write
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


def _replayed(f: Callable, flat: FlatArgs, has_aux: bool, value: bool):
    """What `_differentiated` gives, by replaying (or recording) `f`; None where the
    plain path is taken: under a transformation, on the first call, for a function
    left to it (`_Entry.plain`)."""
    key = _cache_key(f, flat, has_aux, value)
    if key is None:
        return None
    with _entries_lock:  # threads may differentiate at once (a Dask worker's)
        entry = _entries.pop(key, None)
        _entries[key] = entry or _Entry()
        if len(_entries) > _MAX_ENTRIES:
            del _entries[next(iter(_entries))]
    if entry is None:  # the first call: the plain path, which tells whether f runs a rule
        return _first_call(_entries[key], f, flat, has_aux, value)
    if entry.plain:
        return None
    compiled = entry.compiled
    out_store: list = []
    recording, matched, consts, replayable = record(
        flat_fun(f, flat, out_store, has_aux), flat.leaves, flat.active, out_store,
        compiled[0] if compiled else None)
    if compiled is not None:
        entry.count(matched)
    program = None
    if matched:  # compiled when a recording first repeats: most functions called again do
        program = compiled[1]
        if program is None:
            try:
                program = gradient_program(recording, flat.active, value)
            except InertError:  # at this call's values it may have a gradient (a `cond`)
                entry.plain = True
    else:
        _scalar_output(out_store[0], [v.aval for v in recording.jaxpr.outvars[:1]])
        entry.plain |= not replayable or len(recording.jaxpr.eqns) > _MAX_EQNS
    # a recording never replayed is not kept (a user's rule, what it closes over)
    entry.compiled = None if entry.plain else (recording, program)
    if program is None:
        outs, cts = value_and_gradient(recording, consts, flat.leaves, flat.active, value)
    else:
        outs, cts = program(consts, flat.leaves)
    if not value:
        outs = [recording.jaxpr.outvars[0].aval, *outs]
    return (returned_leaves(outs, flat.leaves), arg_cotangents(flat, cts, flat.leaves),
            out_store)


def _first_call(entry: _Entry, f: Callable, flat: FlatArgs, has_aux: bool, value: bool):
    """The plain path. A function that runs a custom rule (a custom_jvp's, a
    custom_vjp's fwd) stays on it: the rule runs on every call, where recording the
    program would run the function's body once more than JAX does."""
    runs = custom_rule_runs()
    result = _differentiated(f, flat, has_aux, value)
    entry.plain |= custom_rule_runs() != runs
    return result


def _cache_key(f: Callable, flat: FlatArgs, has_aux: bool, value: bool) -> tuple | None:
    code = _code_of(f)
    if code is None or trace_depth() > 0 or config.jax_debug_nans or \
            not config.inert_grad_replay:
        return None
    types = []
    for x in flat.leaves:
        if not (isinstance(x, (np.ndarray, np.generic)) or is_python_scalar(x)):
            return None  # a ref, or another library's array
        types.append(signature(x))
    try:  # the structure's hash only: the cache keeps no static data (a Partial's function)
        structure = hash((flat.treedef, tuple(map(_item_kind, flat.items))))
    except TypeError:  # a pytree node's static data is not hashable (a list)
        return None
    return (code, structure, tuple(flat.active), tuple(types), has_aux, value,
            checks_enabled())


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
    cells = getattr(f, "__closure__", None)
    if code is None or not cells or not depth:
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
