"""The linalg family: `dot_general`, the one contraction every product is built on.

numpy's `matmul`, `dot`, `tensordot`, `inner`, `outer` and `einsum` with two operands
are all a `dot_general` (plus transposes and reshapes): a sum of products over
*contracting* dimensions, independently for each index of the *batch* dimensions.
Having one primitive means one bilinear jvp and one pair of transposes to get right.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...core.avals import ShapedArray, result_dtype
from ...core.backends import array_api_impls, to_backend
from ...core.errors import ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import defjvp
from ...interpreters.batching import batch_rules, batched_axis
from ...interpreters.eval import new_array_results
from ...interpreters.fusion import literal_text
from ...interpreters.fusion_loops import Unsupported, accumulate_rules, native_rules
from ...interpreters.remat import flop_rules
from ...interpreters.transpose import is_linear, transpose_rules
from ...interpreters.vector_math import allocation, matvec_name, strided_index
from ..shape.structural import convert_element_type, transpose

dot_general_p = Primitive("dot_general", operand_names=("lhs", "rhs"))


def dot_general(x, y, dimension_numbers, preferred_element_type=None):
    """jax.lax.dot_general: `dimension_numbers = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`; the output's dimensions are the batch dimensions, then
    the lhs's free dimensions, then the rhs's, each in their operand's order."""
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb)))
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    return dot_general_p.bind(x, y, dimension_numbers=dims,
                              preferred_element_type=preferred_element_type)


def _ints(dims) -> tuple[int, ...]:
    return tuple(int(d) for d in dims)


def free_dims(ndim: int, contracting, batch) -> list[int]:
    """The dimensions of an operand that appear in the output, in order."""
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def dot_general_impl(x, y, *, dimension_numbers, preferred_element_type):
    """One matmul: each operand is laid out as (batch, free, contracting) and
    flattened to a matrix (a stack of them with batch dimensions). For 2-d operands
    the layout change is a transposed view, which BLAS reads without a copy."""
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = np.result_type(x, y) if preferred_element_type is None else preferred_element_type
    x, y = np.asarray(x, dtype), np.asarray(y, dtype)
    if (not lb and len(lc) == 1 and x.ndim <= 2 and y.ndim <= 2 and 0 <= lc[0] < x.ndim
            and 0 <= rc[0] < y.ndim):
        # the common cases, with the least Python around them: a matrix or vector
        # product of operands or their transposed views (a weight's cotangent `x.T @ y`)
        return np.matmul(x.T if lc == (0,) else x, y.T if rc == (1,) else y)
    if not lb and not lc:
        return np.multiply.outer(x, y)  # an outer product (a weight's cotangent)
    if [x.shape[d] for d in lc + lb] != [y.shape[d] for d in rc + rb]:
        # the matmul could succeed on equal products of mismatched sizes: let
        # eval_primitive ask the abstract eval for the error
        raise ValueError("dot_general: mismatched dimensions")
    lf, rf = free_dims(x.ndim, lc, lb), free_dims(y.ndim, rc, rb)
    batch = [x.shape[d] for d in lb]
    out_shape = (*batch, *(x.shape[d] for d in lf), *(y.shape[d] for d in rf))
    m, k, n = (math.prod(x.shape[d] for d in lf), math.prod(x.shape[d] for d in lc),
               math.prod(y.shape[d] for d in rf))
    lead = [math.prod(batch)] if lb else []
    x_mat = np.transpose(x, (*lb, *lf, *lc)).reshape(*lead, m, k)
    y_mat = np.transpose(y, (*rb, *rc, *rf)).reshape(*lead, k, n)
    return np.matmul(x_mat, y_mat).reshape(out_shape)


impl_rules[dot_general_p] = dot_general_impl
new_array_results.add(dot_general_p)


