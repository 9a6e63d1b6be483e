"""`inert.numpy`: the jax.numpy subset, on inert's primitives.

Functions take traced values, numpy arrays, Python scalars and lists, broadcast like
numpy and give numpy's dtypes (float64 by default); given only plain values they
compute plain numpy values. The functions live in modules by kind (the private
modules of this package); this module is the namespace that gathers them.
"""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

import functools

import numpy as np

from ..namespace import public_names
from . import linalg
from ._array import Array
from ._array import as_array as _as_array
from ._arrays import (
    arange,
    array,
    asarray,
    astype,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concatenate,
    empty,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ndim,
    ones,
    ones_like,
    shape,
    size,
    stack,
    zeros,
    zeros_like,
)
from ._convolve import convolve, correlate
from ._dot import dot, einsum, inner, matmul, outer, tensordot, trace, vdot
from ._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    average,
    count_nonzero,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._shape import (
    array_split,
    atleast_1d,
    atleast_2d,
    column_stack,
    diag,
    diagonal,
    expand_dims,
    flip,
    fliplr,
    flipud,
    hstack,
    meshgrid,
    moveaxis,
    ravel,
    repeat,
    reshape,
    roll,
    split,
    squeeze,
    swapaxes,
    take,
    take_along_axis,
    tile,
    transpose,
    tril,
    triu,
    vstack,
)
from ._ufuncs import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    fix,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    greater,
    greater_equal,
    hypot,
    invert,
    isclose,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    polyval,
    positive,
    power,
    rad2deg,
    radians,
    reciprocal,
    remainder,
    round,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)

# Dtypes and their classes are numpy's own.
float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
complex64, complex128 = np.complex64, np.complex128
bool_ = np.bool_
dtype, finfo, iinfo, issubdtype, promote_types = (
    np.dtype, np.finfo, np.iinfo, np.issubdtype, np.promote_types)
number, inexact, floating, integer, signedinteger, unsignedinteger = (
    np.number, np.inexact, np.floating, np.integer, np.signedinteger, np.unsignedinteger)

pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None


def _returning_arrays(fn):
    """`fn` whose plain numpy results come back as `Array`s (with `.at`)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return _as_array(fn(*args, **kwargs))

    return wrapped


# The functions of this namespace return Arrays when they run eagerly (see _array);
# aliases (acos, arccos) stay one function.
_wrapped: dict = {}
for _name, _fn in list(globals().items()):
    if callable(_fn) and getattr(_fn, "__module__", "").startswith(__name__ + "._") \
            and not _name.startswith("_") and not isinstance(_fn, type):
        globals()[_name] = _wrapped.setdefault(id(_fn), _returning_arrays(_fn))
del _wrapped
ndarray = np.ndarray  # isinstance(x, jnp.ndarray) holds for Arrays and numpy's arrays

__all__ = public_names(globals(), submodules=("linalg",))


def __dir__():
    return __all__
