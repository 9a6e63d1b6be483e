"""Counting the arrays a vjp function really holds, independently of saved_residuals."""

import gc

import numpy as np

from inert.core.ir import Literal


def reachable_array_bytes(obj) -> int:
    """Bytes of the distinct numpy arrays and scalars reachable from `obj`, a view
    charged its whole base (an independent count). The literals of a jaxpr are part
    of the program, not residuals, and are not counted."""
    seen, stack, total = set(), [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, (np.ndarray, np.generic)):  # before float: np.float64 is one
            base = o.base if isinstance(o, np.ndarray) and o.base is not None else o
            if id(base) not in seen or base is o:
                seen.add(id(base))
                total += base.nbytes
            continue
        if not isinstance(o, (type, str, bytes, int, float, Literal)):
            stack.extend(gc.get_referents(o))
    return total
