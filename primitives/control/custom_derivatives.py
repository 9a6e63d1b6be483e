"""What `custom_jvp` and `custom_vjp` share: how a call of a custom function is traced.

A custom function is called as JAX calls it: the interpreter that receives the call
decides whether its body runs, is traced, or neither.

* Called with no transformation in progress, or reaching the eval trace, the body
  just runs on the values: its Python control flow sees numbers.
* The jvp trace runs the *rule* (`defjvp`'s, or `defvjp`'s `fwd`) on the primal
  values, one level down, and never traces the body: a rule that calls the function
  for its primal output runs it there. So under `grad`, `jvp` and `vjp` a body or a
  `fwd` with an `if x > 0` or a `while` loop on its input works (the primal values are
  known, and linearization runs such a call at once, `JaxprBuilder.eager_calls`),
  and the calls are JAX's: `['f_jvp', 'f']` for `jvp`, `['f_fwd', 'f', 'f_bwd']` for a
  custom_vjp's `grad`. An inactive call (all tangents symbolically zero) calls
  neither rule: it goes one level down as it is.
* `vmap` maps the body and the rules lazily (`batched_body`): the call goes one level
  down with the mapped functions, and whichever runs there runs on every lane.
* A staging trace (`jit`, `make_jaxpr`, a control-flow body) must record the call,
  so it traces the body into a jaxpr then (`stage_call`): the call becomes the
  *staged* primitive (`custom_jvp_call`, `custom_vjp_call`), whose params hold the
  jaxpr and the rules, and whose jvp runs the rule when the program is differentiated,
  as JAX's `custom_jvp_call` with its jaxpr does. Values the staging trace knows
  (a `grad` recording replayed later, `interpreters.replay`) are known to the body too.

The body may close over constants. It must not close over a value a transformation
of the call differentiates or maps: its rule cannot see that value's derivative.
Where that would lose a derivative (the value reaches the outputs of the body or of
the rule), it is an error naming the function.
"""

from __future__ import annotations

import types
from typing import Callable

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import AbstractRef
from ...core.errors import EscapedTracerError, NonDifferentiableError
from ...core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from ...core.staging import StagingTrace, may_change, snapshot, stage_with_known
from ...core.trace import (
    Primitive,
    Tracer,
    abstract_eval_rules,
    bind_at,
    describe_level,
    full_raise,
    get_aval,
    impl_rules,
    trace_depth,
    user_source_info,
)
from ...interpreters.batching import vmap_flat
from ...interpreters.eval import compiled
from ..shape.structural import matchaxis
from .common import Body, no_refs, stage_body, with_consts_as_invars


def without_nondiff(fun: Callable, args: tuple, nondiff_argnums: tuple[int, ...]):
    """`(nondiff, fun_of_the_rest, rest)`: `fun` with the arguments at
    `nondiff_argnums` bound, as constants of its body."""
    if not nondiff_argnums:
        return (), fun, args
    nums = {i % len(args) for i in nondiff_argnums}
    nondiff = tuple(args[i] for i in sorted(nums))
    rest = tuple(a for i, a in enumerate(args) if i not in nums)

    def of_rest(*diff):
        it, fixed = iter(diff), iter(nondiff)
        return fun(*(next(fixed) if i in nums else next(it) for i in range(len(args))))

    return nondiff, named(of_rest, fun), rest


def named(fn: Callable, like: Callable) -> Callable:
    """`fn` under the name of `like`, which error messages and printed rules use."""
    fn.__name__ = getattr(like, "__name__", type(like).__name__)
    return fn


@attrs.frozen(eq=False)
class CustomRule:
    """A custom function and its rules, as an equation's param: compared by identity,
    printed by the rule's name. `out_tree_store` holds the structure of what the call
    returns, set by whichever of the body and the rules ran (shared by the rules made
    from this one, e.g. by `vmap`). `origin` is what the rule is made of: the custom
    function, its rules and its non-differentiated arguments, so that a replay can
    tell another call's rule is the same (`same_as`)."""

    fun: Callable  # the body, on the arguments (pytrees)
    in_tree: PyTreeDef
    out_tree_store: list
    origin: tuple

    def same_as(self, other) -> bool:
        """Whether `other`, another call's rule, is this one: made of the same objects
        (the custom function, its rules as they are defined now, the same
        non-differentiated arguments), for arguments of the same structure. A replay
        compares rules so (`interpreters.replay`): what a rule computes is then what
        it computed when the recording was differentiated, unless it reads something
        else that changed (a global of another module's function it calls), as under
        `jit`."""
        return type(other) is type(self) and self.in_tree == other.in_tree and \
            _same_objects(self.origin, other.origin)

    @property
    def out_tree(self) -> PyTreeDef:
        return self.out_tree_store[0]

    def set_out_tree(self, tree: PyTreeDef) -> None:
        self.out_tree_store[:] = [tree]

    def run(self, *leaves) -> list:
        """The body on flat lists."""
        outs, out_tree = tree_flatten(self.fun(*tree_unflatten(self.in_tree, leaves)))
        self.set_out_tree(out_tree)
        return outs


