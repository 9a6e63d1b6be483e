"""`Array`: what inert gives back — immutable, with JAX's `x.at[idx].set(v)`.

Every value the API returns (a transform's outputs, an eager `inert.numpy`,
`inert.lax` or `inert.scipy` result) passes through `returned`, the one place that
turns numpy results into `Array`s:

* an `Array` is a read-only view (O(1): no copy), so a write raises
  `ImmutableArrayError` pointing to `.at[]`, as JAX's arrays do; in-place operators
  (`x += 1`) rebind the name to a new array instead of writing into one that other
  names may share;
* it never shares a buffer the user can still write: a result that is (a view of)
  a plain numpy argument — `asarray(a)`, `reshape(a)`, `jit(lambda x: x)(a)` — is
  copied, once, so a later `a[0] = 99` cannot change it. Fresh results and other
  `Array`s (immutable already) are never copied;
* a numpy scalar result (`sum(x)`) is a 0-d `Array`, as in JAX. A Python scalar
  that an `inert.numpy` function computed from Python scalars only stays a Python
  scalar: it is weakly typed (`x32 * sin(1.0)` stays float32), like JAX's weakly
  typed arrays; the transforms' outputs are always `Array`s.

Traced values get `.at` from `_methods`. numpy's own operations on `Array`s follow
numpy's rules, so every numpy function works on them: ufuncs, operators and methods
(`x + 1`, `np.sin(x)`, `x.sum()`) give `Array`s (with `.at`), writeable as numpy's
results are (numpy's `np.var` writes into the arrays it has just made); functions
that build new arrays (`np.concatenate`, `np.stack`) give plain numpy arrays, and so
do `np.asarray(x)` (a read-only view) and `np.array(x)` (a writeable copy).
"""

from __future__ import annotations

import functools
import re
import sys
import types

import attrs
import numpy as np

from ...core.avals import ShapedArray
from ...core.backends import is_backend_array
from ...core.errors import ImmutableArrayError
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import Tracer, at_user_line, get_aval, user_source_info
from ...core.traceback_util import filtered, mark_boundary, outermost
from ...primitives import elementwise as ew
from ...primitives.indexing import gather_scatter as ix
from ...primitives.indexing import scatter_extrema as ext
from ...primitives.shape import structural as st


class Array(np.ndarray):
    """An immutable numpy array with JAX's `.at[...]` functional updates: what inert's
    functions return when they run eagerly. numpy takes it as it is (it is an
    `np.ndarray`); `np.array(x)` makes a writeable copy.

    Differences from JAX:
        It lives in numpy's memory, on the one device; `block_until_ready` returns it.

    Example:
        >>> x = jnp.array([[1, 2], [3, 4]])
        >>> x.at[0, 1].set(7)
        Array([[1, 7],
               [3, 4]])
        >>> x[0, 1] = 7  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ImmutableArrayError: an inert array is immutable, as JAX's arrays are: ...
    """

    @property
    def at(self) -> IndexUpdateHelper:
        return IndexUpdateHelper(self)

    def __getitem__(self, index):
        """numpy's indexing, except that a traced index (a `jit` or `vmap` argument)
        stages a gather, as indexing a JAX array with a traced integer does, and that
        an index out of bounds is clamped, as JAX's are (numpy's IndexError sends the
        index to `getitem`, which raises only for an index that is no index)."""
        if isinstance(index, Tracer) or (type(index) is tuple and
                                         any(isinstance(i, Tracer) for i in index)):
            return ix.getitem(self, index)
        try:
            return super().__getitem__(index)
        except IndexError:
            return returned(ix.getitem(self, index), (self,))

    def __iter__(self):
        """numpy's iteration, by index: the sequence protocol numpy's would use stops at
        an IndexError, which `__getitem__` no longer raises past the end."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (np.ndarray.__getitem__(self, i) for i in range(len(self)))

    def block_until_ready(self) -> Array:
        """JAX's: wait for the value. inert computes values before returning them."""
        return self

    def __setitem__(self, index, value):
        if not self.flags.writeable:  # inert's own (an array numpy made is numpy's)
            raise immutable_error("an inert array", "x[idx] = y", "x = x.at[idx].set(y)")
        super().__setitem__(index, value)

    def fill(self, value):
        if not self.flags.writeable:
            raise immutable_error("an inert array", "x.fill(v)", "x = jnp.full_like(x, v)")
        super().fill(value)

    # Its arithmetic operators, and `x op= y` meaning `x = x op y` (as for JAX's
    # immutable arrays), are installed by `_methods`: they explain shape errors with
    # inert.numpy's functions.


