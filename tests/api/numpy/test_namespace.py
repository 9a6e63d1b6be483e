"""The `inert.numpy` namespace as a whole: it covers what jax.numpy code commonly uses,
takes plain values as numpy does (and then computes plain numpy values), keeps
numpy's dtypes, stages operations on traced values, and reports misuse at the
user's line. The functions themselves are tested family by family in
test_numpy_{ufuncs,reductions,shape,dot}.py."""

import numpy as np
import pytest
from harness import check_grads
from numpy_checks import assert_like_numpy

import inert
import inert.lax as lax
import inert.numpy as inp

COMMON_NAMES = """
float16 float32 float64 int8 int16 int32 int64 uint8 bool_ complex64 dtype finfo iinfo
issubdtype pi e inf nan newaxis array asarray zeros ones full empty zeros_like ones_like
full_like arange linspace eye identity add subtract multiply divide true_divide
floor_divide power negative positive abs absolute sign floor ceil round around trunc sqrt
cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos
arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh hypot logaddexp maximum minimum fmax
fmin mod remainder fmod clip where equal not_equal less less_equal greater greater_equal
logical_and logical_or logical_not logical_xor isfinite isnan isinf isclose sum prod max
min amax amin argmax argmin mean var std average cumsum cumprod any all count_nonzero dot
matmul tensordot einsum outer inner vdot trace reshape ravel transpose swapaxes moveaxis
squeeze expand_dims broadcast_to broadcast_arrays concatenate stack hstack vstack split
flip roll tile repeat take take_along_axis diagonal diag tril triu meshgrid shape ndim
size stop_gradient polyval linalg
""".split()


def test_covers_the_common_jax_numpy_names():
    missing = [name for name in COMMON_NAMES if not hasattr(inp, name)]
    assert not missing, f"inert.numpy lacks {missing}"
    assert callable(inp.linalg.norm)


def test_numpy_2_aliases_are_the_same_functions():
    for alias, name in [("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"),
                        ("atan2", "arctan2"), ("acosh", "arccosh"), ("asinh", "arcsinh"),
                        ("atanh", "arctanh"), ("bitwise_not", "invert"), ("fix", "trunc"),
                        ("degrees", "rad2deg"), ("radians", "deg2rad"), ("amax", "max"),
                        ("mod", "remainder"), ("absolute", "abs"), ("around", "round")]:
        assert getattr(inp, alias) is getattr(inp, name), alias


def test_plain_values_give_plain_numpy_values():
    """No trace is running, so the primitives run their numpy impls."""
    for out, want in [
        (inp.sin([0.0, 1.0]), np.sin([0.0, 1.0])),
        (inp.sum([[1, 2], [3, 4]], axis=0), np.array([4, 6])),
        (inp.dot([1.0, 2.0], [3.0, 4.0]), np.float64(11.0)),
        (inp.concatenate([[1], [2, 3]]), np.array([1, 2, 3])),
        (inp.where([True, False], 1.0, [2.0, 3.0]), np.array([1.0, 3.0])),
        (inp.mean(np.arange(4)), np.float64(1.5)),
        (inp.linalg.norm([3.0, 4.0]), np.float64(5.0)),
    ]:
        assert isinstance(out, (np.ndarray, np.generic)), type(out)
        assert_like_numpy(out, want)


def test_numpy_dtypes():
    """float64 by default, integers promote to float64 in transcendental functions,
    and Python scalars are weakly typed (they do not widen float32)."""
    n = np.arange(3)
    assert inp.sin(n).dtype == np.float64
    assert inp.divide(n, 2).dtype == np.float64
    x32 = np.ones(3, np.float32)
    f = lambda x: inp.exp(x) * 2.0 + 1 - inp.sqrt(x) / 3  # noqa: E731
    assert inert.make_jaxpr(f)(x32).jaxpr.out_avals[0].dtype == np.float32
    assert inert.jit(f)(x32).dtype == f(x32).dtype == np.float32
    assert inp.array([1, 2]).dtype == np.int64 and inp.zeros(2).dtype == np.float64
    # jnp.float32 is JAX's converter, standing for numpy's dtype (test_scalar_types.py)
    assert np.dtype(inp.float32) == np.float32 and inp.newaxis is None


