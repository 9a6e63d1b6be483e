"""The base of `inert.numpy`: turning user values into arrays, numpy's dtype promotion,
axis normalisation, broadcasting, and building arrays (creation, concatenate, stack).

The namespace accepts what numpy accepts (lists, Python scalars, numpy arrays) as
well as traced values. Plain values stay plain: a function given only numpy values
computes a numpy value, because its primitives run at the eval trace. Python scalars
are passed to primitives as they are, so they stay weakly typed (`x32 * 2.0` is
float32, as in numpy 2).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.avals import PYTHON_SCALAR_TYPES, ShapedArray, float0, result_dtype
from ...core.backends import is_backend_array
from ...core.errors import ConcretizationError, DTypeError, ShapeError
from ...core.trace import Tracer, get_aval, user_source_info
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ...primitives.shape import slicing as sl
from ...primitives.shape import structural as st
from ._array import Array


def shape_error(message: str) -> ShapeError:
    """A ShapeError pointing at the user's line (the namespace's own checks)."""
    return ShapeError(message).with_source(user_source_info())


# ---------------------------------------------------------------------------------
# Conversion and promotion


def operand(x):
    """`x` as an operand of a primitive: traced values, numpy values and Python
    scalars as they are (scalars stay weakly typed), sequences as arrays."""
    if isinstance(x, (Tracer, np.ndarray, np.generic)) or type(x) in PYTHON_SCALAR_TYPES:
        return x
    return asarray(x)  # a Dask, CuPy, ... array stays its library's (see `asarray`)


def asarray(a: Any, dtype: DTypeLike | None = None) -> Array:
    """numpy.asarray that keeps traced values traced and stacks lists holding them."""
    if isinstance(a, Tracer):
        return a if dtype is None else st.convert_element_type(a, dtype)
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        return asarray(stack([asarray(x) for x in a]), dtype)
    if is_backend_array(a):  # np.asarray would compute a dask array
        return a if dtype is None else st.convert_element_type(a, dtype)
    return _numeric(np.asarray(a, dtype), "asarray")


def array(object: Any, dtype: DTypeLike | None = None,  # noqa: A002 — numpy's name
          copy: bool = True) -> Array:
    """numpy.array; traced values are immutable, so `copy` never needs a copy.

    Example:
        >>> jnp.array([1.0, 2.0], dtype=np.float32)
        Array([1., 2.], dtype=float32)
    """
    if isinstance(object, Tracer) or (isinstance(object, (list, tuple)) and
                                      _holds_tracer(object)):
        return asarray(object, dtype)
    return _numeric(np.array(object, dtype, copy=copy), "array")


def _numeric(x: np.ndarray, name: str) -> np.ndarray:
    """`x`, unless numpy made strings or objects of the input (`[1.0, "a"]`)."""
    if x.dtype.kind in "OSUMm" or (x.dtype.kind == "V" and x.dtype != float0):
        raise DTypeError(f"{name}: inert arrays hold numbers and booleans, but the input "
                         f"makes an array of dtype {x.dtype}").with_source(user_source_info())
    return x


def _holds_tracer(seq) -> bool:
    return any(isinstance(x, Tracer) or (isinstance(x, (list, tuple)) and _holds_tracer(x))
               for x in seq)


def cast(x, dtype):
    """`x` converted to `dtype`: a primitive for traced values, numpy for the rest (a
    scalar stays a numpy scalar, so that a jaxpr shows it as a literal)."""
    if isinstance(x, Tracer) or is_backend_array(x):
        return st.convert_element_type(x, dtype)
    return np.asarray(x, dtype)[()]


def astype(x: ArrayLike, dtype: DTypeLike) -> Array:
    return cast(operand(x), dtype)


def promote(*xs) -> list:
    """The operands converted to numpy's result dtype of combining them."""
    xs = [operand(x) for x in xs]
    dtype = result_dtype(*(get_aval(x) for x in xs))
    return [cast(x, dtype) for x in xs]


def ndim(a: ArrayLike) -> int:
    return get_aval(operand(a)).ndim


def shape(a: ArrayLike) -> tuple[int, ...]:
    return tuple(get_aval(operand(a)).shape)


def size(a: ArrayLike) -> int:
    return get_aval(operand(a)).size


# ---------------------------------------------------------------------------------
# Axes


def normalize_axis(axis, ndim: int, name: str) -> int:
    """A non-negative axis; numpy's out-of-bounds error as a ShapeError."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise shape_error(f"{name}: axis {axis} is out of bounds for an array of "
                          f"dimension {ndim}")
    return axis % ndim


def normalize_axes(axis, ndim: int, name: str) -> tuple[int, ...]:
    """numpy's `axis` argument (None, an int or a sequence) as a tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise shape_error(f"{name}: repeated axis in {axis}")
    return out