def immutable_error(subject: str, write: str, instead: str,
                    alternative: str = "np.array(x) for a writeable numpy copy"
                    ) -> ImmutableArrayError:
    """A write into an inert array (`subject`: an `Array`, or a tracer), in JAX's words,
    at the user's line."""
    return ImmutableArrayError(
        f"{subject} is immutable, as JAX's arrays are: instead of `{write}`, use "
        f"`{instead}` or another .at[] method (or {alternative})"
    ).with_source(user_source_info())


_PYTHON_SCALARS = frozenset((bool, int, float, complex))


def returned(out, inputs=()):
    """`out` (a value or a pytree of them) as the user receives it: numpy arrays and
    scalars as immutable `Array`s, copied if they share a writeable buffer with one of
    `inputs` (the caller's arguments); tracers and Python scalars unchanged."""
    if isinstance(out, np.ndarray):
        return _immutable(out, _writeable_roots(inputs))
    if out is None or type(out) in _PYTHON_SCALARS or isinstance(out, Tracer):
        return out  # (np.float64 is a float subclass: not one of these)
    if isinstance(out, np.generic):
        return _immutable(out, ())
    leaves, tree = tree_flatten(out)  # a tuple of arrays, or of ints (`shape`)
    roots = _writeable_roots(inputs)
    return tree_unflatten(tree, [v if v is None or type(v) in _PYTHON_SCALARS or
                                 isinstance(v, Tracer) else _immutable(v, roots)
                                 for v in leaves])


def returned_leaves(leaves, inputs=()) -> list:
    """`returned` of each of a flat list of values (a transform's outputs; None for
    an input without a cotangent, an aval for a value `grad` did not compute); Python
    scalars become 0-d `Array`s too."""
    roots = _writeable_roots(inputs)
    return [v if v is None or isinstance(v, (Tracer, ShapedArray)) else _immutable(v, roots)
            for v in leaves]


def returning_arrays(fn):
    """`fn` (a namespace's function) whose results pass through `returned`.

    An elementwise function says what it does, `fn.binds = (primitive function,
    operand conversion)`: this entry does it itself, at the user's line found from its
    own caller (`at_user_line`), which is then one frame away, not through `fn`.
    A scalar program is little else: each frame on that path is a tenth of its cost."""
    binds, convert = getattr(fn, "binds", (None, None))

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 — pytest and IPython hide this frame
        try:  # an entry point: errors leave with inert's frames filtered (traceback_util)
            if binds is None or kwargs:
                out = fn(*args, **kwargs)
            else:
                out = at_user_line(binds, tuple(map(convert, args)))
        except Exception as e:
            if outermost(sys._getframe(1)):
                raise filtered(e)  # noqa: B904 — the same error, with another traceback
            raise
        if isinstance(out, Tracer):  # traced code: nothing to wrap
            return out
        return returned(out, (*args, *kwargs.values()) if kwargs else args)

    mark_boundary(wrapped)
    return wrapped


def return_arrays_from(namespace: dict, names, like: types.ModuleType | None = None) -> None:
    """Make the functions `names` of a namespace (a module's globals) return through
    `returned`; aliases (`acos`, `arccos`) stay one function. A function without a
    docstring that implements `like`'s function of its name (numpy's, scipy.special's)
    gets that function's summary and a note saying so (`derived_docstring`)."""
    wrapped: dict = {}
    for name in names:
        fn = namespace[name]
        namespace[name] = wrapped.setdefault(id(fn), returning_arrays(fn))
        if not namespace[name].__doc__ and like is not None:
            namespace[name].__doc__ = derived_docstring(
                getattr(like, name, None), f"{like.__name__}.{name}",
                "as JAX's: it traces, differentiates and batches, and returns an immutable "
                "`inert.Array` when run eagerly")