def test_traced_operations_are_staged_once_each():
    text = str(inert.make_jaxpr(lambda x: inp.sum(inp.sin(x) * 2.0))(np.ones(3)).jaxpr)
    for name in ["sin", "mul", "reduce_sum"]:
        assert text.count(name) == 1, text


def test_broadcast_mismatch_names_the_primitive_and_the_callers_line():
    x, y = np.ones(3), np.ones(4)
    runs = [lambda: inp.add(x, y), lambda: inert.make_jaxpr(inp.add)(x, y),
            lambda: inert.grad(lambda x: inp.sum(inp.add(x, y)))(x),
            lambda: inert.make_jaxpr(lambda x: x * y)(x)]
    for run, name in zip(runs, ["add", "add", "add", "mul"]):
        with pytest.raises(inert.errors.ShapeError, match=name) as info:
            run()
        message = str(info.value)
        assert "(3,)" in message and "(4,)" in message
        assert "test_namespace.py" in message, message


def test_where_with_mismatched_shapes_names_where():
    with pytest.raises(inert.errors.ShapeError, match="where") as info:
        inert.make_jaxpr(lambda x: inp.where(x > 0, x, np.ones(2)))(np.ones(3))
    assert "test_namespace.py" in str(info.value)


def test_python_control_flow_on_traced_values_explains_the_alternatives():
    def relu(x):
        if x > 0:
            return x
        return 0.0 * x

    with pytest.raises(inert.errors.ConcretizationError) as info:
        inert.make_jaxpr(relu)(1.0)
    message = str(info.value)
    assert "where" in message and "cond" in message and "test_namespace.py" in message
    with pytest.raises(inert.errors.ConcretizationError):
        inert.make_jaxpr(lambda x: inp.zeros(int(x)))(np.int64(3))


def test_python_control_flow_on_known_primal_values_works_under_grad():
    """grad's forward pass knows the primal values, as JAX's eager grad does."""
    f = lambda x: x ** 3 if x > 0 else -x  # noqa: E731
    assert inert.grad(f)(2.0) == pytest.approx(12.0)
    assert inert.grad(f)(-2.0) == pytest.approx(-1.0)


def test_stop_gradient_blocks_only_its_operand(rng):
    f = lambda x: inp.sum(x * inp.stop_gradient(x))  # noqa: E731
    x = rng.standard_normal(3)
    np.testing.assert_allclose(inert.grad(f)(x), x)


def test_integer_operands_are_inactive_and_mixed_code_differentiates(rng):
    labels = np.array([2, 0, 1])

    def f(logits, labels):
        picked = inp.take_along_axis(logits, labels[:, None], axis=1)
        return inp.mean(inp.exp(picked) * labels)

    check_grads(f, (rng.standard_normal((3, 4)), labels), rng)


def test_lax_namespace_stages_one_primitive_per_call(rng):
    x = rng.standard_normal((2, 3))
    jaxpr = inert.make_jaxpr(lambda x: lax.reduce_max(lax.mul(lax.exp(x), x), (1,)))(x)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names == ["exp", "mul", "reduce_max"]
    np.testing.assert_allclose(lax.select(x > 0, x, -x), np.abs(x))
    np.testing.assert_array_equal(lax.iota(np.int32, 4), np.arange(4))
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 1),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    np.testing.assert_allclose(lax.full_like(x, 2.0), np.full((2, 3), 2.0))
    assert lax.broadcast(x, (4,)).shape == (4, 2, 3)
    np.testing.assert_allclose(lax.dot(x, x.T), x @ x.T)
    y = lax.dot_general(x, x, (((1,), (1,)), ((), ())))
    np.testing.assert_allclose(y, x @ x.T)
