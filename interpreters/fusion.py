"""jit's numba backend: clusters of elementwise work fused into compiled loops.

`compile_jaxpr` (eval) calls numpy once per equation, so each elementwise equation
materialises a temporary array and costs a Python call. This backend groups each
cluster of elementwise and broadcast equations that share an *iteration shape*, with
the reductions that end it, into one loop kernel compiled by numba: the cluster's
intermediates are scalars in registers, never arrays, and a chain of 0-d operations
is straight-line native code. Every other equation (`dot_general`, indexing, control
flow whose body `fusion_loops` cannot compile, special functions numba cannot compile)
runs through its numpy impl inside the same driver function, so nothing is refused.

Rule signature::

    fusion_rules[prim] = FusionRule(kind, expr, identity)

`kind` is "elementwise" (the output has the iteration shape; `expr(*operands,
**params)` returns a numba scalar expression from the operands' expressions),
"gather" (the output reads its first operand elsewhere: `expr(loop_indices,
operand_shape, out_shape, **params)` returns the operand's index expressions and a
condition for reading it, else the second operand: broadcasts, slices, transposes,
pads) or "reduce" (the *input* has the iteration shape; `expr(acc, x)` combines,
`identity(dtype)` starts the accumulator). `deffused_ufunc` registers a primitive
whose impl is a numpy ufunc as that ufunc applied to scalars.

Clustering is one pass over the equations. An equation joins the open cluster of its
iteration shape; reading a value from a *different* open cluster (or a reduction's
result from its own) closes that cluster first, as does any unfused equation reading
from one. So a closed cluster never grows, an open one reads only values computed
before it is emitted, and the driver emits steps in a valid order.

Dtypes are exactly the numpy backend's: each equation's result is cast to its aval's
dtype, and a weakly typed literal is cast to the dtype it promotes to. Values are
numpy's bits (`numpy_form` where numba's ufunc differs; test_backend_conformance), but
transcendental functions (libm's: 2 ulp), sums that LLVM reassociates to vectorise
(`fastmath={"reassoc"}` in kernels with a reduction) and `x ** 3` as `x * x * x`
(libm's `pow` per element is 50 times slower). Kernels never warn, so
a program of kernels alone runs without numpy's `errstate`.

Kernels are cached per source text: in memory (the `config.inert_kernels_in_memory`
used last, and those live jitted functions hold), and on disk through numba's cache,
beside a file holding the source in the cache folder (`kernel_cache`: where it is,
when it is trusted, what happens when it fails), so a second process compiles nothing.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from typing import Callable

import attrs
import numpy as np

from ..core.errors import BackendFallbackWarning, BackendUnavailableError
from ..core.ir import Jaxpr, JaxprEqn, Literal, Var
from ..core.rules import RuleTable
from ..core.traceback_util import warn_at_user_line
from . import scalar_kernels, vector_math
from .eval import Step, compile_steps, impl_step
from .kernel_cache import has_kernel, load_kernel
from .vector_math import (
    COMPARISONS,
    allocation,
    cast,
    exact_comparison,
    loop_lines,
    numpy_form,
)

SMALL = 1024  # elements below which a libm call per element beats a numpy call
# numba compiles an array kernel in about 0.15 s, plus 25 ms per equation (its type
# inference, per expression) and 100 ms more per conditional expression (a pad's or
# a select's blocks): a program compiles new kernels worth at most about 4 s of that,
# counted in equations, and then numpy takes over
MAX_CLUSTER_EQNS = 64  # equations per array kernel
BRANCH_COST = 4  # a conditional expression's cost, in lines (`compile_cost`)
HELPER_COST = 4  # a `vector_math` function's
MAX_NEW_KERNEL_COST = 160  # per jitted program
# ... but a program whose loops compile as ONE native function (`program_compilers`) is
# one kernel per signature, however many iterations it runs, which no Python loop
# multiplies: it may cost up to this (the iLQR workload's: 571, 14 s of CPU, against 60 ms
# a call saved: 250 calls pay for it)
MAX_WHOLE_PROGRAM_COST = 1200


@attrs.frozen
class FusionRule:
    kind: str  # "elementwise" | "gather" | "reduce"
    expr: Callable | None = None
    identity: Callable | None = None
    kinds: str = "biuf"  # the dtype kinds numba computes exactly as numpy does
    operand_dtypes: Callable | None = None  # eqn -> the dtype each operand is cast to
    vectorised: bool = True  # False: a libm call per element, slower than numpy's SIMD
    view: bool = False  # a gather whose numpy impl is a view of its operand (no copy)
    typed: bool = False  # `expr` also takes `dtypes=`, the dtypes its operands are cast to


fusion_rules = RuleTable("fusion")
step_rules = RuleTable("numba step")
"""`step_rules[prim](eqn, budget) -> Step | None`: an equation no cluster holds, compiled
another way (`fusion_loops`: control flow whose bodies compile); None: its impl."""
program_compilers: list[Callable] = []
"""`compiler(jaxpr, budget) -> Step | None`: the whole program as one step, tried first
(`fusion_loops`: one native function for a program with loops)."""


def deffused(prim, expr: Callable, kinds: str = "biuf",
             operand_dtypes: Callable | None = None, vectorised: bool = True,
             typed: bool = False) -> None:
    """`prim` is elementwise: `expr(*operands, **params)` computes one element from its
    operands' scalar expressions, each cast first to `operand_dtypes(eqn)` (default:
    the dtype numpy computes in, `computation_dtype`; None leaves one uncast), which
    a `typed` expr also takes, as `dtypes`. `vectorised=False` marks a libm call per
    element: numpy's SIMD loops beat it on large arrays, so it fuses only into scalar
    and small kernels."""
    fusion_rules[prim] = FusionRule("elementwise", expr, kinds=kinds,
                                    operand_dtypes=operand_dtypes, vectorised=vectorised,
                                    typed=typed)


# Scalar forms numba types faster than a numpy ufunc call (its compile time is mostly
# type inference, per expression); operands are already cast to the computation dtype.
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "equal": "==",
              "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
              "greater_equal": ">="}
_MATH = {
    "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh", "cosh": "cosh",
    "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "sqrt": "sqrt",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh"}


# numpy's maximum and minimum give the second operand on a tie (-0.0 and 0.0: x86's
# maxsd), numba's np.maximum the first, so the operands are swapped: 1 / maximum(0.0, -0.0)
# is numpy's -inf on both backends (a NaN in either operand propagates either way)
_SWAPPED = {"maximum", "minimum"}


def comparison_operand_dtypes(eqn: JaxprEqn) -> list:
    """A comparison's operands, cast to the dtype numpy compares in, but for integers
    promoting to float64 (uint64, int64): numpy compares them exactly (`exact_comparison`)."""
    dtype = computation_dtype(eqn)
    exact = dtype.kind == "f" and all(a.aval.dtype.kind in "iu" and not a.aval.weak_type
                                      for a in eqn.inputs)
    return [None, None] if exact else [dtype, dtype]


def ufunc_expr(ufunc: np.ufunc) -> Callable:
    name = ufunc.__name__
    if name in _OPERATORS:
        return lambda x, y: f"({x} {_OPERATORS[name]} {y})"
    if name in _SWAPPED:
        return lambda x, y: f"np.{name}({y}, {x})"
    if name == "negative":
        return lambda x: f"(-{x})"
    if name in _MATH:
        return lambda x: f"math.{_MATH[name]}({x})"
    if name in vector_math.UFUNCS:  # vectorises, where a libm call per element does not
        return lambda x: f"{vector_math.UFUNCS[name]}({x})"
    return lambda *xs: f"np.{name}({', '.join(xs)})"


def deffused_ufunc(prim, ufunc: np.ufunc, kinds: str = "biuf") -> None:
    """`prim` computes `ufunc` elementwise; numba compiles the ufunc on scalars. A
    transcendental function fuses only into small kernels: on a large array numpy's
    SIMD loop beats libm's call per element, and `vector_math`'s tanh too (which LLVM
    vectorises 256 bits wide, numpy 512: W2 and W9 lose 10 % fusing it with an add)."""
    name = ufunc.__name__
    plain = ufunc_expr(ufunc)
    forms = {np.dtype(t): numpy_form(name, np.dtype(t)) or plain for t in "?bhilqBHILQfd"}

    def expr(*operands, dtypes):
        if dtypes[0] != dtypes[-1]:  # left uncast by `comparison_operand_dtypes`
            return exact_comparison(name, *operands, dtypes)
        return forms.get(dtypes[0], plain)(*operands)

    deffused(prim, expr, kinds, typed=True,
             operand_dtypes=comparison_operand_dtypes if name in COMPARISONS else None,
             vectorised=name == "sqrt" or name not in _MATH and name not in vector_math.UFUNCS)


def deffused_gather(prim, index_map: Callable, view: bool = True) -> None:
    """`prim` moves data: element `i` of its output is its operand's element
    `index_map(i, operand_shape, out_shape, **params)[0]` where the condition `[1]`
    holds (None: always), else its second operand (a pad's value). `view`: numpy's
    impl is a view, so a result read outside a kernel is that view, not a copy."""
    fusion_rules[prim] = FusionRule("gather", index_map, view=view)


def deffused_reduction(prim, combine: Callable, identity: Callable) -> None:
    fusion_rules[prim] = FusionRule("reduce", combine, identity)


def numba_available() -> bool:
    """Whether numba is installed. It is imported only when a kernel first loads:
    importing it costs half a second, and it makes every code object CPython compiles
    afterwards larger (the numpy backend's generated code too)."""
    return importlib.util.find_spec("numba") is not None


def require_numba() -> None:
    """`backend="numba"` asked for numba's code: without numba that is an error, not
    numpy's code run silently under the name."""
    if not numba_available():
        raise BackendUnavailableError(
            'jit: backend="numba" needs numba, which is not installed (it is one of '
            "inert's dependencies: `pip install numba`); backend=\"numpy\" runs without it")


@functools.cache
def warn_numba_missing() -> None:
    """Say once per process, at the user's line, that jit's default keeps numpy's code
    where it would have compiled with numba."""
    warn_at_user_line(BackendFallbackWarning(
        "jit: this function has run long enough to be compiled with numba, which is not "
        "installed, so it keeps running numpy's code (`pip install numba` for fused "
        'kernels; backend="numpy" says so and silences this)'))


# ---------------------------------------------------------------------------------
# Clustering


@attrs.define(eq=False)
class Cluster:
    """Equations run as one kernel: every elementwise result has `shape`."""

    shape: tuple[int, ...]
    eqns: list[JaxprEqn] = attrs.Factory(list)
    reductions: set = attrs.Factory(set)
    open: bool = True


def broadcast_index(loop_vars: list[str], size: int, dim: int, shape: tuple) -> str:
    """The index into an axis of `size` that broadcasts along loop axis `dim`."""
    return "0" if size == 1 and shape[dim] != 1 else loop_vars[dim]


def iteration_shape(eqn: JaxprEqn) -> tuple[int, ...] | None:
    """The shape a kernel loops over for `eqn`, or None if `eqn` does not fuse."""
    rule = fusion_rules.get(eqn.primitive)
    if rule is None:
        return None
    avals = [a.aval for a in eqn.inputs] + [v.aval for v in eqn.outputs]
    if any(aval.dtype.kind not in rule.kinds or aval.dtype == np.float16 for aval in avals):
        return None  # complex, float16, float0 ... stay on numpy
    shape = eqn.inputs[0].aval.shape if rule.kind == "reduce" else eqn.outputs[0].aval.shape
    size = math.prod(shape)
    return shape if 0 < size and (rule.vectorised or size < SMALL) else None


def plan(jaxpr: Jaxpr) -> list[JaxprEqn | Cluster]:
    """The equations of `jaxpr` in a valid order, fusible runs grouped in Clusters."""
    steps: list[JaxprEqn | Cluster] = []
    open_by_shape: dict[tuple, Cluster] = {}
    owner: dict[Var, Cluster] = {}

    def close(cluster: Cluster) -> None:
        if cluster.open:
            cluster.open = False
            del open_by_shape[cluster.shape]
            steps.append(cluster)

    for eqn in jaxpr.eqns:
        shape = iteration_shape(eqn)
        target = open_by_shape.get(shape) if shape is not None else None
        moves_data = shape is not None and fusion_rules[eqn.primitive].kind == "gather"
        for a in eqn.inputs:
            source = owner.get(a) if type(a) is Var else None
            if source is not None and source.open and (
                    source is not target or a in source.reductions or moves_data):
                close(source)  # a kernel reads its own values only where it computes them
        if shape is None:
            steps.append(eqn)
            continue
        target = open_by_shape.get(shape)
        if target is not None and shape and len(target.eqns) >= MAX_CLUSTER_EQNS:
            close(target)
            target = None
        if target is None:
            target = open_by_shape[shape] = Cluster(shape)
        target.eqns.append(eqn)
        for v in eqn.outputs:
            owner[v] = target
        if fusion_rules[eqn.primitive].kind == "reduce":
            target.reductions.update(eqn.outputs)
    for cluster in list(open_by_shape.values()):
        close(cluster)
    return steps


# ---------------------------------------------------------------------------------
# Kernel source


def literal_text(value, dtype: np.dtype) -> str:
    """`value` as a scalar of `dtype` in kernel text; a float64 as a plain literal (numba
    types one as float64, and types a call of np.float64 in about 3 ms)."""
    value = np.asarray(value).astype(dtype)[()]
    if dtype.kind == "b":
        return repr(bool(value))
    if dtype.kind == "f" and not np.isfinite(value):
        text = "np.nan" if np.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    else:
        text = repr(value.item())
    if dtype != np.float64:
        return f"{cast(dtype)}({text})"
    return f"({text})" if text.startswith("-") else text  # (-1.5) ** 2 is 2.25


_PYTHON_NUMBER = {"b": bool, "i": int, "u": int, "f": float}  # a weakly typed value's type


def computation_dtype(eqn: JaxprEqn) -> np.dtype:
    """The dtype numpy computes an elementwise `eqn` in: the result's, or for a
    comparison the promotion of its operands (NEP 50: a weakly typed one as a Python
    number of its kind, which yields to a strong dtype of its kind or above, not to a
    lower one: `int8 >= 0.5` compares in float64). numba's own scalar promotion differs
    (float32 + int64 is float32 there), so every operand is cast to it first."""
    out = eqn.outputs[0].aval.dtype
    if out.kind != "b":
        return out
    avals = [a.aval for a in eqn.inputs]
    if all(a.weak_type for a in avals):
        return np.result_type(*(a.dtype for a in avals))
    return np.result_type(*(_PYTHON_NUMBER[a.dtype.kind](0) if a.weak_type else a.dtype
                            for a in avals))


def operand_dtypes(eqn: JaxprEqn) -> list:
    rule = fusion_rules[eqn.primitive]
    if rule.operand_dtypes is not None:
        return rule.operand_dtypes(eqn)
    return [computation_dtype(eqn)] * len(eqn.inputs)


@attrs.define
class KernelSource:
    """Builds one kernel: its text, the atoms it reads and the vars it returns."""

    cluster: Cluster
    used_outside: set
    into: dict = attrs.Factory(dict)  # result -> its offset in the buffer given (or ())
    arguments: dict = attrs.Factory(dict)  # atom read from outside -> parameter name
    given: list = attrs.Factory(list)  # the parameters holding `into`'s buffers
    locals: dict = attrs.Factory(dict)  # var computed here -> its scalar local
    returned: dict = attrs.Factory(dict)  # var returned -> the name holding all of it
    pre: list = attrs.Factory(list)
    body: list = attrs.Factory(list)

    @property
    def loop_vars(self) -> list[str]:
        return [f"i{d}" for d in range(len(self.cluster.shape))]

    def operand(self, atom, eqn: JaxprEqn, dtype: np.dtype | None) -> str:
        """`atom` as an elementwise operand of `eqn`, cast to `dtype`."""
        if type(atom) is Literal:
            return literal_text(atom.val, dtype or atom.aval.dtype)
        expr = self.read(atom, eqn)
        return expr if dtype is None or dtype == atom.aval.dtype else f"{cast(dtype)}({expr})"

    def read(self, atom, eqn: JaxprEqn, index: list[str] | None = None) -> str:
        """The scalar expression of `atom` as an operand of `eqn` at one iteration."""
        if type(atom) is Literal:
            return literal_text(atom.val, atom.aval.dtype)
        if atom in self.locals:
            return self.locals[atom]
        name = self.arguments.setdefault(atom, f"a{len(self.arguments)}")
        shape = atom.aval.shape
        if not shape:
            return name
        if index is None:  # numpy's broadcasting: trailing axes align
            offset = len(self.cluster.shape) - len(shape)
            index = [broadcast_index(self.loop_vars, n, offset + j, self.cluster.shape)
                     for j, n in enumerate(shape)]
        return f"{name}[{', '.join(index)}]"

    def add(self, eqn: JaxprEqn) -> None:
        rule = fusion_rules[eqn.primitive]
        out = eqn.outputs[0]
        local = self.locals[out] = f"t{len(self.locals)}"
        if rule.kind == "reduce":
            self.add_reduction(eqn, rule, local)
            return
        dtype = cast(out.aval.dtype)
        if rule.kind == "gather":  # the operand's own dtype: no cast
            operand = eqn.inputs[0]
            index, valid = rule.expr(self.loop_vars, operand.aval.shape, out.aval.shape,
                                     **eqn.params)
            expr = self.read(operand, eqn, index)
            if valid is not None:
                fill = self.operand(eqn.inputs[1], eqn, out.aval.dtype)
                expr = f"({expr} if {valid} else {fill})"
            self.body.append(f"{local} = {expr}")
        else:
            dtypes = operand_dtypes(eqn)
            operands = [self.operand(a, eqn, d) for a, d in zip(eqn.inputs, dtypes)]
            typed = {"dtypes": [d or a.aval.dtype for a, d in zip(eqn.inputs, dtypes)]
                     } if rule.typed else {}
            expr = rule.expr(*operands, **typed, **eqn.params)
            # float64 in and out needs no cast: numba computes float64 from float64
            exact = out.aval.dtype == np.float64 and all(d == np.float64 for d in dtypes)
            self.body.append(f"{local} = {expr}" if exact else f"{local} = {dtype}({expr})")
        if out not in self.used_outside:
            return
        if not self.cluster.shape:
            self.returned[out] = local
            return
        buffer = self.returned[out] = f"o{len(self.returned)}"
        index = self.loop_vars
        if out in self.into:
            self.given.append(buffer)
            index = [f"{i} + {o}" if o else i for i, o in zip(index, self.into[out])] or index
        else:
            self.pre.append(f"{buffer} = {allocation(self.cluster.shape, out.aval.dtype)}")
        self.body.append(f"{buffer}[{', '.join(index)}] = {local}")

    def add_reduction(self, eqn: JaxprEqn, rule: FusionRule, local: str) -> None:
        out = eqn.outputs[0]
        dtype = out.aval.dtype
        x = self.read(eqn.inputs[0], eqn)
        start = literal_text(rule.identity(dtype), dtype)
        kept = [v for d, v in enumerate(self.loop_vars) if d not in eqn.params["axes"]]
        if kept:  # filled by loops: numba's np.full is a function it compiles
            self.pre.append(f"{local} = {allocation(out.aval.shape, dtype)}")
            fill = self.loop_vars[:len(kept)]  # (before the cluster's own loops)
            headers, indent = loop_lines(fill, out.aval.shape)
            self.pre += [*headers, f"{indent}{local}[{', '.join(fill)}] = {start}"]
            slot = f"{local}[{', '.join(kept)}]"
        else:
            self.pre.append(f"{local} = {start}")
            slot = local
        combined = rule.expr(slot, x)
        exact = dtype == np.float64 and eqn.inputs[0].aval.dtype == np.float64  # (as `add`)
        self.body.append(f"{slot} = {combined}" if exact else f"{slot} = {cast(dtype)}({combined})")
        self.returned[out] = local

    def types(self) -> dict[str, np.dtype]:
        """The dtype of each name in the kernel's text: arguments and locals."""
        return {**{name: a.aval.dtype for a, name in self.arguments.items()},
                **{name: v.aval.dtype for v, name in self.locals.items()}}

    def text(self) -> str:
        return module_text([self.function("kernel")])

    def function(self, name: str) -> str:
        """The kernel's definition, named `name`: "kernel", which Python calls, or another
        name, a function of a native program's module, which only its code calls."""
        fastmath = ", fastmath={'reassoc'}" if self.cluster.reductions else ""
        internal = "" if name == "kernel" else f", {vector_math.INTERNAL}"
        lines = [f"@numba.njit(cache=True, error_model='numpy'{fastmath}{internal})",
                 f"def {name}({', '.join([*self.arguments.values(), *self.given])}):"]
        headers, indent = loop_lines(self.loop_vars, self.cluster.shape)
        lines += [f"    {line}" for line in [*self.pre, *headers]]
        lines += [f"    {indent}{line}" for line in self.body]
        lines.append(f"    return ({', '.join(self.returned.values())},)")
        return "\n".join(lines)


def module_text(functions: list[str]) -> str:
    """A kernel module: `functions`, then those of `vector_math` that they call."""
    return "import math\n\nimport numba\nimport numpy as np\n\n\n" + "\n\n".join(
        [*functions, *vector_math.definitions("\n".join(functions))]) + "\n"


def kernel_source(cluster: Cluster, used_outside: set, into: dict | None = None) -> KernelSource:
    """The kernel running `cluster`; it writes the results `into` holds (elementwise
    ones, not reductions') into buffers passed after its arguments, in the order it
    returns, from `into[v]` on each axis (a concatenation's operand) or whole (`()`)."""
    source = KernelSource(cluster, used_outside, into or {})
    for eqn in cluster.eqns:
        source.add(eqn)
    return source


def cluster_steps(cluster: Cluster, used_outside: set, budget: list[int]) -> list[Step]:
    """The steps running `cluster`: one kernel, or each equation's numpy impl where a
    kernel would not pay: a lone equation (one numpy call is as fast), or an array
    kernel beyond the program's `budget` of numba compile time (a Python loop can make
    a distinct kernel per iteration, its index constants differing; the gradient of
    one slicing each element makes a kernel of as many pads).

    A view of an argument (a transpose, slice, broadcast ...) that is read outside
    stays numpy's view there: a kernel would copy it, and the copy loses what the
    reader could exploit (`a @ a.T` is one symmetric rank-k update in BLAS). The
    kernel still reads the argument through the index map where it uses the view."""
    views = views_read_outside(cluster, used_outside)
    kernel = without_views(cluster, views)
    if not kernel.eqns or cluster.shape and len(kernel.eqns) == 1:
        return [impl_step(e) for e in cluster.eqns]
    source = kernel_source(kernel, used_outside - {e.outputs[0] for e in views})
    if cluster.shape and not charge(budget, source.text()):
        return [impl_step(e) for e in cluster.eqns]
    return [*map(impl_step, views), kernel_step(kernel, source)]


def compile_cost(text: str) -> int:
    """numba's compile time for the kernel `text`, in units of about 25 ms: one a line
    (its imports and header are the fixed cost), `BRANCH_COST` more a conditional; a
    `vector_math` function it defines costs `HELPER_COST` (measured: 0.1 s for tanh,
    less for the matrix-vector loops than numba's binding of BLAS)."""
    definitions = vector_math.definitions(text)
    for definition in definitions:
        text = text.replace(definition, "")
    return text.count("\n") + BRANCH_COST * text.count(" if ") + HELPER_COST * len(definitions)


def charge(budget: list[int], text: str) -> bool:
    """Whether a program may run the kernel `text`: loaded already, or its compile cost
    still within the program's `budget`, which is then charged."""
    if has_kernel(text):
        return True
    if budget[0] < compile_cost(text):
        return False
    budget[0] -= compile_cost(text)
    return True


def views_read_outside(cluster: Cluster, used_outside: set) -> list[JaxprEqn]:
    """The cluster's views of values it reads from outside whose results leave it."""
    computed = {v for e in cluster.eqns for v in e.outputs}
    return [e for e in cluster.eqns if fusion_rules[e.primitive].view and
            e.outputs[0] in used_outside and e.inputs[0] not in computed]


def without_views(cluster: Cluster, views: list[JaxprEqn]) -> Cluster:
    """`cluster` less those of `views` that it does not read itself."""
    read_inside = {a for e in cluster.eqns for a in e.inputs if type(a) is Var}
    return Cluster(cluster.shape, [e for e in cluster.eqns if e not in views or any(
        v in read_inside for v in e.outputs)], cluster.reductions, open=False)


def result_boxes(outputs) -> list:
    """How each result leaves a compiled kernel: an array as it is (None), a 0-d value
    as a numpy scalar of its dtype, or as a Python number where its type is weak, as
    the numpy backend's impls leave it (a float32 array times `sin` of a Python float
    stays float32)."""
    return [None if v.aval.shape else _PYTHON_NUMBER[v.aval.dtype.kind]
            if v.aval.weak_type else v.aval.dtype.type for v in outputs]


def kernel_step(cluster: Cluster, source: KernelSource) -> Step:
    inputs, outputs = tuple(source.arguments), tuple(source.returned)
    boxes = result_boxes(outputs)
    if not cluster.shape and not cluster.reductions:
        try:
            return Step(inputs, outputs, scalar_kernels.compile_kernel(
                source.text(), source.types(), boxes), unpack=True, warns=False)
        except scalar_kernels.Unsupported:
            pass  # numba compiles it
    kernel = load_kernel(source.text())
    scalar_inputs = [not a.aval.shape for a in inputs]  # as numpy scalars or numbers
    if not any(scalar_inputs) and not any(boxes):
        return Step(inputs, outputs, kernel, unpack=True, warns=False, fresh=True)  # no wrapper

    def run(*args):
        # 0-d arrays (inert's immutable ones too) enter as numpy scalars; 0-d results
        # leave boxed as `result_boxes` says
        args = [a[()] if s and isinstance(a, np.ndarray) else a
                for a, s in zip(args, scalar_inputs)]
        return [box(r) if box else r for r, box in zip(kernel(*args), boxes)]

    return Step(inputs, outputs, run, unpack=True, warns=False, fresh=True)


def compile_jaxpr_numba(jaxpr: Jaxpr) -> Callable:
    """`compile_jaxpr` with fused kernels: `(consts, args) -> list`."""
    return compile_steps(jaxpr, numba_steps(jaxpr))


def numba_steps(jaxpr: Jaxpr) -> list[Step]:
    """The steps of the generated driver: kernels and numpy impls, in order."""
    for compiler in program_compilers:
        whole = compiler(jaxpr, [MAX_WHOLE_PROGRAM_COST])
        if whole is not None:
            return [whole]
    budget = [MAX_NEW_KERNEL_COST]
    steps = plan(jaxpr)
    used_outside = used_outside_clusters(jaxpr, steps)
    return [step for s in steps for step in (
        cluster_steps(s, used_outside, budget) if isinstance(s, Cluster)
        else [unfused_step(s, budget)])]


def unfused_step(eqn: JaxprEqn, budget: list[int]) -> Step:
    rule = step_rules.get(eqn.primitive)
    step = rule(eqn, budget) if rule is not None else None
    return impl_step(eqn) if step is None else step


def used_outside_clusters(jaxpr: Jaxpr, steps) -> set:
    """Variables some cluster computes that anything outside that cluster reads."""
    owner = {v: s for s in steps if isinstance(s, Cluster) for e in s.eqns for v in e.outputs}
    used = {v for v in jaxpr.outvars if type(v) is Var}
    for s in steps:
        for eqn in (s.eqns if isinstance(s, Cluster) else [s]):
            used.update(a for a in eqn.inputs
                        if type(a) is Var and a in owner and owner[a] is not s)
    return used
