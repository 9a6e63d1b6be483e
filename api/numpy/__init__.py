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
from ._calculus import (
    corrcoef,
    cov,
    cross,
    diff,
    ediff1d,
    gradient,
    histogram,
    interp,
    trapezoid,
)
from ._construct import (
    apply_along_axis,
    bartlett,
    blackman,
    c_,
    choose,
    copy,
    delete,
    diag_indices,
    diag_indices_from,
    diagflat,
    empty_like,
    fill_diagonal,
    geomspace,
    hamming,
    hanning,
    histogram_bin_edges,
    index_exp,
    indices,
    insert,
    ix_,
    kaiser,
    kron,
    logspace,
    mask_indices,
    mgrid,
    ogrid,
    pad,
    piecewise,
    put,
    put_along_axis,
    r_,
    resize,
    s_,
    select,
    tri,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    vander,
)
from ._dot import (
    dot,
    einsum,
    inner,
    matmul,
    matvec,
    outer,
    tensordot,
    trace,
    vdot,
    vecdot,
    vecmat,
)
from ._nan import (
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
)
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
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    ptp,
    std,
    sum,
    var,
)
from ._shape import (
    append,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    concat,
    diag,
    diagonal,
    dsplit,
    dstack,
    expand_dims,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    matrix_transpose,
    meshgrid,
    moveaxis,
    permute_dims,
    ravel,
    repeat,
    reshape,
    roll,
    rollaxis,
    rot90,
    row_stack,
    split,
    squeeze,
    swapaxes,
    take,
    take_along_axis,
    tile,
    transpose,
    tril,
    triu,
    unstack,
    vsplit,
    vstack,
)
from ._sorting import (
    argpartition,
    argsort,
    argwhere,
    bincount,
    digitize,
    flatnonzero,
    isin,
    lexsort,
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    nonzero,
    partition,
    percentile,
    quantile,
    ravel_multi_index,
    searchsorted,
    sort,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
    unravel_index,
    where,
)
from ._ufuncs import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    allclose,
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    array_equal,
    array_equiv,
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
    conj,
    conjugate,
    copysign,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    divmod,
    equal,
    exp,
    exp2,
    expm1,
    fabs,
    fix,
    float_power,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    frexp,
    greater,
    greater_equal,
    heaviside,
    hypot,
    i0,
    imag,
    invert,
    isclose,
    iscomplex,
    iscomplexobj,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    isrealobj,
    isscalar,
    ldexp,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    modf,
    multiply,
    nan_to_num,
    negative,
    nextafter,
    not_equal,
    polyval,
    positive,
    power,
    rad2deg,
    radians,
    real,
    reciprocal,
    remainder,
    rint,
    round,
    sign,
    signbit,
    sin,
    sinc,
    sinh,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
)

# Dtypes and their classes are numpy's own.
float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
complex64, complex128 = np.complex64, np.complex128
bool_ = np.bool_
bool = np.bool_  # noqa: A001 — numpy 2's name
int_, uint, float_, double, single = np.int_, np.uint, np.float64, np.float64, np.float32
complex_, cdouble, csingle, object_ = np.complex128, np.complex128, np.complex64, np.object_
generic, flexible, character, complexfloating = (
    np.generic, np.flexible, np.character, np.complexfloating)
result_type, can_cast, isdtype, iterable = np.result_type, np.can_cast, np.isdtype, np.iterable
get_printoptions, set_printoptions, printoptions = (
    np.get_printoptions, np.set_printoptions, np.printoptions)
ComplexWarning = np.exceptions.ComplexWarning
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
