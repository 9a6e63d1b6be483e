"""`x.at[idx].set(v)` — JAX's functional index update — on every array inert.numpy
gives back, traced or not.

Traced values get `.at` from `array_methods`. Eagerly, inert.numpy computes plain numpy
values; so that code written against jax.numpy (`jnp.zeros(n).at[i].set(v)`) runs as
it is, inert.numpy returns them as `Array`: a numpy array that also has `.at`. numpy's
own operations keep the subclass, and `np.asarray` drops it.
"""

from __future__ import annotations

import attrs
import numpy as np

from ..core.trace import Tracer
from . import indexing as ix


class Array(np.ndarray):
    """A numpy array with JAX's `.at[...]` functional updates."""

    @property
    def at(self) -> IndexUpdateHelper:
        return IndexUpdateHelper(self)


def as_array(x):
    """`x` (or each element of a tuple or list of results) as an `Array` if it is a
    plain numpy array; traced values and scalars unchanged."""
    if type(x) is np.ndarray:
        return x.view(Array)
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
