"""The user-facing transforms, with JAX's names and signatures.

Pytrees and `Inactive` markers are handled here, at the edge (`api.arguments`); the
interpreters below see flat lists and a mask of which inputs are active.

A ref argument that is active is differentiated as its contents (`RefArgs`): its
tangent and cotangent are arrays of its shape, and the writes the function makes to
it are applied to it. An inactive one is a ref from outside the transformation.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from ..core.activity import Inactive, Zero
from ..core.avals import AbstractRef, ShapedArray, float0, tangent_aval
from ..core.check import check_jaxpr, checks_enabled
from ..core.ir import ClosedJaxpr
from ..core.pytree import PyTreeDef, tree_flatten, tree_map, tree_unflatten
from ..core.staging import stage
from ..core.trace import get_aval
from ..core.traceback_util import api_boundary
from ..interpreters.ad import jvp_flat
from ..interpreters.linearize import LinearFunction, linearize_flat
from ..interpreters.transpose import backward_pass
from ..primitives.state import refs as state
from .arguments import (
    FlatArgs,
    argument_describer,
    as_tuple,
    flat_fun,
    flatten_args,
    is_inactive,
    recording_untraced,
    static_positions,
)
from .numpy._array import returned_leaves
from .replaying import transformed

# ---------------------------------------------------------------------------------
# Staging


def make_jaxpr(f: Callable, static_argnums: int | Sequence[int] = ()
               ) -> Callable[..., ClosedJaxpr]:
    """The program `f` runs, staged at the shapes and dtypes of its arguments.

    Args:
        f: the function to stage.
        static_argnums: positions of arguments passed to `f` as they are (Python
            values the program depends on), not traced.

    Returns:
        A function of `f`'s arguments returning the `ClosedJaxpr`; its `repr` and
        `print` show the program, as JAX's.

    Example:
        >>> inert.make_jaxpr(lambda x, y: jnp.sin(x) * y)(np.zeros(3), 2.0)
        { lambda ; a:f64[3] b:f64[]. let
            c:f64[3] = sin a
            d:f64[3] = mul c b
          in (d,) }
    """
    static = as_tuple(static_argnums)

    @api_boundary
    @functools.wraps(f)
    def make(*args):
        closed, _ = trace_to_closed_jaxpr(f, args, static_positions(static, len(args)))
        return closed

    return make


def trace_to_closed_jaxpr(f, args, static) -> tuple[ClosedJaxpr, list]:
    dynamic = [a for i, a in enumerate(args) if i not in static]

    def with_static(*dyn):
        it = iter(dyn)
        return f(*(a if i in static else next(it) for i, a in enumerate(args)))

    flat_args = flatten_args(tuple(dynamic))
    out_store: list = []
    fun = flat_fun(with_static, flat_args, out_store, markers=True)  # jit(grad(f)) reads them
    avals = [get_aval(x) for x in flat_args.leaves]  # Python scalars stay weakly typed
    jaxpr, consts = stage(fun, avals, describe_args=argument_describer(f, args, static))
    closed = ClosedJaxpr(jaxpr, tuple(consts))
    if checks_enabled():
        check_jaxpr(closed)
    return closed, out_store


@attrs.frozen
class RefArgs:
    """The active ref arguments of a differentiating transform, differentiated as their
    contents: the transform's function gets, in their place, new refs it creates from
    their contents (so they are active at its level) and returns their final contents
    after its own outputs; `write_back` puts these into the arguments."""

    positions: tuple[int, ...]
    refs: tuple

    @staticmethod
    def of(flat: FlatArgs) -> RefArgs:
        positions = tuple(i for i, (x, act) in enumerate(zip(flat.leaves, flat.active))
                          if act and type(get_aval(x)) is AbstractRef)
        return RefArgs(positions, tuple(flat.leaves[i] for i in positions))

    def contents(self, leaves: list) -> list:
        leaves = list(leaves)
        for i in self.positions:
            leaves[i] = state.freeze(leaves[i])
        return leaves

    def wrap(self, fun: Callable) -> Callable:
        if not self.positions:
            return fun

        def with_refs(*leaves):
            leaves = list(leaves)
            for i in self.positions:
                leaves[i] = state.new_ref(leaves[i])
            return [*fun(*leaves), *(state.freeze(leaves[i]) for i in self.positions)]

        return with_refs

    def write_back(self, outs: list) -> list:
        """The function's own outputs, once the refs' final contents are written."""
        if not self.positions:
            return outs
        n = len(outs) - len(self.positions)
        for ref, final in zip(self.refs, outs[n:]):
            state.swap(ref, final)
        return outs[:n]


# ---------------------------------------------------------------------------------
# Forward mode


@api_boundary
def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False
        ) -> tuple[Any, ...]:
    """Forward mode: `f`'s value and its derivative along `tangents`, `(f(*primals), J·t)`.

    Args:
        f: the function to differentiate.
        primals: its arguments, a tuple or list (pytrees of arrays). An argument wrapped
            in `Inactive` is not differentiated.
        tangents: one per primal, of its structure, shapes and dtypes; `None` for an
            `Inactive` primal (and, as in JAX, for an integer one, or a float0 array).
        has_aux: whether `f` returns `(output, aux)`.

    Returns:
        `(primals_out, tangents_out)`, or `(primals_out, tangents_out, aux)`.

    Differences from JAX:
        `Inactive` primals, which JAX has not: their work is known, and rules skip the
        derivatives that would flow from them.

    Example:
        >>> y, t = inert.jvp(lambda x: x ** 2, (np.array([0.0, 1.0, 2.0]),), (np.ones(3),))
        >>> print(y, t)
        [0. 1. 4.] [0. 2. 4.]
        >>> y, t = inert.jvp(jnp.multiply, (np.ones(2), inert.Inactive(3.0)), (np.ones(2), None))
        >>> print(t)
        [3. 3.]
    """
    primals, tangents = tuple(primals), tuple(tangents)
    flat_tangents = _flat_tangents(_tangent_spec(primals), tangents)
    flat = flatten_args(primals)
    zeros = [t if type(t) is Zero else None for t in flat_tangents]
    extras = [t for t in flat_tangents if type(t) is not Zero]
    outs, n_out, (out_tree, aux_tree, _) = transformed(
        "jvp", (), f, flat, has_aux, _pushforward(flat, zeros), extras,
        active=[z is None for z in zeros])
    out_primals, out_tangents = outs[:len(outs) - n_out], outs[len(outs) - n_out:]
    out_tangents = [_materialize(t, p) for t, p in zip(out_tangents, out_primals)]
    out_primals = returned_leaves(out_primals, (*flat.leaves, *extras))
    out_tangents = returned_leaves(out_tangents, (*flat.leaves, *extras))
    result = (tree_unflatten(out_tree, out_primals[:n_out]), tree_unflatten(out_tree, out_tangents))
    return (*result, tree_unflatten(aux_tree, out_primals[n_out:])) if has_aux else result


def _pushforward(flat: FlatArgs, zeros: list):
    """jvp's `apply` (`api.replaying`): the primal outputs, then the tangents of the
    differentiated ones (`Zero` where symbolically zero); `zeros` has the symbolic
    zero tangents, None where a tangent is one of `apply`'s extras. Arrays the function
    returns as they are stay the user's (`recording_untraced`)."""
    refs = RefArgs.of(flat)

    def apply(fun, leaves, extras, out_store):
        given = iter(extras)
        tangents = [next(given) if z is None else z for z in zeros]
        untraced: list = []
        outs, out_tangents = jvp_flat(refs.wrap(recording_untraced(fun, untraced)),
                                      refs.contents(leaves), tangents)
        outs = returned_leaves(refs.write_back(outs), untraced)
        n_out = out_store[2]
        return [*outs, *out_tangents[:n_out]], n_out

    return apply


