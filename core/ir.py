"""The IR: variables, literals, equations and jaxprs.

Vars, Literals and Jaxprs compare by identity (a variable *is* its definition);
everything is frozen, so a transformation builds a new jaxpr instead of editing one.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterator

import attrs
import numpy as np

from .avals import ShapedArray, concrete_aval


@attrs.define(eq=False)
class Var:
    """A variable: defined once, by a jaxpr input or an equation's output. Not frozen,
    nor is `JaxprEqn`: one of each is made per traced equation, and a frozen attrs
    class's constructor costs twice a plain one's (about 9% of W7's first `grad`);
    nothing assigns to either once made."""

    aval: ShapedArray


@attrs.frozen(eq=False)
class Literal:
    """A constant small enough to print inline (a scalar), never a residual."""

    val: Any
    aval: ShapedArray


Atom = Var | Literal


@attrs.frozen
class SourceInfo:
    """Where in the user's code an equation was written."""

    filename: str
    lineno: int
    function: str

    def __str__(self) -> str:
        return f"{_short_filename(self.filename)}:{self.lineno} ({self.function})"


def _short_filename(filename: str) -> str:
    """A notebook cell's temporary file (a new name in every kernel) as `<cell>`."""
    return "<cell>" if "ipykernel_" in filename else filename


@attrs.define(eq=False)
class JaxprEqn:
    """`outputs = primitive(*inputs, **params)`, remembering the user's line."""

    primitive: Any  # core.primitive.Primitive; typed loosely to avoid an import cycle
    inputs: tuple[Atom, ...]
    outputs: tuple[Var, ...]
    params: dict[str, Any]
    source_info: SourceInfo | None = None


@attrs.frozen(eq=False, repr=False)
class Jaxpr:
    """A typed, first-order program in A-normal form.

    `constvars` are inputs whose values are fixed when the jaxpr is closed (arrays the
    traced function closed over); `invars` are the arguments.

    Example:
        >>> jaxpr = inert.make_jaxpr(lambda x, y: jnp.sin(x) * y)(np.zeros(3), 2.0).jaxpr
        >>> [eqn.primitive.name for eqn in jaxpr.eqns], len(jaxpr.invars)
        (['sin', 'mul'], 2)
    """

    constvars: tuple[Var, ...]
    invars: tuple[Var, ...]
    eqns: tuple[JaxprEqn, ...]
    outvars: tuple[Atom, ...]

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__  # what `make_jaxpr(f)(x)` shows at the REPL: the program, as printed


@attrs.frozen(eq=False, repr=False)
class ClosedJaxpr:
    """A jaxpr with values for its constvars: a self-contained function, what
    `make_jaxpr` returns. Its `repr` is the program.

    Example:
        >>> closed = inert.make_jaxpr(lambda x: x * np.arange(3.0))(np.ones(3))
        >>> len(closed.consts), [a.str_short() for a in closed.out_avals]  # the arange
        (1, ['f64[3]'])
    """

    jaxpr: Jaxpr
    consts: tuple[Any, ...] = ()

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__


def literal(val) -> Literal:
    return Literal(val, concrete_aval(val))


def is_literalable(x) -> bool:
    """Scalars are inlined into jaxprs as literals; arrays become constvars."""
    return type(x) in (bool, int, float, complex) or (isinstance(x, np.generic))


# ---------------------------------------------------------------------------------
# Pretty-printing in JAX's style: `{ lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }`


def _var_names():
    """a, b, ..., z, ba, bb, ...: the names JAX gives variables, in order of use."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    n = 0
    while True:
        name, k = "", n
        while True:
            name = letters[k % 26] + name
            k //= 26
            if k == 0:
                break
        yield name
        n += 1


class _Namer:
    def __init__(self, marked):
        self.names: dict[Var, str] = {}
        self.fresh = _var_names()
        self.marked = marked

    def __call__(self, atom: Atom) -> str:
        if isinstance(atom, Literal):
            return f"{_pp_value(atom.val)}:{atom.aval.str_short()}"
        if atom not in self.names:
            self.names[atom] = next(self.fresh)
        return self.names[atom] + ("*" if atom in self.marked else "")

    def binder(self, var: Var) -> str:
        return f"{self(var)}:{var.aval.str_short()}"


def _pp_value(val) -> str:
    if isinstance(val, np.ndarray) and val.ndim == 0:
        val = val[()]
    return repr(val.item() if isinstance(val, np.generic) else val)


def _pp_param(value, indent: int) -> str:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        return pp_jaxpr(jaxpr, indent=indent).lstrip()
    if isinstance(value, tuple) and value and all(_is_jaxpr(v) for v in value):
        pad = " " * (indent + 2)
        return "(\n" + "".join(f"{pad}{_pp_param(v, indent + 2)}\n" for v in value) + \
            " " * indent + ")"
    if isinstance(value, np.dtype):
        return value.name
    return str(value)


def _is_jaxpr(value) -> bool:
    return isinstance(value, (Jaxpr, ClosedJaxpr))


def _pp_eqn(eqn: JaxprEqn, name: _Namer, indent: int, source: bool) -> str:
    lhs = " ".join(name.binder(v) for v in eqn.outputs) or "_"
    args = " ".join(name(a) for a in eqn.inputs)
    where = f"  # {eqn.source_info}" if source and eqn.source_info else ""
    params = eqn.params
    if not any(_is_jaxpr(v) or isinstance(v, tuple) and v and all(map(_is_jaxpr, v))
               for v in params.values()):
        inline = " ".join(f"{k}={_pp_param(v, indent)}" for k, v in params.items())
        head = eqn.primitive.name + (f"[{inline}]" if inline else "")
        return f"{lhs} = {head} {args}".rstrip() + where
    pad = " " * (indent + 6)
    lines = "".join(f"\n{pad}{k}={_pp_param(v, indent + 6)}" for k, v in params.items())
    return f"{lhs} = {eqn.primitive.name}[{lines}\n{' ' * (indent + 4)}] {args}{where}"


def pp_jaxpr(jaxpr: Jaxpr, *, indent: int = 0, marked=frozenset(), source: bool = False) -> str:
    """Print a jaxpr; variables in `marked` get a `*` (used to show active values)."""
    name = _Namer(marked)
    consts = " ".join(name.binder(v) for v in jaxpr.constvars)
    args = " ".join(name.binder(v) for v in jaxpr.invars)
    eqns = [_pp_eqn(e, name, indent, source) for e in jaxpr.eqns]
    outs = "".join(f"{name(v)}, " for v in jaxpr.outvars).rstrip(" ")
    if len(outs) > 1 and len(jaxpr.outvars) > 1:
        outs = outs.rstrip(",")
    outs += f") }}{_pp_effects(jaxpr, name)}"
    head = f"{' ' * indent}{{ lambda {consts}; {args}. let"
    one_line = f"{head} {eqns[0] if eqns else ''} in ({outs}"
    if len(eqns) <= 1 and "\n" not in one_line and len(one_line) <= 100:
        return one_line.replace("let  in", "let in")
    body = "".join(f"\n{' ' * (indent + 4)}{e}" for e in eqns)
    return f"{head}{body}\n{' ' * (indent + 2)}in ({outs}"


def params_jaxprs(params: dict) -> Iterator[Jaxpr]:
    """The programs in an equation's params (a loop's body, a cond's branches), each a
    param's value or in a tuple that is one."""
    for param in params.values():
        for sub in param if isinstance(param, tuple) else (param,):
            if isinstance(sub, (Jaxpr, ClosedJaxpr)):
                yield sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub


def sub_jaxprs(eqn: JaxprEqn) -> Iterator[Jaxpr]:
    """The programs in `eqn`'s params (`params_jaxprs`)."""
    return params_jaxprs(eqn.params)


def holds_program(params: dict) -> bool:
    """Whether params hold a program. Asked of each equation a rule binds while staging
    (`staging.direct_bind`): stopping at the first costs 60-100 ns more than the loop
    written out, of about 11 us per traced equation."""
    return next(params_jaxprs(params), None) is not None


def does_io(eqn: JaxprEqn) -> bool:
    """Whether running `eqn` acts on the world: its primitive's effect is "io" (a debug
    callback), or one of its sub-programs holds such an equation. Such an equation
    must run even when nothing reads its outputs."""
    return eqn.primitive.effect == "io" or any(map(_jaxpr_does_io, sub_jaxprs(eqn)))


_DOES_IO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a loop's body is asked
# about at every pass; remembered only while the jaxpr lives


def _jaxpr_does_io(jaxpr: Jaxpr) -> bool:
    answer = _DOES_IO.get(jaxpr)
    if answer is None:
        answer = _DOES_IO[jaxpr] = any(map(does_io, jaxpr.eqns))
    return answer


def state_effects(jaxpr: Jaxpr) -> dict[Var, list[str]]:
    """For each ref the jaxpr's equations act on, how: "read", "write" (in order)."""
    effects: dict[Var, list[str]] = {}
    for eqn in jaxpr.eqns:
        kind = eqn.primitive.effect
        if kind in ("read", "write"):
            kinds = effects.setdefault(eqn.inputs[0], [])
            if kind not in kinds:
                kinds.append(kind)
    return effects


def _pp_effects(jaxpr: Jaxpr, name: _Namer) -> str:
    """` effects: State(read a, write a)`: a jaxpr's reads and writes of refs."""
    effects = state_effects(jaxpr)
    if not effects:
        return ""
    listed = ", ".join(f"{kind} {name(ref)}" for ref, kinds in effects.items() for kind in kinds)
    return f" effects: State({listed})"
