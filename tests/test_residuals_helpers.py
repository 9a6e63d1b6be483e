"""Counting the arrays a vjp function really holds, independently of saved_residuals."""

import gc

import numpy as np


def reachable_array_bytes(obj) -> int:
    """Bytes of the distinct numpy arrays reachable from `obj` (an independent count)."""
    seen, stack, total = set(), [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, (type, str, bytes, int, float)):
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            base = o if o.base is None else o.base
            if isinstance(base, np.ndarray) and id(base) not in seen or base is o:
                seen.add(id(base))
                total += base.nbytes if o.ndim else 0
            continue
        stack.extend(gc.get_referents(o))
    return total
