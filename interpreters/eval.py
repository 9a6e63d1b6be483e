"""The eval interpreter: run a jaxpr.

Each equation is *bound*, not run directly, so evaluating a jaxpr under another
transformation (a jaxpr's values may be tracers) applies that transformation to it.
With plain numpy values `bind` goes straight to the primitive's impl. One loop over
the equations, no recursion: a 100k-equation program evaluates in linear time.

Each value is dropped after its last use, as numpy frees a temporary, so a jaxpr
holds no more memory than the same numpy code would (and the allocator can reuse it
instead of faulting in fresh pages).
"""

from __future__ import annotations

import functools
import weakref
from typing import Callable

from ..core.ir import Jaxpr, Literal, Var
from ..core.trace import Tracer, bind, current_dynamic, eval_primitive, impl_rules


def eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
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
    try:
        return generated(*consts, *args)
    except Exception:
        return eval_jaxpr(jaxpr, consts, args)  # raises the error with its context


def _generate(jaxpr: Jaxpr) -> Callable:
    """The source of `compiled(*consts, *args)`, one line per equation, executed."""
    names: dict[Var, str] = {}
    namespace: dict[str, object] = {}

    def name(atom) -> str:
        if type(atom) is Literal:
            key = f"lit{len(namespace)}"
            namespace[key] = atom.val
            return key
        return names.setdefault(atom, f"v{len(names)}")

    params = [name(v) for v in (*jaxpr.constvars, *jaxpr.invars)]
    lines = []
    for eqn, dead in zip(jaxpr.eqns, _plan(jaxpr)[0]):
        fn = f"f{len(namespace)}"
        namespace[fn] = _impl_with_params(eqn)
        outs = ", ".join(name(v) for v in eqn.outputs) + ("," if eqn.primitive.multiple_results
                                                         and len(eqn.outputs) == 1 else "")
        outs = outs or "_"
        lines.append(f"    {outs} = {fn}({', '.join(name(a) for a in eqn.inputs)})")
        if dead:
            lines.append(f"    del {', '.join(names[v] for v in dead)}")
    lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
    source = f"def compiled({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, "<inert.jit>", "exec"), namespace)
    return namespace["compiled"]


def _impl_with_params(eqn) -> Callable:
    impl = impl_rules[eqn.primitive]
    if all(type(a) is Literal and a.aval.weak_type for a in eqn.inputs) and eqn.inputs:
        return lambda *xs: eval_primitive(eqn.primitive, xs, eqn.params)  # keeps weak types
    return functools.partial(impl, **eqn.params) if eqn.params else impl