def dot_general_native(fn, eqn, operands, *, dimension_numbers, preferred_element_type):
    """Inside a native loop (jit's numba backend): one float dtype, no batch dimensions,
    operands of at most two dimensions, one contracting dimension or none between
    vectors. A matrix-vector product of up to `SMALL_MATVEC` matrix elements is
    `vector_math`'s loops (`_small_matvec`), a matrix or dot product of up to
    `SMALL_MATMUL` products its `small_matmul` or a loop (`_small_product`), an outer
    product (a weight's cotangent) loops; a larger product is BLAS through numba's
    `np.dot` (a transposed matrix is a Fortran-ordered view BLAS reads as is)."""
    (lc, rc), _ = dimension_numbers
    x, y, out = _native_avals(eqn, dimension_numbers)
    a, b = operands
    if len(lc) == 1 and x.ndim + y.ndim == 3 and max(x.size, y.size) <= SMALL_MATVEC:
        shape = x.shape if x.ndim == 2 else y.shape  # the matrix's
        return [_small_matvec(fn, a, b, shape, x.dtype, x.ndim == 2, lc[0] == x.ndim - 1,
                              rc[0] == 0)]
    if len(lc) == 1 and x.ndim == y.ndim and x.size * (y.size // y.shape[rc[0]]) <= SMALL_MATMUL:
        return [_small_product(fn, a, b, x, y, out, lc[0], rc[0])]
    if len(lc) == 1:
        return [f"np.dot({a if lc[0] == x.ndim - 1 else a + '.T'}, "
                f"{b if rc[0] == 0 else b + '.T'})"]
    (result,) = fn.assign([allocation(out.shape, out.dtype)])  # an outer product, by
    i, j = fn.fresh("i"), fn.fresh("j")  # loops: numba compiles its np.outer in 4 s
    with fn.block(f"for {i} in range({x.shape[0]}):"):
        (a_i,) = fn.assign([f"{a}[{i}]"])
        with fn.block(f"for {j} in range({y.shape[0]}):"):
            fn.line(f"{result}[{i}, {j}] = {a_i} * {b}[{j}]")
    return [result]


def _native_avals(eqn, dimension_numbers) -> tuple:
    """The avals of a `dot_general` with a native form (`dot_general_native`), else
    `Unsupported`."""
    (lc, _), (lb, _) = dimension_numbers
    x, y, out = eqn.inputs[0].aval, eqn.inputs[1].aval, eqn.outputs[0].aval
    if (lb or x.dtype != y.dtype or x.dtype != out.dtype or x.dtype.name not in _BLAS
            or not 1 <= x.ndim <= 2 or not 1 <= y.ndim <= 2 or 0 in (*x.shape, *y.shape)):
        raise Unsupported(f"dot_general of {x.str_short()} and {y.str_short()}")
    if len(lc) > 1 or not lc and (x.ndim, y.ndim) != (1, 1):
        raise Unsupported(f"dot_general with dimension numbers {dimension_numbers}")
    return x, y, out


SMALL_MATVEC = 2 ** 15  # a matrix's elements: up to, loops beat BLAS
SMALL_MATMUL = 2 ** 12  # products of a matrix product or dot product summed by loops


def _small_product(fn, a: str, b: str, x, y, out, lc: int, rc: int) -> str:
    """A small matrix product (`vector_math`'s `small_matmul`, on transposed views where
    an operand is contracted the other way) or dot product of vectors (a loop): numba's
    `np.dot` is a function it compiles for each kind of product (0.2 to 1.3 s each; the
    iLQR program had three), and BLAS's call costs more than the products of a 6 x 6."""
    if x.ndim == 2:
        return (f"small_matmul({a if lc == 1 else a + '.T'}, {b if rc == 0 else b + '.T'}, "
                f"{allocation(out.shape, out.dtype)})")
    (total,) = fn.assign([literal_text(0, out.dtype)])
    k = fn.fresh("k")
    with fn.block(f"for {k} in range({x.shape[0]}):"):
        fn.line(f"{total} += {a}[{k}] * {b}[{k}]")
    return total


def _small_matvec(fn, a: str, b: str, shape: tuple, dtype: np.dtype, matrix_first: bool,
                  a_last: bool, b_first: bool) -> str:
    """A matrix-vector product by `vector_math`'s loops (`a_last`: `a` is contracted
    along its last axis, `b_first`: `b` along its first). For a 128 x 128 matrix
    they are faster than numba's `np.dot`: BLAS's row-major vector-matrix product by
    about 2 x, its matrix-vector product by 10-20 % (the call and its checks); from
    256 x 256 on BLAS is as fast. A product contracting a matrix along its first axis
    (`x @ W`, a backward loop's `W.T @ ct`) is a matrix-vector product of the matrix's
    transposed copy where the matrix is a parameter of the function (`transposed`):
    rows read twice as fast as columns."""
    matrix, vector, by_rows = (a, b, a_last) if matrix_first else (b, a, not b_first)
    rows, cols = shape if by_rows else shape[::-1]
    out = allocation((rows,), dtype)
    if by_rows:
        return f"{matvec_name(rows, cols)}({matrix}, {vector}, {out})"
    transposed = fn.transposed(matrix, shape, dtype)
    if transposed is not None:
        return f"{matvec_name(rows, cols)}({transposed}, {vector}, {out})"
    return f"vector_vecmat({vector}, {matrix}, {out})"


def dot_general_accumulate(fn, eqn, target, operands, **params):
    """`target += x·y` in place (a weight's cotangent summed over a loop): an outer
    product adds each product where it lands, with no temporary; others add the product
    `dot_general_native` makes (by loops, `small_matmul` or `np.dot`, as its size says).
    An outer product of vectors of `DEFERRED_OUTER` or more elements is deferred: its
    factors are copied into `OUTER_BLOCK` rows, and each full block is added by loops
    reading the target once per `OUTER_ROWS` steps (the loop adding each step's product
    reads it once per step: for 128 x 128, 580 us over 200 steps against 180 us for
    BLAS's rank-k update of each block, whose call numba compiles in 1.6 s)."""
    x, y, _ = _native_avals(eqn, params["dimension_numbers"])
    if params["dimension_numbers"][0][0] or x.ndim != 1:
        (product,) = dot_general_native(fn, eqn, operands, **params)
        fn.line(f"{target} += {product}")
        return
    a, b = operands
    if min(x.shape[0], y.shape[0]) >= DEFERRED_OUTER:
        _deferred_outer(fn, target, a, b, x, y)
        return
    i, j = fn.fresh("i"), fn.fresh("j")
    with fn.block(f"for {i} in range({x.shape[0]}):"):
        (a_i,) = fn.assign([f"{a}[{i}]"])
        with fn.block(f"for {j} in range({y.shape[0]}):"):
            fn.line(f"{target}[{i}, {j}] += {a_i} * {b}[{j}]")


DEFERRED_OUTER = 32  # below, the loop's target stays in cache: adding in place is faster
OUTER_ROWS = 4  # rows of factors added in one pass over two rows of the target
# rows of factors kept before they are added: whole passes of OUTER_ROWS, which
# `_block_products` reads unchecked (numba checks no bounds)
OUTER_BLOCK = 16 * OUTER_ROWS


def _deferred_outer(fn, target: str, a: str, b: str, x, y) -> None:
    """Copy the factors `a`, `b` into the next rows of two blocks allocated before the
    loop; add a full block's products to `target`, and after the loop what is left."""
    rows, other, full = fn.fresh("p"), fn.fresh("q"), fn.fresh("n")
    fn.before_loop(f"{rows}, {other}, {full} = {allocation((OUTER_BLOCK, x.shape[0]), x.dtype)}"
                   f", {allocation((OUTER_BLOCK, y.shape[0]), y.dtype)}, 0")
    fn.copy(f"{rows}[{full}]", a, x.shape)
    fn.copy(f"{other}[{full}]", b, y.shape)
    fn.line(f"{full} += 1")
    m, n = x.shape[0], y.shape[0]
    with fn.block(f"if {full} == {OUTER_BLOCK}:"):
        for line in _block_products(fn, target, rows, other, m, n):
            fn.line(line)
        fn.line(f"{full} = 0")
    i, k, j, u = (fn.fresh(p) for p in "ikju")
    fn.after_loop(f"for {i} in range({m}):",  # the rest: at most a block, once
                  f"    for {k} in range({full}):",
                  f"        {u} = {rows}[{k}, {i}]",
                  f"        for {j} in range({n}):",
                  f"            {target}[{i}, {j}] = {target}[{i}, {j}] + {u} * {other}[{k}, {j}]")


def _block_products(fn, target: str, rows: str, other: str, m: int, n: int) -> list[str]:
    """The lines adding `rows[k] ⊗ other[k]` for k < `OUTER_BLOCK` to the `m` x `n`
    target, each element summed in the order of k, as adding each step's outer product
    would (numpy's bits: no contraction, no reassociation): `OUTER_ROWS` steps into
    two rows of the target at a time, the columns vectorised, each row of `other` read
    once for both (5 % faster than BLAS's rank-64 update for W4's 128 x 128)."""
    i, k, j = fn.fresh("i"), fn.fresh("k"), fn.fresh("j")
    q, u, v = ([fn.fresh(p) for _ in range(OUTER_ROWS)] for p in "quv")
    steps = [strided_index(k, r) for r in range(OUTER_ROWS)]  # k, k + 1, ...
    load = f"{', '.join(q)} = " + ", ".join(f"{other}[{r}, {j}]" for r in steps)

    def factors(names: list[str], row) -> str:
        return f"{', '.join(names)} = " + ", ".join(f"{rows}[{r}, {row}]" for r in steps)

    def add(row, names: list[str]) -> str:
        return f"{target}[{row}, {j}] = {target}[{row}, {j}] + " + " + ".join(
            f"{f} * {x}" for f, x in zip(names, q))

    block = f"for {k} in range(0, {OUTER_BLOCK}, {OUTER_ROWS}):"
    lines = [f"for {i} in range(0, {m - m % 2}, 2):", f"    {block}",
             f"        {factors(u, i)}", f"        {factors(v, f'{i} + 1')}",
             f"        for {j} in range({n}):", f"            {load}",
             f"            {add(i, u)}", f"            {add(f'{i} + 1', v)}"]
    if m % 2:  # the last row
        lines += [block, f"    {factors(u, m - 1)}", f"    for {j} in range({n}):",
                  f"        {load}", f"        {add(m - 1, u)}"]
    return lines


_BLAS = ("float32", "float64")
native_rules[dot_general_p] = dot_general_native
accumulate_rules[dot_general_p] = dot_general_accumulate


def dot_general_array_api(xp, x, y, *, dimension_numbers, preferred_element_type):
    """The same contraction on an Array-API namespace: `tensordot` without batch
    dimensions (dask's blocked matmul, summing over chunks by a tree reduction), else
    one batched `matmul` of the (batch, free, contracting) layouts."""
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = preferred_element_type or result_dtype(get_aval(x), get_aval(y))
    x, y = to_backend(xp, x, dtype), to_backend(xp, y, dtype)
    if not lb:
        return xp.tensordot(x, y, axes=(lc, rc))
    lf, rf = free_dims(x.ndim, lc, lb), free_dims(y.ndim, rc, rb)
    batch = [x.shape[d] for d in lb]
    out_shape = (*batch, *(x.shape[d] for d in lf), *(y.shape[d] for d in rf))
    m, k, n = (math.prod(x.shape[d] for d in lf), math.prod(x.shape[d] for d in lc),
               math.prod(y.shape[d] for d in rf))
    x_mat = xp.reshape(xp.permute_dims(x, (*lb, *lf, *lc)), (math.prod(batch), m, k))
    y_mat = xp.reshape(xp.permute_dims(y, (*rb, *rc, *rf)), (math.prod(batch), k, n))
    return xp.reshape(xp.matmul(x_mat, y_mat), out_shape)


array_api_impls[dot_general_p] = dot_general_array_api


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
def dot_general_abstract_eval(x, y, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    for aval, side, dims in ((x, "lhs", lc + lb), (y, "rhs", rc + rb)):
        if len(set(dims)) != len(dims) or any(not 0 <= d < aval.ndim for d in dims):
            raise ShapeError(f"dot_general: contracting and batch dimensions {dims} of the "
                             f"{side} {aval.str_short()} must be distinct and in range")
    for kind, ldims, rdims in (("contracting", lc, rc), ("batch", lb, rb)):
        lsizes, rsizes = [x.shape[d] for d in ldims], [y.shape[d] for d in rdims]
        if lsizes != rsizes:
            raise ShapeError(f"dot_general: {kind} dimensions {ldims} of lhs {x.str_short()} "
                             f"and {rdims} of rhs {y.str_short()} have sizes "
                             f"{tuple(lsizes)} and {tuple(rsizes)}")
    shape = (*(x.shape[d] for d in lb), *(x.shape[d] for d in free_dims(x.ndim, lc, lb)),
             *(y.shape[d] for d in free_dims(y.ndim, rc, rb)))
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    return ShapedArray(shape, result_dtype(x, y), x.weak_type and y.weak_type)


abstract_eval_rules[dot_general_p] = dot_general_abstract_eval
flop_rules[dot_general_p] = lambda eqn: 2 * math.prod(eqn.outputs[0].aval.shape) * math.prod(
    eqn.inputs[0].aval.shape[d] for d in eqn.params["dimension_numbers"][0][0])
defjvp(dot_general_p,
       lambda t, out, x, y, **params: dot_general(t, y, **params),
       lambda t, out, x, y, **params: dot_general(x, t, **params))


def transpose_lhs(ct, x_aval: ShapedArray, y, dimension_numbers, swap_ans=False):
    """The cotangent of the lhs: contract `ct` with `y` over everything that is not
    the lhs's, then permute the result into the lhs's layout. With `swap_ans` the
    lhs is the original rhs, whose free dimensions come last in `ct`."""
    (xc, yc), (xb, yb) = dimension_numbers
    x_free = free_dims(x_aval.ndim, xc, xb)
    y_free = free_dims(get_aval(y).ndim, yc, yb)
    nb = len(xb)
    first_y_free = nb if swap_ans else nb + len(x_free)
    ct_y_free = tuple(range(first_y_free, first_y_free + len(y_free)))
    dims = ((ct_y_free, tuple(y_free)), (tuple(range(nb)), yb))
    # The product's dimensions: batch, x_free, then y's contracting dimensions in
    # increasing order, which pair with x's contracting dimensions `xc`.
    xc_by_y = [xc[i] for i in np.argsort(yc, kind="stable")]
    layout = [*xb, *x_free, *xc_by_y]
    x_bar = transpose(dot_general(ct, y, dims), tuple(int(i) for i in np.argsort(layout)))
    return convert_element_type(x_bar, x_aval.dtype)


def dot_general_transpose(ct, x, y, *, dimension_numbers, preferred_element_type):
    """Bilinear: the program is linear in one operand, the other is a known value."""
    if is_linear(x):
        return [transpose_lhs(ct, x.aval, y, dimension_numbers), None]
    (xc, yc), (xb, yb) = dimension_numbers
    swapped = ((yc, xc), (yb, xb))
    return [None, transpose_lhs(ct, y.aval, x, swapped, swap_ans=True)]


transpose_rules[dot_general_p] = dot_general_transpose


def dot_general_batch(vals, dims, *, dimension_numbers, preferred_element_type):
    """Both operands batched: their batch axes are one more batch dimension, the
    output's first. One batched: its batch axis is one more free dimension of it,
    which the output keeps in place among that operand's free dimensions."""
    (x, y), (dx, dy) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    lc, lb, rc, rb = _around(lc, dx), _around(lb, dx), _around(rc, dy), _around(rb, dy)
    if dx is not None and dy is not None:
        lb, rb, out_dim = (dx, *lb), (dy, *rb), 0
    elif dx is not None:
        out_dim = len(lb) + free_dims(get_aval(x).ndim, lc, lb).index(dx)
    else:
        lhs_free = len(free_dims(get_aval(x).ndim, lc, lb))
        out_dim = len(lb) + lhs_free + free_dims(get_aval(y).ndim, rc, rb).index(dy)
    out = dot_general(x, y, ((lc, rc), (lb, rb)), preferred_element_type)
    return [out], [out_dim]


def _around(axes, dim: int | None) -> tuple[int, ...]:
    """An operand's axes renumbered around its batch axis, if it has one."""
    return axes if dim is None else tuple(batched_axis(a, dim) for a in axes)


batch_rules[dot_general_p] = dot_general_batch
