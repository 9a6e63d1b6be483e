"""What the indexing primitives do with an index out of bounds: what JAX does.

An index in [-n, n) addresses an axis of size n as numpy's does (a negative one
counts from the end). Any other index is out of bounds, and the primitive's `mode`
says what happens to it, as JAX's `GatherScatterMode` does on every backend:

* a gather clamps it into [0, n - 1] ("clip", JAX's default for reads: what XLA's
  gather does with an index it was promised in bounds) or reads `fill_value`
  instead ("fill");
* a scatter drops the update it carries ("drop", JAX's default for writes) or
  writes it at the clamped index ("clip").

Clamping comes after the negative wrap, as in JAX: `x[-10]` of a 3-vector is
`x[-7]` clamped, `x[0]`. JAX's user-level names map onto these two per kind
(`gather_mode`, `scatter_mode`): "promise_in_bounds" is what XLA does with it, clip
for a read and drop for a write, and "fill" is "drop" for a write. The impls pay for
a mode only when an index is out of bounds: they index as numpy does, and take the
mode's path when numpy's own bounds check refuses.
"""

from __future__ import annotations

import numpy as np

GATHER_MODES = ("clip", "fill")
SCATTER_MODES = ("drop", "clip")
_GATHER_NAMES = {None: "clip", "promise_in_bounds": "clip", "clip": "clip", "fill": "fill",
                 "drop": "fill"}
_SCATTER_NAMES = {None: "drop", "promise_in_bounds": "drop", "drop": "drop", "fill": "drop",
                  "clip": "clip"}


def _mode_name(mode):
    """A mode as a string: JAX's `GatherScatterMode` members name theirs."""
    return getattr(mode, "name", mode).lower() if mode is not None else None


def gather_mode(mode) -> str:
    """The gather mode for JAX's `mode=` of a read (None, "promise_in_bounds", "clip",
    "fill" or "drop")."""
    try:
        return _GATHER_NAMES[_mode_name(mode)]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown indexing mode {mode!r}: expected one of "
                         "'promise_in_bounds', 'clip', 'fill' or 'drop'") from None


def scatter_mode(mode) -> str:
    """The scatter mode for JAX's `mode=` of a write."""
    try:
        return _SCATTER_NAMES[_mode_name(mode)]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown indexing mode {mode!r}: expected one of "
                         "'promise_in_bounds', 'clip', 'fill' or 'drop'") from None


def read_mode_of(mode: str) -> tuple[str, object]:
    """The gather (mode, fill_value) that reads what a scatter of `mode` writes: an
    update a drop scatter drops is read as 0 (a cotangent that reaches nothing)."""
    return ("clip", None) if mode == "clip" else ("fill", 0)


def default_fill_value(dtype) -> object:
    """JAX's fill value for a read out of bounds: NaN for inexact types, the least
    value of a signed type, the greatest of an unsigned one, True for booleans."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def fill_param(fill_value, dtype):
    """`fill_value` as a hashable param: a Python scalar of `dtype`'s kind, or None
    for the dtype's default (so NaN, which equals nothing, never becomes a param)."""
    if fill_value is None:
        return None
    value = np.asarray(fill_value).astype(dtype).item()
    if np.dtype(dtype).kind in "fc" and np.isnan(value):
        return None
    return value


def wrapped(index, n: int) -> np.ndarray:
    """Negative indices counted from the end (those below -n stay negative)."""
    index = np.asarray(index)
    return np.where(index < 0, index + n, index)


def clipped(index, n: int) -> np.ndarray:
    return np.clip(wrapped(index, n), 0, n - 1)


def inside(indices, sizes) -> np.ndarray:
    """True where every index of a position (the arrays broadcast together) is in
    bounds."""
    masks = [(w >= 0) & (w < n) for w, n in ((wrapped(i, n), n) for i, n in zip(indices, sizes))]
    return np.logical_and.reduce(np.broadcast_arrays(*masks)) if len(masks) > 1 else masks[0]


def dumped(indices, sizes) -> list[np.ndarray]:
    """The indices with every position out of bounds sent to the slot n past each
    axis's end: a drop scatter writes into a copy one larger and cuts the slot off."""
    keep = inside(indices, sizes)
    return [np.where(keep, wrapped(i, n), n) for i, n in zip(indices, sizes)]