def origin_of(custom, functions: tuple, nondiff: tuple) -> tuple:
    """A `CustomRule`'s origin: the custom function, its body and rules with what each
    reads besides its arguments (what it closes over, the globals its code and its
    module's helpers name, as they are now: a rebound global is another rule, and so
    is an array written in place), and the non-differentiated arguments."""
    return (custom, *((fn, _reads(fn)) for fn in functions), *map(_read, nondiff))


def _reads(fn) -> tuple:
    """What `fn` closes over and the globals its code names, and so on through the
    functions of its own module among them (a helper reading a global array): one
    tuple, in the order met, each function once."""
    reads, seen, pending = [], {id(fn)}, [fn]
    while pending:
        f = pending.pop()
        code, names = getattr(f, "__code__", None), getattr(f, "__globals__", {})
        values = [c.cell_contents for c in getattr(f, "__closure__", None) or ()]
        values += [names.get(n) for n in code.co_names] if code is not None else []
        for value in values:
            reads.append(_read(value))
            if type(value) is types.FunctionType and value.__globals__ is names and \
                    id(value) not in seen:
                seen.add(id(value))
                pending.append(value)
    return tuple(reads)


@attrs.frozen(eq=False)
class _ArrayRead:
    """An array a rule reads whose contents can change (`may_change`), with its contents
    when the rule was made: a replayed rule does not run again, so an array written in
    place between two calls must make them different rules."""

    array: np.ndarray
    contents: np.ndarray

    def same_as(self, other: _ArrayRead) -> bool:
        equal_nan = self.contents.dtype.kind in "fc"
        return self.array is other.array and np.array_equal(self.contents, other.contents,
                                                            equal_nan=equal_nan)


def _read(value):
    return _ArrayRead(value, snapshot(value)) if may_change(value) else value


def _same_objects(a, b) -> bool:
    """The same objects, or equal ints, strings and tuples of them (vmap's axes), or the
    same array with the same contents."""
    if a is b:
        return True
    if type(a) is not type(b) or type(a) not in (int, str, tuple, _ArrayRead):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(map(_same_objects, a, b))
    if type(a) is _ArrayRead:
        return a.same_as(b)
    return a == b


def call_custom(prim: Primitive, rule: CustomRule, leaves: list):
    """Bind `prim` (`custom_jvp`, `custom_vjp`) for a call from Python: what happens
    then is the receiving interpreter's choice (see the module docstring)."""
    for x in leaves:
        if type(get_aval(x)) is AbstractRef:
            raise TypeError(f"{prim.name} {rule.fun.__name__}: a ref {get_aval(x).str_short()} "
                            "cannot be an argument; the function may create refs, or take "
                            "a ref's contents (inert.freeze(ref))")
    outs = prim.bind(*leaves, rule=rule)
    return tree_unflatten(rule.out_tree, outs)


def is_called_eagerly() -> bool:
    """No transformation in progress: the function just runs, as in JAX."""
    return trace_depth() == 0


def stage_call(trace, tracers: list, prim: Primitive, rule: CustomRule,
               bind_staged: Callable[[Body], list]) -> list:
    """A staging trace's rule for a call of a custom function (`staging_rules`).

    Linearizing, on known operands (primal values), the call runs at once one level
    down, where JAX runs it on concrete values, and outer transformations see it as a
    call (an outer grad runs its rule). Otherwise the body is staged, knowing what the
    trace knows, and `bind_staged(body)` records the staged primitive (closed-over
    values become operands)."""
    builder = trace.builder
    known = [t.is_known for t in tracers]
    if builder.eager_calls and all(known):
        recorded = len(builder.eqns)
        values = builder.values_of([t.atom for t in tracers], free=False)
        outs = bind_at(builder.parent_dynamic, prim, values, {"rule": rule})
        level = trace.main.level
        check_no_closure(f"{prim.name} function {rule.fun.__name__}", outs, level)
        inverted = len(builder.eqns) > recorded and level_of(outs) < level
        if not inverted and level_of(outs) <= level:
            return [full_raise(trace, o) for o in outs]
        # The body read a value of this trace or of a staging trace above (a constant
        # made inside the function differentiated), which an outer transformation of
        # the call now holds inside its own values: stage it instead, with that value
        # as an operand (the body runs once more).
    body = _staged_body(rule, tracers, known, prim.name)
    rule.set_out_tree(body.out_tree)
    return bind_staged(body)


