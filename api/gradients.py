"""`grad` and `value_and_grad`.

Called again with the same argument types, they replay the program the function ran
instead of differentiating it again (`api.replaying`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..core.pytree import PyTreeDef, tree_unflatten
from ..core.staging import cyclic_gc_paused
from ..core.trace import get_aval, trace_depth
from ..core.traceback_util import api_boundary
from ..interpreters.linearize import linearize_flat
from .arguments import (
    as_tuple,
    check_argnums,
    check_differentiated_inputs,
    check_differentiated_outputs,
    flatten_args,
    with_keywords,
)
from .numpy._array import returned_leaves
from .replaying import transformed
from .transforms import RefArgs, arg_cotangents


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False) -> Callable[..., tuple[Any, Any]]:
    """`f` and its gradient in one call: `(f(*args), gradient)`.

    The gradient has the structure of the `argnums` args (a tuple of them if `argnums`
    is a sequence). Other arguments that are not arrays (functions, strings, Python
    numbers), and keyword arguments, reach `f` as they are (`arguments.passed_as_is`).

    Args:
        f: a function returning a real scalar (with `has_aux`, a pair `(scalar, aux)`).
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns auxiliary data beside the scalar.
        holomorphic: differentiate a complex function of complex inputs (`grad`).

    Returns:
        A function of `f`'s arguments returning `(value, gradient)`, or
        `((value, aux), gradient)` with `has_aux`, as JAX's.

    Example:
        >>> v, g = inert.value_and_grad(lambda x: jnp.sum(x ** 2))(np.array([1.0, 2.0]))
        >>> print(v, g)
        5.0 [2. 4.]
    """
    return api_boundary(_value_and_grad(f, argnums, has_aux, value=True,
                                        holomorphic=holomorphic))


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of a scalar function, by reverse mode.

    The forward pass computes only what the gradient (and `aux`) needs, not the value;
    the backward pass keeps only what the active derivatives read: an argument wrapped
    in `Inactive` is data, and nothing is kept for its derivative. A complex output
    needs `holomorphic` (its inputs complex too), as in JAX.

    Args:
        f: a function returning a real scalar (with `has_aux`, a pair `(scalar, aux)`).
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns auxiliary data beside the scalar.
        holomorphic: differentiate a complex function of complex inputs, as JAX's.

    Returns:
        A function of `f`'s arguments returning the gradient, with the structure of
        the `argnums` arguments (a tuple of them for a sequence); with `has_aux`,
        `(gradient, aux)`.

    Differences from JAX:
        Called again with arguments of the same types, and no transformation in
        progress, it replays the program it recorded and runs its compiled gradient
        (`inert_grad_replay`): about the cost of `jit(grad(f))` without the `jit`.

    Example:
        >>> def loss(w, x):
        ...     return jnp.sum((x @ w) ** 2)
        >>> w, x = np.array([1.0, -1.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> print(inert.grad(loss)(w, x))
        [ -8. -12.]
        >>> print(inert.grad(loss)(w, inert.Inactive(x)))  # x is data: nothing kept for it
        [ -8. -12.]
    """
    value_and_grad_f = _value_and_grad(f, argnums, has_aux, value=False,
                                       holomorphic=holomorphic)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return api_boundary(grad_f)


def _value_and_grad(f: Callable, argnums, has_aux: bool, value: bool, holomorphic: bool):
    """value_and_grad; without `value` the value is not computed (its aval stands in)
    when no transformation is in progress. Under one, grad's forward pass is part of
    the outer transformation's program and runs the whole function, as the user wrote
    it: the outer level sees every operation (and refuses one it cannot transform).
    The cyclic collector waits for the whole call, not just each pass: its first
    collection after the forward pass would walk the whole linear program."""
    argnums_t = as_tuple(argnums)

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        with cyclic_gc_paused():
            nums = check_argnums(argnums_t, len(args))
            call, args = with_keywords(f, args, kwargs)
            flat = flatten_args(args, nums, floats_only=True, keep_static=True)
            check_differentiated_inputs("grad", flat, holomorphic)
            outs, n_outs, (_, aux_tree, n_out) = transformed(
                "grad", (value,), call, flat, has_aux, gradient_apply(flat, value))
            grads = arg_cotangents(flat, outs[n_outs:], flat.leaves)
            outs = returned_leaves(outs[:n_outs], flat.leaves)
            check_differentiated_outputs("grad", [get_aval(outs[0]).dtype], holomorphic)
            grads = tuple(grads[i] for i in nums)
            g = grads if isinstance(argnums, (tuple, list)) else grads[0]
            if has_aux:
                return (outs[0], tree_unflatten(aux_tree, outs[n_out:])), g
            return outs[0], g

    return value_and_grad_f


def gradient_apply(flat, value: bool):
    """grad's `apply` (`api.replaying`): the outputs and the active leaves'
    cotangents (`Zero` where symbolically zero), and how many outputs there are.
    Without `value` the value is not computed (its aval stands in) when no
    transformation is in progress. Under one, grad's forward pass on the plain path is
    part of the outer transformation's program and runs the whole function, as the
    user wrote it: the outer level sees every operation (and refuses one it cannot
    transform)."""
    refs = RefArgs.of(flat)
    diff_values = value or trace_depth() > 0

    def apply(fun, leaves, extras, out_store):
        outs, lin = linearize_flat(refs.wrap(fun), refs.contents(leaves), flat.active,
                                   lambda: out_store[2], "grad", diff_values)
        outs = refs.write_back(outs)
        aval = _scalar_output(out_store[0], [get_aval(o) for o in outs[:1]])
        # a scalar cotangent (staged as a literal) made here: no vjp function, no checks
        return [*outs, *lin.transpose([aval.dtype.type(1)])], len(outs)

    return apply


def _scalar_output(out_tree: PyTreeDef, avals: list):
    """The output's aval, checked; `avals` has the first output's, if there is one."""
    aval = avals[0] if out_tree.node_type is None else None  # None, (): no output at all
    if aval is None or aval.shape != () or aval.dtype.kind not in "fc":
        raise TypeError("grad requires a function returning a real float scalar, but it "
                        f"returned {aval.str_short() if aval else out_tree}; use vjp or "
                        "jacrev for other outputs")
    return aval
