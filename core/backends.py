"""Array backends: running primitives on arrays of other libraries (Dask, CuPy, any
Array-API library) through their own namespace, never by converting to numpy.

A primitive's impl is written for numpy. On another library's arrays (a *backend*),
`eval_on_backend` runs, in this order:

1. the primitive's Array-API impl from `array_api_impls` (`fn(xp, *values, **params)`,
   `xp` the operands' namespace from `array-api-compat`), registered beside the
   primitive where its numpy impl needs more than numpy's dispatch protocols;
2. a numpy ufunc impl as the namespace's function of the same name (`np.sin` is
   `xp.sin`, `np.arcsin` is `xp.asin`);
3. for a library that implements numpy's dispatch protocols (`__array_ufunc__`,
   `__array_function__`: Dask, CuPy), the numpy impl itself, which then builds that
   library's arrays (`np.sum` of a dask array is dask's tree reduction).

Whatever ran, every array it returns must belong to the operands' library: an impl that
converted to numpy (which for Dask would compute the whole graph) raises
`BackendError` naming the primitive and the library, as does a primitive none of the
three covers (scipy.special's functions exist for numpy only, and for Dask and CuPy
through dispatch). Tracing needs only avals: `backend_aval` reads a backend array's
shape and dtype, computing nothing.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from .errors import BackendError
from .rules import RuleTable

array_api_impls = RuleTable("Array-API impl")
"""primitive -> `fn(xp, *values, **params)`, the impl on any Array-API namespace `xp`."""

PLAIN_TYPES = frozenset({np.ndarray, bool, int, float, complex, *np.sctypeDict.values()})
"""Types of values the numpy impls take directly: everything else is a backend's."""

_ARRAY_API_NAMES = {  # numpy ufunc names the Array API standard spells differently
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "true_divide": "divide",
    "power": "pow", "absolute": "abs", "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
}


def is_backend_array(x) -> bool:
    """Whether `x` is another array library's array (not numpy's, not a tracer)."""
    return not isinstance(x, (np.ndarray, np.generic)) and array_api_compat.is_array_api_obj(x)


def is_plain(x) -> bool:
    """A value numpy impls take as it is: numpy's (subclasses too) or a Python number."""
    return type(x) in PLAIN_TYPES or isinstance(x, (np.ndarray, np.generic))


def as_array(x):
    """`np.asarray(x)` for a plain value; a backend's array as it is (np.asarray would
    convert it, computing a dask graph)."""
    return np.asarray(x) if is_plain(x) else x


def namespace_of(values):
    """The Array-API namespace of the backend arrays among `values`."""
    arrays = [v for v in values if is_backend_array(v)]
    try:
        return array_api_compat.array_namespace(*arrays)
    except TypeError as e:
        kinds = sorted({type(v).__module__.split(".")[0] for v in arrays})
        raise BackendError(f"operands from more than one array library ({', '.join(kinds)}) "
                           f"or not arrays: {e}") from None


def backend_name(xp) -> str:
    """`dask`, `cupy`, `array_api_strict`, ...: the library behind a namespace."""
    name = xp.__name__
    if name.startswith("array_api_compat."):
        name = name.split(".")[1]
    return name.split(".")[0]


def dispatches_numpy(xp) -> bool:
    """Whether the library's arrays implement numpy's dispatch protocols, so that a
    numpy impl given them builds their arrays (Dask, CuPy)."""
    return backend_name(xp) in ("dask", "cupy")


def backend_aval_parts(x) -> tuple[tuple[int, ...], np.dtype]:
    """A backend array's shape and numpy dtype, from its metadata alone."""
    if not array_api_compat.is_array_api_obj(x):
        raise TypeError(f"{type(x).__name__} {x!r:.60} is not a valid inert value: "
                        "use numpy arrays, numpy scalars, Python numbers or arrays of an "
                        "Array-API library")
    shape = tuple(x.shape)
    if any(n is None or n != n for n in shape):  # dask's unknown chunk sizes are nan
        raise BackendError(f"an array of unknown shape {shape} (compute its chunk sizes "
                           "first, e.g. dask's `compute_chunk_sizes()`)")
    return shape, numpy_dtype(x.dtype, array_api_compat.array_namespace(x))


def numpy_dtype(dtype, xp) -> np.dtype:
    """The numpy dtype of a backend dtype (by its Array-API name where numpy does not
    know the object, as for array_api_strict's)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        for name, d in xp.__array_namespace_info__().dtypes().items():
            if d == dtype:
                return np.dtype(name)
        raise


def backend_dtype(xp, dtype: np.dtype):
    """The namespace's dtype object for a numpy dtype."""
    return xp.__array_namespace_info__().dtypes()[np.dtype(dtype).name]


