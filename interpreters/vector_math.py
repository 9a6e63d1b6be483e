"""Functions for numba kernels, in plain arithmetic that LLVM vectorises.

numba compiles `math.tanh` to one call of libm's scalar `tanh` per element (20-70 ns
on this machine), and a loop that calls a function does not vectorise: Intel's vector
library (SVML) is not in PyPI's llvmlite. numpy's own SIMD loop takes about 2 ns an
element, and in a native RNN loop (`fusion_loops`) tanh cost more than the
matrix-vector product. `vector_tanh` is tanh without calls or branches (2.5-5 ns an
element), accurate to 2 ulp of numpy's over the whole float64 range:

* |x| < 0.625: `x + x z S(z) / Q(z)` (z = x²), the convergent of depth 8 of Lambert's
  continued fraction tanh x = x / (1 + z / (3 + z / (5 + ...))), a Padé approximant
  whose truncation error there is below 1e-19 relative; its coefficients are exact
  rationals, computed here;
* otherwise `1 - 2 / (exp(2|x|) + 1)`, with |x| clamped at 20 (beyond, tanh rounds to
  1). exp(w) is 2^n exp(r) for r = w - n ln 2 in [-ln 2 / 2, ln 2 / 2], ln 2 split in a
  short high part (n times it is exact) and the rest; exp(r) is its Taylor series to
  degree 13 (truncation below 5e-18), and 2^n a product of exact powers of two, one
  per bit of n;
* the sign comes back by copysign (tanh(-0.0) is -0.0), and a NaN passes through.

Float32 operands are computed in float64, then rounded once by the kernel's cast.

The matrix-vector products of small matrices (`vector_matvec_<rows>_<cols>`, by rows,
and `vector_vecmat`, by columns) are loops too: numba's `np.dot` calls BLAS, whose call
costs as much as a 128 x 128 product, and whose row-major vector-matrix product is
slower than adding scaled rows.

numpy's integer power and float floor division are exact where numba's are not (its
`np.power` of integers goes through float64, its float `np.floor_divide` is
`floor(x / y)`): `signed_power`/`unsigned_power` square and multiply in 64-bit
integers, wrapping as numpy's loop does, and raise numpy's ValueError for a negative
exponent; `floor_divide_float32`/`_float64` are numpy's `npy_floor_divide` (the
quotient of `x - fmod(x, y)`, adjusted to the floor and snapped to an integer, signed
zeros and infinities included), in the dtype's own arithmetic.

Small linear algebra in native loops (an iLQR's Riccati step solves a 2 x 2 system per
step) is loops as well: `small_solve` (LU with partial pivoting), `small_cholesky` and
`small_triangular_solve`. numba's `np.linalg.solve` calls LAPACK's gesv, but first
copies both operands into Fortran order and checks them: measured on this machine (one
thread), 0.46 / 0.87 / 1.25 / 3.5 / 9.3 us for n = 2, 4, 8, 16, 32 (seven right-hand
sides), against the loop's 0.27 / 0.24 / 0.52 / 2.4 / 11.7 us; so up to `SMALL_SOLVE`
rows a solve is the loop, above it numba's LAPACK binding. numba binds no triangular
solve (scipy's trtrs) and its Cholesky raises where inert's gives NaNs, so those two are
always loops. The algorithms are reference LAPACK's: partial pivoting choosing the
first row of largest magnitude (getrf's idamax), an exact zero pivot making the matrix
singular, as does a zero on a triangular matrix's diagonal (scipy's trtrs): numpy
raises, and so do these, naming the primitive (`fusion_loops.entry` turns numba's
`LinAlgError` into inert's). A NaN pivot is not singular, as in reference LAPACK
(OpenBLAS's getrf, which numpy calls, sometimes finds it so: numpy's solve of
[[nan, 1], [1, 1]] raises). Cholesky reads the lower triangle only, and a non-positive
or NaN pivot gives a factor of NaNs (inert's `cholesky`, as JAX's), also where an
infinity or NaN of the matrix reaches a pivot (OpenBLAS's potrf, which finds no failure
there, leaves the rows before that pivot finite). No update is skipped for a zero
multiplier, so an infinity or NaN spreads as in BLAS. The bits are not LAPACK's:
OpenBLAS orders its sums by its own kernels (numba's own LAPACK call differs from
numpy's from n = 8 on, too), so values agree to rounding, within a few units in the
last place times the condition number.

The text every kernel is written in takes the forms numba compiles fastest
(`allocation`, `loop_lines`, `strided_index`): it types and lowers each operation of
the text in Python (a few ms each, a loop about 25 ms), and compiles each of its own
generic functions a kernel calls (`np.zeros`, `np.concatenate`, BLAS's `np.dot`:
0.2 to 4 s a process) once per signature.

A function is source text: a kernel module calling one carries its definition
(`definitions`), so numba's disk cache, keyed by the module's file, never holds a stale
copy of it.
"""

