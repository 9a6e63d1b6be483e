"""Which dtypes `grad`, `jacfwd` and `jacrev` take, with and without `holomorphic`.

JAX's rules, and its messages: a gradient (`grad`, `jacrev`) is of real outputs,
unless the function is declared holomorphic; `jacfwd`'s basis is of real inputs,
likewise; declared holomorphic, inputs and outputs must both be complex. A real
function of complex inputs needs no declaration: its gradient is JAX's,
`∂f/∂x - i ∂f/∂y` (twice the Wirtinger derivative ∂f/∂z, the conjugate of the
steepest-ascent direction; docs/design.md, "Complex numbers").
"""

from __future__ import annotations

import numpy as np

_VIA = {"grad": "vjp", "jacrev": "vjp", "jacfwd": "jvp"}


def check_inputs(name: str, dtypes, holomorphic: bool) -> None:
    """The differentiated inputs' dtypes, for `name` (grad, jacfwd, jacrev)."""
    for dtype in map(np.dtype, dtypes):
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype.name}.")
        if not holomorphic and name == "jacfwd" and dtype.kind == "c":
            raise TypeError(_real_valued(name, "input", dtype))


def check_outputs(name: str, dtypes, holomorphic: bool) -> None:
    """The differentiated outputs' dtypes, for `name` (grad, jacfwd, jacrev)."""
    for dtype in map(np.dtype, dtypes):
        if holomorphic and dtype.kind != "c":
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype.name}.")
        if not holomorphic and name != "jacfwd" and dtype.kind == "c":
            raise TypeError(_real_valued(name, "output", dtype))


def _real_valued(name: str, which: str, dtype: np.dtype) -> str:
    return (f"{name} requires real-valued {which}s ({which} dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
            f"holomorphic=True. For differentiation of non-holomorphic functions involving "
            f"complex {which}s, use inert.{_VIA[name]} directly.")
