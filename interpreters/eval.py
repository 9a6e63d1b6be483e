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
import weakref
from typing import Callable

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


def eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    return quietly(_eval_jaxpr, jaxpr, consts, args)


def _eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    dead_after, literals = _plan(jaxpr)
    env = dict(literals)
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    # on plain values with no transformation in progress, every result is plain too:
    # run the impls directly instead of asking `bind` which trace each belongs to
    concrete = current_dynamic().level == 0 and not any(
        isinstance(x, Tracer) for x in env.values())
    apply = eval_primitive if concrete else bind
    for eqn, dead in zip(jaxpr.eqns, dead_after):
        out = apply(eqn.primitive, [env[a] for a in eqn.inputs], eqn.params, eqn.source_info)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outputs, out))
        else:
            env[eqn.outputs[0]] = out
        for v in dead:
            del env[v]
    return [env[a] for a in jaxpr.outvars]


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plan(jaxpr: Jaxpr) -> tuple[list[tuple[Var, ...]], dict]:
    """What evaluating `jaxpr` needs besides its equations, computed once: the
    variables each equation is the last to read, and the literals with their values
    (so reading an input is one dictionary lookup either way)."""
    plan = _plans.get(jaxpr)
    if plan is None:
        plan = _plans[jaxpr] = (last_uses(jaxpr), {
            a: a.val for e in jaxpr.eqns for a in (*e.inputs,) if type(a) is Literal} | {
            a: a.val for a in jaxpr.outvars if type(a) is Literal})
    return plan


def last_uses(jaxpr: Jaxpr) -> list[tuple[Var, ...]]:
    """For each equation, the variables no later equation or output reads."""
    last: dict[Var, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        last.update((a, i) for a in eqn.inputs if type(a) is Var)
        last.update((v, i) for v in eqn.outputs)  # an unread output dies at once
    for v in jaxpr.outvars:
        last.pop(v, None)
    dead: list[list[Var]] = [[] for _ in jaxpr.eqns]
    for v, i in last.items():
        dead[i].append(v)
    return [tuple(d) for d in dead]


# ---------------------------------------------------------------------------------
# Compiling a jaxpr to a Python function, for `jit`: no per-equation dictionary
# traffic, just one call per equation.


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""jaxpr -> its generated function. The function holds the equations, never the
jaxpr itself: a value that held its key would keep the entry alive forever."""


def compiled(jaxpr: Jaxpr) -> Callable:
    """`compile_jaxpr(jaxpr)`, generated once per jaxpr: for loop bodies, run at every
    step."""
    generated = _compiled.get(jaxpr)
    if generated is None:
        generated = _compiled[jaxpr] = _generate(jaxpr)
    return functools.partial(_run, generated, jaxpr)


def compile_jaxpr(jaxpr: Jaxpr) -> Callable:
    """A Python function `(consts, args) -> list` running `jaxpr` on plain values.

    Each equation becomes one line calling its impl; each value is deleted after its
    last use. If an impl fails, the jaxpr is re-run by `eval_jaxpr`, whose error names
    the primitive, the shapes and the user's line.
    """
    return functools.partial(_run, _generate(jaxpr), jaxpr)


def _run(generated: Callable, jaxpr: Jaxpr, consts, args) -> list:
    """Run the generated code; on an error, or a NaN in the outputs while
    `jax_debug_nans` is on, re-run the jaxpr one equation at a time, which raises the
    error naming the primitive and the user's line."""
    try:
        outs = quietly(generated, *consts, *args)
    except Exception:
        return eval_jaxpr(jaxpr, consts, args)  # raises the error with its context
    if config.jax_debug_nans and has_nan(outs):
        return eval_jaxpr(jaxpr, consts, args)
    return outs


_SEGMENT = 500  # equations per generated function


def _generate(jaxpr: Jaxpr) -> Callable:
    """`compiled(*consts, *args) -> list`: generated source, one line per equation,
    executed.

    CPython's compiler needs kilobytes per line of one function (a 100k-equation
    program in one function took a gigabyte to compile), so a long program is cut
    into functions of `_SEGMENT` equations, each compiled on its own. A value one
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
    dead_after = _plan(jaxpr)[0]
    n = len(jaxpr.eqns)
    if n <= _SEGMENT:
        lines = [_eqn_line(e, d, name, namespace) for e, d in zip(jaxpr.eqns, dead_after)]
        lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
        _exec(f"def compiled({', '.join(params)}):\n" + "\n".join(lines) + "\n", namespace)
        return namespace["compiled"]
    segments = [range(i, min(i + _SEGMENT, n)) for i in range(0, n, _SEGMENT)]
    loads, stores, slots = _crossings(jaxpr, segments)
    for k, segment in enumerate(segments):
        lines = [f"    {name(v)} = r[{slots[v]}]" + ("; r[%d] = None" % slots[v] if last else "")
                 for v, last in loads[k]]
        lines += [_eqn_line(jaxpr.eqns[i], dead_after[i], name, namespace) for i in segment]
        lines += [f"    r[{slots[v]}] = {name(v)}" for v in stores[k]]
        if k == len(segments) - 1:
            lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
        _exec(f"def seg{k}(r):\n" + "\n".join(lines) + "\n", namespace)
    n_free = len(slots) - len(params)
    calls = "".join(f"    seg{k}(r)\n" for k in range(len(segments) - 1))
    _exec(f"def compiled({', '.join(params)}):\n    r = [{', '.join(params)}] + [None] * {n_free}"
          f"\n{calls}    return seg{len(segments) - 1}(r)\n", namespace)
    return namespace["compiled"]


def _crossings(jaxpr: Jaxpr, segments: list[range]):
    """Per segment, the values it loads from `r` (and whether it is their last reader),
    and those it stores for later segments; each crossing value's slot in `r`. The
    jaxpr's inputs are in slots 0, 1, ... (they are `r` at the start)."""
    slots = {v: i for i, v in enumerate((*jaxpr.constvars, *jaxpr.invars))}
    home = dict.fromkeys(slots, -1)  # the segment defining each value
    readers: dict[Var, list[int]] = {}
    last = len(segments) - 1
    for k, segment in enumerate(segments):
        for i in segment:
            eqn = jaxpr.eqns[i]
            for a in eqn.inputs:
                if type(a) is Var and home[a] != k and k not in readers.setdefault(a, [k]):
                    readers[a].append(k)
            home.update(dict.fromkeys(eqn.outputs, k))
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


def _eqn_line(eqn, dead, name, namespace: dict) -> str:
    """`outs = f(ins)`, then `del` of the values it read last."""
    fn = f"f{len(namespace)}"
    namespace[fn] = _impl_with_params(eqn)
    outs = ", ".join(name(v) for v in eqn.outputs) + (
        "," if eqn.primitive.multiple_results and len(eqn.outputs) == 1 else "")
    line = f"    {outs or '_'} = {fn}({', '.join(name(a) for a in eqn.inputs)})"
    if dead:
        line += f"\n    del {', '.join(name(v) for v in dead)}"
    return line


def _exec(source: str, namespace: dict) -> None:
    exec(compile(source, "<inert.jit>", "exec"), namespace)


def _impl_with_params(eqn) -> Callable:
    impl = impl_rules[eqn.primitive]
    if all(type(a) is Literal and a.aval.weak_type for a in eqn.inputs) and eqn.inputs:
        return lambda *xs: eval_primitive(eqn.primitive, xs, eqn.params)  # keeps weak types
    return functools.partial(impl, **eqn.params) if eqn.params else impl