def to_backend(xp, value, dtype: np.dtype, like=None):
    """`value` (plain, or already the backend's) as an array of `xp` of `dtype`; a
    plain one in the chunks of `like` (a backend operand of its shape), if it has any.

    A plain array of one repeated value (a cotangent seed's ones, negated) becomes a
    broadcast of that value: for Dask, a graph generating it in each chunk instead of
    shipping the array to the workers and rechunking it there.
    """
    if not is_plain(value):
        if numpy_dtype(value.dtype, xp) != dtype:
            return xp.astype(value, backend_dtype(xp, dtype))
        return value
    a = np.asarray(value, dtype)
    chunks = getattr(like, "chunks", None) if like is not None and like.shape == a.shape else None
    if a.size > 1 and (a == a.flat[0]).all():
        one = xp.asarray(a.flat[0], dtype=backend_dtype(xp, dtype))
        return xp.broadcast_to(one, a.shape, **({"chunks": chunks} if chunks else {}))
    out = xp.asarray(a, dtype=backend_dtype(xp, dtype))
    return out.rechunk(chunks) if chunks else out


def _with_backend_arrays(xp, values) -> list:
    """Each plain array operand (not a scalar: those promote weakly) as the backend's,
    in the chunks of a backend operand of its shape."""
    backend = [v for v in values if is_backend_array(v)]
    return [to_backend(xp, v, v.dtype, next((b for b in backend if b.shape == v.shape),
                                            backend[0]))
            if isinstance(v, np.ndarray) and v.ndim else v for v in values]


def eval_on_backend(prim, impl, values, params):
    """Run `prim` on operands of which some are backend arrays (see the module
    docstring); its outputs are checked to be the same library's arrays."""
    xp = namespace_of(values)
    values = _with_backend_arrays(xp, values)
    fn = array_api_impls.get(prim)
    if fn is not None:
        try:
            out = fn(xp, *values, **params)
        except NotImplementedError as e:  # dask's reshape across chunk boundaries, ...
            raise BackendError(f"primitive {prim.name} on the {backend_name(xp)} backend: "
                               f"{e}") from None
    elif (fn := _standard_function(xp, impl)) is not None:
        out = fn(*_as_operands(xp, values))
    elif dispatches_numpy(xp):
        try:
            out = impl(*values, **params)
        except (TypeError, NotImplementedError) as e:  # the library has no such function
            raise BackendError(f"primitive {prim.name} has no implementation for the "
                               f"{backend_name(xp)} backend: {e}") from None
    else:
        raise BackendError(f"primitive {prim.name} has no implementation for the "
                           f"{backend_name(xp)} backend (its impl needs numpy)")
    for o in out if prim.multiple_results else [out]:
        if isinstance(o, (np.ndarray, np.generic)):
            raise BackendError(
                f"primitive {prim.name} on {backend_name(xp)} arrays returned a "
                f"{type(o).__module__}.{type(o).__name__}: its impl converted to numpy "
                f"(which computes the whole {backend_name(xp)} array); it needs an "
                "Array-API impl")
    return out


def operator_impl(ufunc: np.ufunc, operator_fn):
    """The impl of an arithmetic primitive: numpy's `ufunc`, called through Python's
    operator (`x * y`). On numpy's float scalars that is numpy's own scalar arithmetic,
    with the ufunc's result and dtype at a tenth of its call cost (a scalar program is
    nothing but such calls); on arrays it is the ufunc. Two Python numbers go to the
    ufunc itself, which computes in numpy's types as the primitive's aval says, and so
    does a numpy integer scalar: its operators warn on overflow, the ufunc wraps."""

    def impl(x, y):
        tx, ty = type(x), type(y)
        if (tx in _PYTHON_NUMBERS and ty in _PYTHON_NUMBERS) or tx in _NUMPY_INTEGERS \
                or ty in _NUMPY_INTEGERS:
            return ufunc(x, y)
        return operator_fn(x, y)

    impl.ufunc = ufunc  # what a backend's namespace is searched for
    impl.on_arrays = operator_fn  # what it calls when an operand is an array (`impl_step`)
    impl.__name__ = ufunc.__name__
    return impl


_PYTHON_NUMBERS = frozenset((bool, int, float, complex))
_NUMPY_INTEGERS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.integer))


def _standard_function(xp, impl):
    """The namespace's function computing a numpy-ufunc impl, if it has one."""
    impl = getattr(impl, "ufunc", impl)
    if not isinstance(impl, np.ufunc):
        return None
    return getattr(xp, _ARRAY_API_NAMES.get(impl.__name__, impl.__name__), None)


def _as_operands(xp, values):
    """Plain operands of an Array-API function as the backend's arrays (Python scalars
    stay: the standard promotes them weakly, as numpy does)."""
    return [v if type(v) in (bool, int, float, complex) or not is_plain(v) else
            to_backend(xp, v, np.asarray(v).dtype) for v in values]