def _tangent_spec(primals: tuple) -> list[tuple[PyTreeDef, list]]:
    """What checking tangents needs of the primals, without their values: per
    argument its structure, and per item its aval, or `Inactive(avals of its leaves)`."""
    spec = []
    for p in primals:
        items, tree = tree_flatten(p, is_leaf=is_inactive)
        spec.append((tree, [Inactive([get_aval(x) for x in tree_flatten(i.value)[0]])
                            if isinstance(i, Inactive) else get_aval(i) for i in items]))
    return spec


def _flat_tangents(spec: list, tangents: tuple) -> list:
    """Check tangents against the primals' `_tangent_spec` argument by argument; `Zero`
    for inactive ones. An `Inactive` part of an argument takes `None` as its tangent,
    and so may an integer leaf (or a float0 array, JAX's convention)."""
    if len(spec) != len(tangents):
        raise ValueError(f"jvp: {len(spec)} primals but {len(tangents)} tangents")
    out = []
    for i, ((p_tree, p_items), t) in enumerate(zip(spec, tangents)):
        t_items, t_tree = tree_flatten(t, is_leaf=lambda x: x is None)
        if p_tree != t_tree:
            raise ValueError(f"jvp: the tangent of argument {i} has structure {t_tree}, "
                             f"but its primal has {p_tree}")
        for item, tx in zip(p_items, t_items):
            if not isinstance(item, Inactive):
                out.append(_check_tangent(item, tx, i))
            elif tx is not None:
                raise ValueError(f"jvp: argument {i} is (or holds) an Inactive value, so its "
                                 f"tangent there must be None (got {type(tx).__name__})")
            else:
                out += [Zero(tangent_aval(a)) for a in item.value]
    return out


