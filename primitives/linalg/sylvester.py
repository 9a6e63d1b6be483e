"""The Sylvester equation A X + X B = C (`solve_sylvester`) and the principal matrix
square root (`sqrtm`), whose derivative is one.

Both values are scipy's (Bartels–Stewart through Schur forms; Higham's blocked Schur
method). The rules:

* `solve_sylvester` is linear in C. Its tangent in A and B moves to the right-hand
  side: A Ẋ + Ẋ B = Ċ - Ȧ X - X Ḃ, one more Sylvester solve with the same A and B.
* Its transpose in C is the Sylvester solve with Aᵀ and Bᵀ: the operator
  X -> A X + X B transposes to Y -> Aᵀ Y + Y Bᵀ, and the inverse of a transpose is
  the transpose of the inverse.
* `sqrtm`'s tangent solves X Ẋ + Ẋ X = Ȧ, a Sylvester equation in the root X itself:
  the backward pass keeps X alone, and every order is a Sylvester solve again.

scipy solves one system at a time: the impls loop over a stack. Real matrices only; a
real matrix without a real square root (an eigenvalue below 0) raises LinAlgError,
as complex results are not supported.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype
from ...core.errors import LinAlgError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.transpose import is_linear, transpose_rules
from ..elementwise import neg, sub
from ..shape.structural import checked_impl, matchaxis, moveaxis
from .matrices import matmul, matrix_aval, mT

solve_sylvester_p = Primitive("solve_sylvester", operand_names=("a", "b", "c"))


def solve_sylvester(a, b, c):
    """X with a X + X b = c, for each matrix of stacks a (..., m, m), b (..., n, n) and
    c (..., m, n); linear in c."""
    return solve_sylvester_p.bind(a, b, c)


def _stack_of(x, ndim: int):
    return x.reshape(-1, *x.shape[ndim:])


def solve_sylvester_impl(a, b, c):
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    dtype = np.result_type(a, b, c)
    lead = a.ndim - 2
    out = [scipy.linalg.solve_sylvester(x, y, z) for x, y, z in zip(
        _stack_of(a, lead), _stack_of(b, lead), _stack_of(c, lead))]
    return np.asarray(out, dtype).reshape(c.shape)


def solve_sylvester_abstract_eval(a, b, c):
    for x in (a, b):
        matrix_aval("solve_sylvester", x)
    matrix_aval("solve_sylvester", c, square=False)
    if not (a.shape[:-2] == b.shape[:-2] == c.shape[:-2]
            and c.shape[-2:] == (a.shape[-1], b.shape[-1])):
        raise ShapeError(f"solve_sylvester: c must be (..., m, n) for a (..., m, m) and "
                         f"b (..., n, n) with the same leading axes, got a {a.str_short()}, "
                         f"b {b.str_short()}, c {c.str_short()}")
    return ShapedArray(c.shape, result_dtype(a.strong(), b.strong(), c.strong()))


abstract_eval_rules[solve_sylvester_p] = solve_sylvester_abstract_eval
impl_rules[solve_sylvester_p] = checked_impl(solve_sylvester_impl, solve_sylvester_abstract_eval)


def solve_sylvester_jvp(primals, tangents):
    (a, b, c), (da, db, dc) = primals, tangents
    x = solve_sylvester(a, b, c)
    moved = [matmul(da, x)] if type(da) is not Zero else []
    moved += [matmul(x, db)] if type(db) is not Zero else []
    rhs = dc if type(dc) is not Zero else neg(moved.pop())
    for term in moved:
        rhs = sub(rhs, term)
    return [x], [solve_sylvester(a, b, rhs)]


jvp_rules[solve_sylvester_p] = solve_sylvester_jvp


def solve_sylvester_transpose(ct, a, b, c):
    """Linear in c: ⟨sylv(A, B, C), Y⟩ = ⟨C, sylv(Aᵀ, Bᵀ, Y)⟩."""
    assert not (is_linear(a) or is_linear(b)), "solve_sylvester is linear in c only"
    return [None, None, solve_sylvester(mT(a), mT(b), ct)]


transpose_rules[solve_sylvester_p] = solve_sylvester_transpose


def solve_sylvester_batch(vals, dims):
    size = batch_size(vals, dims)
    return [solve_sylvester(*(matchaxis(v, d, 0, size) for v, d in zip(vals, dims)))], [0]


batch_rules[solve_sylvester_p] = solve_sylvester_batch

# ---------------------------------------------------------------------------------
sqrtm_p = Primitive("sqrtm")


def sqrtm(a):
    """The principal square root of each matrix of a stack (..., n, n)."""
    return sqrtm_p.bind(a)


def sqrtm_impl(a):
    a = np.asarray(a)
    roots = np.asarray([scipy.linalg.sqrtm(m) for m in _stack_of(a, a.ndim - 2)])
    if np.iscomplexobj(roots):
        if np.any(np.abs(roots.imag) > 1e3 * np.finfo(a.dtype).eps * np.abs(roots).max()):
            raise LinAlgError(f"sqrtm: a matrix of {a.shape} has no real square root (an "
                              "eigenvalue is negative); complex results are not supported")
        roots = roots.real
    return roots.astype(a.dtype).reshape(a.shape)


abstract_eval_rules[sqrtm_p] = lambda a: matrix_aval("sqrtm", a).strong()
impl_rules[sqrtm_p] = checked_impl(sqrtm_impl, abstract_eval_rules[sqrtm_p])


def sqrtm_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    root = sqrtm(a)
    return [root], [solve_sylvester(root, root, da)]


jvp_rules[sqrtm_p] = sqrtm_jvp
# transpose: none, not linear


def sqrtm_batch(vals, dims):
    (a,), (d,) = vals, dims
    return [sqrtm(moveaxis(a, d, 0))], [0]


batch_rules[sqrtm_p] = sqrtm_batch