# ---------------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes: Sequence[int], name: str = "broadcast_shapes") -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise shape_error(f"{name}: shapes {', '.join(map(str, shapes))} do not broadcast "
                          "together") from None


def _traced_shape_error(name: str, error: ConcretizationError) -> ConcretizationError:
    return ConcretizationError(
        f"{name}: a shape must be known while tracing, but it holds a traced integer (an "
        "argument of jit or make_jaxpr, or a value computed from one). Pass that argument "
        "as a static one: jit(f, static_argnums=...) or jit(f, static_argnames=...) (or "
        "make_jaxpr(f, static_argnums=...)), or compute the size from a shape "
        "(x.shape[0]), which is static." +
        (f" {error.depends_on}" if error.depends_on else "")).with_source(error.source)


def canonical_shape(shape, name: str) -> tuple[int, ...]:
    """A shape argument as a tuple of Python ints: one integer or a sequence of them,
    of any integer type numpy accepts (`np.int64(6)`, a 0-d integer array). A traced
    dimension is a ConcretizationError (shapes must be known while tracing) that
    suggests making it static, as JAX's does."""
    try:
        return (operator.index(shape),)
    except ConcretizationError as e:
        raise _traced_shape_error(name, e) from None
    except TypeError:
        pass
    try:
        return tuple(operator.index(d) for d in shape)
    except ConcretizationError as e:
        raise _traced_shape_error(name, e) from None
    except TypeError:
        raise TypeError(f"{name}: a shape must be an integer or a sequence of integers, "
                        f"got {shape!r}") from None


def broadcast_to(array: ArrayLike, shape: int | Sequence[int]) -> Array:
    """numpy.broadcast_to, as a `broadcast_in_dim` (nothing if the shape is right)."""
    x = operand(array)
    shape = canonical_shape(shape, "broadcast_to")
    x_shape = get_aval(x).shape
    if tuple(x_shape) == shape:
        return x
    if len(x_shape) > len(shape) or broadcast_shapes(x_shape, shape,
                                                     name="broadcast_to") != shape:
        raise shape_error(f"broadcast_to: cannot broadcast shape {tuple(x_shape)} to {shape}")
    return st.broadcast_in_dim(x, shape, range(len(shape) - len(x_shape), len(shape)))


def broadcast_arrays(*args: Any) -> tuple:
    args = [operand(a) for a in args]
    shape = broadcast_shapes(*(get_aval(a).shape for a in args), name="broadcast_arrays")
    return tuple(broadcast_to(a, shape) for a in args)


# ---------------------------------------------------------------------------------
# Building arrays

# Arrays of one value are broadcasts of a scalar (JAX's `lax.full`): inside a trace they
# are staged values, so `.at[...]` works on them, cheap to recompute and never a big
# constant in the jaxpr; evaluated eagerly they are read-only numpy views (as JAX's
# arrays are immutable; `x += 1` rebinds `x` to a new array). Ranges are numpy constants.
def arange(*args: Any, **kwargs: Any) -> Array:
    """numpy.arange: a numpy constant (its length must be known while tracing)."""
    return np.arange(*args, **kwargs)