from __future__ import annotations

import decimal
import math
import operator
import re
from fractions import Fraction
from typing import Callable

import numpy as np

INTERNAL = "no_cpython_wrapper=True, no_cfunc_wrapper=True"
"""numba's options for a function only compiled code calls (a helper, a native program's
reduction kernel): without the wrappers Python and C callers would need, 0.03-0.05 s less
of a cold compile each. Python calls a module's `kernel` only (`load_kernel`), which never
has them: called from Python, such a function would crash the process."""


def decorator(*fastmath: str, contract: bool = True) -> str:
    """A helper's numba decorator: contracting a * b + c to one fused multiply-add only
    makes it more accurate (where a helper keeps numpy's bits, `contract=False`);
    `fastmath` adds flags (a dot product's `reassoc`)."""
    flags = ", ".join(repr(f) for f in (*("contract",) * contract, *fastmath))
    fast = f", fastmath={{{flags}}}" if flags else ""
    return f"@numba.njit(cache=True, error_model='numpy'{fast}, {INTERNAL})"


# ---------------------------------------------------------------------------------
# The text forms numba compiles fastest (kernels' own code, and these functions')


_CASTS: dict[np.dtype, str] = {}


def cast(dtype: np.dtype) -> str:
    """The numba-callable that makes a scalar of `dtype`."""
    text = _CASTS.get(dtype)
    if text is None:
        text = _CASTS[dtype] = "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"
    return text


def allocation(shape: tuple, dtype: np.dtype) -> str:
    """A new array of `shape`, in the one form every kernel writes: numba compiles its
    `np.empty` once per signature (0.1 to 0.3 s each), and `(n,)` or `n`, `np.float64`
    or `x.dtype` are different signatures."""
    return f"np.empty({tuple(shape)!r}, {cast(np.dtype(dtype))})"


def loop_lines(names: list[str], shape: tuple) -> tuple[list[str], str]:
    """Nested loops running `names` over `shape`, and the indentation of their body; an
    axis of one element is its index 0, no loop (numba compiles a loop in about 25 ms)."""
    lines, indent = [], ""
    for var, n in zip(names, shape):
        lines.append(f"{indent}{var} = 0" if n == 1 else f"{indent}for {var} in range({n}):")
        indent += "" if n == 1 else "    "
    return lines, indent


def strided_index(var: str, start: int, stride: int = 1) -> str:
    """`start + var * stride` in kernel text, without the terms that change nothing:
    numba types and lowers each arithmetic operation of an index (a few ms)."""
    scaled = var if stride == 1 else f"{var} * {stride}"
    return scaled if start == 0 else f"{start} + {scaled}"


# ---------------------------------------------------------------------------------
# The functions


SMALL_TANH = 0.625  # below, the continued fraction; above, the exponential
TANH_ONE = 20.0  # tanh(x) rounds to 1.0 from about 19.06 on


def lambert_tanh(depth: int) -> tuple[list[Fraction], list[Fraction]]:
    """`P, Q` (coefficients in z = x², lowest first) with tanh x ≈ x P(z) / Q(z): the
    continued fraction x / (1 + z / (3 + ... z / (2 depth + 1))), summed from the bottom."""
    num, den = [Fraction(2 * depth + 1)], [Fraction(1)]
    for k in range(depth - 1, -1, -1):  # (2k + 1) + z den / num = ((2k + 1) num + z den) / num
        shifted = [Fraction(0), *den]
        num, den = [(2 * k + 1) * (num[i] if i < len(num) else 0) + shifted[i]
                    for i in range(len(shifted))], num
    return den, num