def _check_tangent(x, t, argnum: int):
    expected = tangent_aval(get_aval(x))
    if expected.dtype == float0:
        if t is None or get_aval(t).dtype == float0:
            return Zero(expected)
        raise TypeError(f"jvp: argument {argnum} has integer dtype {get_aval(x).dtype}, so its "
                        "tangent must be None or a float0 array (JAX's convention)")
    got = get_aval(t)
    if got.shape != expected.shape or (got.dtype != expected.dtype and not got.weak_type):
        raise TypeError(f"jvp: argument {argnum} has primal {expected.str_short()} but tangent "
                        f"{got.str_short()}; a tangent must have its primal's shape and dtype")
    return t


def _materialize(t, primal):
    """A symbolic zero becomes zeros only here, where the user asked for the tangent."""
    if type(t) is Zero:
        aval = tangent_aval(get_aval(primal))
        return np.zeros(aval.shape, aval.dtype)
    return t


# ---------------------------------------------------------------------------------
# Reverse mode


@api_boundary
def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """`f`'s value and its linearization at `primals`, to apply to many tangents.

    Args:
        f: the function to linearize.
        *primals: its arguments (pytrees of arrays, or `Inactive`).

    Returns:
        `(f(*primals), f_jvp)`, where `f_jvp(*tangents)` is the Jacobian applied to
        one tangent per primal (`None` for an `Inactive` one). `f_jvp` keeps only the
        residuals the linear program reads.

    Example:
        >>> y, f_jvp = inert.linearize(jnp.exp, np.array([0.0, 1.0]))
        >>> print(f_jvp(np.array([1.0, 0.5])))
        [1.         1.35914091]
    """
    flat = flatten_args(primals)
    out_primals, lin, (out_tree, _, _) = linearized(f, flat, False, "linearize")
    # f_jvp keeps the residuals and the program, and only the avals of the rest
    spec, out_avals = _tangent_spec(primals), [get_aval(p) for p in out_primals]
    active = flat.active

    def f_jvp(*tangents):
        flat_t = _flat_tangents(spec, tangents)
        outs = lin.apply([t for t, act in zip(flat_t, active) if act])
        outs = [_materialize(t, a) for t, a in zip(outs, out_avals)]
        return tree_unflatten(out_tree, returned_leaves(outs, flat_t))

    return tree_unflatten(out_tree, returned_leaves(out_primals, flat.leaves)), f_jvp


@attrs.frozen(eq=False)
class VJPFunction:
    """The backward pass of `vjp`: call it with the output cotangent. It holds exactly
    the residuals reported by `saved_residuals` (plus the small linear program): its
    `flat_args` are the arguments' avals, not their values."""

    linear: LinearFunction
    flat_args: FlatArgs
    out_tree: PyTreeDef
    out_avals: tuple[ShapedArray, ...]

    def __call__(self, ct):
        return pull_back(self.linear, self.flat_args,
                         _check_cotangent(ct, self.out_tree, self.out_avals))


