"""jit: traced once per signature, compiled to Python, composable with the other
transforms; make_jaxpr's static_argnums."""

import functools

import numpy as np
import pytest
from harness import check_grads

import inert
import inert.numpy as inp
from inert.api.numpy._array import Array
from inert.benchmarks.memory import peak_bytes, reachable_array_bytes
from inert.errors import ConcretizationError
from inert.interpreters.eval import compile_jaxpr


def test_jit_traces_once_per_signature():
    traces = []

    def f(x, y):
        traces.append(1)
        return inp.sin(x) * y + 1.0

    g = inert.jit(f)
    x = np.linspace(0, 1, 4)
    for _ in range(3):
        np.testing.assert_allclose(g(x, 2.0), np.sin(x) * 2 + 1)
    assert len(traces) == 1
    g(x.astype(np.float32), 2.0)  # a new dtype: a new trace
    g(np.ones(5), 2.0)  # a new shape too
    assert len(traces) == 3


def test_the_cache_key_of_an_array_is_its_aval():
    """An `Array` and a numpy array of one shape and dtype share a trace; a numpy
    scalar, a 0-d array and a Python float of the same value are traced apart where
    their avals differ (a Python float's is weakly typed)."""
    traces = []

    def f(x):
        traces.append(type(x.aval) if hasattr(x, "aval") else None)
        return x * 2.0

    g = inert.jit(f)
    x = np.linspace(0, 1, 4)
    out = g(x)
    assert isinstance(out, inert.Array) and len(traces) == 1
    np.testing.assert_array_equal(g(out), 2.0 * out)  # an Array: the same trace
    assert len(traces) == 1
    g(np.array(0.5))
    g(np.float64(0.5))  # the same aval as the 0-d array: the same trace
    assert len(traces) == 2
    g(0.5)  # weakly typed
    assert len(traces) == 3 and g(0.5) == 1.0 and len(traces) == 3


def test_static_argnums_select_python_branches():
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x if n > 1 else -x

    g = inert.jit(f, static_argnums=1)
    assert g(1.5, 3) == 12.0 and g(1.5, 1) == -3.0
    closed = inert.make_jaxpr(f, static_argnums=(1,))(1.5, 2)
    assert len(closed.jaxpr.eqns) == 2


