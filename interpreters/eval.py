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

import attrs

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
        dead = last_uses([(e.inputs, e.outputs) for e in jaxpr.eqns], jaxpr.outvars)
        plan = _plans[jaxpr] = (dead, {
            a: a.val for e in jaxpr.eqns for a in (*e.inputs,) if type(a) is Literal} | {
            a: a.val for a in jaxpr.outvars if type(a) is Literal})
    return plan


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
# traffic, just one call per equation.


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled(jaxpr: Jaxpr) -> Callable:
    """`compile_jaxpr(jaxpr)`, once per jaxpr: for loop bodies, run at every step."""
    run = _compiled.get(jaxpr)
    if run is None:
        run = _compiled[jaxpr] = compile_jaxpr(jaxpr)
    return run


def compile_jaxpr(jaxpr: Jaxpr) -> Callable:
    """A Python function `(consts, args) -> list` running `jaxpr` on plain values: each
    equation becomes one line calling its impl."""
    return compile_steps(jaxpr, [impl_step(eqn) for eqn in jaxpr.eqns])


@attrs.frozen
class Step:
    """One call of compiled code: `fn(*inputs)` defines `outputs` (as a sequence if
    `unpack`). An equation's impl is a step; so is a fused kernel (`fusion`)."""

    inputs: tuple
    outputs: tuple
    fn: Callable
    unpack: bool


def impl_step(eqn) -> Step:
    return Step(eqn.inputs, eqn.outputs, _impl_with_params(eqn), eqn.primitive.multiple_results)


def compile_steps(jaxpr: Jaxpr, steps: list[Step]) -> Callable:
    """`(consts, args) -> list` running `steps` in order in one generated function, each
    value deleted after its last use. If a step fails, the jaxpr is re-run by
    `eval_jaxpr`, whose error names the primitive, the shapes and the user's line."""
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
    for step, dead in zip(steps, last_uses([(s.inputs, s.outputs) for s in steps],
                                           jaxpr.outvars)):
        fn = f"f{len(namespace)}"
        namespace[fn] = step.fn
        outs = ", ".join(name(v) for v in step.outputs) + (
            "," if step.unpack and len(step.outputs) == 1 else "")
        lines.append(f"    {outs or '_'} = {fn}({', '.join(name(a) for a in step.inputs)})")
        if dead:
            lines.append(f"    del {', '.join(names[v] for v in dead)}")
    lines.append(f"    return [{', '.join(name(a) for a in jaxpr.outvars)}]")
    source = f"def compiled({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, "<inert.jit>", "exec"), namespace)
    compiled = namespace["compiled"]

    def run(consts, args):
        try:
            return compiled(*consts, *args)
        except Exception:
            eval_jaxpr(jaxpr, consts, args)  # raises the error with its context
            raise  # a failure of compiled code alone is a bug: never hide it

    return run


def _impl_with_params(eqn) -> Callable:
    impl = impl_rules[eqn.primitive]
    if all(type(a) is Literal and a.aval.weak_type for a in eqn.inputs) and eqn.inputs:
        return lambda *xs: eval_primitive(eqn.primitive, xs, eqn.params)  # keeps weak types
    return functools.partial(impl, **eqn.params) if eqn.params else impl
