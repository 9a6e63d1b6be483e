"""Complex numbers' parts: `real`, `imag`, `conj` and `complex` (JAX's lax names).

Each is real-linear, so its jvp is itself and its transpose is another of the four.
The transposes follow JAX's convention (docs/design.md, "Complex numbers"): a
transpose is taken for the pairing `<u, v> = Re(sum(u * v))`, with no conjugation
anywhere else, so that

* `real(z)` transposes to `complex(ct, 0)`,
* `imag(z)` to `complex(0, -ct)` (written `conj(complex(0, ct))`),
* `conj(z)` to `conj(ct)`,
* `complex(x, y)` to `(real(ct), -imag(ct))` (written `imag(conj(ct))`).

They sit below `arithmetic` (whose `abs` differentiates through `real` and `conj`),
so they use nothing of it. None fuses in jit's numba backend: complex values stay on
numpy (`interpreters.fusion` decides by dtype).
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray, canonical
from ...core.errors import DTypeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import deflinear
from ...interpreters.batching import defvectorized
from ...interpreters.partial_eval import def_recomputable
from ...interpreters.transpose import is_linear, transpose_rules
from .ufunc_rules import (
    broadcast_shapes,
    defbroadcasting,
    defjvp_elementwise,
    unbroadcast_cotangent,
    zero_scalar,
)


def _complex_operand(name: str, x: ShapedArray) -> None:
    if x.dtype.kind != "c":
        raise DTypeError(f"{name}: takes a complex operand, got {x.str_short()}")


def _part_abstract_eval(name: str):
    """`real` and `imag`: the real dtype of the complex operand's width."""

    def abstract_eval(x):
        _complex_operand(name, x)
        return canonical(ShapedArray(x.shape, real_dtype(x.dtype), x.weak_type))

    return abstract_eval


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex one's parts (a real dtype is its own)."""
    return np.empty(0, dtype).real.dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are `dtype` (float32: complex64; others complex128)."""
    return np.result_type(dtype, np.complex64)


real_p = Primitive("real")


def real(x: ArrayLike) -> np.ndarray:
    return real_p.bind(x)


impl_rules[real_p] = np.real
abstract_eval_rules[real_p] = _part_abstract_eval("real")
deflinear(real_p)
transpose_rules[real_p] = lambda ct, x: [complex(ct, zero_scalar(ct))]
defvectorized(real_p)
def_recomputable(real_p)

imag_p = Primitive("imag")


def imag(x: ArrayLike) -> np.ndarray:
    return imag_p.bind(x)


impl_rules[imag_p] = np.imag
abstract_eval_rules[imag_p] = _part_abstract_eval("imag")
deflinear(imag_p)
transpose_rules[imag_p] = lambda ct, x: [conj(complex(zero_scalar(ct), ct))]
defvectorized(imag_p)
def_recomputable(imag_p)

conj_p = Primitive("conj")


def conj(x: ArrayLike) -> np.ndarray:
    return conj_p.bind(x)


impl_rules[conj_p] = np.conjugate


def conj_abstract_eval(x):
    _complex_operand("conj", x)
    return x


abstract_eval_rules[conj_p] = conj_abstract_eval
deflinear(conj_p)
transpose_rules[conj_p] = lambda ct, x: [conj(ct)]
defvectorized(conj_p)
def_recomputable(conj_p)

complex_p = Primitive("complex", operand_names=("x", "y"))


def complex(x: ArrayLike, y: ArrayLike) -> np.ndarray:  # noqa: A001 — lax's name
    """`x + i y` from real parts, broadcasting like numpy (exact: no `1j * y`, which
    turns an infinite `y` into a NaN real part)."""
    return complex_p.bind(x, y)


def complex_impl(x, y):
    parts = np.result_type(x, y)  # before np.asarray: a Python float is weak (NEP 50)
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), complex_dtype(parts))
    out.real, out.imag = x, y
    return out[()] if out.ndim == 0 else out


impl_rules[complex_p] = complex_impl


def complex_abstract_eval(x, y):
    for part in (x, y):
        if part.dtype.kind != "f":
            raise DTypeError(f"complex: takes real floating parts, got {part.str_short()}")
    parts = np.result_type(x.dtype, y.dtype) if x.weak_type == y.weak_type else (
        y.dtype if x.weak_type else x.dtype)
    return canonical(ShapedArray(broadcast_shapes("complex", (x, y)), complex_dtype(parts),
                                 x.weak_type and y.weak_type))


abstract_eval_rules[complex_p] = complex_abstract_eval
# The real part's tangent becomes complex by the conversion that fits it to the output.
defjvp_elementwise(complex_p,
                   lambda t, out, x, y: t,
                   lambda t, out, x, y: complex(zero_scalar(t), t))


def complex_transpose(ct, x, y):
    return [unbroadcast_cotangent(real(ct), x.aval) if is_linear(x) else None,
            unbroadcast_cotangent(imag(conj(ct)), y.aval) if is_linear(y) else None]


transpose_rules[complex_p] = complex_transpose
defbroadcasting(complex_p)
def_recomputable(complex_p)


def is_complex(x) -> bool:
    return get_aval(x).dtype.kind == "c"
