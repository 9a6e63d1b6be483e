"""The matrix exponential: `expm` and its Fréchet derivative `expm_frechet`.

Why primitives, not Padé approximants written with inert's operations: scipy's
`expm` already is Padé with scaling and squaring (Al-Mohy and Higham, 2009), and
`expm_frechet` its exact derivative `L(A, E) = d/dt expm(A + tE)` by the same method
(Al-Mohy and Higham, 2009b). Differentiating a composition would keep every
power and every squaring as residuals (some 25 matrices); the derivative rule keeps
only A. The rules:

* `expm`'s tangent is `L(A, Ȧ)`, an `expm_frechet` linear in its second operand;
* `L(A, ·)` transposes to `L(Aᵀ, ·)` (for real matrices ⟨L(A, E), C⟩ = ⟨E, L(Aᵀ, C)⟩);
* `L`'s own derivative in A is the upper right block of `L(M, Ṁ)` for the block
  matrices `M = [[A, E], [0, A]]` and `Ṁ = [[Ȧ, 0], [0, Ȧ]]`, since
  `expm(M) = [[expm(A), L(A, E)], [0, expm(A)]]`: so every order is an
  `expm_frechet` again.

`expm` is batched in scipy; `expm_frechet` is not, and its impl loops over a stack.
Real and complex square matrices: `expm` is holomorphic, so `L(A, ·)` is complex-linear
and its transpose for the real pairing (JAX's, no conjugates) is `L(Aᵀ, ·)` as well.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.linalg

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype
from ...core.errors import ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import add_tangents, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.transpose import is_linear, transpose_rules
from ..shape.slicing import concatenate, slice
from ..shape.structural import broadcast_in_dim, checked_impl, matchaxis, moveaxis
from .matrices import matrix_aval, mT

expm_p = Primitive("expm")


def expm(a):
    """The matrix exponential of each matrix of a stack `(..., n, n)`."""
    return expm_p.bind(a)


abstract_eval_rules[expm_p] = lambda a: matrix_aval("expm", a, complex_ok=True).strong()
impl_rules[expm_p] = checked_impl(scipy.linalg.expm, abstract_eval_rules[expm_p])


def expm_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    return [expm(a)], [expm_frechet(a, da)]


jvp_rules[expm_p] = expm_jvp
# transpose: none, not linear


def expm_batch(vals, dims):
    (a,), (d,) = vals, dims
    return [expm(moveaxis(a, d, 0))], [0]


batch_rules[expm_p] = expm_batch

# ---------------------------------------------------------------------------------
expm_frechet_p = Primitive("expm_frechet", operand_names=("a", "e"))


def expm_frechet(a, e):
    """`L(a, e)`, the derivative of `expm` at `a` in the direction `e` (linear in e)."""
    return expm_frechet_p.bind(a, e)


def expm_frechet_impl(a, e):
    a, e = np.asarray(a), np.asarray(e)
    dtype = np.result_type(a, e)
    flat_a, flat_e = a.reshape(-1, *a.shape[-2:]), e.reshape(-1, *e.shape[-2:])
    out = [scipy.linalg.expm_frechet(x, y, compute_expm=False, check_finite=False)
           for x, y in zip(flat_a, flat_e)]
    return np.asarray(out, dtype).reshape(e.shape)


def expm_frechet_abstract_eval(a, e):
    matrix_aval("expm_frechet", a, complex_ok=True)
    matrix_aval("expm_frechet", e, complex_ok=True)
    if a.shape != e.shape:
        raise ShapeError(f"expm_frechet: the direction {e.str_short()} must have the shape "
                         f"of the matrix {a.str_short()}")
    return ShapedArray(a.shape, result_dtype(a.strong(), e.strong()))


abstract_eval_rules[expm_frechet_p] = expm_frechet_abstract_eval
impl_rules[expm_frechet_p] = checked_impl(expm_frechet_impl, expm_frechet_abstract_eval)


def _block_upper(a, e, below):
    """The block matrices [[a, e], [below, a]] of a stack."""
    ndim = get_aval(a).ndim
    return concatenate([concatenate([a, e], ndim - 1), concatenate([below, a], ndim - 1)],
                       ndim - 2)


def expm_frechet_jvp(primals, tangents):
    (a, e), (da, de) = primals, tangents
    parts = [] if type(de) is Zero else [expm_frechet(a, de)]
    if type(da) is not Zero:
        aval = get_aval(a)
        # a broadcast constant, not `zeros`: that is the zero linear map, and the
        # backward pass would take the block matrix for linear, in the slot (and, at
        # the next order, in the block) where only known values may be
        zero = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
        block = expm_frechet(_block_upper(a, e, zero), _block_upper(da, zero, zero))
        *batch, n, _ = get_aval(a).shape
        parts.append(slice(block, (0,) * len(batch) + (0, n), (*batch, n, 2 * n)))
    return [expm_frechet(a, e)], [functools.reduce(add_tangents, parts)]


jvp_rules[expm_frechet_p] = expm_frechet_jvp


def expm_frechet_transpose(ct, a, e):
    """Linear in `e`: ⟨L(A, E), C⟩ = ⟨E, L(Aᵀ, C)⟩."""
    assert not is_linear(a), "expm_frechet is not linear in a"
    return [None, expm_frechet(mT(a), ct)]


transpose_rules[expm_frechet_p] = expm_frechet_transpose


def expm_frechet_batch(vals, dims):
    size = batch_size(vals, dims)
    a, e = (matchaxis(v, d, 0, size) for v, d in zip(vals, dims))
    return [expm_frechet(a, e)], [0]


batch_rules[expm_frechet_p] = expm_frechet_batch
