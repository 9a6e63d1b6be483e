"""The eval interpreter: run a jaxpr.

Each equation is *bound*, not run directly, so evaluating a jaxpr under another
transformation (a jaxpr's values may be tracers) applies that transformation to it.
With plain numpy values `bind` goes straight to the primitive's impl. One loop over
the equations, no recursion: a 100k-equation program evaluates in linear time.

Each value is dropped after its last use, as numpy frees a temporary, so a jaxpr
holds no more memory than the same numpy code would (and the allocator can reuse it
instead of faulting in fresh pages). Evaluation, interpreted or compiled, gives inf
and nan without numpy's floating-point warnings, as JAX does (`core.trace.quietly`).
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..core.backends import PLAIN_TYPES, is_backend_array
from ..core.config import config
from ..core.ir import Jaxpr, Literal, Var
from ..core.trace import (
    Tracer,
    bind,
    current_dynamic,
    eval_primitive,
    has_nan,
    impl_rules,
    quietly,
)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence, args: Sequence) -> list:
    """Run `jaxpr` on `consts` (one per constvar) and `args` (one per invar) and return its
    outputs as a list, interpreting each equation with its primitive's impl (nested
    transformations in progress see each operation). numpy's floating-point warnings are off
    while it runs, as JAX's compiled code never warns.

    Differences from JAX:
        JAX's `jax.core.eval_jaxpr(jaxpr, consts, *args)` takes the arguments unpacked.

    Example:
        >>> closed = inert.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
        >>> print(*inert.eval_jaxpr(closed.jaxpr, closed.consts, [0.5]))
        0.958851077208406
    """
    return quietly(_eval_jaxpr, jaxpr, consts, args)


def _eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    dead_after, literals, weak_array_eqns = _plan(jaxpr)
    env = dict(literals)
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    # on plain values with no transformation in progress, every result is plain too:
    # run the impls directly instead of asking `bind` which trace each belongs to
    concrete = current_dynamic().level == 0 and not any(
        isinstance(x, Tracer) for x in env.values())
    apply = eval_primitive if concrete else bind
    weak = weak_array_eqns if concrete else ()  # (traced: the trace types the results)
    for eqn, dead in zip(jaxpr.eqns, dead_after):
        out = apply(eqn.primitive, [env[a] for a in eqn.inputs], eqn.params, eqn.source_info)
        if weak and eqn in weak:
            out = _as_typed(out, eqn)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outputs, out))
        else:
            env[eqn.outputs[0]] = out
        for v in dead:
            del env[v]
    return [env[a] for a in jaxpr.outvars]


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plan(jaxpr: Jaxpr) -> tuple[list[tuple[Var, ...]], dict, set]:
    """What evaluating `jaxpr` needs besides its equations, computed once: the
    variables each equation is the last to read, the literals with their values (so
    reading an input is one dictionary lookup either way), and the equations reading
    a weakly typed array, whose results numpy's promotion may widen (`_as_typed`)."""
    plan = _plans.get(jaxpr)
    if plan is None:
        dead = last_uses([(e.inputs, e.outputs) for e in jaxpr.eqns], jaxpr.outvars)
        plan = _plans[jaxpr] = (dead, {
            a: a.val for e in jaxpr.eqns for a in (*e.inputs,) if type(a) is Literal} | {
            a: a.val for a in jaxpr.outvars if type(a) is Literal},
            {e for e in jaxpr.eqns if _reads_weak_array(e)})
    return plan


def _reads_weak_array(eqn) -> bool:
    return any(a.aval.weak_type and a.aval.shape for a in eqn.inputs)


def last_uses(steps: list[tuple[tuple, tuple]], outvars) -> list[tuple[Var, ...]]:
    """For each `(inputs, outputs)` step, the variables no later step or output reads."""
    last: dict[Var, int] = {}
    for i, (inputs, outputs) in enumerate(steps):
        last.update((a, i) for a in inputs if type(a) is Var)
        last.update((v, i) for v in outputs)  # an unread output dies at once
    for v in outvars:
        last.pop(v, None)
    dead: list[list[Var]] = [[] for _ in steps]
    for v, i in last.items():
        dead[i].append(v)
    return [tuple(d) for d in dead]


