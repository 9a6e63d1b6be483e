"""`inert.numpy`: the jax.numpy subset, on inert's primitives.

Functions take traced values, numpy arrays, Python scalars and lists, broadcast like
numpy and give numpy's dtypes (float64 by default); given only plain values they
compute plain numpy values. The functions live in modules by kind (the private
modules of this package); this module is the namespace that gathers them.
"""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

import numpy as np

from ..namespace import public_names
from . import fft, linalg
from ._array import Array
from ._array import return_arrays_from as _return_arrays_from
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
from ._convolve import convolve, correlate
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
from ._scalar_types import isdtype
from ._scalar_types import scalar_type as _scalar_type
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
    real_if_close,
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

# Scalar types convert, as JAX's do, and stand for numpy's dtypes (aliases are the same
# object, as in JAX); the abstract classes (floating, integer, ...), object_ and the
# dtype functions are numpy's own.
float16, float32, float64 = map(_scalar_type, (np.float16, np.float32, np.float64))
int8, int16, int32, int64 = map(_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
complex64, complex128 = map(_scalar_type, (np.complex64, np.complex128))
bool_ = _scalar_type(np.bool_)
bool = bool_  # noqa: A001 — numpy 2's name
int_, uint, float_, double, single = int64, uint64, float64, float64, float32
complex_, cdouble, csingle, object_ = complex128, complex128, complex64, np.object_
generic, flexible, character, complexfloating = (
    np.generic, np.flexible, np.character, np.complexfloating)
result_type, can_cast, iterable = np.result_type, np.can_cast, np.iterable
get_printoptions, set_printoptions, printoptions = (
    np.get_printoptions, np.set_printoptions, np.printoptions)
ComplexWarning = np.exceptions.ComplexWarning
dtype, finfo, iinfo, issubdtype, promote_types = (
    np.dtype, np.finfo, np.iinfo, np.issubdtype, np.promote_types)
number, inexact, floating, integer, signedinteger, unsignedinteger = (
    np.number, np.inexact, np.floating, np.integer, np.signedinteger, np.unsignedinteger)

pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None


# The functions of this namespace return Arrays when they run eagerly (see _array).
_return_arrays_from(globals(), [
    _name for _name, _fn in globals().items()
    if callable(_fn) and getattr(_fn, "__module__", "").startswith(__name__ + "._")
    and not _name.startswith("_") and not isinstance(_fn, type)], like=np)
ndarray = np.ndarray  # isinstance(x, jnp.ndarray) holds for Arrays and numpy's arrays

__all__ = public_names(globals(), submodules=("fft", "linalg"))


def __dir__():
    return __all__