def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: DTypeLike | None = None,
             axis: int = 0) -> Array | tuple[Array, Array]:
    """numpy.linspace: a numpy constant, unless `start` or `stop` is traced: then
    `start + i * step` (differentiable in both), the last value exactly `stop`.
    `num` must be known while tracing."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    start, stop = broadcast_arrays(start, stop)
    aval = get_aval(start)
    float_dtype = result_dtype(aval, get_aval(stop), ShapedArray((), np.float64, True))
    float_dtype = float_dtype if float_dtype.kind in "fc" else np.dtype(np.float64)
    start, stop = cast(start, float_dtype), cast(stop, float_dtype)
    div = num - 1 if endpoint else num
    shape = (num, *aval.shape)
    i = st.iota(float_dtype, shape, 0)
    along = range(1, len(shape))
    y = st.broadcast_in_dim(start, shape, along)
    if div > 0:
        step = ew.div(ew.sub(stop, start), div)
        y = ew.add(y, ew.mul(i, st.broadcast_in_dim(step, shape, along)))
    else:  # one sample (or none): numpy's step is undefined
        step = ew.mul(stop, np.nan)
    if endpoint and num > 1:
        y = ew.select_n(ew.eq(i, num - 1), y, st.broadcast_in_dim(stop, shape, along))
    axis = normalize_axis(axis, len(shape), "linspace")
    y = st.transpose(y, [*range(1, axis + 1), 0, *range(axis + 1, len(shape))])
    if dtype is not None:
        y = cast(ew.floor(y) if np.dtype(dtype).kind in "iu" else y, dtype)
    return (y, step) if retstep else y


def full(shape: int | Sequence[int], fill_value: ArrayLike,
         dtype: DTypeLike | None = None) -> Array:
    fill_value = operand(fill_value)
    dtype = get_aval(fill_value).dtype if dtype is None else np.dtype(dtype)
    return broadcast_to(cast(fill_value, dtype), canonical_shape(shape, "full"))


def zeros(shape: int | Sequence[int], dtype: DTypeLike | None = None) -> Array:
    """numpy.zeros, float64 unless `dtype` says otherwise; `shape` must be known while
    tracing (a `static_argnums` argument under `jit`).

    Example:
        >>> jnp.zeros((2, 2), np.int32)
        Array([[0, 0],
               [0, 0]], dtype=int32)
    """
    return full(shape, 0, np.float64 if dtype is None else dtype)


def ones(shape: int | Sequence[int], dtype: DTypeLike | None = None) -> Array:
    """numpy.ones, float64 unless `dtype` says otherwise; `shape` must be known while
    tracing (a `static_argnums` argument under `jit`).

    Example:
        >>> jnp.ones(3)
        Array([1., 1., 1.])
    """
    return full(shape, 1, np.float64 if dtype is None else dtype)


empty = zeros


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
              shape: int | Sequence[int] | None = None) -> Array:
    aval = get_aval(operand(a))
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype)


def zeros_like(a: ArrayLike, dtype: DTypeLike | None = None,
               shape: int | Sequence[int] | None = None) -> Array:
    return full_like(a, 0, dtype, shape)


def ones_like(a: ArrayLike, dtype: DTypeLike | None = None,
              shape: int | Sequence[int] | None = None) -> Array:
    return full_like(a, 1, dtype, shape)


def eye(N: int, M: int | None = None, k: int = 0,
        dtype: DTypeLike | None = None) -> Array:  # noqa: N803 — numpy's names
    """numpy.eye, from a column and a row of indices that broadcast (staged inside a
    trace, like `full`): no n x n index arrays."""
    rows, cols = canonical_shape((N, N if M is None else M), "eye")
    row_index = st.iota(np.int64, (rows, 1), 0)
    row_index = ew.add(row_index, k) if k else row_index
    on_diagonal = ew.eq(row_index, st.iota(np.int64, (1, cols), 1))
    return cast(on_diagonal, np.float64 if dtype is None else dtype)


def identity(n: int, dtype: DTypeLike | None = None) -> Array:
    return eye(n, dtype=dtype)


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0) -> Array:
    """numpy.concatenate: dtypes promoted; `axis=None` flattens first.

    Example:
        >>> jnp.concatenate([np.ones(2), np.zeros(1, np.int64)])
        Array([1., 1., 0.])
    """
    if not len(arrays):
        raise shape_error("concatenate: needs at least one array")
    arrays = promote(*arrays)
    if axis is None:
        arrays = [st.reshape(a, (get_aval(a).size,)) for a in arrays]
        axis = 0
    avals = [get_aval(a) for a in arrays]
    if any(a.ndim == 0 for a in avals):
        raise shape_error("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, avals[0].ndim, "concatenate")
    if len(arrays) == 1:
        return arrays[0]
    return sl.concatenate(arrays, axis)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Array:
    """numpy.stack: arrays of one shape joined along a new axis `axis`.

    Example:
        >>> jnp.stack([np.ones(2), np.zeros(2)], axis=1)
        Array([[1., 0.],
               [1., 0.]])
    """
    arrays = [operand(a) for a in arrays]
    shapes = {tuple(get_aval(a).shape) for a in arrays}
    if len(shapes) != 1:
        raise shape_error(f"stack: all input arrays must have the same shape, got "
                          f"{', '.join(map(str, sorted(shapes)))}")
    (shape,) = shapes
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    expanded = (*shape[:axis], 1, *shape[axis:])
    return concatenate([st.reshape(a, expanded) for a in arrays], axis)


def conj_if_complex(x):
    """numpy's conjugate: a real array is its own (no equation)."""
    return ew.conj(x) if get_aval(x).dtype.kind == "c" else x


def abs_squared(x):
    """|x|², real: `x * x`, or of a complex x `real(x * conj(x))` (no square root, so
    differentiable at 0)."""
    if get_aval(x).dtype.kind != "c":
        return ew.mul(x, x)
    return ew.real(ew.mul(x, ew.conj(x)))
