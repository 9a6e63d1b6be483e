"""What the control-flow primitives share: staging a Python body into a jaxpr,
rearranging a jaxpr's inputs and outputs, and batching a body (`batch_jaxpr`).

A body closes over values (numpy arrays, or tracers of an enclosing transformation);
staging turns those into the jaxpr's constvars, which become explicit leading
operands of the primitive (`num_consts`), so every interpreter sees them as ordinary
inputs: an outer tracer flows into the loop as an operand, never hidden in a param.

A body that uses refs is discharged (`state.discharge`): the refs it closes over
(`Body.refs`) are read before the primitive and written back after it, their contents
passed in and out as extra operands and outputs, so the primitive's body is
functional and no interpreter below meets a ref inside control flow.
"""

from __future__ import annotations

from typing import Callable, Sequence

import attrs

from ...core.avals import AbstractRef, ShapedArray
from ...core.errors import TypeMismatchError
from ...core.ir import Jaxpr, JaxprEqn, Var
from ...core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from ...core.staging import stage
from ...core.trace import get_aval, user_source_info
from ...interpreters.batching import batched_aval, vmap_flat
from ...interpreters.eval import eval_jaxpr
from ..shape.structural import convert_element_type, matchaxis
from ..state.discharge import discharge_jaxpr, has_state
from ..state.refs import freeze, swap


@attrs.frozen
class Body:
    """A staged body: `jaxpr` takes the closed-over values (`consts`), then the contents
    of the closed-over `refs`, then the arguments; it returns its outputs, then the
    refs' final contents."""

    jaxpr: Jaxpr
    consts: list
    out_tree: PyTreeDef
    refs: tuple = ()

    @property
    def n_out(self) -> int:
        """The number of the body's own outputs (before the refs' contents)."""
        return len(self.jaxpr.outvars) - len(self.refs)

    def ref_contents(self, refs=None) -> list:
        return [freeze(r) for r in (self.refs if refs is None else refs)]

    def write_back(self, contents, refs=None) -> None:
        for r, c in zip(self.refs if refs is None else refs, contents):
            swap(r, c)

    def writes(self) -> list[bool]:
        """For each of its refs, whether the body may change its contents."""
        n = len(self.consts)
        contents = self.jaxpr.invars[n:n + len(self.refs)]
        return [final is not c for final, c in zip(self.jaxpr.outvars[self.n_out:], contents)]

    def returning(self, written: list[bool]) -> Jaxpr:
        """The jaxpr returning its outputs and the final contents of the `written` refs."""
        finals = self.jaxpr.outvars[self.n_out:]
        return attrs.evolve(self.jaxpr, outvars=(*self.jaxpr.outvars[:self.n_out], *(
            f for f, w in zip(finals, written) if w)))

    def loop_form(self) -> tuple[Jaxpr, list, list]:
        """The body as a loop's: `(consts, contents of the refs it only reads, contents
        of the refs it writes, args) -> (final contents of the written refs, outputs)`,
        and those two lists of refs: loop-invariant operands, and carries."""
        n, n_refs = len(self.consts), len(self.refs)
        jaxpr = self.jaxpr
        contents, finals = jaxpr.invars[n:n + n_refs], jaxpr.outvars[self.n_out:]
        written = self.writes()
        read = [i for i, w in enumerate(written) if not w]
        wrote = [i for i, w in enumerate(written) if w]
        invars = (*jaxpr.invars[:n], *(contents[i] for i in read),
                  *(contents[i] for i in wrote), *jaxpr.invars[n + n_refs:])
        outvars = (*(finals[i] for i in wrote), *jaxpr.outvars[:self.n_out])
        return (Jaxpr((), invars, jaxpr.eqns, outvars), [self.refs[i] for i in read],
                [self.refs[i] for i in wrote])


