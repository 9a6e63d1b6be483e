"""The summary functions of jax.scipy.stats: `rankdata`, `mode` and `sem`.

Ties are found by comparing every pair of elements along the axis (n^2 booleans),
which needs no data-dependent shape and so traces; ranks and modes are integers or
order statistics, and `sem` is differentiable like the standard deviation.
"""

from __future__ import annotations

import collections

import numpy as np

from ....core.trace import get_aval
from ....core.typing import ArrayLike
from ... import numpy as inp
from ...numpy._array import Array

ModeResult = collections.namedtuple("ModeResult", "mode count")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _along_last(a, axis):
    """(a with `axis` last, or raveled for axis None)."""
    a = inp.asarray(a)
    return inp.ravel(a) if axis is None else inp.moveaxis(a, axis, -1)


def _pairwise(compare, a):
    """compare(a[..., i], a[..., j]) counted over j, for every i."""
    return inp.sum(compare(inp.expand_dims(a, -1), inp.expand_dims(a, -2)), axis=-1)


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """Ranks from 1, ties by `method` (average ranks are floats, the others ints)."""
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: method must be one of {_RANK_METHODS}, got {method!r}")
    if nan_policy != "propagate":
        raise ValueError("rankdata: only nan_policy='propagate' is supported")
    x = _along_last(a, axis)
    below = _pairwise(inp.greater, x)  # how many elements each one is greater than
    not_above = _pairwise(inp.greater_equal, x)
    if method == "min":
        ranks = below + 1
    elif method == "max":
        ranks = not_above
    elif method == "average":
        ranks = (below + 1 + not_above) / 2.0
    elif method == "ordinal":
        ranks = inp.argsort(inp.argsort(x, axis=-1), axis=-1) + 1
    else:
        values = inp.sort(x, axis=-1)
        n = get_aval(values).shape[-1]
        new = inp.concatenate([inp.ones(get_aval(values).shape[:-1] + (min(n, 1),), bool),
                               inp.not_equal(values[..., 1:], values[..., :-1])], axis=-1)
        dense_sorted = inp.cumsum(new, axis=-1)
        ranks = inp.take_along_axis(dense_sorted,
                                    inp.argsort(inp.argsort(x, axis=-1), axis=-1), -1)
    return ranks if axis is None else inp.moveaxis(ranks, -1, axis)


def mode(a: ArrayLike, axis: int = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> tuple[Array, Array]:
    """The most frequent value along `axis` (the smallest of equally frequent ones) and
    its count."""
    if nan_policy != "propagate":
        raise ValueError("mode: only nan_policy='propagate' is supported")
    x = inp.sort(_along_last(a, axis), axis=-1)
    counts = _pairwise(inp.equal, x)
    best = inp.argmax(counts, axis=-1, keepdims=True)  # the first: the smallest value
    value = inp.take_along_axis(x, best, -1)
    count = inp.take_along_axis(counts, best, -1)
    if keepdims and axis is not None:
        return ModeResult(inp.moveaxis(value, -1, axis), inp.moveaxis(count, -1, axis))
    return ModeResult(value[..., 0], count[..., 0])


def sem(a: ArrayLike, axis: int = 0, ddof: int = 1, nan_policy: str = "propagate") -> Array:
    """The standard error of the mean: std(ddof) / sqrt(count), NaNs omitted with
    nan_policy="omit"."""
    if nan_policy not in ("propagate", "omit"):
        raise ValueError("sem: nan_policy must be 'propagate' or 'omit'")
    a = inp.asarray(a)
    if axis is None:
        a, axis = inp.ravel(a), 0
    if nan_policy == "omit":
        count = inp.sum(inp.logical_not(inp.isnan(a)), axis=axis)
        return inp.nanstd(a, axis=axis, ddof=ddof) / inp.sqrt(count)
    return inp.std(a, axis=axis, ddof=ddof) / np.sqrt(get_aval(a).shape[axis])
