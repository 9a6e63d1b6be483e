"""jit's numba backend for control flow: a loop whose body compiles runs as native code.

`scan_impl` and `while_impl` run their body from Python once per iteration: for a
small body (an RNN step on 128 numbers) that Python overhead is most of the time. Here
a `scan`, `while` or `cond` whose every body equation compiles becomes ONE numba
function: the loop is a native `for`/`while`, the carries are native variables (0-d
values as scalars, arrays as arrays), each stacked output is allocated once and
written row by row. Inside, a body is planned as the fusion backend plans a program
(`fusion.plan`): each cluster of elementwise work is its kernel's loops, emitted in
place (a cluster ending in a reduction: a kernel function of the same module, which
LLVM inlines, compiled with `reassoc` so that its sum vectorises), and each other equation
must have a `native_rules` entry (`dot_general` by loops or BLAS's `np.dot`; control
flow nests). A body with any other equation keeps the impl's path: nothing is refused.

Rule signature::

    native_rules[prim](fn: NativeFunction, eqn, operands: list[str], **params) -> list[str]

`operands` are the numba expressions of the equation's inputs; the rule emits lines
into `fn` (`fn.line`, `fn.block`, `fn.jaxpr`) and returns the expressions of its
outputs, or raises `Unsupported`. `defnative_loop(prim, rule)` also lets a top-level
equation of `prim` become one compiled step of jit's driver (`fusion.step_rules`).

A backward loop sums each weight's cotangent into a carry, `add_any(carry, outer
product)` per step; `in_place_sums` finds such carries, and `accumulate_rules` (the
same signature, plus the target) adds the product into the loop's own copy of the
carry in place (or into zeros made for it alone, `NativeFunction.owns`): no
temporary per step, one pass instead of two.

Dtypes are the numpy backend's (cluster kernels cast each result to its aval's
dtype; a rule must return its outputs' dtypes exactly, since numba would unify a loop
variable of two types silently). Kernels are cached by their text like fusion's.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from typing import Callable

import attrs
import numpy as np

from ..core.check import checks_enabled
from ..core.errors import LinAlgError
from ..core.ir import Jaxpr, JaxprEqn, Literal, Var
from ..core.rules import RuleTable
from ..core.trace import quietly
from .ad import add_any_p, zeros_p
from .eval import Step, eval_jaxpr, impl_step
from .fusion import (
    Cluster,
    charge,
    fusion_rules,
    iteration_shape,
    kernel_source,
    literal_text,
    load_kernel,
    module_text,
    plan,
    program_compilers,
    result_boxes,
    step_rules,
    used_outside_clusters,
    views_read_outside,
    without_views,
)
from .vector_math import allocation, loop_lines

native_rules = RuleTable("native")
accumulate_rules = RuleTable("native accumulate")
"""`accumulate_rules[prim](fn, eqn, target, operands, **params)`: emit `target += ` the
result of `eqn`, in place (see `in_place_sums`)."""
assembly_rules = RuleTable("native assembly")
"""`assembly_rules[prim](eqn, **params) -> [offset, ...]`: where each operand of `eqn`
starts along each axis of its result (a concatenate's). A cluster computing an operand
that nothing else reads writes it there, into the result allocated before the cluster
runs, and the equation's native rule finds it in `NativeFunction.assembled`."""
view_rules = RuleTable("native view")
"""`view_rules[prim](operand, eqn, **params) -> str | None`: numba's view of the array
`operand` holding `eqn`'s result, C-contiguous like every array of a native function,
or None where there is none (see `NativeFunction.views`)."""


class Unsupported(Exception):
    """A body equation has no native form: the loop runs through its impl."""


_KERNEL_NAME = re.compile(r"\b[atoi]\d+\b")  # a kernel's own names (`fusion.KernelSource`)
MAX_EQNS = 2000  # numba types ~1 ms per expression: a bigger body stays on its impl
NATIVE_PROGRAM_SIZE = 2 ** 16  # elements, see `native_program`
_DECORATOR = "@numba.njit(cache=True, error_model='numpy')"


@attrs.define
class NativeFunction:
    """The text of one numba module: cluster kernels as helper functions, and the
    lines of the function running the equation, with its indentation."""

    helpers: list = attrs.Factory(list)
    lines: list = attrs.Factory(list)
    depth: int = 1
    count: int = 0
    eqns: int = 0  # emitted so far, over every body
    blocks: list = attrs.Factory(list)  # the open blocks, innermost last
    params: tuple = ()  # the function's parameters
    transposes: dict = attrs.Factory(dict)  # parameter -> its transpose, C-ordered
    assembled: dict = attrs.Factory(dict)  # result -> (its array, the operands in place)
    fills: set = attrs.Factory(set)  # the arrays `full` made
    owned: frozenset = frozenset()  # the operands the rule running now may write into

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def block(self, header: str) -> _Block:
        """`with fn.block("for i in range(n):"):` indents the lines emitted inside."""
        self.line(header)
        return _Block(self, len(self.lines) - 1)

    def before_loop(self, text: str) -> None:
        """Emit `text` just before the innermost open block: a loop body's set-up."""
        block = self.blocks[-1]
        self.lines.insert(block.header, "    " * (self.depth - 1) + text)
        block.header += 1
        block.start += 1

    def transposed(self, name: str, shape: tuple, dtype: np.dtype) -> str | None:
        """A C-ordered copy of the transpose of the matrix parameter `name` (`shape`
        and `dtype` its own), made by loops once at the function's start; None if
        `name` is not a parameter (it may change inside a loop). A loop reading a matrix
        by columns at every step reads this copy by rows instead (see
        `dot_general_native`)."""
        if name not in self.params:
            return None
        if name not in self.transposes:
            self.transposes[name] = copy = self.fresh("t")
            cols, rows = shape  # the copy's
            i, j = self.fresh("i"), self.fresh("j")
            headers, indent = loop_lines([i, j], (rows, cols))
            start = [f"{copy} = {allocation((rows, cols), dtype)}", *headers,
                     f"{indent}{copy}[{i}, {j}] = {name}[{j}, {i}]"]
            self.lines[:0] = ["    " + line for line in start]  # the function's own body
            for block in self.blocks:
                block.header += len(start)
                block.start += len(start)
        return self.transposes[name]

    def copy(self, target: str, value: str, shape: tuple, offset: tuple = ()) -> None:
        """`target[...] = value` (a row of a stacked output, of a block), `shape` theirs,
        as loops: numba compiles an array assigned to a slice by its broadcasting
        setitem, 5 to 6 s of a process's first compile (measured: a 128-element row;
        as a loop, a tenth of a second). `offset`: where `value` starts along each axis
        of `target` (a concatenate's operand), default 0."""
        if not shape:
            self.line(f"{target} = {value}")
            return
        (row,) = self.assign([target], "r")  # a view: numba's basic indexing
        index = [self.fresh("j") for _ in shape]
        at = [f"{j} + {o}" if o else j for j, o in zip(index, offset or (0,) * len(shape))]
        with self.loops(index, shape):
            self.line(f"{row}[{', '.join(at)}] = {value}[{', '.join(index)}]")

    def full(self, shape: tuple, dtype: np.dtype, value: str) -> str:
        """A new array of `shape` holding the scalar `value` everywhere, filled by loops:
        numba's `np.full` and `np.zeros` are each a generic function it compiles (0.3
        to 0.8 s a process), `np.empty` of one form is compiled once (`allocation`)."""
        if not shape:
            return value
        (out,) = self.assign([allocation(shape, dtype)])
        index = [self.fresh("j") for _ in shape]
        with self.loops(index, shape):
            self.line(f"{out}[{', '.join(index)}] = {value}")
        self.fills.add(out)
        return out

    def owns(self, operand: str) -> bool:
        """Whether the rule running now may write into its array `operand` (a loop
        accumulating into its carry), with no copy: `full` made it, in this rule's
        jaxpr, for this equation alone."""
        return operand in self.owned

    @contextlib.contextmanager
    def loops(self, index: list[str], shape: tuple):
        """`with fn.loops(index, shape):` puts the lines emitted inside in the loops of
        `vector_math.loop_lines` running the names `index` over `shape`. Only plain lines
        go there (a copy's, a fill's, a cluster's loop body), never a rule's: these loops
        are not blocks that `before_loop` and `after_loop` see."""
        headers, indent = loop_lines(index, shape)
        for header in headers:
            self.line(header)
        depth = len(indent) // 4
        self.depth += depth
        try:
            yield
        finally:
            self.depth -= depth

    def after_loop(self, *lines: str) -> None:
        """Emit `lines` just after the innermost open block ends."""
        self.blocks[-1].after.extend(lines)

    def assign(self, exprs: list[str], prefix: str = "v") -> list[str]:
        """Fresh names holding `exprs`, assigned at once (so `a, b = b, a` swaps)."""
        names = [self.fresh(prefix) for _ in exprs]
        if names:
            self.line(f"{', '.join(names)} = {', '.join(exprs)}")
        return names

    def jaxpr(self, jaxpr: Jaxpr, operands: list[str], into: dict | None = None) -> list[str]:
        """Emit `jaxpr` applied to `operands`; the expressions of its outputs. Output
        `k` is also written into the array `into[k]` (a row of a stacked output): by the
        kernel computing it where one does, with no temporary, else by a copy."""
        self.eqns += len(jaxpr.eqns)
        if self.eqns > MAX_EQNS:
            raise Unsupported(f"bodies of more than {MAX_EQNS} equations")
        env = dict(zip(jaxpr.invars, operands))
        steps = [lone_cluster(s) if isinstance(s, JaxprEqn) and s.primitive in fusion_rules
                 else s for s in plan(jaxpr)]
        used_outside = used_outside_clusters(jaxpr, steps)
        placed = {**in_kernel_buffers(steps, jaxpr.outvars, into or {}),
                  **self.assemble_in_place(steps, jaxpr.outvars)}
        reads = reads_of(jaxpr)
        filled = set()  # the vars holding an array `full` made here
        for step in steps:
            if isinstance(step, Cluster):
                kernel, viewed = self.views(step, used_outside, env, {*jaxpr.outvars, *placed})
                self.cluster(kernel, used_outside - viewed, env, placed)
                continue
            owned = {env[a] for a in step.inputs if a in filled and reads[a] == 1}
            outs = self.rule(step, [atom(a, env) for a in step.inputs], frozenset(owned))
            env.update(zip(step.outputs, self.assign(outs)))  # an expression runs once
            filled.update(v for v, out in zip(step.outputs, outs) if out in self.fills)
        for k, target in (into or {}).items():
            if placed.get(jaxpr.outvars[k]) != (target, ()):
                self.copy(target, atom(jaxpr.outvars[k], env), jaxpr.outvars[k].aval.shape)
        return [atom(a, env) for a in jaxpr.outvars]

    def rule(self, eqn: JaxprEqn, operands: list[str], owned: frozenset) -> list[str]:
        """Emit `eqn` by its native rule, which may write into the operands `owned`."""
        rule = native_rules.get(eqn.primitive)
        if rule is None:
            raise Unsupported(eqn.primitive.name)
        outer, self.owned = self.owned, owned
        try:
            return rule(self, eqn, operands, **eqn.params)
        finally:
            self.owned = outer

    def assemble_in_place(self, steps: list, outvars) -> dict:
        """`{var: (array, offset)}` for the operands of `assembly_rules` equations that
        a cluster computes elementwise and nothing else reads: each equation's result
        is allocated now, for the cluster to write the operand into its place, where
        the rule would copy it (W4's concatenate of two slices: 0.1 s of compile)."""
        owner = elementwise_results(steps)
        reads = Counter(v for v in outvars if type(v) is Var)
        for s in steps:
            reads.update(a for e in (s.eqns if isinstance(s, Cluster) else [s])
                         for a in e.inputs if type(a) is Var and owner.get(a) is not s)
        placed = {}
        for eqn in steps:
            rule = None if isinstance(eqn, Cluster) else assembly_rules.get(eqn.primitive)
            written = [] if rule is None else [
                k for k, a in enumerate(eqn.inputs)
                if type(a) is Var and a in owner and reads[a] == 1]
            if not written:
                continue
            out = eqn.outputs[0].aval
            (array,) = self.assign([allocation(out.shape, out.dtype)])
            offsets = rule(eqn, **eqn.params)
            placed.update((eqn.inputs[k], (array, offsets[k])) for k in written)
            self.assembled[eqn.outputs[0]] = array, frozenset(written)
        return placed

    def views(self, cluster: Cluster, used_outside: set, env: dict, kept: set
              ) -> tuple[Cluster, set]:
        """The cluster left to compute, and the results of its views read outside
        (`fusion.views_read_outside`) made numba's views (`view_rules`: W4's last
        state), as numpy's impl makes them, not copies by loops. Exact, since nothing
        writes into a native function's array once made: a rule writes only into
        arrays it makes, a loop into its carry's copy or zeros it alone reads (`owns`),
        a cluster into a stacked row or a concatenation no value holds yet. A result
        `kept` (a jaxpr's output, which would share the caller's array, or one written
        into its place) stays a copy."""
        viewed = {}
        for eqn in views_read_outside(cluster, used_outside):
            rule, x, out = view_rules.get(eqn.primitive), eqn.inputs[0], eqn.outputs[0]
            view = None if rule is None or type(x) is not Var or out in kept else rule(
                env[x], eqn, **eqn.params)
            if view is not None:
                viewed[eqn] = out
                (env[out],) = self.assign([view])
        return without_views(cluster, list(viewed)), set(viewed.values())

    def loop_body(self, jaxpr: Jaxpr, operands: list[str], carry: list[str], first: int,
                  sums: list[Sum], into: dict) -> list[str]:
        """Emit a loop body whose inputs `first`, ... are the carry variables `carry`;
        each of `sums` adds its product into its carry in place, after the rest; output
        `k` goes into `into[k]` too (see `jaxpr`)."""
        if not sums:
            return self.jaxpr(jaxpr, operands, into)
        dropped = {id(e) for s in sums for e in (s.add, s.product)}
        outvars = list(jaxpr.outvars)
        for s in sums:
            outvars[s.position] = jaxpr.invars[first + s.position]
        factors = [a for s in sums for a in s.product.inputs]
        rest = Jaxpr((), jaxpr.invars, tuple(e for e in jaxpr.eqns if id(e) not in dropped),
                     (*outvars, *factors))
        outs = self.jaxpr(rest, operands, into)
        factors = outs[len(outvars):]
        for s in sums:
            n = len(s.product.inputs)
            accumulate_rules[s.product.primitive](self, s.product, carry[s.position],
                                                  factors[:n], **s.product.params)
            factors = factors[n:]
        return outs[:len(outvars)]

    def cluster(self, cluster: Cluster, used_outside: set, env: dict, placed: dict) -> None:
        """Emit a call of `cluster`'s kernel, which writes each result `placed` holds
        into that array, from that offset."""
        if not cluster.eqns:
            return
        into = {v: placed[v][1] for e in cluster.eqns for v in e.outputs if v in placed}
        source = kernel_source(cluster, used_outside, into)
        if not source.returned:
            return  # nothing reads its results (a body's dead code)
        buffers = [placed[v][0] for v in into]
        if not cluster.reductions:  # (a reduction's kernel vectorises by `reassoc`)
            self.inline(source, env, buffers)
            return
        name = f"k{len(self.helpers)}"
        self.helpers.append(source.function(name))
        names = [self.fresh() for _ in source.returned]
        args = [*(atom(a, env) for a in source.arguments), *buffers]
        self.line(f"{''.join(n + ', ' for n in names)}= {name}({', '.join(args)})")
        env.update(zip(source.returned, names))

    def inline(self, source, env: dict, buffers: list[str]) -> None:
        """Emit the loops of a cluster's kernel `source` in place, its names (arguments,
        locals, buffers, loop indices) renamed apart, its given buffers `buffers`. numba
        compiles a function of its own in about 0.1 s more than the same loops inline:
        the iLQR workload's program took 18.6 s of CPU with 77 such kernels as
        functions, 13.7 s inline, and runs 15 % faster."""
        names = {name: atom(a, env) for a, name in source.arguments.items()}
        names.update(zip(source.given, buffers))

        def own(match) -> str:
            if match[0] not in names:
                names[match[0]] = self.fresh("w")
            return names[match[0]]

        def renamed(text: str) -> str:
            return _KERNEL_NAME.sub(own, text)

        for line in source.pre:
            self.line(renamed(line))
        with self.loops([renamed(v) for v in source.loop_vars], source.cluster.shape):
            for line in source.body:
                self.line(renamed(line))
        env.update((v, names[name]) for v, name in source.returned.items())

    def text(self, params: list[str], outs: list[str]) -> str:
        main = [_DECORATOR, f"def kernel({', '.join(params)}):", *self.lines,
                f"    return ({''.join(o + ', ' for o in outs)})"]
        return module_text([*self.helpers, "\n".join(main)])


@attrs.define
class _Block:
    fn: NativeFunction
    header: int  # the index of its header line
    start: int = 0
    after: list = attrs.Factory(list)

    def __enter__(self):
        self.fn.depth += 1
        self.start = len(self.fn.lines)
        self.fn.blocks.append(self)

    def __exit__(self, *exc):
        if len(self.fn.lines) == self.start:
            self.fn.line("pass")
        self.fn.depth -= 1
        self.fn.blocks.pop()
        for line in self.after:
            self.fn.line(line)


@attrs.frozen
class Sum:
    """Carry `position` of a loop body is `add_any(carry, product)`."""

    position: int
    add: JaxprEqn
    product: JaxprEqn


def in_place_sums(jaxpr: Jaxpr, first: int, num_carry: int) -> list[Sum]:
    """The carries (inputs `first`, ..., outputs 0, ...) a loop body sums a product
    into, which can be updated in place: nothing else reads the carry, the product or
    the sum, and the product has an `accumulate_rules` entry. A weight's cotangent in
    a backward loop is one (an outer product per step): in place it costs no
    temporary and one pass, instead of two of each per step."""
    reads = reads_of(jaxpr)
    producer = {v: e for e in jaxpr.eqns for v in e.outputs}
    sums = []
    for k in range(num_carry):
        carry, new = jaxpr.invars[first + k], jaxpr.outvars[k]
        add = producer.get(new)
        if add is None or add.primitive is not add_any_p or not new.aval.shape or \
                reads[new] != 1 or reads[carry] != 1 or carry not in add.inputs:
            continue
        (term,) = [a for a in add.inputs if a is not carry]
        product = producer.get(term)
        if product is not None and product.primitive in accumulate_rules and reads[term] == 1:
            sums.append(Sum(k, add, product))
    return sums


def reads_of(jaxpr: Jaxpr) -> Counter:
    """How many times each var is read: by an equation, or as an output."""
    reads = Counter(a for e in jaxpr.eqns for a in e.inputs if type(a) is Var)
    reads.update(v for v in jaxpr.outvars if type(v) is Var)
    return reads


def in_kernel_buffers(steps: list, outvars, into: dict) -> dict:
    """`{var: (array, ())}` for the outputs `into` asks for (`{position: array}`) that
    a cluster kernel computes elementwise: it can write them there. A var asked for
    twice is written by the kernel once, copied the second time."""
    elementwise = elementwise_results(steps)
    placed: dict = {}
    for k, target in into.items():
        if outvars[k] in elementwise:
            placed.setdefault(outvars[k], (target, ()))
    return placed


def elementwise_results(steps: list) -> dict:
    """`{var: its cluster}` for the results clusters compute elementwise over a
    nonempty shape, which a kernel can write into a buffer it is given."""
    return {v: s for s in steps if isinstance(s, Cluster) and s.shape
            for e in s.eqns if fusion_rules[e.primitive].kind != "reduce"
            for v in e.outputs}


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


native_rules[zeros_p] = lambda fn, eqn, operands, *, shape, dtype: [
    fn.full(shape, dtype, literal_text(0, dtype))]


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
    text = loop_source(eqn, inputs)
    if text is None or not charge(budget, text):
        return None
    impl = impl_step(eqn).fn

    def fallback(*args):
        env = dict(zip(inputs, args))
        return impl(*(env[a] if type(a) is Var else a.val for a in eqn.inputs))

    return Step(tuple(inputs), eqn.outputs,
                entry(load_kernel(text), inputs, eqn.outputs, fallback), unpack=True,
                warns=False)


def loop_source(eqn: JaxprEqn, inputs: list[Var]) -> str | None:
    """The module running `eqn` on its `inputs` (distinct vars), or None."""
    params = {a: f"a{i}" for i, a in enumerate(inputs)}
    fn = NativeFunction(params=tuple(params.values()))
    try:
        outs = native_rules[eqn.primitive](fn, eqn, [atom(a, params) for a in eqn.inputs],
                                           **eqn.params)
    except Unsupported:
        return None
    return fn.text(list(params.values()), outs)


def native_program(jaxpr: Jaxpr, budget: list[int]) -> Step | None:
    """A program with a loop as ONE native function, where every equation compiles:
    the steps between its loops cost a Python call each (3-20 us: W4's driver spent
    about 100 of its 1300 us in a slice, a concatenate, a zeros ...). Only where each
    equation outside loops makes at most `NATIVE_PROGRAM_SIZE` elements, which is
    where a step's call costs as much as its work: on larger arrays the plan's numpy
    steps are as fast, and keep what a kernel would lose (a transpose read by a matrix
    product stays BLAS's view). Nor where `fusion.plan` leaves a fusible equation to
    numpy (libm's function on 1024 elements or more: numpy's SIMD loop is faster)."""
    if not any(e.primitive in step_rules for e in jaxpr.eqns) or any(
            e.primitive not in step_rules and (
                any(v.aval.size > NATIVE_PROGRAM_SIZE for v in e.outputs)
                or e.primitive in fusion_rules and iteration_shape(e) is None)
            for e in jaxpr.eqns):
        return None
    inputs = (*jaxpr.constvars, *jaxpr.invars)
    outputs = tuple(dict.fromkeys(v for v in jaxpr.outvars
                                  if type(v) is Var and v not in set(inputs)))
    program = Jaxpr((), inputs, jaxpr.eqns, outputs)
    text = program_source(program)
    if text is None or not charge(budget, text):
        return None
    return Step(inputs, outputs, entry(load_kernel(text), inputs, outputs,
                                       lambda *args: eval_jaxpr(program, [], args)),
                unpack=True, warns=False)


def program_source(program: Jaxpr) -> str | None:
    """The module running `program` (no constvars), or None."""
    params = [f"a{i}" for i in range(len(program.invars))]
    fn = NativeFunction(params=tuple(params))
    try:
        return fn.text(params, fn.jaxpr(program, params))
    except Unsupported:
        return None


program_compilers.append(native_program)


def entry(kernel: Callable, inputs, outputs, fallback: Callable) -> Callable:
    """`kernel` called from the driver: 0-d operands as numpy scalars of their dtype
    (a Python float would type as float64), arrays C-contiguous (what BLAS and one
    compiled specialisation want); 0-d results boxed as `result_boxes` says. numba
    compiles at the first call and may refuse what a rule emitted: `fallback` (the
    impl) runs instead, then and from then on (with checks on, as in the tests, the
    refusal is raised: a rule emitting what numba refuses is a bug). Any other error
    (an index out of bounds) is the program's, and the kernel stays. Neither warns
    (the fallback runs `quietly`), so the driver needs no `errstate` for the step. A
    singular matrix raises inert's `LinAlgError`, as the impls do."""
    scalars = [a.aval.dtype.type if not a.aval.shape else None for a in inputs]
    boxes = result_boxes(outputs)
    state = {"kernel": kernel}

    def run(*args):
        if state["kernel"] is None:
            return quietly(fallback, *args)
        typed = [s(a) if s else np.ascontiguousarray(a) for a, s in zip(args, scalars)]
        try:
            outs = state["kernel"](*typed)
        except np.linalg.LinAlgError as e:  # a singular matrix, as numpy raises it
            raise LinAlgError(str(e)) from None
        except Exception:
            if state["kernel"].signatures or checks_enabled():
                raise  # compiled, so the error is the program's (or checks are on)
            state["kernel"] = None
            return quietly(fallback, *args)
        return [box(r) if box else r for r, box in zip(outs, boxes)]

    return run