def stage_body(f: Callable, in_tree: PyTreeDef, in_avals: Sequence[ShapedArray],
               what: str = "control flow") -> Body:
    """Stage `f(*args)`, where the args are `in_tree` with leaves of `in_avals`."""
    for a in in_avals:
        if type(a) is AbstractRef:
            raise TypeError(f"{what}: a ref {a.str_short()} cannot be an operand or a carry; "
                            "the function may close over it instead")
    out_trees: list = []

    def flat_f(*leaves):
        out_leaves, out_tree = tree_flatten(f(*tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves

    jaxpr, consts = stage(flat_f, list(in_avals))
    if not has_state(jaxpr):
        return Body(with_consts_as_invars(jaxpr), consts, out_trees[0])
    is_ref = [type(v.aval) is AbstractRef for v in jaxpr.constvars]
    constvars = [v for v, r in zip(jaxpr.constvars, is_ref) if not r]
    refvars = [v for v, r in zip(jaxpr.constvars, is_ref) if r]
    ordered = Jaxpr((), (*constvars, *refvars, *jaxpr.invars), jaxpr.eqns, jaxpr.outvars)
    functional, new_consts = discharge_jaxpr(ordered)
    return Body(with_consts_as_invars(functional),
                [*new_consts, *(c for c, r in zip(consts, is_ref) if not r)], out_trees[0],
                tuple(c for c, r in zip(consts, is_ref) if r))


def over_refs(body: Body, refs: Sequence) -> Body:
    """`body` reading and writing the contents of `refs`, which include its own: the
    contents of the others pass through. Branches of a cond, and a while loop's cond
    and body, share one list of refs so."""
    if len(body.refs) == len(refs) and all(a is b for a, b in zip(body.refs, refs)):
        return body
    positions = [next(i for i, r in enumerate(refs) if r is own) for own in body.refs]
    n_consts, n_own = len(body.consts), len(body.refs)

    def widened(*args):
        consts, contents, rest = split_list(args, [n_consts, len(refs)])
        outs = eval_jaxpr(body.jaxpr, (), [*consts, *(contents[p] for p in positions), *rest])
        final = list(contents)
        for p, c in zip(positions, outs[body.n_out:]):
            final[p] = c
        return [*outs[:body.n_out], *final]

    arg_avals = [v.aval for v in body.jaxpr.invars[n_consts + n_own:]]
    avals = [*(get_aval(c) for c in body.consts), *(get_aval(r).inner for r in refs),
             *arg_avals]
    jaxpr, consts = stage(widened, avals)
    return Body(with_consts_as_invars(jaxpr), [*consts, *body.consts], body.out_tree,
                tuple(refs))


def shared_refs(bodies: Sequence[Body]) -> list:
    """The refs any of the bodies closes over, each once, in order of appearance."""
    refs: list = []
    for b in bodies:
        refs += [r for r in b.refs if not any(r is s for s in refs)]
    return refs


def no_refs(body: Body, what: str) -> Body:
    if body.refs:
        raise TypeError(f"{what}: the function closes over a ref, which is not supported "
                        "here; pass its contents (inert.freeze(ref)) as an argument")
    return body


def carry_fixpoint(carry: list[bool], step) -> tuple[list[bool], object]:
    """A loop carry's property (active, unknown, batched, needed) is a fixed point: a
    carry has it if any iteration can give it. `step(carry)` transforms the body once
    and returns what the body gives each carry, and anything worth keeping; this
    repeats until nothing grows (at most once per carry) and returns the flags and the
    last step's result."""
    while True:
        out, result = step(carry)
        grown = [a or b for a, b in zip(carry, out)]
        if grown == carry:
            return carry, result
        carry = grown


def with_consts_as_invars(jaxpr: Jaxpr) -> Jaxpr:
    return Jaxpr((), (*jaxpr.constvars, *jaxpr.invars), jaxpr.eqns, jaxpr.outvars)


def batch_jaxpr(jaxpr: Jaxpr, size: int, dims_in: Sequence[int | None],
                dims_out: Sequence[int | None]) -> tuple[Jaxpr, list, list]:
    """`jaxpr` (a body: no constvars) run on `size` lanes at once, as a jaxpr: input i
    batched along `dims_in[i]` (None: the same for every lane); output i batched along
    `dims_out[i]` if that is an int (moved or stacked there), else wherever the rules
    put it. Returns the jaxpr (its constvars hold constants the rules introduced),
    their values, and the outputs' batch axes. Control flow batches its bodies as
    programs with it, as it differentiates them with `ad.jvp_jaxpr`."""
    out_dims: list = []

    def batched(*args):
        outs, dims = vmap_flat(lambda *xs: eval_jaxpr(jaxpr, (), xs), args, dims_in)
        out_dims[:] = [d if want is None else want for d, want in zip(dims, dims_out)]
        return [o if want is None else matchaxis(o, d, want, size)
                for o, d, want in zip(outs, dims, dims_out)]

    in_avals = [batched_aval(v.aval, d, size) for v, d in zip(jaxpr.invars, dims_in)]
    new_jaxpr, consts = stage(batched, in_avals)
    return new_jaxpr, consts, out_dims


def reorder(jaxpr: Jaxpr, in_order: Sequence[int], out_order: Sequence[int]) -> Jaxpr:
    """The same program with inputs and outputs permuted (`new[i] = old[order[i]]`)."""
    return Jaxpr(jaxpr.constvars, tuple(jaxpr.invars[i] for i in in_order), jaxpr.eqns,
                 tuple(jaxpr.outvars[i] for i in out_order))


def inline_jaxpr(jaxpr: Jaxpr, args: Sequence) -> tuple[list[JaxprEqn], list]:
    """`jaxpr`'s equations applied to the atoms `args`, with fresh variables: what a
    partial-eval rule emits to compute something outside a loop body."""
    env = dict(zip(jaxpr.invars, args))
    eqns = []
    for eqn in jaxpr.eqns:
        outputs = tuple(Var(v.aval) for v in eqn.outputs)
        eqns.append(attrs.evolve(eqn, inputs=tuple(env.get(a, a) for a in eqn.inputs),
                                 outputs=outputs))
        env.update(zip(eqn.outputs, outputs))
    return eqns, [env.get(v, v) for v in jaxpr.outvars]


def staged_eqns(f: Callable, args: Sequence) -> tuple[list[JaxprEqn], list]:
    """The equations `f` (on flat lists) stages when applied to the atoms `args`."""
    jaxpr, consts = stage(lambda *xs: f(*xs), [a.aval for a in args])
    assert not consts, "staged_eqns is for functions of their arguments only"
    return inline_jaxpr(jaxpr, args)


def split_list(xs: Sequence, sizes: Sequence[int]) -> list[list]:
    """Consecutive pieces of `xs` of the given sizes (the rest as a last piece)."""
    pieces, start = [], 0
    for n in sizes:
        pieces.append(list(xs[start:start + n]))
        start += n
    pieces.append(list(xs[start:]))
    return pieces


def stage_with_promoted_carry(init_leaves: list, stage_for: Callable) -> tuple[list, object]:
    """JAX's rule for loop carries: a weakly typed initial value (a Python scalar) is
    staged weakly typed and then takes the type the body gives it, so
    `fori_loop(0, n, lambda i, c: c + 1.5, 0)` is a float loop and `c * x32` from
    `1.0` a float32 one, while `fori_loop(..., lambda i, c: c * 2.0, 0.5)` stays weakly
    typed (a float32 array times it is float32). `stage_for(carry_avals)` stages the
    loop for those carry types and returns `(result, the avals the body gives the
    carry)`. Returns the initial leaves (converted to the carry types) and the result
    staged for them; strongly typed carries never change (a mismatch is
    check_same_types' error)."""
    avals = [get_aval(x) for x in init_leaves]
    result, outs = stage_for(avals)
    if any(a.weak_type for a in avals) and len(outs) == len(avals):
        promoted = [ShapedArray(a.shape, o.dtype) if a.weak_type and o.shape == a.shape and (
            not o.weak_type or o.dtype != a.dtype) else a for a, o in zip(avals, outs)]
        if promoted != avals:
            avals = promoted
            result, _ = stage_for(avals)
    leaves = [x if _typed_as(x, a) else convert_element_type(x, a.dtype)
              for x, a in zip(init_leaves, avals)]
    return leaves, result


def _typed_as(x, aval: ShapedArray) -> bool:
    """Whether `x` has the carry type `aval` already: a weak initial value the body
    makes strong is converted, so that the loop's impl, run eagerly or by jit's numpy
    backend, returns a numpy value of that dtype, as the staged types say."""
    own = get_aval(x)
    return own.dtype == aval.dtype and (aval.weak_type or not own.weak_type)


def carry_out_avals(carry: Sequence[ShapedArray], body_outs: Sequence) -> list:
    """A loop's carry results: weakly typed where the initial value and the body's
    result both are (a loop of no iterations returns the initial value)."""
    return [a if a.weak_type and v.aval.weak_type else a.strong()
            for a, v in zip(carry, body_outs)]


def check_same_types(what: str, expected: Sequence[ShapedArray], got: Sequence[ShapedArray],
                     tree: PyTreeDef | None = None) -> None:
    """Loop carries and branch outputs must keep their shapes and dtypes."""
    if len(expected) != len(got):
        raise TypeMismatchError(f"{what}: expected {len(expected)} values, got {len(got)}"
                                + (f" (structure {tree})" if tree is not None else "")
                                ).with_source(user_source_info())
    for i, (e, g) in enumerate(zip(expected, got)):
        if e.shape != g.shape:
            raise TypeMismatchError(f"{what}: value {i} changes shape from {e.str_short()} "
                                    f"to {g.str_short()}").with_source(user_source_info())
        if e.dtype != g.dtype:
            raise TypeMismatchError(f"{what}: value {i} changes dtype from {e.str_short()} "
                                    f"to {g.str_short()}").with_source(user_source_info())
