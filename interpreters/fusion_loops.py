"""jit's numba backend for control flow: a loop whose body compiles runs as native code.

`scan_impl` and `while_impl` run their body from Python once per iteration: for a
small body (an RNN step on 128 numbers) that Python overhead is most of the time. Here
a `scan`, `while` or `cond` whose every body equation compiles becomes ONE numba
function: the loop is a native `for`/`while`, the carries are native variables (0-d
values as scalars, arrays as arrays), each stacked output is allocated once and
written row by row. Inside, a body is planned as the fusion backend plans a program
(`fusion.plan`): each cluster of elementwise work is a kernel function of the same
module that numba compiles with the loop (and LLVM inlines), and each other equation
must have a `native_rules` entry (`dot_general` as BLAS's `np.dot`; control flow
nests). A body with any other equation keeps the impl's path: nothing is refused.

Rule signature::

    native_rules[prim](fn: NativeFunction, eqn, operands: list[str]) -> list[str]

`operands` are the numba expressions of the equation's inputs; the rule emits lines
into `fn` (`fn.line`, `fn.block`, `fn.jaxpr`) and returns the expressions of its
outputs, or raises `Unsupported`. `defnative_loop(prim, rule)` also lets a top-level
equation of `prim` become one compiled step of jit's driver (`fusion.step_rules`).

Dtypes are the numpy backend's (cluster kernels cast each result to its aval's
dtype; a rule must return its outputs' dtypes exactly, since numba would unify a loop
variable of two types silently). Kernels are cached by their text like fusion's.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from ..core.ir import Jaxpr, JaxprEqn, Literal, Var
from ..core.rules import RuleTable
from .eval import Step
from .fusion import (
    Cluster,
    fusion_rules,
    has_kernel,
    kernel_source,
    literal_text,
    load_kernel,
    plan,
    step_rules,
    used_outside_clusters,
)

native_rules = RuleTable("native")


class Unsupported(Exception):
    """A body equation has no native form: the loop runs through its impl."""


_HEADER = "import math\n\nimport numba\nimport numpy as np\n\n\n"
_DECORATOR = "@numba.njit(cache=True, error_model='numpy')"


@attrs.define
class NativeFunction:
    """The text of one numba module: cluster kernels as helper functions, and the
    lines of the function running the equation, with its indentation."""

    helpers: list = attrs.Factory(list)
    lines: list = attrs.Factory(list)
    depth: int = 1
    count: int = 0

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def block(self, header: str) -> _Block:
        """`with fn.block("for i in range(n):"):` indents the lines emitted inside."""
        self.line(header)
        return _Block(self)

    def assign(self, exprs: list[str], prefix: str = "v") -> list[str]:
        """Fresh names holding `exprs`, assigned at once (so `a, b = b, a` swaps)."""
        names = [self.fresh(prefix) for _ in exprs]
        if names:
            self.line(f"{', '.join(names)} = {', '.join(exprs)}")
        return names

    def jaxpr(self, jaxpr: Jaxpr, operands: list[str]) -> list[str]:
        """Emit `jaxpr` applied to `operands`; the expressions of its outputs."""
        env = dict(zip(jaxpr.invars, operands))
        steps = [lone_cluster(s) if isinstance(s, JaxprEqn) and s.primitive in fusion_rules
                 else s for s in plan(jaxpr)]
        used_outside = used_outside_clusters(jaxpr, steps)
        for step in steps:
            if isinstance(step, Cluster):
                self.cluster(step, used_outside, env)
                continue
            rule = native_rules.get(step.primitive)
            if rule is None:
                raise Unsupported(step.primitive.name)
            outs = rule(self, step, [atom(a, env) for a in step.inputs], **step.params)
            env.update(zip(step.outputs, self.assign(outs)))  # an expression runs once
        return [atom(a, env) for a in jaxpr.outvars]

    def cluster(self, cluster: Cluster, used_outside: set, env: dict) -> None:
        source = kernel_source(cluster, used_outside)
        name = f"k{len(self.helpers)}"
        text = source.text().split("\n\n\n", 1)[1].replace("def kernel(", f"def {name}(", 1)
        self.helpers.append(text)
        names = [self.fresh() for _ in source.returned]
        if names:
            call = f"{name}({', '.join(atom(a, env) for a in source.arguments)})"
            self.line(f"{''.join(n + ', ' for n in names)}= {call}")
        env.update(zip(source.returned, names))

    def text(self, params: list[str], outs: list[str]) -> str:
        main = [_DECORATOR, f"def kernel({', '.join(params)}):", *self.lines,
                f"    return ({''.join(o + ', ' for o in outs)})"]
        return _HEADER + "\n\n".join([*self.helpers, "\n".join(main)]) + "\n"


@attrs.define
class _Block:
    fn: NativeFunction
    start: int = 0

    def __enter__(self):
        self.fn.depth += 1
        self.start = len(self.fn.lines)

    def __exit__(self, *exc):
        if len(self.fn.lines) == self.start:
            self.fn.line("pass")
        self.fn.depth -= 1


def atom(a, env: dict) -> str:
    if type(a) is Literal:
        if a.aval.shape:
            raise Unsupported("an array literal")
        return literal_text(a.val, a.aval.dtype)
    return env[a]


def lone_cluster(eqn: JaxprEqn) -> Cluster:
    """A fusible equation `plan` left alone (a libm call on a large array, which
    numpy's SIMD loop beats outside a loop, or an empty one) as a kernel of its own:
    inside a native loop every equation must compile."""
    rule = fusion_rules[eqn.primitive]
    avals = [a.aval for a in eqn.inputs] + [v.aval for v in eqn.outputs]
    if any(aval.dtype.kind not in rule.kinds or aval.dtype == np.float16 for aval in avals):
        raise Unsupported(f"{eqn.primitive.name} on {[a.str_short() for a in avals]}")
    reduces = rule.kind == "reduce"
    return Cluster(eqn.inputs[0].aval.shape if reduces else eqn.outputs[0].aval.shape,
                   [eqn], set(eqn.outputs) if reduces else set(), open=False)


# ---------------------------------------------------------------------------------
# Top-level equations as compiled steps


def defnative_loop(prim, rule: Callable) -> None:
    """`prim` (control flow) emits native code by `rule`; an equation of it outside
    any loop becomes one compiled step of jit's driver when its bodies compile."""
    native_rules[prim] = rule
    step_rules[prim] = native_step


def native_step(eqn: JaxprEqn, budget: list[int]) -> Step | None:
    """One compiled function running `eqn`, or None where a body does not compile
    (or the program's budget of new kernels is spent, see `fusion.cluster_steps`)."""
    inputs = list(dict.fromkeys(a for a in eqn.inputs if type(a) is Var))
    params = {a: f"a{i}" for i, a in enumerate(inputs)}
    fn = NativeFunction()
    try:
        outs = native_rules[eqn.primitive](fn, eqn, [atom(a, params) for a in eqn.inputs],
                                           **eqn.params)
    except Unsupported:
        return None
    text = fn.text(list(params.values()), outs)
    if not has_kernel(text):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
    return Step(tuple(inputs), eqn.outputs, entry(load_kernel(text), inputs, eqn.outputs),
                unpack=True)


def entry(kernel: Callable, inputs: list[Var], outputs) -> Callable:
    """`kernel` called from the driver: 0-d operands as numpy scalars of their dtype
    (a Python float would type as float64), arrays C-contiguous (what BLAS and one
    compiled specialisation want); 0-d results boxed back into numpy scalars."""
    scalars = [a.aval.dtype.type if not a.aval.shape else None for a in inputs]
    boxes = [v.aval.dtype.type if not v.aval.shape else None for v in outputs]

    def run(*args):
        args = [s(a) if s else np.ascontiguousarray(a) for a, s in zip(args, scalars)]
        return [box(r) if box else r for r, box in zip(kernel(*args), boxes)]

    return run