# ---------------------------------------------------------------------------------
# Compiling a jaxpr to a Python function, for `jit`: no per-equation dictionary
# traffic, just one call per *step*. A step is an equation's impl here; jit's numba
# backend (`fusion`) makes a fused kernel one step too.


class Step(NamedTuple):
    """One call of generated code: `fn(*inputs)` defines `outputs` (as a sequence if
    `unpack`). A tuple: a program has one per equation, and compiling holds them all.
    `warns=False`: `fn` never emits numpy's floating-point warnings (a compiled kernel),
    so a program of such steps runs without the `errstate` silencing them (a few µs)."""

    inputs: tuple
    outputs: tuple
    fn: Callable
    unpack: bool
    warns: bool = True
    fresh: bool = False  # its array results are new buffers no other value shares
    ufunc: np.ufunc | None = None  # `fn` is this ufunc, which can write into an operand


new_array_results: set = set()
"""Primitives whose impl returns arrays in memory of their own (`dot_general`'s
matmul), registered beside them; an elementwise ufunc's results are new too."""


def impl_step(eqn) -> Step:
    """`eqn` as a step calling its impl. An arithmetic impl chooses per call between
    numpy's scalar arithmetic and the ufunc (`core.backends.operator_impl`); where the
    result has a shape, an operand is an array, the choice is made, and the step calls
    what the impl would (`on_arrays`): a Python call less per equation."""
    fn = _impl_with_params(eqn)
    ufunc = _plain_ufunc(eqn, fn)
    if ufunc is not None and eqn.outputs[0].aval.shape:
        fn = getattr(fn, "on_arrays", fn)
    return Step(eqn.inputs, eqn.outputs, fn, eqn.primitive.multiple_results,
                fresh=ufunc is not None or eqn.primitive in new_array_results, ufunc=ufunc)


