"""Measuring memory the way a user experiences it, independently of inert's own reports.

* `reachable_array_bytes(obj)`: the array bytes an object returned to the user (a vjp
  or linearize function) keeps alive, found by walking `gc.get_referents` — what
  `saved_residuals` must equal.
* `peak_bytes(f)`: the peak memory `f()` allocates above what was allocated before,
  by `tracemalloc` (numpy reports its buffers to it).
"""

from __future__ import annotations

import gc
import tracemalloc
import types
from typing import Callable

import numpy as np

from ..core.ir import Literal

_NOT_DATA = (type, types.ModuleType, str, bytes, int, float, complex, Literal)


def reachable_array_bytes(obj) -> int:
    """Bytes of the distinct numpy buffers reachable from `obj`, a view charged its
    whole base (a view keeps its base alive).

    Not followed: types, modules and a function's globals (alive anyway, whoever
    holds the function), and a jaxpr's literals (scalars that are part of the
    program, not data the backward pass saved). A function's closure is followed:
    what it captured is kept alive by whoever holds the function.
    """
    seen: set[int] = set()
    bases: dict[int, int] = {}
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, (np.ndarray, np.generic)):  # before float: np.float64 is one
            base = _base(o)
            bases[id(base)] = base.nbytes
            continue
        if isinstance(o, _NOT_DATA):
            continue
        globals_ = o.__globals__ if isinstance(o, types.FunctionType) else None
        stack.extend(r for r in gc.get_referents(o) if r is not globals_)
    return sum(bases.values())


def _base(a):
    """The array owning `a`'s memory (the end of a chain of views)."""
    while isinstance(a, np.ndarray) and isinstance(a.base, np.ndarray):
        a = a.base
    return a


def peak_bytes(f: Callable) -> int:
    """The peak traced allocation of one call of `f`, above what was allocated when
    it started (tracemalloc counts numpy's buffers)."""
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        f()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - start
