"""Bad input to the transforms gets clear errors, and leaves no transformation behind."""

import threading

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.errors import ConcretizationError, DTypeError, EscapedTracerError
from inert.primitives.shape.structural import reduce_sum_p


def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match="scalar"):
        inert.grad(lambda x: x * 2.0)(np.ones(3))


def test_grad_wrt_integer_argument():
    with pytest.raises(TypeError, match="argument 0 .* int64"):
        inert.grad(lambda n: n * 2.0)(np.arange(3))


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        inert.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)


def test_vjp_cotangent_checks():
    _, vjp_fn = inert.vjp(lambda x: (x * 2.0, inp.sum(x)), np.ones(3))
    with pytest.raises(ValueError, match="structure"):
        vjp_fn(np.ones(3))
    with pytest.raises(TypeError, match=r"cotangent 0 is f64\[4\].*f64\[3\]"):
        vjp_fn((np.ones(4), 1.0))
    with pytest.raises(TypeError, match="cotangent 0"):
        vjp_fn((np.ones(3, np.float32), 1.0))
    out = vjp_fn((np.ones(3), 1.0))  # and it still works, many times
    np.testing.assert_allclose(vjp_fn((np.ones(3), 1.0))[0], out[0])


def test_jvp_tangent_checks():
    f = lambda x, n: x * n
    with pytest.raises(TypeError, match="argument 0 has primal f64\\[3\\] but tangent f64\\[2\\]"):
        inert.jvp(f, (np.ones(3), 2), (np.ones(2), None))
    with pytest.raises(TypeError, match="argument 1 has integer dtype"):
        inert.jvp(f, (np.ones(3), 2), (np.ones(3), 1.0))
    with pytest.raises(ValueError, match="argument 1 is .*Inactive"):
        inert.jvp(f, (np.ones(3), inert.Inactive(2.0)), (np.ones(3), 1.0))
    out, t = inert.jvp(f, (np.ones(3), inert.Inactive(2.0)), (np.ones(3), None))
    np.testing.assert_allclose(t, 2.0 * np.ones(3))


def test_integer_and_inactive_arguments_get_none_cotangents():
    f = lambda x, n, y: inp.sum(x * n * y)
    _, vjp_fn = inert.vjp(f, np.ones(3), 2, inert.Inactive(np.ones(3)))
    gx, gn, gy = vjp_fn(1.0)
    np.testing.assert_allclose(gx, 2 * np.ones(3))
    assert gn is None and gy is None


def test_active_argument_that_output_ignores_gets_zeros():
    g = inert.grad(lambda x, y: inp.sum(x * 3.0), argnums=(0, 1))(np.ones(2), np.ones(4))
    np.testing.assert_array_equal(g[1], np.zeros(4))


def test_python_if_on_traced_value_under_make_jaxpr():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(ConcretizationError, match="where.*cond") as info:
        inert.make_jaxpr(f)(1.0)
    assert __file__ in str(info.value)
    assert inert.grad(f)(-2.0) == -1.0  # under grad the primal is known: it works


def test_escaped_tracer_is_reported():
    leaked = []
    inert.make_jaxpr(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(EscapedTracerError):
        inert.grad(lambda y: y * leaked[0])(1.0)


def test_error_inside_nested_transform_leaves_clean_state():
    def bad(x):
        return inert.grad(lambda y: y * np.ones(3))(x)  # non-scalar inner grad

    with pytest.raises(TypeError):
        inert.grad(bad)(1.0)
    assert inert.grad(lambda x: x * x)(3.0) == 6.0


def test_vjp_function_from_several_threads(rng):
    x = rng.standard_normal(100)
    _, vjp_fn = inert.vjp(lambda x: inp.sum(inp.sin(x)), x)
    results = [None] * 8

    def work(i):
        results[i] = vjp_fn(float(i))[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, i * np.cos(x))


def test_transforms_from_several_threads(rng):
    xs = [rng.standard_normal(50) for _ in range(6)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(5):
            results[i] = inert.grad(lambda x: inp.sum(inp.tanh(x) * x))(xs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, r in zip(xs, results):
        t = np.tanh(x)
        np.testing.assert_allclose(r, t + x * (1 - t * t))


def test_converting_an_active_value_to_a_number_is_refused():
    import math

    # (numpy's own functions on tracers run inert.numpy's: see tests/api/numpy/test_dispatch.py)
    for f, x in [(lambda x: np.asarray(x) @ x, np.array([1.0, 2.0])), (lambda x: float(x) * x, 3.0),
                 (lambda x: math.sin(x), 1.0)]:
        with pytest.raises(ConcretizationError, match="lose its derivative"):
            inert.grad(f)(x)
    # control flow and stop_gradient are fine: no derivative is lost
    assert inert.grad(lambda x: x * (2.0 if x > 0 else 3.0))(1.0) == 2.0
    assert inert.grad(lambda x: float(inert.stop_gradient(x)) * x)(3.0) == 3.0


def test_a_leaked_tracer_used_on_its_own_is_reported():
    leaked = []
    inert.make_jaxpr(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(EscapedTracerError):
        leaked[0] * 2.0


def test_python_control_flow_on_a_value_the_backward_pass_keeps():
    def f(x):
        s = inp.sin(x)
        return inp.exp(s) + s * x if s > 0 else s

    s = np.sin(1.0)
    np.testing.assert_allclose(inert.grad(f)(1.0), np.exp(s) * np.cos(1.0) + np.cos(1.0) + s)


def test_nested_inactive_and_none_tangents():
    g = inert.grad(lambda p: p["x"] * p["n"])({"x": 1.0, "n": inert.Inactive(3)})
    assert g["n"] is None and g["x"] == 3.0
    assert inert.jvp(lambda x, n: x * n, (1.0, 3), (1.0, None))[1] == 3.0
    np.testing.assert_allclose(inert.grad(lambda x: inp.abs(x))(1.0 + 1j), (1 - 1j) / 2 ** 0.5)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex"):
        inert.grad(lambda x: x * 1j, holomorphic=True)(1.0)


def test_static_argnums_negative_and_unhashable():
    assert inert.jit(lambda x, n: x * (2.0 if n > 1 else 3.0), static_argnums=-1)(1.0, 3) == 2.0
    with pytest.raises(TypeError, match="hashable"):
        inert.jit(lambda x, n: x, static_argnums=1)(1.0, [1])


def test_closed_over_arrays_are_read_when_traced_even_if_mutated_later():
    def f(x):
        tmp = np.empty(3)
        acc = 0.0
        for i in range(3):
            tmp[:] = i + 1
            acc = acc + inp.sum(x * tmp) * (i + 1)
        return acc

    value, g = inert.value_and_grad(f)(np.ones(3))
    assert value == 42.0
    np.testing.assert_array_equal(g, [14.0, 14.0, 14.0])
    assert inert.jit(f)(np.ones(3)) == 42.0

    def h(x):
        buf = np.ones(3)
        y = inp.sum(inp.sin(x) * buf)
        buf[:] = 100.0  # after use: the lazy forward pass must not see it
        return y

    np.testing.assert_allclose(inert.grad(h)(np.ones(3)), np.cos(np.ones(3)))


def test_a_list_parameter_names_the_primitive_and_parameter():
    """Abstract evaluation is cached by params: a primitive bound with a list (where its
    wrapper would make a tuple) gets an error saying so, not `unhashable type`."""
    with pytest.raises(DTypeError, match="reduce_sum: parameter axes must be hashable"):
        inert.grad(lambda x: reduce_sum_p.bind(x * x, axes=[0]))(np.ones(3))
