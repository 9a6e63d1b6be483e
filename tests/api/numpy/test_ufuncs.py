"""inert.numpy's elementwise functions against numpy: values and dtypes (float64,
float32, integer and Python-scalar operands, broadcasting), staged, and derivatives."""

import functools

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from numpy_checks import assert_like_numpy, check_like_numpy

import inert.numpy as inp

R = np.random.default_rng(0)


def uniform(lo, hi, shape, dtype=np.float64):
    return R.uniform(lo, hi, shape).astype(dtype)


def integers(lo, hi, shape, dtype=np.int64):
    return R.integers(lo, hi, shape, endpoint=True).astype(dtype)


# name: (float domain, integer domain or None when numpy's integer result differs)
UNARY = {
    "sin": ((-3, 3), (-3, 3)), "cos": ((-3, 3), (-3, 3)), "tan": ((-1.2, 1.2), (-1, 1)),
    "arcsin": ((-0.9, 0.9), (0, 0)), "arccos": ((-0.9, 0.9), (0, 0)),
    "arctan": ((-3, 3), (-3, 3)), "sinh": ((-2, 2), (-2, 2)), "cosh": ((-2, 2), (-2, 2)),
    "tanh": ((-2, 2), (-2, 2)), "arcsinh": ((-3, 3), (-3, 3)), "arccosh": ((1.1, 3), (1, 3)),
    "arctanh": ((-0.9, 0.9), (0, 0)), "exp": ((-2, 2), (-2, 2)), "exp2": ((-2, 2), (0, 3)),
    "expm1": ((-2, 2), (-2, 2)), "log": ((0.1, 3), (1, 3)), "log2": ((0.1, 3), (1, 3)),
    "log10": ((0.1, 3), (1, 3)), "log1p": ((-0.5, 3), (0, 3)), "sqrt": ((0.1, 3), (0, 3)),
    "cbrt": ((0.1, 3), (0, 3)), "abs": ((-3, 3), (-3, 3)), "absolute": ((-3, 3), (-3, 3)),
    "sign": ((-3, 3), (-3, 3)), "floor": ((-3, 3), (-3, 3)), "ceil": ((-3, 3), (-3, 3)),
    "round": ((-3, 3), (-3, 3)), "trunc": ((-3, 3), (-3, 3)), "square": ((-3, 3), (-3, 3)),
    "negative": ((-3, 3), (-3, 3)), "positive": ((-3, 3), (-3, 3)),
    "reciprocal": ((0.5, 3), None), "deg2rad": ((-3, 3), (-3, 3)),
    "rad2deg": ((-3, 3), (-3, 3)), "isnan": ((-3, 3), (-3, 3)),
    "isfinite": ((-3, 3), (-3, 3)), "isinf": ((-3, 3), (-3, 3)),
    "logical_not": ((-1, 1), (-1, 1)),
}
NO_GRAD = {"isnan", "isfinite", "isinf", "logical_not"}


def unary_cases():
    for name, (float_domain, int_domain) in UNARY.items():
        yield pytest.param(name, uniform(*float_domain, (3, 4)), id=f"{name}-f64")
        yield pytest.param(name, uniform(*float_domain, (5,), np.float32), id=f"{name}-f32")
        if int_domain is not None:
            yield pytest.param(name, integers(*int_domain, (4,), np.int32), id=f"{name}-i32")


@pytest.mark.parametrize("name, x", list(unary_cases()))
def test_unary(name, x, rng):
    grad = x.dtype == np.float64 and name not in NO_GRAD
    check_like_numpy(getattr(inp, name), getattr(np, name), (x,), rng, grad=grad)


def test_round_decimals_and_halves_to_even(rng):
    x = np.array([0.5, 1.5, 2.5, -0.5, 1.23456, -7.891])
    check_like_numpy(lambda x: inp.round(x, 2), lambda x: np.round(x, 2), (x,))
    check_like_numpy(inp.round, np.round, (x,))


# name: (domain of x, domain of y)
BINARY = {
    "add": None, "subtract": None, "multiply": None, "divide": "nonzero",
    "true_divide": "nonzero", "power": "positive base", "maximum": None, "minimum": None,
    "fmax": None, "fmin": None, "arctan2": None, "hypot": None, "logaddexp": None,
    "mod": "nonzero", "remainder": "nonzero", "fmod": "nonzero", "floor_divide": "nonzero",
    "equal": None, "not_equal": None, "less": None, "less_equal": None, "greater": None,
    "greater_equal": None, "logical_and": None, "logical_or": None, "logical_xor": None,
}
NO_BINARY_GRAD = {"floor_divide", "equal", "not_equal", "less", "less_equal", "greater",
                  "greater_equal", "logical_and", "logical_or", "logical_xor"}


def _away_from_zero(y):
    return np.where(np.abs(y) < 0.5, y + np.sign(y + 0.1) * 0.6, y).astype(y.dtype)


