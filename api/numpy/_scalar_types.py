"""JAX's scalar types: `jnp.float32` is a dtype and a converter at once.

`jnp.float32(x)` converts `x` (traced or not) to a float32 array, as
`jnp.asarray(x, jnp.float32)`; everywhere numpy takes a dtype (`x.astype(jnp.int32)`,
`jnp.zeros(3, jnp.int32)`, `np.dtype(jnp.float32)`, `jnp.issubdtype(t, jnp.floating)`)
it stands for its numpy dtype, which numpy reads from its `dtype` attribute; and
`isinstance(v, jnp.float64)` is numpy's `isinstance(v, np.float64)`. The abstract
classes (`jnp.floating`, `jnp.integer`, ...) are numpy's own.
"""

from __future__ import annotations

import numpy as np

from ...core.typing import DTypeLike
from ._array import returned
from ._arrays import asarray


class ScalarType(type):
    """The type of inert.numpy's scalar types: calling one converts its argument."""

    dtype: np.dtype

    def __call__(cls, x):
        return returned(asarray(x, cls.dtype), (x,))

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"inert.numpy.{cls.__name__}"


def scalar_type(numpy_type: type) -> ScalarType:
    dtype = np.dtype(numpy_type)
    name = dtype.type.__name__
    doc = (f"numpy's {dtype.name} as JAX's scalar type: a dtype (`x.astype(jnp.{name})`, "
           f"`jnp.zeros(3, jnp.{name})`) and a converter: `jnp.{name}(x)` is `x` (traced or "
           f"not) as a {dtype.name} array, where numpy's `np.{name}(x)` makes a numpy scalar.")
    return ScalarType(name, (), {"dtype": dtype, "__module__": "inert.numpy", "__doc__": doc})


def isdtype(dtype: DTypeLike, kind: str | DTypeLike | tuple[str | DTypeLike, ...]) -> bool:
    """numpy.isdtype, which takes only numpy's dtypes and types: scalar types too."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return np.isdtype(_numpy_dtype(dtype), tuple(_numpy_dtype(k) for k in kinds))


def _numpy_dtype(t):
    return t.dtype if isinstance(t, ScalarType) else t
