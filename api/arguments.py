"""The arguments of a transform, flattened: which leaves it traces, which are active,
and which it passes to the function as they are; and, for an error, which arguments a
traced value depends on, in words (`argument_describer`); and which dtypes the
differentiating transforms take (`check_differentiated_inputs`).

A leaf is active unless it sits inside an `Inactive(...)`, is not among `argnums`, or
has an integer or boolean dtype (inactive by type). A leaf the differentiating
transforms do not differentiate and that is not an array (a function, a string, a
Python number) is not traced at all: the function gets it as it is (`Static`), as in
JAX.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from ..core.activity import Inactive
from ..core.avals import is_float
from ..core.errors import InertError
from ..core.pytree import PyTreeDef, tree_flatten, tree_leaves, tree_unflatten
from ..core.trace import get_aval


def is_inactive(x) -> bool:
    return isinstance(x, Inactive)


@attrs.frozen
class Static:
    """A leaf a transform does not differentiate and passes to the function as it is,
    not traced (`passed_as_is`)."""

    value: Any


@attrs.frozen
class FlatArgs:
    """Arguments flattened to leaves, with which leaves are active."""

    leaves: list  # the traced leaves
    active: list[bool]
    treedef: PyTreeDef  # over the arguments, `Inactive(...)` items as single leaves
    items: list  # per item of `treedef`: 1 (a traced leaf), a `Static`, or for an
    # Inactive marker `(treedef of its value, per leaf of it: None if traced, or a Static)`

    def unflatten(self, leaves: Sequence, markers: bool = False) -> tuple:
        """Rebuild the arguments, inactive items unwrapped (their transformation read
        the marker) or, with `markers`, wrapped again: for `jit`, `make_jaxpr` and
        `vmap`, so that `jit(grad(f))(x, Inactive(y))` differentiates as `grad(f)` does."""
        it = iter(leaves)
        rebuilt = []
        for item in self.items:
            if type(item) is tuple:
                subdef, pieces = item
                value = tree_unflatten(subdef, [next(it) if p is None else p.value
                                                for p in pieces])
                rebuilt.append(Inactive(value) if markers else value)
            elif type(item) is Static:
                rebuilt.append(item.value)
            else:
                rebuilt.append(next(it))
        return tree_unflatten(self.treedef, rebuilt)

    def abstract(self) -> FlatArgs:
        """The same arguments with each leaf replaced by its aval, and no static value:
        what a function returned to the user keeps of them (never the arrays, nor a
        function argument and what it closes over)."""
        return FlatArgs([get_aval(x) for x in self.leaves], self.active, self.treedef,
                        [_without_values(item) for item in self.items])

    def cotangents(self, cts: Sequence) -> tuple:
        """Arguments' cotangents: None for inactive items, static and integer leaves."""
        it = iter(cts)
        rebuilt = []
        for item in self.items:
            if type(item) is tuple:
                for p in item[1]:
                    if p is None:
                        next(it)
                rebuilt.append(None)
            elif type(item) is Static:
                rebuilt.append(None)
            else:
                rebuilt.append(next(it))
        return tree_unflatten(self.treedef, rebuilt)


_NO_VALUE = Static(None)


def _without_values(item):
    if type(item) is tuple:
        return item[0], tuple(None if p is None else _NO_VALUE for p in item[1])
    return _NO_VALUE if type(item) is Static else item


