"""`x.at[idx].set(v)` — JAX's functional index update — on every array inert.numpy
gives back, traced or not.

Traced values get `.at` from `_methods`. Eagerly, inert.numpy computes plain numpy
values; so that code written against jax.numpy (`jnp.zeros(n).at[i].set(v)`) runs as
it is, inert.numpy's functions return them as `Array`: a numpy array that also has
`.at`. numpy's ufuncs (`+`, `*`, `np.sin`) keep the subclass; numpy functions that
build new arrays (`np.concatenate`, `np.asarray`) and scalar results drop it. As JAX's
arrays are immutable, in-place operators (`x += 1`) rebind the name to a new array
instead of writing into one that other names may share.
"""

from __future__ import annotations

import attrs
import numpy as np

from ...core.trace import Tracer, get_aval
from ...primitives import elementwise as ew
from ...primitives.indexing import gather_scatter as ix
from ...primitives.indexing import scatter_extrema as ext
from ...primitives.shape import structural as st


class Array(np.ndarray):
    """A numpy array with JAX's `.at[...]` functional updates."""

    @property
    def at(self) -> IndexUpdateHelper:
        return IndexUpdateHelper(self)

    def __getitem__(self, index):
        """numpy's indexing, except that a traced index (a `jit` or `vmap` argument)
        stages a gather, as indexing a JAX array with a traced integer does."""
        if isinstance(index, Tracer) or (type(index) is tuple and
                                         any(isinstance(i, Tracer) for i in index)):
            return ix.getitem(self, index)
        return super().__getitem__(index)

    # x op= y means x = x op y, as for JAX's immutable arrays
    __iadd__ = np.ndarray.__add__
    __isub__ = np.ndarray.__sub__
    __imul__ = np.ndarray.__mul__
    __itruediv__ = np.ndarray.__truediv__
    __ifloordiv__ = np.ndarray.__floordiv__
    __imod__ = np.ndarray.__mod__
    __ipow__ = np.ndarray.__pow__
    __imatmul__ = np.ndarray.__matmul__
    __iand__ = np.ndarray.__and__
    __ior__ = np.ndarray.__or__
    __ixor__ = np.ndarray.__xor__


def as_array(x):
    """`x` (or each element of a tuple or list of results) as an `Array` if it is a
    plain numpy array; traced values and scalars unchanged."""
    if type(x) is np.ndarray:
        return x.view(Array)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple (unique_counts)
        return type(x)(*(as_array(v) for v in x))
    if isinstance(x, (tuple, list)):
        return type(x)(as_array(v) for v in x)
    return x


@attrs.frozen
class IndexUpdateRef:
    """`x.at[idx]`: what `set`/`add`/`multiply`/`divide`/`power`/`min`/`max`/`get`
    apply to.

    JAX's keyword arguments are accepted: `indices_are_sorted` and `unique_indices`
    are hints that change nothing here (results are exact for any indices), and
    `mode` may be None or "promise_in_bounds" (inert indexes as numpy does: an index
    out of bounds is an error, never clipped or dropped)."""

    array: Tracer | np.ndarray
    index: object

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        _check_mode("get", mode)
        if fill_value is not None:
            raise NotImplementedError("x.at[idx].get: fill_value is only used by mode='fill', "
                                      "which inert does not support")
        return as_array(ix.getitem(self.array, self.index))

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
        return as_array(ew.div(self.array, self._product_of(values, mode)))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`x[idx] **= values`: x to the product of the exponents each entry gets."""
        return as_array(ew.pow(self.array, self._product_of(values, mode)))

    def _update(self, method: str, values, mode, scatter=None):
        """`method`'s update: index_update's scatter of that name, or `scatter`."""
        _check_mode(method, mode)
        return as_array(ix.index_update(self.array, self.index, values, scatter or method))

    def _product_of(self, values, mode):
        ones = st.broadcast_in_dim(get_aval(self.array).dtype.type(1),
                                   get_aval(self.array).shape, ())
        return IndexUpdateRef(ones, self.index)._update("multiply", values, mode)


def _check_mode(method: str, mode) -> None:
    if mode not in (None, "promise_in_bounds"):
        raise NotImplementedError(f"x.at[idx].{method}: mode={mode!r} is not supported; inert "
                                  "indexes as numpy does (an out-of-bounds index is an error)")


@attrs.frozen
class IndexUpdateHelper:
    array: Tracer | np.ndarray

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)