def pull_back(linear: LinearFunction, flat_args: FlatArgs, cts: list) -> tuple:
    """The arguments' cotangents from the outputs' (checked, flat) ones."""
    return arg_cotangents(flat_args, linear.transpose(cts), cts)


def arg_cotangents(flat_args: FlatArgs, cts_in, sources: list) -> tuple:
    """The arguments' cotangents from those of the active leaves (`Zero` where
    symbolically zero), none sharing a writeable buffer with `sources`."""
    cts_in = iter(cts_in)
    leaves = [_materialize(next(cts_in), x) if act else None
              for x, act in zip(flat_args.leaves, flat_args.active)]
    return tuple(flat_args.cotangents(returned_leaves(leaves, sources)))


def _check_cotangent(ct, out_tree: PyTreeDef, out_avals) -> list:
    leaves, tree = tree_flatten(ct)
    if tree != out_tree:
        raise ValueError(f"vjp: the cotangent has structure {tree}, but the function's output "
                         f"has {out_tree}")
    for i, (c, aval) in enumerate(zip(leaves, out_avals)):
        got, want = get_aval(c), tangent_aval(aval)
        if got.shape != want.shape or (got.dtype != want.dtype and not got.weak_type):
            raise TypeError(f"vjp: cotangent {i} is {got.str_short()}, but the output it "
                            f"belongs to is {want.str_short()}")
    return [Zero(tangent_aval(a)) if tangent_aval(a).dtype == float0 else c
            for c, a in zip(leaves, out_avals)]


@api_boundary
def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: `f`'s value and the function that pulls cotangents back through it.

    The backward pass keeps exactly the residuals `saved_residuals(f, *primals)` reports:
    nothing for an `Inactive` argument's derivative, and no value the active
    derivatives do not read.

    Args:
        f: the function to differentiate.
        *primals: its arguments (pytrees of arrays). What an `Inactive` holds that is
            not an array (a function, a Python int) reaches `f` as it is.
        has_aux: whether `f` returns `(output, aux)`.

    Returns:
        `(f(*primals), vjp_fn)`, or `(f(*primals), vjp_fn, aux)`; `vjp_fn(ct)` takes a
        cotangent of the output's structure and returns a tuple of one cotangent per
        primal.

    Differences from JAX:
        The cotangent of an `Inactive` or integer argument is `None` (JAX gives a
        float0 array for an integer one).

    Example:
        >>> y, f_vjp = inert.vjp(lambda x, n: x ** n, np.array([1.0, 2.0]), 3)
        >>> print(y)
        [1. 8.]
        >>> f_vjp(np.ones(2))
        (Array([ 3., 12.]), None)
    """
    flat = flatten_args(primals, keep_static=True)
    outs, lin, (out_tree, aux_tree, n_out) = linearized(f, flat, has_aux, "vjp")
    vjp_fn = VJPFunction(lin, flat.abstract(), out_tree, tuple(map(get_aval, outs[:n_out])))
    out = tree_unflatten(out_tree, outs[:n_out])
    return (out, vjp_fn, tree_unflatten(aux_tree, outs[n_out:])) if has_aux else (out, vjp_fn)


def linearized(f: Callable, flat: FlatArgs, has_aux: bool, name: str):
    """`(outputs' leaves, linear function, (out tree, aux tree, number of outputs))`."""
    outs, lin, out_store = transformed(name, (), f, flat, has_aux, _linearization(flat, name))
    n_outs = len(outs) - len(lin.residual_info)
    lin = attrs.evolve(lin, residuals=tuple(outs[n_outs:]))
    return returned_leaves(outs[:n_outs], flat.leaves), lin, out_store


def _linearization(flat: FlatArgs, name: str):
    """vjp's and linearize's `apply` (`api.replaying`): the outputs, then the linear
    function's residuals; the linear function without them is the static part."""
    refs = RefArgs.of(flat)

    def apply(fun, leaves, extras, out_store):
        outs, lin = linearize_flat(refs.wrap(fun), refs.contents(leaves), flat.active,
                                   lambda: out_store[2], name=name)
        return [*refs.write_back(outs), *lin.residuals], attrs.evolve(lin, residuals=())

    return apply