def flatten_args(args: tuple, argnums: Sequence[int] | None = None,
                 floats_only: bool = False, keep_static: bool = False) -> FlatArgs:
    """The arguments' leaves; `floats_only` (grad, jacrev) refuses a leaf of `argnums`
    that is not a float (not in an `Inactive`). With `keep_static` (the differentiating
    transforms), a leaf they do not differentiate that `passed_as_is` is not traced."""
    items, treedef = tree_flatten(list(args), is_leaf=is_inactive)
    # the positional argument of each item: the list's children are the arguments
    item_arg = [i for i, sub in enumerate(treedef.children) for _ in range(sub.num_leaves)]
    leaves, active, kinds = [], [], []
    for item, argnum in zip(items, item_arg):
        selected = argnums is None or argnum in argnums
        if isinstance(item, Inactive):
            sub, subdef = tree_flatten(item.value)
            pieces = tuple(Static(x) if keep_static and passed_as_is(x) else None for x in sub)
            traced = [x for x, p in zip(sub, pieces) if p is None]
            leaves += traced
            active += [False] * len(traced)
            kinds.append((subdef, pieces))
        elif keep_static and not selected and passed_as_is(item):
            kinds.append(Static(item))
        else:
            leaves.append(item)
            dtype = get_aval(item).dtype
            if selected and floats_only and not is_float(dtype):
                raise TypeError(f"grad requires float inputs, but argument {argnum} has a leaf "
                                f"of dtype {dtype}; pass it Inactive or leave it out of argnums")
            active.append(selected and is_float(dtype))
            kinds.append(1)
    return FlatArgs(leaves, active, treedef, kinds)


def passed_as_is(x) -> bool:
    """Whether a leaf not differentiated reaches the function as it is, as in JAX: a
    Python number (so `range(n)`, `if flag:` and a static argument of a `jit` inside
    work), or anything that is not an array (a function, a string, a class). Arrays,
    numpy scalars included, are traced, inactive: a call with other values of them is
    the same program (`grad`'s replay)."""
    if type(x) in _PYTHON_NUMBERS or isinstance(x, int):  # (an IntEnum too)
        return True
    try:
        get_aval(x)
    except InertError:  # an array inert refuses (dtype object): it says why where used
        return False
    except TypeError:  # not an array at all
        return True
    return False


_PYTHON_NUMBERS = (bool, int, float, complex)


def with_keywords(f: Callable, args: tuple, kwargs: dict) -> tuple[Callable, tuple]:
    """`f` and its arguments, its keyword arguments as one more positional argument
    (a dict), which the differentiating transforms do not differentiate (as JAX)."""
    if not kwargs:
        return f, args
    n = len(args)
    return (lambda *xs: f(*xs[:n], **xs[n])), (*args, kwargs)


def flat_fun(f: Callable, flat_args: FlatArgs, out_store: list, has_aux: bool = False,
             markers: bool = False):
    """`f` on flat leaves to flat leaves, recording the output tree (`markers`: unflatten's)."""

    def flat(*leaves):
        out = f(*flat_args.unflatten(leaves, markers))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("a function with has_aux=True must return a pair (out, aux)")
            out, aux = out
            out_leaves, out_tree = tree_flatten(out)
            aux_leaves, aux_tree = tree_flatten(aux)
            out_store[:] = [out_tree, aux_tree, len(out_leaves)]
            return out_leaves + aux_leaves
        out_leaves, out_tree = tree_flatten(out)
        out_store[:] = [out_tree, None, len(out_leaves)]
        return out_leaves

    return flat


def recording_untraced(fun: Callable, untraced: list) -> Callable:
    """`fun` (flat), also putting into `untraced` the numpy arrays it returns as they
    are: constants it closes over, which a transformation that does not stage (jvp,
    vmap, jacfwd, jacrev) hands back as they are, so they may be buffers the user can still write
    (staging snapshots them)."""

    def recorded(*leaves):
        outs = fun(*leaves)
        untraced.extend(o for o in outs if isinstance(o, np.ndarray))
        return outs

    return recorded


def static_positions(static: tuple, nargs: int) -> frozenset[int]:
    for i in static:
        if not -nargs <= i < nargs:
            raise ValueError(f"static_argnums {i} is out of range for a function called "
                             f"with {nargs} positional arguments")
    return frozenset(i % nargs for i in static)


def as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check_argnums(argnums: tuple, nargs: int) -> tuple[int, ...]:
    for a in argnums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"argnums {a} is out of range for a function called with "
                             f"{nargs} positional arguments")
    return tuple(a % nargs for a in argnums)


