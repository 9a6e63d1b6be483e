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

from ...core.trace import Tracer
from ...primitives.indexing import gather_scatter as ix


class Array(np.ndarray):
    """A numpy array with JAX's `.at[...]` functional updates."""

    @property
    def at(self) -> IndexUpdateHelper:
        return IndexUpdateHelper(self)

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
    """`x.at[idx]`: what `set`/`add`/`multiply`/`get` apply to."""

    array: Tracer | np.ndarray
    index: object

    def get(self):
        return as_array(ix.getitem(self.array, self.index))

    def set(self, values):
        return as_array(ix.index_update(self.array, self.index, values, "set"))

    def add(self, values):
        return as_array(ix.index_update(self.array, self.index, values, "add"))

    def multiply(self, values):
        return as_array(ix.index_update(self.array, self.index, values, "multiply"))


@attrs.frozen
class IndexUpdateHelper:
    array: Tracer | np.ndarray

    def __getitem__(self, index) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)