def _staged_body(rule: CustomRule, tracers: list, known: list[bool], what: str) -> Body:
    """The body as a jaxpr. Operands the trace knows are known inside too (a value
    Python control flow asks for is computed through the trace), so a body with an
    `if` on its input stages where its inputs are known."""
    avals = [t.aval for t in tracers]
    if not any(known):
        return no_refs(stage_body(rule.fun, rule.in_tree, avals, what), what)
    staged = stage_with_known(lambda *xs: rule.run(*xs), avals,
                              [t if k else None for t, k in zip(tracers, known)], {})
    return Body(with_consts_as_invars(staged.jaxpr), staged.consts, rule.out_tree)


def level_of(values) -> int:
    """The highest transformation level among `values` (-1 for plain values)."""
    return max((v._trace.main.level for v in values if isinstance(v, Tracer)), default=-1)


def check_no_closure(what: str, outs, level: int) -> None:
    """`outs` of a body or rule that ran for a call at `level`: a value of a higher
    level came from what the function closes over, a value of a transformation the
    call's own interpreters never saw, which would lose its derivative (or lanes)."""
    above = [o._trace.main for o in outs if isinstance(o, Tracer) and
             o._trace.main.level > level and not issubclass(o._trace.main.trace_type,
                                                             StagingTrace)]
    if not above:  # (a staging trace's values are constants to every rule: `stage_call`)
        return
    main = max(above, key=lambda m: m.level)
    if (main.trace_type.family or "") == "differentiation":
        raise NonDifferentiableError(
            f"{what} closes over a value being differentiated (by {describe_level(main)}), "
            "whose derivative its rule cannot see; pass it as an argument of the function "
            "instead").with_source(user_source_info())
    raise EscapedTracerError(
        f"{what} closes over a traced value of {describe_level(main)} (a vmap or jit "
        "around the function's call); pass that value to the function as an argument "
        "instead").with_source(user_source_info())


def refuse_active_closure(prim: Primitive, const_tangents, rule: CustomRule) -> None:
    """A staged call's closed-over values are its leading operands: none may be
    differentiated, as its rule cannot see their derivatives."""
    if any(type(t) is not Zero for t in const_tangents):
        raise NonDifferentiableError(
            f"{prim.name}: the function {rule.fun.__name__} closes over a value being "
            "differentiated, whose derivative its rule cannot see; pass it as an argument "
            "of the function instead").with_source(user_source_info())


def batched_body(rule: CustomRule, dims, size: int) -> Callable:
    """`rule`'s body on every lane at once (pytrees in and out), every output on axis 0:
    what `vmap` gives the call in place of the body, run only if the body would."""

    def fun(*args):
        outs, out_dims = vmap_flat(rule.run, tree_flatten(args)[0], list(dims))
        return tree_unflatten(rule.out_tree, [matchaxis(o, d, 0, size)
                                              for o, d in zip(outs, out_dims)])

    fun.__name__ = f"vmap({rule.fun.__name__})"
    return fun


def batched_origin(rule: CustomRule, dims, size: int) -> tuple:
    """The origin of `rule` batched over `dims` by `size` lanes: the same rule vmapped
    the same way is the same rule to a replay."""
    return ("vmap", *rule.origin, tuple(dims), size)


def unstaged_abstract_eval(*avals, rule):
    """The output types of a call from Python are what its body returns, known only by
    running or staging it, which a staging trace does (`stage_call`). Nothing else asks
    but `eval_primitive` explaining an error the body raised, which it then re-raises
    as the body raised it."""
    return []


def staged_call_primitive(name: str) -> Primitive:
    """`custom_jvp_call` or `custom_vjp_call`: a call as a staging trace records it, the
    body's jaxpr (its closed-over values the first `num_consts` operands) beside the
    rule. Evaluated, it runs the body; its types are the body's."""
    prim = Primitive(name, multiple_results=True)
    impl_rules[prim] = lambda *args, jaxpr, rule, num_consts: compiled(jaxpr)((), args)
    abstract_eval_rules[prim] = lambda *avals, jaxpr, rule, num_consts: [
        v.aval for v in jaxpr.outvars]
    return prim