def test_jit_composes_with_differentiation(rng):
    f = lambda x: inp.sum(inp.tanh(x) ** 2 * inp.cos(x))
    x = rng.standard_normal(5)
    np.testing.assert_allclose(inert.jit(inert.grad(f))(x), inert.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(inert.grad(inert.jit(f))(x), inert.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(inert.jit(inert.hessian(f))(x), inert.hessian(f)(x), rtol=1e-12)
    check_grads(inert.jit(f), (x,), rng, order=2)


def test_jit_of_grad_rejects_python_control_flow_on_values():
    f = lambda x: x if x > 0 else -x
    assert inert.grad(f)(-2.0) == -1.0  # eager grad: primal values are known
    with pytest.raises(ConcretizationError):
        inert.jit(inert.grad(f))(-2.0)


def test_compiled_jaxpr_reports_errors_with_the_source_line():
    def f(x, n):
        return x ** n  # fine while tracing; numpy raises when run with a negative power

    g = inert.jit(f, backend="numpy")
    assert g(np.int64(3), np.int64(2)) == 9
    with pytest.raises(ValueError, match="negative integer powers") as info:
        g(np.int64(3), np.int64(-1))
    assert "pow" in str(info.value.__notes__) and __file__ in str(info.value.__notes__)


def test_jit_as_a_decorator_with_static_argnums_and_static_argnames():
    traces = []

    @functools.partial(inert.jit, static_argnames="n")
    def power(x, n, scale=1.0):
        traces.append(n)
        return scale * x ** n

    assert power(2.0, n=3) == 8.0 and power(3.0, n=3) == 27.0
    assert power(2.0, 3) == 8.0  # a static name passed by position is static too
    assert power(2.0, n=2, scale=np.float64(3.0)) == 12.0  # scale is traced
    assert power(2.0, n=2, scale=np.float64(5.0)) == 20.0
    assert traces == [3, 3, 2]
    assert inert.grad(lambda x: power(x, n=2))(3.0) == 6.0

    @functools.partial(inert.jit, static_argnums=(1,))
    def repeat(x, k):
        return inp.concatenate([x] * k)

    assert repeat(np.ones(2), 3).shape == (6,)
    donating = inert.jit(lambda x: x * 2, donate_argnums=(0,))
    np.testing.assert_array_equal(donating(np.ones(2)), 2.0)
    with pytest.raises(TypeError, match="hashable"):
        power(2.0, n=[1])


def test_device_put_is_the_identity():
    x = np.ones(3)
    assert inert.device_put(x) is x and inert.device_put(x, "cpu") is x


def test_compiling_a_long_program_takes_memory_in_proportion():
    """Compiling jit(grad) of a long chain costs a bounded amount per equation: about
    5.4 KB each when the program was one generated function (so a 100k-equation
    chain took over a gigabyte), about 1.5 KB now (2.2 KB once numba has been imported
    in the process, which makes every code object CPython compiles larger); the jaxpr
    itself is ~0.4 KB."""

    def chain(x):
        for i in range(1500):
            x = inp.sin(x) if i % 2 else x * 0.999
        return x

    x = np.float64(0.3)
    g = inert.grad(chain)
    jaxpr = inert.make_jaxpr(g)(x).jaxpr
    assert len(jaxpr.eqns) > 3000
    assert peak_bytes(lambda: compile_jaxpr(jaxpr)) < 3500 * len(jaxpr.eqns)
    np.testing.assert_allclose(inert.jit(g)(x), g(x), rtol=1e-12)  # segments pass values on


def test_inactive_markers_in_a_pytree_of_arguments_unwrap_in_place(rng):
    """An `Inactive` argument's leaves take its place among the leaves, in order, with
    or without markers around."""
    f = lambda a, y, b: inp.sum(inp.sin(a) * y[0]) + inp.sum(y[1] ** 2) * b
    a, b = rng.standard_normal(4), rng.standard_normal()
    y = (rng.standard_normal(4), rng.standard_normal(3))
    g = inert.jit(inert.value_and_grad(f, argnums=(0, 2)))
    want = inert.value_and_grad(f, argnums=(0, 2))(a, y, b)
    for args in ((a, inert.Inactive(y), b), (a, y, b), (a, inert.Inactive(y), b)):
        got = g(*args)
        for x, w in zip(inert.tree_util.tree_leaves(got), inert.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(x, w, rtol=1e-12)


def test_a_jitted_transform_reads_the_inactive_markers_as_it_would_eagerly(rng):
    """`jit(grad(f))(x, Inactive(y))` is `grad(f)(x, Inactive(y))`: y gets no cotangent
    even where argnums names it, and its program has no tangent work for y."""
    g = inert.grad(lambda x, y: inp.sum(inp.sin(x) * y), argnums=(0, 1))
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    eager, jitted = g(x, inert.Inactive(y)), inert.jit(g)(x, inert.Inactive(y))
    assert eager[1] is None and jitted[1] is None
    np.testing.assert_allclose(jitted[0], eager[0], rtol=1e-12)
    jaxpr = inert.make_jaxpr(g)(x, inert.Inactive(y)).jaxpr
    assert len(jaxpr.outvars) == 1 and "cos" in [e.primitive.name for e in jaxpr.eqns]


def test_threads_calling_the_default_backend_across_its_switch_to_numba(monkeypatch):
    """One thread is still in numpy's code when another's call makes the program hot
    and starts numba's compile: both calls return their values, it compiles once, and
    calls run numba's code once it has compiled."""
    import concurrent.futures  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from inert.api import compiled as jit_module  # noqa: PLC0415

    compiles = []
    numba_compile = jit_module.compile_jaxpr_numba
    monkeypatch.setattr(jit_module, "compile_jaxpr_numba",
                        lambda jaxpr: compiles.append(jaxpr) or numba_compile(jaxpr))
    monkeypatch.setattr(jit_module, "HOT_SECONDS", 0.0)
    monkeypatch.setattr(jit_module, "numba_available", lambda: True)
    auto = jit_module._NumpyThenNumba(inert.make_jaxpr(lambda x: x * 2.0)(1.5).jaxpr, "f")
    numpys, inside, switched = auto.run, threading.Event(), threading.Event()

    def held(consts, args):  # the first thread waits in numpy's code for the switch
        inside.set()
        switched.wait(10)
        return numpys(consts, args)

    auto.run = held
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        first = pool.submit(auto, [], [1.5])
        inside.wait(10)
        auto.run = numpys
        assert auto([], [2.0]) == [4.0]  # hot at once: the compile starts
        switched.set()
        assert first.result() == [3.0]
    inert.block_until_compiled()
    assert auto.run is not numpys and auto([], [0.5]) == [1.0] and len(compiles) == 1


def test_static_arguments_of_equal_value_and_different_type_trace_anew():
    """2 == 2.0 == True and they hash alike, but a Python int, float and bool trace to
    different programs (a weak int or float, a bool): the cache key has their types,
    inside tuples too."""
    x = np.arange(3, dtype=np.int32)
    g = inert.jit(lambda x, c: x * c, static_argnums=1)
    assert g(x, 2).dtype == np.int32 and g(x, 2.0).dtype == np.float64
    h = inert.jit(lambda x, c: x * c[0], static_argnums=1)
    assert h(x, (2,)).dtype == np.int32 and h(x, (2.0,)).dtype == np.float64
    k = inert.jit(lambda x, flag: x * 2 if isinstance(flag, bool) else x * 3,
                  static_argnames="flag")
    np.testing.assert_array_equal(k(x, flag=True), x * 2)
    np.testing.assert_array_equal(k(x, flag=1), x * 3)
    np.testing.assert_array_equal(k(x, True), x * 2)


def test_a_traced_value_cannot_be_a_static_argument():
    """The trace would be used again for other values, and the cache would keep the
    outer transformation's values alive."""
    g = inert.jit(lambda x, c: x * c, static_argnums=1)
    with pytest.raises(TypeError, match="static argument is a traced value"):
        inert.grad(g, argnums=1)(1.0, 2.0)


def test_jit_without_a_function_is_a_decorator_and_takes_jax_options():
    traces = []

    @inert.jit(static_argnames="n", keep_unused=True, inline=True, device=None)
    def power(x, n):
        traces.append(n)
        return x ** n

    @inert.jit
    def double(x):
        return 2 * x

    assert power(2.0, n=3) == 8.0 and power(3.0, n=3) == 27.0 and traces == [3]
    assert double(1.5) == 3.0
    assert inert.jit(static_argnums=(1,))(lambda x, k: x * k)(2.0, 3) == 6.0
    with pytest.raises(TypeError):
        inert.jit(lambda x: x, 0)  # options are keywords, as in JAX


def test_closed_over_arrays_that_can_change_are_snapshotted():
    """A read-only view of a writeable array (a broadcast), or an Array viewing one, can
    change when the array is written: the program keeps the value it was traced with,
    as JAX does. Of a broadcast only the repeated elements are copied."""
    a, b = np.ones(1000), np.ones(3)
    wide, view = np.broadcast_to(a, (1000, 1000)), b.view(Array)
    g = inert.jit(lambda x: x + inp.max(wide) + view)
    np.testing.assert_array_equal(g(0.0), 2.0)
    a[:], b[:] = 7.0, 5.0
    np.testing.assert_array_equal(g(0.0), 2.0)
    np.testing.assert_array_equal(inert.jit(lambda x: x + inp.max(wide) + view)(0.0), 12.0)
    assert reachable_array_bytes(g) < 3 * a.nbytes  # not wide's 1000 x 1000


def test_grad_of_a_jitted_function_hits_its_cache_and_keeps_no_arrays():
    """grad passes the static `3` as it is (it differentiates argument 0 only), so each
    call finds the one cache entry; a tracer as key made an entry per call, which kept
    the call's arrays (300 calls on 10**5 floats held 230 MB)."""
    seen = []

    def f(x, n):
        seen.append(type(n))
        return inp.sum(inp.sin(x) ** n)

    g = inert.jit(f, static_argnums=1)
    x = np.linspace(0.0, 1.0, 10**5)
    for _ in range(20):
        np.testing.assert_allclose(inert.grad(g)(x, 3), 3 * np.sin(x) ** 2 * np.cos(x))
    (cache,) = [c.cell_contents for c in g.__closure__ if type(c.cell_contents) is dict]
    assert len(cache) == 1 and seen == [int]
    assert reachable_array_bytes(g) < x.nbytes // 10
    for _ in range(3):  # a Python float too, as in JAX
        np.testing.assert_allclose(inert.grad(g)(x, 2.5), 2.5 * np.sin(x) ** 1.5 * np.cos(x))
    assert len(cache) == 2 and seen == [int, float]