def derived_docstring(original, version_of: str, note: str) -> str | None:
    """The summary of `original`'s docstring (its first paragraph that is not a call
    signature, as ufuncs' begin with), then "inert's version of `version_of`, `note`"."""
    paragraphs = (getattr(original, "__doc__", None) or "").split("\n\n")
    summary = next((" ".join(p.split()) for p in paragraphs
                    if p.strip() and not _SIGNATURE.match(p)), None)
    if summary is None:
        return None
    return f"{summary}\n\ninert's version of `{version_of}`, {note}."


_SIGNATURE = re.compile(r"\s*[\w.]+\(.*\)\s*$", re.DOTALL)


def _immutable(x, writeable_roots: set) -> Array:
    if type(x) is np.ndarray and not (writeable_roots and id(_root(x)) in writeable_roots):
        view = x.view(Array)  # the usual result, a fresh array: jit dispatch's path
        view.setflags(write=False)
        return view
    if is_backend_array(x):  # a Dask, CuPy, ... array stays its library's (np.asarray
        return x             # would compute a dask graph)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)  # a scalar: a fresh 0-d array
    elif writeable_roots and id(_root(x)) in writeable_roots:
        x = np.array(x)
    elif type(x) is Array and not x.flags.writeable:
        return x
    view = x.view(Array)
    view.setflags(write=False)
    return view


def _writeable_roots(inputs) -> set[int]:
    """The buffers among `inputs` that their owner can still write (by id): the bases
    of their numpy arrays, except of read-only `Array`s (inert's own, never shared)."""
    roots = set()
    for v in inputs:
        if isinstance(v, np.ndarray) and (type(v) is not Array or v.flags.writeable):
            roots.add(id(_root(v)))
    return roots


def _root(x: np.ndarray) -> np.ndarray:
    """The array that owns `x`'s memory (`x` itself, or the base of the view `x`)."""
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x


@attrs.frozen
class IndexUpdateRef:
    """`x.at[idx]`: what `set`/`add`/`multiply`/`divide`/`power`/`min`/`max`/`get`
    apply to.

    JAX's keyword arguments are accepted: `indices_are_sorted` and `unique_indices`
    are hints that change nothing here (results are exact for any indices), and
    `mode` says what an index out of bounds does, as in JAX: `get` clamps it (None,
    "promise_in_bounds", "clip") or reads `fill_value` ("fill", "drop"; NaN for
    floats by default); the updates drop it (None, "promise_in_bounds", "drop",
    "fill") or write at the clamped index ("clip")."""

    array: Tracer | np.ndarray
    index: object

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        return returned(ix.getitem(self.array, self.index, mode, fill_value), (self.array,))

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("set", values, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("add", values, mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("multiply", values, mode)

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):  # noqa: A003
        """`x[idx] = minimum(x[idx], values)`; of repeated indices every value counts."""
        return self._update("min", values, mode, ext.scatter_min)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):  # noqa: A003
        """`x[idx] = maximum(x[idx], values)`; of repeated indices every value counts."""
        return self._update("max", values, mode, ext.scatter_max)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x[idx] /= values`: x divided by the product of the values each entry gets."""
        return returned(ew.div(self.array, self._product_of(values, mode)), (values,))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x[idx] **= values`: x to the product of the exponents each entry gets."""
        return returned(ew.pow(self.array, self._product_of(values, mode)), (values,))

    def _update(self, method: str, values, mode, scatter=None):
        """`method`'s update: index_update's scatter of that name, or `scatter`."""
        return returned(ix.index_update(self.array, self.index, values, scatter or method,
                                        mode), (values,))

    def _product_of(self, values, mode):
        ones = st.broadcast_in_dim(get_aval(self.array).dtype.type(1),
                                   get_aval(self.array).shape, ())
        return IndexUpdateRef(ones, self.index)._update("multiply", values, mode)


@attrs.frozen
class IndexUpdateHelper:
    array: Tracer | np.ndarray

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)