def linear_transpose(f: Callable, *primals: Any) -> Callable[[Any], tuple]:
    """The transpose of the linear function `f` (JAX's signature).

    Args:
        f: a function linear in its arguments.
        *primals: arrays or avals giving the arguments' shapes and dtypes (only those
            are used).

    Returns:
        `f_t`, where `f_t(ct)` gives one cotangent per primal, as a tuple. `f_t` keeps
        `f`'s program and the constants it closes over, nothing else.

    Example:
        >>> f_t = inert.linear_transpose(lambda x: 2.0 * x[:2], np.zeros(3))
        >>> f_t(np.array([1.0, 1.0]))
        (Array([2., 2., 0.]),)
    """
    leaves, in_tree = tree_flatten(primals, is_leaf=lambda x: isinstance(x, ShapedArray))
    in_avals = [get_aval(x) for x in leaves]
    out_trees: list = []

    def flat(*xs):
        out_leaves, out_tree = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        out_trees.append(out_tree)
        return out_leaves

    jaxpr, consts = stage(flat, in_avals)
    out_avals = tuple(a.aval for a in jaxpr.outvars)

    def f_transpose(ct):
        cts = _check_cotangent(ct, out_trees[0], out_avals)
        cts_in = backward_pass(jaxpr, consts, [], [True] * len(in_avals), cts)
        cts_in = [_materialize(c, a) for c, a in zip(cts_in, in_avals)]
        return tree_unflatten(in_tree, returned_leaves(cts_in, cts))

    return f_transpose


# ---------------------------------------------------------------------------------
# eval_shape: the shapes and dtypes a function returns, found by tracing it, without
# computing anything; `ShapeDtypeStruct` stands for an array there


@attrs.frozen(repr=False)
class ShapeDtypeStruct:
    """jax.ShapeDtypeStruct: an array's shape and dtype, no data, to stand for an
    argument of `eval_shape` or to describe its outputs. `sharding` is accepted (inert
    has one device) and kept as given.

    Example:
        >>> inert.ShapeDtypeStruct((2, 3), np.float32)
        ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    shape: tuple[int, ...] = attrs.field(converter=lambda s: tuple(int(d) for d in s))
    dtype: np.dtype = attrs.field(converter=np.dtype)
    weak_type: bool = False
    sharding: object = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


@api_boundary
def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """jax.eval_shape: the shapes and dtypes `fun` returns, computing nothing.

    `fun` is traced, as `make_jaxpr` would, and nothing is evaluated: an abstract
    argument stands in as a zero-stride array of its shape, which holds one element
    whatever its shape.

    Args:
        fun: the function.
        *args: arrays, numbers, or anything with `.shape` and `.dtype`, such as a
            `ShapeDtypeStruct`.
        **kwargs: passed to `fun` as they are.

    Returns:
        `fun`'s outputs, each leaf a `ShapeDtypeStruct`.

    Example:
        >>> inert.eval_shape(jnp.matmul, inert.ShapeDtypeStruct((2, 3), np.float64),
        ...                  np.ones((3, 4)))
        ShapeDtypeStruct(shape=(2, 4), dtype=float64)
    """
    concrete = tree_map(_stand_in, args, is_leaf=_is_abstract)
    closed, out_store = trace_to_closed_jaxpr(functools.partial(fun, **kwargs), concrete,
                                              frozenset())
    outs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    return tree_unflatten(out_store[0], outs)


def _is_abstract(x) -> bool:
    """Whether `x` describes an array without being one (a ShapeDtypeStruct is an attrs
    class, which would otherwise be flattened as a pytree)."""
    return not isinstance(x, (np.ndarray, np.generic)) and hasattr(x, "shape") and hasattr(
        x, "dtype")


def _stand_in(x):
    if not _is_abstract(x):
        return x
    return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape))
