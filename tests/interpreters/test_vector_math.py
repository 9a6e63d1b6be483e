"""The numba backend's own elementary functions (`vector_math`), compiled as kernels use
them: tanh within 2 ulp of numpy's over the whole float64 range, and the matrix-vector
loops equal to numpy's products."""

import decimal
from fractions import Fraction

import numpy as np
import pytest

from inert.interpreters import fusion, vector_math


def compiled(kernel: str):
    """The numba function `kernel` of a module that also holds what it calls."""
    return fusion.load_kernel(fusion.module_text([kernel]))


APPLY_TANH = """@numba.njit(cache=True, error_model='numpy')
def kernel(x):
    out = np.empty(x.shape, x.dtype)
    for i in range(x.size):
        out[i] = vector_tanh(x[i])
    return out"""


def ulps(got, want):
    return np.abs(got - want) / np.spacing(np.abs(want))


def test_tanh_is_within_2_ulp_of_numpys_over_the_float64_range(rng):
    """Millions of points: both formulas and the cut between them (0.625), the clamp
    (20, where tanh rounds to 1), tiny and subnormal values (tanh x = x), huge ones,
    both signs, and the special values (NaN passes through, -0.0 keeps its sign)."""
    n = 500_000
    sign = rng.choice([-1.0, 1.0], n)
    x = np.concatenate([
        rng.standard_normal(n), rng.uniform(-25, 25, n),
        sign * np.exp(rng.uniform(np.log(5e-324), np.log(1e308), n)),
        sign * rng.uniform(0.6, 0.65, n), sign * rng.uniform(18, 22, n),
        np.nextafter(0.625, [0.0, 1.0]), -np.nextafter(0.625, [0.0, 1.0]),
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
         1e-300, 20.0, -20.0, 19.06, np.finfo(float).max, -np.finfo(float).max]])
    got, want = compiled(APPLY_TANH)(x), np.tanh(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    number = ~np.isnan(want)  # (a NaN's sign means nothing)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
    assert ulps(got[number], want[number]).max() <= 2


def test_float32_tanh_is_computed_in_float64_and_rounded_once(rng):
    x = np.concatenate([rng.standard_normal(100_000), rng.uniform(-12, 12, 100_000)])
    x = x.astype(np.float32)
    got = compiled(APPLY_TANH)(x)
    assert got.dtype == np.float32
    assert ulps(got, np.tanh(x)).max() <= 1


def test_the_continued_fraction_and_the_split_of_ln2():
    """Depth 1 is x / (1 + x²/3) = 3x / (3 + x²); every depth's convergent agrees with
    tanh to the truncation error its order implies at the cut; ln 2 = hi + lo to 40
    digits with hi a multiple of 2^-32 (so n hi is exact)."""
    assert vector_math.lambert_tanh(1) == ([Fraction(3)], [Fraction(3), Fraction(1)])
    p, q = vector_math.lambert_tanh(8)
    x = vector_math.SMALL_TANH
    value = x * sum(float(c) * x ** (2 * i) for i, c in enumerate(p)) / sum(
        float(c) * x ** (2 * i) for i, c in enumerate(q))
    assert abs(value / np.tanh(x) - 1) < 4e-16
    hi, lo = vector_math.split_ln2()
    assert (hi * 2 ** 32).is_integer()
    exact = decimal.Context(prec=40).ln(decimal.Decimal(2))
    assert abs(decimal.Decimal(hi) + decimal.Decimal(lo) - exact) < decimal.Decimal("1e-25")


@pytest.mark.parametrize("shape, dtype", [((7, 3), np.float64), ((21, 10), np.float32)])
def test_matrix_vector_loops_equal_numpys_products(shape, dtype, rng):
    """`vector_matvec_r_c` (rows in blocks of 8 and the rest) and `vector_vecmat` (rows
    in blocks of 4 and the rest), in the operand dtype, into the buffers given (the
    vector-matrix product's first cleared: it adds into it)."""
    rows, cols = shape
    kernel = f"""@numba.njit(cache=True, error_model='numpy')
def kernel(a, x, y):
    return ({vector_math.matvec_name(rows, cols)}(a, x, np.empty(({rows},), a.dtype)),
            vector_vecmat(y, a, np.full(({cols},), np.nan, a.dtype)))"""
    a = rng.standard_normal(shape).astype(dtype)
    x, y = rng.standard_normal(cols).astype(dtype), rng.standard_normal(rows).astype(dtype)
    ax, ya = compiled(kernel)(a, x, y)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for got, want in ((ax, a @ x), (ya, y @ a)):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