def binary_operands(domain):
    """Operand pairs: broadcasting, float32 with a Python float, int32 with float32,
    int64 with a Python int, float64 with int64."""
    pairs = [(uniform(-3, 3, (3, 1)), uniform(-3, 3, (4,))),
             (uniform(-3, 3, (3, 4), np.float32), 2.5),
             (integers(-3, 3, (4,), np.int32), uniform(-3, 3, (3, 4), np.float32)),
             (integers(-5, 5, (3, 1)), 3),
             (uniform(-3, 3, (2, 3)), integers(1, 3, (3,)))]
    if domain == "positive base":
        return [(np.abs(x) + 1 if isinstance(x, np.ndarray) else x, y) for x, y in pairs]
    if domain == "nonzero":
        return [(x, _away_from_zero(y) if isinstance(y, np.ndarray) else y) for x, y in pairs]
    return pairs


def binary_cases():
    for name, domain in BINARY.items():
        for i, (x, y) in enumerate(binary_operands(domain)):
            yield pytest.param(name, x, y, id=f"{name}-{i}")


@pytest.mark.parametrize("name, x, y", list(binary_cases()))
def test_binary(name, x, y, rng):
    """Array operands are arguments; a Python scalar operand is closed over, so that
    it stays weakly typed, as in user code."""
    f, ref = getattr(inp, name), getattr(np, name)
    if not isinstance(y, np.ndarray):
        f, ref = (lambda x, f=f: f(x, y)), (lambda x, ref=ref: ref(x, y))
        args = (x,)
    else:
        args = (x, y)
    grad = all(a.dtype == np.float64 for a in args) and name not in NO_BINARY_GRAD
    check_like_numpy(f, ref, args, rng, grad=grad)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.bool_])
def test_bitwise(name, dtype):
    x, y = integers(0, 7, (3, 4)).astype(dtype), integers(0, 7, (4,)).astype(dtype)
    check_like_numpy(getattr(inp, name), getattr(np, name), (x, y))
    check_like_numpy(inp.invert, np.invert, (x,))


def test_integer_power_is_exact_and_float_power_differentiable(rng):
    x = uniform(-2, 2, (5,))
    check_like_numpy(lambda x: inp.power(x, 3), lambda x: np.power(x, 3), (x,), rng, True)
    check_like_numpy(lambda x: inp.power(x, -2), lambda x: np.power(x, -2), (x,), rng, True)
    n = integers(-4, 4, (5,))
    check_like_numpy(lambda n: inp.power(n, 2), lambda n: np.power(n, 2), (n,))
    check_like_numpy(lambda x: inp.power(2.0, x), lambda x: np.power(2.0, x), (x,), rng, True)


def test_where_clip_isclose_polyval(rng):
    c = uniform(-1, 1, (3, 1)) > 0
    x, y = uniform(-2, 2, (3, 4)), uniform(-2, 2, (4,))
    check_like_numpy(lambda x, y: inp.where(c, x, y), lambda x, y: np.where(c, x, y),
                     (x, y), rng, grad=True)
    x32 = x.astype(np.float32)
    check_like_numpy(lambda x: inp.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0),
                     (x32,))
    check_like_numpy(lambda x: inp.where(c, x, 1), lambda x: np.where(c, x, 1),
                     (integers(-3, 3, (4,), np.int32),))
    check_like_numpy(lambda x: inp.clip(x, -1.0, 0.5), lambda x: np.clip(x, -1.0, 0.5),
                     (x,), rng, grad=True)
    check_like_numpy(lambda x: inp.clip(x, a_max=y), lambda x: np.clip(x, None, y), (x,))
    check_like_numpy(lambda x, y: inp.isclose(x, y), np.isclose, (x, x + 1e-9 * y))
    p = [2.0, -1.0, 0.5]
    check_like_numpy(lambda x: inp.polyval(p, x), lambda x: np.polyval(p, x), (x,), rng, True)


def test_where_with_only_a_condition_is_nonzero():
    c = np.array([[True, False], [False, True]])
    for got, want in zip(inp.where(c), np.where(c)):
        np.testing.assert_array_equal(got, want)


def test_nan_and_inf_predicates():
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.0])
    for name in ["isnan", "isinf", "isfinite"]:
        check_like_numpy(getattr(inp, name), getattr(np, name), (x,))
    check_like_numpy(inp.fmax, np.fmax, (x, x[::-1].copy()))
    with np.errstate(invalid="ignore"):
        check_like_numpy(inp.logaddexp, np.logaddexp, (x, np.zeros(5)))


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
       hs.sampled_from(["add", "multiply", "maximum", "arctan2", "where"]))
@settings(max_examples=25, deadline=None)
def test_broadcasting_like_numpy(shapes, name):
    x, y, z = (uniform(-2, 2, s) for s in shapes.input_shapes)
    f = functools.partial(getattr(inp, name), x > 0) if name == "where" else getattr(inp, name)
    ref = functools.partial(getattr(np, name), x > 0) if name == "where" else getattr(np, name)
    assert_like_numpy(f(y, z), ref(y, z))
    check_like_numpy(f, ref, (y, z), np.random.default_rng(1), grad=True)
