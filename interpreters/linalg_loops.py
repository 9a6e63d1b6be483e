"""Small linear algebra for native loops, as numba source text: LU solve, Cholesky,
triangular solve.

Inside a native loop (`fusion_loops`) an iLQR's Riccati step solves a 2 x 2 system
per step. numba's `np.linalg.solve` calls LAPACK's gesv, but first copies both
operands into Fortran order and checks them: measured on this machine (one thread),
0.46 / 0.87 / 1.25 / 3.5 / 9.3 us for n = 2, 4, 8, 16, 32 (seven right-hand sides),
against these loops' 0.27 / 0.24 / 0.52 / 2.4 / 11.7 us. So up to `SMALL` rows the
rules emit these loops and above it numba's LAPACK bindings. numba has no binding of
a triangular solve (scipy's trtrs), so that one is always a loop.

The algorithms are reference LAPACK's: partial pivoting choosing the first row of
largest magnitude (getrf's idamax), an exact zero pivot making the matrix singular, as
does a zero on a triangular matrix's diagonal (scipy's trtrs): numpy raises, and so do
these, naming the primitive (`fusion_loops.entry` turns numba's `LinAlgError` into
inert's). A NaN pivot is not singular here, as in reference LAPACK; OpenBLAS's getrf,
which numpy calls, sometimes finds it so (numpy's solve of [[nan, 1], [1, 1]] raises).
Cholesky reads the lower triangle only, and a non-positive or NaN pivot gives a factor
of NaNs (inert's `cholesky`, as JAX's), also where an infinity or NaN of the matrix
reaches a pivot (OpenBLAS's potrf, which finds no failure there, leaves the rows
before that pivot finite). No update is skipped for a zero multiplier, so
an infinity or NaN spreads as in BLAS. The bits are not LAPACK's:
OpenBLAS orders its sums by its own kernels (numba's own LAPACK call differs from
numpy's from n = 8 on, too), so values agree to rounding, within a few units in the
last place times the condition number.

A function is source text: a kernel module calling one carries its definition
(`vector_math.definitions`).
"""

from __future__ import annotations

SMALL = 16  # rows up to which a loop beats numba's call of LAPACK

_DECORATOR = "@numba.njit(cache=True, error_model='numpy')"

LU_SOLVE = f"""{_DECORATOR}
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

CHOLESKY = f"""{_DECORATOR}
def small_cholesky(a):
    n = a.shape[0]
    l = np.zeros_like(a)
    for j in range(n):
        d = a[j, j]
        for k in range(j):
            d -= l[j, k] * l[j, k]
        if not d > 0:
            l[:, :] = np.nan
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
TRIANGULAR_SOLVE = f"""{_DECORATOR}
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

FUNCTIONS = {"small_solve": LU_SOLVE, "small_cholesky": CHOLESKY,
             "small_triangular_solve": TRIANGULAR_SOLVE}