def split_ln2() -> tuple[float, float]:
    """ln 2 as `hi + lo`: `hi` keeps 32 bits after the binary point, so `n * hi` is exact
    for any |n| < 2^21, and `lo` is the rest, rounded (to 1e-26)."""
    ln2 = decimal.Context(prec=40).ln(decimal.Decimal(2))
    hi = math.floor(float(ln2) * 2 ** 32) / 2 ** 32
    return hi, float(ln2 - decimal.Decimal(hi))


def horner(coefficients: list[float], x: str) -> str:
    """The expression of the polynomial with `coefficients` (lowest first) at `x`."""
    text = repr(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        text = f"({c!r} + {x} * {text})"
    return text


def tanh_source() -> str:
    p, q = lambert_tanh(8)
    # tanh x = x + x z S(z) / Q(z), S = (P - Q) / z: the correction is at most 15 % of x,
    # so its rounding errors count 0.15 times; Q is scaled to Q(0) = 1
    correction = [(a - b) / q[0] for a, b in zip(p + [Fraction(0)] * (len(q) - len(p)), q)][1:]
    hi, lo = split_ln2()
    exp_r = horner([float(Fraction(1, math.factorial(k))) for k in range(14)], "r")
    powers = [f"(1.0 + ((k >> {b}) & 1) * {2.0 ** 2 ** b - 1!r})" for b in range(6)]
    # LLVM's vectoriser is particular: this loop is not vectorised with numba's
    # np.floor and np.int32 together, nor with the polynomial first in the product
    return f"""{decorator()}
def vector_tanh(a):
    x = np.float64(a)
    y = math.fabs(x)
    c = y if y <= {TANH_ONE!r} else {TANH_ONE!r}
    w = c + c
    n = math.floor(w * {1 / math.log(2)!r} + 0.5)
    r = (w - n * {hi!r}) - n * {lo!r}
    p = {exp_r}
    k = np.int64(n)  # (numba compiles int() of a float as a function of its own)
    s = {powers[0]} * {powers[1]}
    s = s * {powers[2]} * {powers[3]}
    s = s * {powers[4]} * {powers[5]}
    large = 1.0 - 2.0 / (p * s + 1.0)
    z = y * y
    small = y + y * z * ({horner([float(c) for c in correction], "z")}
                         / {horner([float(c / q[0]) for c in q], "z")})
    t = math.copysign(small if y < {SMALL_TANH!r} else large, x)
    return t if y == y else x
"""


MATVEC_ROWS = 8  # rows a matrix-vector product sums at once (each reads x once)


def matvec_name(rows: int, cols: int) -> str:
    return f"vector_matvec_{rows}_{cols}"


def matvec_source(rows: int, cols: int) -> str:
    """`a @ x` into `out` for a C-ordered `rows` x `cols` matrix: `MATVEC_ROWS` dot
    products at a time, each vectorised (reassociated). The sizes are constants of the
    text: LLVM unrolls and schedules a loop of known length better (10-20 % at 128 x
    128). The caller allocates `out` (its `np.empty` of the dtype's name, not of
    `a.dtype`: the same numba signature as the kernel's own arrays, compiled once)."""
    block = rows - rows % MATVEC_ROWS
    sums = [f"s{r}" for r in range(MATVEC_ROWS)]
    rows_at = [strided_index("i", r) for r in range(MATVEC_ROWS)]
    return "\n".join([
        decorator("reassoc"),
        f"def {matvec_name(rows, cols)}(a, x, out):",
        f"    for i in range(0, {block}, {MATVEC_ROWS}):",
        f"        {' = '.join(sums)} = 0.0",
        f"        for j in range({cols}):",
        "            xj = x[j]",
        *(f"            s{r} += a[{i}, j] * xj" for r, i in enumerate(rows_at)),
        f"        {', '.join(f'out[{i}]' for i in rows_at)} = {', '.join(sums)}",
        *([f"    for i in range({block}, {rows}):",  # the rows left over
           "        s0 = 0.0",
           f"        for j in range({cols}):",
           "            s0 += a[i, j] * x[j]",
           "        out[i] = s0"] if block < rows else []),
        "    return out", ""])


# `x @ a` into `out` (allocated by the caller, as a matvec's): rows of `a` scaled by x,
# four at a time (vectorised without reassociating)
VECMAT = f"""{decorator()}
def vector_vecmat(x, a, out):
    for j in range(a.shape[1]):
        out[j] = 0.0
    for i in range(0, a.shape[0] - 3, 4):
        x0, x1, x2, x3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        for j in range(a.shape[1]):
            out[j] += x0 * a[i, j] + x1 * a[i + 1, j] + x2 * a[i + 2, j] + x3 * a[i + 3, j]
    for i in range(a.shape[0] - a.shape[0] % 4, a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += x[i] * a[i, j]
    return out
"""
def integer_power_source(name: str, dtype: str) -> str:
    """numpy's integer power: `x ** y` by squaring, in wrapping 64-bit arithmetic."""
    refuse = ("    if y < 0:\n        raise ValueError("
              "'Integers to negative integer powers are not allowed.')\n"
              if dtype == "int64" else "")
    return f"""{decorator()}
def {name}(x, y):
{refuse}    one = np.{dtype}(1)
    out = x if y & one else one
    y >>= one
    while y:
        x *= x
        if y & one:
            out *= x
        y >>= one
    return out
"""


def floor_divide_source(dtype: str) -> str:
    """numpy's float floor division (npy_floor_divide, npy_divmod) in `dtype`."""
    return f"""{decorator(contract=False)}
def floor_divide_{dtype}(a, b):
    if b == 0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div = div - np.{dtype}(1.0)
    if div == 0:
        return np.copysign(np.{dtype}(0.0), a / b)
    floor = np.floor(div)
    return floor + np.{dtype}(1.0) if div - floor > np.{dtype}(0.5) else floor
"""


SMALL_SOLVE = 16  # rows up to which a loop beats numba's call of LAPACK

LU_SOLVE = decorator(contract=False) + """
def small_solve(a, b):
    n, m = a.shape[0], b.shape[1]
    lu, x = a.copy(), b.copy()
    for k in range(n):
        p, big = k, abs(lu[k, k])
        for i in range(k + 1, n):
            if abs(lu[i, k]) > big:
                p, big = i, abs(lu[i, k])
        if big == 0:
            raise np.linalg.LinAlgError("solve: singular matrix")
        if p != k:
            for j in range(n):
                lu[k, j], lu[p, j] = lu[p, j], lu[k, j]
            for j in range(m):
                x[k, j], x[p, j] = x[p, j], x[k, j]
        pivot = lu[k, k]
        for i in range(k + 1, n):
            lu[i, k] /= pivot
            l = lu[i, k]
            for j in range(k + 1, n):
                lu[i, j] -= l * lu[k, j]
            for j in range(m):
                x[i, j] -= l * x[k, j]
    for k in range(n - 1, -1, -1):
        d = lu[k, k]
        for j in range(m):
            x[k, j] /= d
        for i in range(k):
            u = lu[i, k]
            for j in range(m):
                x[i, j] -= u * x[k, j]
    return x
"""

CHOLESKY = decorator(contract=False) + """
def small_cholesky(a):
    n = a.shape[0]
    l = a.copy()
    for i in range(n):
        for j in range(n):
            l[i, j] = 0.0
    for j in range(n):
        d = a[j, j]
        for k in range(j):
            d -= l[j, k] * l[j, k]
        if not d > 0:
            for i in range(n):
                for k in range(n):
                    l[i, k] = np.nan
            return l
        l[j, j] = np.sqrt(d)
        for i in range(j + 1, n):
            s = a[i, j]
            for k in range(j):
                s -= l[i, k] * l[j, k]
            l[i, j] = s / l[j, j]
    return l
"""

# op(a) x = b, op(a) = a or aᵀ, reading a's lower or upper triangle: the solve runs
# down the rows when op(a) is lower (lower and not transposed, or upper transposed)
TRIANGULAR_SOLVE = decorator(contract=False) + """
def small_triangular_solve(a, b, lower, transpose, unit):
    n, m = a.shape[0], b.shape[1]
    x = b.copy()
    down = lower != transpose
    for step in range(n):
        k = step if down else n - 1 - step
        if not unit:
            d = a[k, k]
            if d == 0:
                raise np.linalg.LinAlgError("triangular_solve: singular matrix")
            for j in range(m):
                x[k, j] /= d
        rest = range(k + 1, n) if down else range(k)
        for i in rest:
            l = a[k, i] if transpose else a[i, k]
            for j in range(m):
                x[i, j] -= l * x[k, j]
    return x
"""


# `a @ b` into `out` for small matrices (views of transposes too): each element summed
# in the order of the contracted index, a row of `out` at a time (vectorised). One
# function for every call: as loops at each of the iLQR program's 14 small products,
# its compile took 7 s more than numba's np.dot (0.2-1.3 s per kind of product)
SMALL_MATMUL = f"""{decorator()}
def small_matmul(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = 0.0
        for k in range(a.shape[1]):
            a_ik = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += a_ik * b[k, j]
    return out
"""


FUNCTIONS = {"vector_tanh": tanh_source(), "vector_vecmat": VECMAT, "small_matmul": SMALL_MATMUL,
             "signed_power": integer_power_source("signed_power", "int64"),
             "unsigned_power": integer_power_source("unsigned_power", "uint64"),
             **{f"floor_divide_{t}": floor_divide_source(t) for t in ("float32", "float64")},
             "small_solve": LU_SOLVE, "small_cholesky": CHOLESKY,
             "small_triangular_solve": TRIANGULAR_SOLVE}
# ---------------------------------------------------------------------------------
# numpy's scalar forms, for fusion rules


def _identity(x: str) -> str:
    return x


# numpy's result where numba's ufunc differs, by the kind of dtype computed in: numba
# rounds integers through float64 (losing the bits beyond 2**53) and raises them to a
# power there, takes an unsigned sign as -1 (255 for uint8), gives sign(-0.0) = -0.0
# (numpy: 0.0; adding 0.0 makes a zero positive, NaN and ±1 stay), its integer
# floor_divide gives 0 for INT_MIN // -1 (numpy: INT_MIN, wrapped) and its float one
# floor(x / y) (1.0 // 0.1 is 10.0; numpy's is 9.0, `floor_divide_*`); and numba's
# float32 np.exp2 passes a float to llvm.exp2.f64, which its lowering refuses
_NUMPY_FORMS: dict[tuple[str, str], Callable] = {
    **{(name, kind): _identity for name in ("floor", "ceil", "rint", "trunc") for kind in "iu"},
    ("sign", "u"): lambda x: f"({x} != 0)",
    ("sign", "f"): lambda x: f"(np.sign({x}) + 0.0)",
    ("exp2", "f"): lambda x: f"np.exp2(np.float64({x}))",  # numba's float32 one crashes
    ("power", "i"): lambda x, y: f"signed_power(np.int64({x}), np.int64({y}))",
    ("power", "u"): lambda x, y: f"unsigned_power(np.uint64({x}), np.uint64({y}))",
    ("floor_divide", "i"): lambda x, y: f"(-{x} if {y} == -1 else np.floor_divide({x}, {y}))",
}


def numpy_form(name: str, dtype: np.dtype) -> Callable | None:
    """numpy's scalar form of the ufunc `name` computed in `dtype`, where numba's differs."""
    if name == "floor_divide" and dtype.kind == "f":
        return lambda x, y: f"floor_divide_{dtype.name}({x}, {y})"
    return _NUMPY_FORMS.get((name, dtype.kind))


COMPARISONS = {"equal": ("==", operator.eq), "not_equal": ("!=", operator.ne),
               "less": ("<", operator.lt), "less_equal": ("<=", operator.le),
               "greater": (">", operator.gt), "greater_equal": (">=", operator.ge)}


def exact_comparison(name: str, x: str, y: str, dtypes: list) -> str:
    """`x` and `y` of mixed signedness compared exactly: a negative one is the smaller,
    else both are unsigned."""
    op, compare = COMPARISONS[name]
    if dtypes[0].kind == "u":
        return f"({compare(1, -1)} if {y} < 0 else {x} {op} np.uint64({y}))"
    return f"({compare(-1, 1)} if {x} < 0 else np.uint64({x}) {op} {y})"


UFUNCS = {"tanh": "vector_tanh"}  # numpy's name -> the function computing it here
LIBM = {"vector_tanh": "tanh"}  # the libm function scalar code calls instead (no loop)
_CALL = re.compile(r"\b(" + "|".join(FUNCTIONS) + r")\(")
_MATVEC_CALL = re.compile(r"\bvector_matvec_(\d+)_(\d+)\(")


def definitions(text: str) -> list[str]:
    """The definitions of the functions that the kernel source `text` calls."""
    sizes = dict.fromkeys(_MATVEC_CALL.findall(text))
    return [*(FUNCTIONS[name] for name in dict.fromkeys(_CALL.findall(text))),
            *(matvec_source(int(rows), int(cols)) for rows, cols in sizes)]