# ---------------------------------------------------------------------------------
# Which arguments a value depends on, in words: for the `ConcretizationError` of
# `if x > 0` under `jit`, as JAX's says "it depends on the value of the argument x". The
# staging trace finds the flat inputs a value is computed from
# (`core.staging.JaxprBuilder.args_reaching`); this names them after the function's
# signature, only when an error asks.


def argument_describer(f: Callable, args: tuple, static) -> Callable[[list[int]], str | None]:
    """`describe(flat input positions) -> sentence` for `f` traced at `args` (the flat
    inputs being the leaves of the arguments not in `static`, in order)."""

    def describe(positions: list[int]) -> str | None:
        if not positions:
            return None
        owners = _leaf_owners([i for i in range(len(args)) if i not in static], args)
        names = _parameter_names(f)
        described = []
        for i in dict.fromkeys(owners[p] for p in positions if p < len(owners)):
            described.append(f"`{names[i]}`" if i < len(names) else f"{i}")
        if not described:
            return None
        noun = "argument" if len(described) == 1 else "arguments"
        return (f"The value depends on the {noun} {', '.join(described)} of "
                f"{_function_name(f)}.")

    return describe


def _leaf_owners(dynamic: list[int], args: tuple) -> list[int]:
    """For each flat input, the position of the argument it is a leaf of."""
    owners = []
    for i in dynamic:
        items, _ = tree_flatten(args[i], is_leaf=lambda x: isinstance(x, Inactive))
        count = sum(len(tree_leaves(x.value)) if isinstance(x, Inactive) else 1 for x in items)
        owners += [i] * count
    return owners


def _parameter_names(f: Callable) -> list[str]:
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):  # a builtin, a callable object without a signature
        return []
    return [p.name for p in parameters
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _function_name(f: Callable) -> str:
    code = getattr(inspect.unwrap(f), "__code__", None)
    name = getattr(f, "__qualname__", None) or type(f).__name__
    where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"`{name}`{where}"


# ---------------------------------------------------------------------------------
# Which dtypes `grad`, `jacfwd` and `jacrev` take, with and without `holomorphic`
#
# JAX's rules, and its messages: a gradient (`grad`, `jacrev`) is of real outputs,
# unless the function is declared holomorphic; `jacfwd`'s basis is of real inputs,
# likewise; declared holomorphic, inputs and outputs must both be complex. A real
# function of complex inputs needs no declaration: its gradient is JAX's,
# `∂f/∂x - i ∂f/∂y` (twice the Wirtinger derivative ∂f/∂z, the conjugate of the
# steepest-ascent direction; docs/design.md, "Complex numbers").

_VIA = {"grad": "vjp", "jacrev": "vjp", "jacfwd": "jvp"}


def check_differentiated_inputs(name: str, flat: FlatArgs, holomorphic: bool) -> None:
    """The dtypes of the leaves `name` (grad, jacfwd, jacrev) differentiates."""
    for dtype in (get_aval(x).dtype for x, a in zip(flat.leaves, flat.active) if a):
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype.name}.")
        if not holomorphic and name == "jacfwd" and dtype.kind == "c":
            raise TypeError(_real_valued(name, "input", dtype))


def check_differentiated_outputs(name: str, dtypes, holomorphic: bool) -> None:
    """The differentiated outputs' dtypes, for `name` (grad, jacfwd, jacrev)."""
    for dtype in map(np.dtype, dtypes):
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype.name}.")
        if not holomorphic and name != "jacfwd" and dtype.kind == "c":
            raise TypeError(_real_valued(name, "output", dtype))


def _real_valued(name: str, which: str, dtype: np.dtype) -> str:
    return (f"{name} requires real-valued {which}s ({which} dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
            f"holomorphic=True. For differentiation of non-holomorphic functions involving "
            f"complex {which}s, use inert.{_VIA[name]} directly.")