def _plain_ufunc(eqn, fn) -> np.ufunc | None:
    """The numpy ufunc `eqn`'s impl `fn` is, called on its operands as they are."""
    if eqn.params or eqn.primitive.multiple_results:
        return None
    return fn if isinstance(fn, np.ufunc) else getattr(fn, "ufunc", None)


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""jaxpr -> its generated function. The function holds the equations, never the
jaxpr itself: a value that held its key would keep the entry alive forever."""


def compiled(jaxpr: Jaxpr) -> Callable:
    """`compile_jaxpr(jaxpr)`, generated once per jaxpr: for loop bodies, run at every
    step."""
    generated = _compiled.get(jaxpr)
    if generated is None:
        generated = _compiled[jaxpr] = _generate(jaxpr, [impl_step(e) for e in jaxpr.eqns])
    return functools.partial(_run, generated, jaxpr, True)


def compile_jaxpr(jaxpr: Jaxpr) -> Callable:
    """A Python function `(consts, args) -> list` running `jaxpr` on plain values.

    Each equation becomes one line calling its impl; each value is deleted after its
    last use. If an impl fails, the jaxpr is re-run by `eval_jaxpr`, whose error names
    the primitive, the shapes and the user's line.
    """
    return compile_steps(jaxpr, [impl_step(e) for e in jaxpr.eqns])


def compile_steps(jaxpr: Jaxpr, steps: list[Step]) -> Callable:
    """`(consts, args) -> list` running `steps`, which compute `jaxpr`, in order. (`_run`'s
    arguments are bound by position: a keyword bound in a partial costs a dictionary
    merge per call, 0.1 µs of jit's 6 on a small input.)"""
    return functools.partial(_run, _generate(jaxpr, reusing_buffers(jaxpr, steps)), jaxpr,
                             any(s.warns for s in steps))


REUSED_BYTES = 256 * 1024  # numpy's own threshold for eliding a temporary


def reusing_buffers(jaxpr: Jaxpr, steps: list[Step]) -> list[Step]:
    """`steps`, where an elementwise ufunc writes its result into an operand's buffer
    that nothing reads afterwards (`np.tanh(h, out=h)`), as numpy's temporary elision
    does for `x @ w + b` in eager code, and for `tanh` too: a large array then takes
    one buffer where it would take two (W2's jitted gradient: 2 to 4 % faster).

    The operand must be an intermediate of the program, never an input; a step's
    `fresh` result, so no other value shares its memory; with that step as its only
    reader, so no view of it was taken; of the result's shape and dtype."""
    readers: dict[Var, int] = {}
    for s in steps:
        for a in {a for a in s.inputs if type(a) is Var}:
            readers[a] = readers.get(a, 0) + 1
    outvars = set(jaxpr.outvars)
    fresh: set[Var] = set()
    rewritten = []
    for s in steps:
        out = s.outputs[0].aval if s.ufunc is not None else None
        if out is not None and out.shape:  # (a 0-d result is a numpy scalar, no buffer)
            reusable = [k for k, a in enumerate(s.inputs) if type(a) is Var and a in fresh
                        and readers[a] == 1 and a not in outvars
                        and a.aval.shape == out.shape and a.aval.dtype == out.dtype
                        and math.prod(out.shape) * out.dtype.itemsize >= REUSED_BYTES]
            if reusable:
                s = s._replace(fn=_writing_into(s.ufunc, reusable[0]))
        if s.fresh:
            fresh.update(s.outputs)
        rewritten.append(s)
    return rewritten


def _writing_into(ufunc: np.ufunc, k: int) -> Callable:
    """`ufunc` writing its result into its operand `k`."""
    return lambda *xs: ufunc(*xs, out=xs[k])


def _run(generated: Callable, jaxpr: Jaxpr, warns: bool, consts, args) -> list:
    """Run the generated code; on an error, or a NaN in the outputs while
    `jax_debug_nans` is on, re-run the jaxpr one equation at a time, which raises the
    error naming the primitive and the user's line. Another library's arrays (Dask,
    CuPy, ...) are interpreted: the generated code calls the numpy impls directly,
    and building a backend's graph costs far more than the interpretation."""
    if not (PLAIN_TYPES.issuperset(map(type, args)) and PLAIN_TYPES.issuperset(
            map(type, consts))) and (any(map(is_backend_array, args)) or
                                     any(map(is_backend_array, consts))):
        return eval_jaxpr(jaxpr, consts, args)  # (numpy's types are checked in C first)
    try:
        outs = quietly(generated, *consts, *args) if warns else generated(*consts, *args)
    except Exception:
        eval_jaxpr(jaxpr, consts, args)  # raises the error with its context
        raise  # generated code failing where the interpreter does not is a bug: show it
    if config.jax_debug_nans and has_nan(outs):
        return eval_jaxpr(jaxpr, consts, args)
    return outs


_SEGMENT = 500  # steps per generated function


def _generate(jaxpr: Jaxpr, steps: list[Step]) -> Callable:
    """`compiled(*consts, *args) -> list`: generated source, one line per step,
    executed.

    CPython's compiler needs kilobytes per line of one function (a 100k-equation
    program in one function took a gigabyte to compile), so a long program is cut
    into functions of `_SEGMENT` steps, each compiled on its own. A value one
    function defines and a later one reads passes through a shared list `r`: stored
    once, loaded once by each function that reads it, and cleared by the last, so it
    still dies at its last use and the cost is per value, not per function.
    """
    names: dict[Var, str] = {}
    namespace: dict[str, object] = {}

    def name(atom) -> str:
        if type(atom) is Literal:
            key = f"lit{len(namespace)}"
            namespace[key] = atom.val
            return key
        return names.setdefault(atom, f"v{len(names)}")

    params = [name(v) for v in (*jaxpr.constvars, *jaxpr.invars)]
    dead_after = last_uses([(s.inputs, s.outputs) for s in steps], jaxpr.outvars)
    n = len(steps)
    if n <= _SEGMENT:
        lines = [_step_line(s, d, name, namespace) for s, d in zip(steps, dead_after)]
        lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
        _exec(f"def compiled({', '.join(params)}):\n" + "\n".join(lines) + "\n", namespace)
        return namespace["compiled"]
    segments = [range(i, min(i + _SEGMENT, n)) for i in range(0, n, _SEGMENT)]
    loads, stores, slots = _crossings(jaxpr, steps, segments)
    for k, segment in enumerate(segments):
        lines = [f"    {name(v)} = r[{slots[v]}]" + ("; r[%d] = None" % slots[v] if last else "")
                 for v, last in loads[k]]
        lines += [_step_line(steps[i], dead_after[i], name, namespace) for i in segment]
        lines += [f"    r[{slots[v]}] = {name(v)}" for v in stores[k]]
        if k == len(segments) - 1:
            lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
        _exec(f"def seg{k}(r):\n" + "\n".join(lines) + "\n", namespace)
    n_free = len(slots) - len(params)
    calls = "".join(f"    seg{k}(r)\n" for k in range(len(segments) - 1))
    _exec(f"def compiled({', '.join(params)}):\n    r = [{', '.join(params)}] + [None] * {n_free}"
          f"\n{calls}    return seg{len(segments) - 1}(r)\n", namespace)
    return namespace["compiled"]


def _crossings(jaxpr: Jaxpr, steps: list[Step], segments: list[range]):
    """Per segment, the values it loads from `r` (and whether it is their last reader),
    and those it stores for later segments; each crossing value's slot in `r`. The
    jaxpr's inputs are in slots 0, 1, ... (they are `r` at the start)."""
    slots = {v: i for i, v in enumerate((*jaxpr.constvars, *jaxpr.invars))}
    home = dict.fromkeys(slots, -1)  # the segment defining each value
    readers: dict[Var, list[int]] = {}
    last = len(segments) - 1
    for k, segment in enumerate(segments):
        for i in segment:
            step = steps[i]
            for a in step.inputs:
                if type(a) is Var and home[a] != k and k not in readers.setdefault(a, [k]):
                    readers[a].append(k)
            home.update(dict.fromkeys(step.outputs, k))
    for v in jaxpr.outvars:
        if type(v) is Var and home[v] != last and last not in readers.setdefault(v, [last]):
            readers[v].append(last)
    loads: list[list] = [[] for _ in segments]
    stores: list[list] = [[] for _ in segments]
    for v, ks in readers.items():
        slots.setdefault(v, len(slots))
        if home[v] >= 0:
            stores[home[v]].append(v)
        for k in ks:
            loads[k].append((v, k == ks[-1]))
    return loads, stores, slots


def _step_line(step: Step, dead, name, namespace: dict) -> str:
    """`outs = f(ins)`, then `del` of the values it read last."""
    fn = f"f{len(namespace)}"
    namespace[fn] = step.fn
    outs = ", ".join(name(v) for v in step.outputs) + (
        "," if step.unpack and len(step.outputs) == 1 else "")
    line = f"    {outs or '_'} = {fn}({', '.join(name(a) for a in step.inputs)})"
    if dead:
        line += f"\n    del {', '.join(name(v) for v in dead)}"
    return line


def _exec(source: str, namespace: dict) -> None:
    exec(compile(source, "<inert.jit>", "exec"), namespace)


def _impl_with_params(eqn) -> Callable:
    impl = impl_rules[eqn.primitive]
    impl = getattr(impl, "unchecked", impl)  # a staged program's avals are checked
    if eqn.inputs and all(a.aval.weak_type for a in eqn.inputs):
        # keeps Python scalars (literals, or weakly typed inputs) Python scalars, as
        # eager code does: `x32 * sin(c)` for a Python float `c` stays float32
        return lambda *xs: eval_primitive(eqn.primitive, xs, eqn.params)
    fn = functools.partial(impl, **eqn.params) if eqn.params else impl
    if _reads_weak_array(eqn):
        return lambda *xs: _as_typed(fn(*xs), eqn)
    return fn


def _as_typed(out, eqn):
    """`eqn`'s results in the dtypes of its outputs' avals: a weakly typed array
    operand (a rule's `select_n(mask, 1.0, 0.5)`) is a plain float64 array to numpy,
    which then promotes a float32 operand beside it, where the types say float32."""
    if not eqn.primitive.multiple_results:
        return _cast(out, eqn.outputs[0].aval.dtype)
    return [_cast(o, v.aval.dtype) for o, v in zip(out, eqn.outputs)]


def _cast(value, dtype):
    return value if value.dtype == dtype else value.astype(dtype)
