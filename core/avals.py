"""Abstract values: what tracing knows about an array (its shape and dtype).

Python scalars are *weakly typed* (numpy 2's NEP 50): `x * 2.0` keeps `x`'s dtype.
A weak aval remembers that its value came from a Python scalar so that promotion
gives exactly numpy's result dtype.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .backends import backend_aval_parts
from .errors import DTypeError

# JAX's dtype of tangents of integer and boolean values: zero bytes per element.
float0 = np.dtype([("float0", np.void, 0)])



@attrs.frozen(slots=True, cache_hash=True)
class ShapedArray:
    """The shape and dtype of an array; compares by value."""

    shape: tuple[int, ...] = attrs.field(converter=tuple)
    dtype: np.dtype = attrs.field(converter=np.dtype)
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # not np.prod: partial eval asks for every residual's

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def strong(self) -> ShapedArray:
        if not self.weak_type:
            return self
        strong = _strong_avals.get(self)
        if strong is None:
            if len(_strong_avals) > 4096:  # a bounded cache, not a registry
                _strong_avals.clear()
            strong = _strong_avals[self] = canonical(attrs.evolve(self, weak_type=False))
        return strong

    def str_short(self) -> str:
        return f"{dtype_short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        return self.str_short()


@attrs.frozen(slots=True, cache_hash=True)
class AbstractRef:
    """The type of a mutable reference to an array of type `inner`, printed `Ref{f64[3]}`.

    `source` is the user's line that created the ref, for error messages; it takes no
    part in comparisons, so refs of one type are interchangeable in a jaxpr. A ref
    has its contents' shape and dtype, and no weak type (its contents are stored)."""

    inner: ShapedArray
    source: object = attrs.field(default=None, eq=False, hash=False, repr=False)

    shape = property(lambda self: self.inner.shape)
    dtype = property(lambda self: self.inner.dtype)
    ndim = property(lambda self: self.inner.ndim)
    size = property(lambda self: self.inner.size)
    nbytes = property(lambda self: self.inner.nbytes)
    weak_type = False

    def strong(self) -> AbstractRef:
        return self

    def str_short(self) -> str:
        return f"Ref{{{self.inner.str_short()}}}"

    def __str__(self) -> str:
        return self.str_short()


class Ref:
    """A mutable array outside any transformation: what `inert.new_ref` gives when
    nothing is being traced. Its operations are installed by `primitives.state`."""

    __slots__ = ("buffer", "aval")

    def __init__(self, buffer: np.ndarray, source=None):
        self.buffer = buffer
        self.aval = AbstractRef(concrete_aval(buffer).strong(), source)


def dtype_short_name(dtype: np.dtype) -> str:
    if dtype == float0:
        return "float0"
    if dtype == np.bool_:
        return "bool"
    return f"{dtype.kind}{dtype.itemsize * 8}"


_PYTHON_SCALAR_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}


def is_python_scalar(x) -> bool:
    return type(x) in PYTHON_SCALAR_TYPES


PYTHON_SCALAR_TYPES = frozenset(_PYTHON_SCALAR_DTYPES)  # for an inline test where it is hot


_PYTHON_SCALAR_AVALS = {t: ShapedArray((), d, weak_type=t is not bool)
                        for t, d in _PYTHON_SCALAR_DTYPES.items()}


_array_avals: dict[tuple, ShapedArray] = {}  # avals are values: one per (shape, dtype)


def concrete_aval(x) -> ShapedArray:
    """The aval of a concrete value: a numpy array or scalar, or a Python scalar."""
    aval = _SCALAR_TYPE_AVALS.get(type(x))
    if aval is None:
        if isinstance(x, (np.ndarray, np.generic)):
            aval = _array_avals.get((x.shape, x.dtype)) or _new_array_aval(x)
        elif type(x) is Ref:
            aval = x.aval
        elif type(x) in (ShapedArray, AbstractRef):  # what a returned function keeps
            aval = x
        else:  # a Dask, CuPy, ... array: metadata only
            aval = ShapedArray(*backend_aval_parts(x))
    return aval


def _numpy_scalar_avals() -> dict:
    """The avals of numpy's number and bool scalars, which their type alone fixes (not
    a timedelta's: its unit is part of its dtype)."""
    types = {t for t in np.sctypeDict.values() if np.dtype(t).kind in "biufc"}
    return {t: canonical(ShapedArray((), np.dtype(t))) for t in types}


def _new_array_aval(x) -> ShapedArray:
    if x.dtype == object:
        raise DTypeError(f"arrays of dtype object are not supported (got {x!r:.60})")
    if len(_array_avals) > 4096:  # a bounded cache, not a registry
        _array_avals.clear()
    aval = _array_avals[x.shape, x.dtype] = canonical(ShapedArray(x.shape, x.dtype))
    return aval


def canonical(aval: ShapedArray) -> ShapedArray:
    """The one instance of avals equal to `aval` (bounded). Tracing compares avals at
    every operation: those the rules build (abstract eval, tangent types) are made
    canonical, so that comparisons and cache lookups mostly find the same object."""
    found = _canonical_avals.get(aval)
    if found is None:
        if len(_canonical_avals) > 4096:
            _canonical_avals.clear()
        found = _canonical_avals[aval] = aval
    return found


def promotion_operand(aval: ShapedArray):
    """What numpy's promotion should see for this aval: weak ones as Python scalars."""
    if aval.weak_type:
        return aval.dtype.type(0).item()
    return aval.dtype


def result_dtype(*avals: ShapedArray) -> np.dtype:
    """numpy's result dtype of combining these avals (NEP 50 for weak ones)."""
    return np.result_type(*map(promotion_operand, avals))


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


def tangent_dtype(dtype: np.dtype) -> np.dtype:
    """Floats differentiate into themselves; integers and booleans into float0."""
    return dtype if is_float(dtype) else float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    if type(aval) is AbstractRef:  # a ref's tangent is a ref of its contents' tangents
        return AbstractRef(tangent_aval(aval.inner), aval.source)
    if not aval.weak_type and aval.dtype.kind in "fc":
        return aval
    tangent = _tangent_avals.get(aval)
    if tangent is None:
        if len(_tangent_avals) > 4096:  # a bounded cache, not a registry
            _tangent_avals.clear()
        tangent = _tangent_avals[aval] = canonical(ShapedArray(aval.shape,
                                                               tangent_dtype(aval.dtype)))
    return tangent


# Avals are values, so these derived ones are computed once each (tracing asks for the
# tangent type of a Python scalar at every operation on one); bounded caches.
_tangent_avals: dict[ShapedArray, ShapedArray] = {}
_strong_avals: dict[ShapedArray, ShapedArray] = {}
_canonical_avals: dict[ShapedArray, ShapedArray] = {}
_SCALAR_TYPE_AVALS = {**_numpy_scalar_avals(), **_PYTHON_SCALAR_AVALS}
"""A scalar's aval by its type (`concrete_aval`'s first look-up): numpy's scalars, as
tracing and the backward pass meet them at every operation, and Python's, weak."""
