"""jit's numba backend: which equations fuse, what the kernels compute, and caching.

Each primitive's fused form is checked against numpy by its family's table
(`test_jit_backends_agree`); here are the clusters themselves: their boundaries,
reductions, broadcasting, dtypes, and the kernels' caches."""

import os
import warnings

import numpy as np
import pytest
from harness import check_jit_backends, printed_by_a_new_process

import inert
import inert.numpy as inp
from inert import lax
from inert.core.trace import impl_rules
from inert.interpreters import fusion, kernel_cache
from inert.interpreters.fusion import (
    Cluster,
    compile_jaxpr_numba,
    kernel_source,
    numba_steps,
    plan,
)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def clusters_of(f, *args):
    steps = plan(inert.make_jaxpr(f)(*args).jaxpr)
    return [[e.primitive.name for e in s.eqns] if isinstance(s, Cluster) else s.primitive.name
            for s in steps]


def driver_steps(f, *args):
    """The numba driver's steps: an equation's name where its numpy impl runs, else
    "kernel"."""
    jaxpr = inert.make_jaxpr(f)(*args).jaxpr
    producer = {tuple(e.outputs): e.primitive for e in jaxpr.eqns}

    def name(step):
        prim = producer.get(tuple(step.outputs))
        impl = getattr(step.fn, "func", step.fn)  # a partial of the impl with its params
        if prim is None:
            return "kernel"
        rule = impl_rules[prim]
        return prim.name if impl in (rule, getattr(rule, "unchecked", None)) else "kernel"

    return [name(s) for s in numba_steps(jaxpr)]


def test_an_elementwise_chain_and_its_reduction_are_one_kernel(rng):
    x = rng.standard_normal((4, 5))
    assert clusters_of(lambda x: inp.sum(inp.sin(x) * 2.0 + 1.0), x) == [
        ["sin", "mul", "add", "reduce_sum"]]


def test_a_matmul_splits_the_clusters_around_it(rng):
    w, x = rng.standard_normal((3, 3)), rng.standard_normal(3)
    steps = clusters_of(lambda w, x: inp.sum(inp.tanh(w @ inp.exp(x))), w, x)
    assert steps == [["exp"], "dot_general", ["tanh", "reduce_sum"]]


def test_a_reduction_result_is_read_by_a_later_kernel(rng):
    x = rng.standard_normal((4, 5))

    def softmax(x):
        e = inp.exp(x - inp.max(x, axis=1, keepdims=True))
        return e / inp.sum(e, axis=1, keepdims=True)

    kernels = [s for s in clusters_of(softmax, x) if isinstance(s, list)]
    assert len(kernels) >= 2
    check_jit_backends(softmax, (x,))
    check_jit_backends(inert.grad(lambda x: inp.sum(softmax(x) ** 2)), (x,))


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 2), 2])
@pytest.mark.parametrize("reduce", [inp.sum, inp.max, inp.min, inp.prod],
                         ids=["sum", "max", "min", "prod"])
def test_reductions_over_any_axes(reduce, axes, rng):
    x = rng.uniform(0.5, 1.5, (3, 4, 5))
    check_jit_backends(lambda x: reduce(inp.cos(x) + 1.0, axis=axes), (x,))


def test_max_propagates_nan_like_numpy():
    x = np.array([1.0, np.nan, 3.0])
    check_jit_backends(lambda x: (inp.max(x * 1.0), inp.min(x + 0.0)), (x,))


def test_broadcasts_index_their_operand_without_materialising_it(rng):
    x, b, s = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal()
    f = lambda x, b, s: inp.exp(x + b[None, :]) * s + b[:, None][:1]
    check_jit_backends(f, (x, b, s))
    check_jit_backends(lambda x, c: x * inp.broadcast_to(c[:, None], (4, 3)),
                       (x, rng.standard_normal(4)))


def test_dtypes_are_the_numpy_backends_bit_for_bit(rng):
    x32 = rng.standard_normal(6).astype(np.float32)
    i = np.arange(6)
    f = lambda x, i: (x * 2.0, x + i, (x > 0.5) * x, i * 3, x.astype(np.int32), i > 2,
                      inp.where(i > 2, x, 1))
    check_jit_backends(f, (x32, i))


def test_a_comparison_with_a_python_number_computes_in_numpys_promoted_dtype():
    """NEP 50: a Python float does not yield to an integer, nor a Python int to a bool
    (`int8(0) >= 0.5` compares 0.0 with 0.5, `True > 0` 1 with 0): never the literal
    cast to the strong operand's dtype, in a loop kernel or a scalar one."""
    i8, b = np.arange(-3, 3, dtype=np.int8), np.array([True, False] * 3)
    check_jit_backends(lambda x: ((x >= 0.5) | (x < -1), (x > 0.5) & (x < 2.5)), (i8,))
    check_jit_backends(lambda x: ((x > 0.5) | (x < -1), (x > 0) & (x < 2)), (b,))
    for x in (np.int8(0), np.bool_(True), True):
        check_jit_backends(lambda x: (x >= 0.5, (x > 0.5) | (x == 1.5)), (x,))


def test_select_n_with_several_cases(rng):
    x = rng.standard_normal(7)
    which = np.array([0, 1, 2, 2, 1, 0, 1], np.int32)
    check_jit_backends(lambda w, x: lax.select_n(w, x, inp.sin(x), x * 3.0), (which, x))


def test_scalar_chain_under_grad_is_one_kernel_with_the_same_gradient():
    def chain(x):
        for i in range(60):
            x = inp.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
        return x

    g = inert.grad(chain)
    assert len(clusters_of(g, 0.3)) == 1
    check_jit_backends(g, (0.3,))


def test_whole_programs_agree(rng):
    w1, w2 = rng.standard_normal((8, 16)) * 0.3, rng.standard_normal((16, 2)) * 0.3
    x, y = rng.standard_normal((5, 8)), rng.standard_normal((5, 2))

    def loss(w1, w2):
        h = inp.tanh(x @ w1)
        return 0.5 * inp.mean((h @ w2 - y) ** 2)

    check_jit_backends(inert.value_and_grad(loss, argnums=(0, 1)), (w1, w2))

    def rnn(w, xs):
        h, _ = lax.scan(lambda h, x: (inp.tanh(w @ h + x), None), inp.zeros(3), xs)
        return inp.sum(h)

    check_jit_backends(inert.grad(rnn), (w1[:3, :3], rng.standard_normal((6, 3))))


def test_a_kernel_program_clamps_an_index_out_of_bounds_as_jax_does():
    f = inert.jit(lambda x, i: inp.sin(x)[i] * 2.0, backend="numba")
    x = np.array([0.5, 1.0, 1.5])
    np.testing.assert_array_equal([f(x, 7), f(x, -9)], [np.sin(1.5) * 2.0, np.sin(0.5) * 2.0])


@pytest.fixture
def compilers_chosen(monkeypatch):
    """The backends jit's default compiles with, in order, with no `$INERT_JIT_BACKEND`."""
    from inert.api import compiled  # noqa: PLC0415

    monkeypatch.delenv("INERT_JIT_BACKEND", raising=False)
    chosen = []
    for name in ("compile_jaxpr", "compile_jaxpr_numba"):
        compiler = getattr(compiled, name)
        monkeypatch.setattr(compiled, name,
                            lambda jaxpr, c=compiler, n=name: chosen.append(n) or c(jaxpr))
    return chosen


def test_the_default_backend_switches_to_numba_once_numpys_code_has_run_long_enough(
        monkeypatch, compilers_chosen, rng):
    from inert.api import compiled  # noqa: PLC0415

    f = lambda x: inp.sum(inp.tanh(x) * x)
    x = rng.standard_normal(100)
    g = inert.jit(inert.grad(f))
    first = g(x)
    assert compilers_chosen == ["compile_jaxpr"]  # a second has not passed
    monkeypatch.setattr(compiled, "HOT_SECONDS", 0.0)
    np.testing.assert_allclose(g(x), first, rtol=1e-12)  # numpy's, then numba's compile
    inert.block_until_compiled()
    np.testing.assert_allclose(g(x), first, rtol=1e-12)  # numba's
    assert compilers_chosen == ["compile_jaxpr", "compile_jaxpr_numba"]


def test_time_on_arrays_numba_would_not_run_does_not_count(monkeypatch, compilers_chosen):
    from inert.api import compiled  # noqa: PLC0415

    monkeypatch.setattr(compiled, "HOT_SECONDS", 0.0)
    g = inert.jit(lambda x: x * 2.0)
    masked = np.ma.masked_array(np.arange(3.0))  # numpy's code runs it, numba's refuses
    for _ in range(3):
        np.testing.assert_array_equal(g(masked), [0.0, 2.0, 4.0])
    assert compilers_chosen == ["compile_jaxpr"]


def test_without_numba_the_default_backend_stays_numpys(monkeypatch, compilers_chosen):
    from inert.api import compiled  # noqa: PLC0415

    monkeypatch.setattr(compiled, "HOT_SECONDS", 0.0)
    monkeypatch.setattr(compiled, "numba_available", lambda: False)
    fusion.warn_numba_missing.cache_clear()  # (once a process: tests/api/test_jit_without_numba)
    g = inert.jit(lambda x: x * 2.0)
    with pytest.warns(inert.errors.BackendFallbackWarning):
        assert g(1.5) == 3.0 and g(2.0) == 4.0
    assert compilers_chosen == ["compile_jaxpr"]


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        inert.jit(lambda x: x, backend="xla")


def test_a_second_process_loads_the_kernels_from_disk(tmp_path):
    """Kernels are cached on disk by their source: a new process compiles nothing."""
    script = (
        "import numpy as np, inert, inert.numpy as inp\n"
        "f = inert.jit(lambda x: inp.sum(inp.sin(x) * 3.0 + x), backend='numba')\n"
        "f(np.ones(4))\n"
        "from inert.interpreters import kernel_cache\n"
        "hits = sum(sum(d.stats.cache_hits.values()) for d in kernel_cache.loaded_kernels())\n"
        "print(hits)\n")
    assert printed_by_a_new_process(script, tmp_path)[-1] == "0"
    assert int(printed_by_a_new_process(script, tmp_path)[-1]) >= 1
    assert any(name.endswith(".py") for name in os.listdir(tmp_path))


MOVES = {
    "slice": lambda x: lax.slice(x, (1, 0, 2), (3, 4, 5), (1, 2, 2)) * 2.0,
    "pad": lambda x: lax.pad(x * 2.0 + 1.0, -1.0, ((1, 2, 1), (-1, 0, 0), (0, 1, 2))) + 0.0,
    "transpose": lambda x: inp.transpose(x, (2, 0, 1)) * 2.0,
    "squeeze_expand": lambda x: inp.expand_dims(inp.squeeze(x[:, :1] * 1.0, 1), 0) + 1.0,
    "rev": lambda x: lax.rev(x, (0, 2)) - x,
    "rosenbrock": lambda x: inp.sum(100.0 * (x[1::2] - x[::2] ** 2) ** 2 + (1.0 - x[::2]) ** 2),
}


@pytest.mark.parametrize("name", MOVES)
def test_data_movement_fuses_as_index_maps(name, rng):
    x = rng.standard_normal((3, 4, 5))
    f = MOVES[name]
    check_jit_backends(f, (x,))
    check_jit_backends(inert.grad(lambda x: inp.sum(f(x) ** 2)), (x,))


def test_rosenbrocks_value_and_gradient_are_all_kernels(rng):
    """Strided slices and the pads that transpose them fuse: no equation runs alone."""
    x = rng.standard_normal(10)
    steps = clusters_of(inert.value_and_grad(MOVES["rosenbrock"]), x)
    assert all(isinstance(s, list) for s in steps) and len(steps) <= 3


def test_a_program_compiles_a_bounded_number_of_new_array_kernels(monkeypatch, rng):
    """A Python loop can make a distinct kernel per iteration (its slice offsets differ);
    past the budget of compile time (a kernel's fixed cost and one per equation) the
    clusters run on numpy, and a lone equation never compiles."""
    from inert.interpreters import fusion

    x = rng.standard_normal(40)

    def windows(x):
        return sum(inp.sum(x[i:i + 5] * 2.0 + 1.0) for i in range(0, 30, 3))

    jaxpr = inert.make_jaxpr(windows)(x).jaxpr
    steps = plan(jaxpr)
    first = next(s for s in steps if isinstance(s, Cluster) and len(s.eqns) > 1)
    text = kernel_source(first, fusion.used_outside_clusters(jaxpr, steps)).text()
    # room for two windows' kernels (slice, mul, add, reduce_sum) of the ten
    monkeypatch.setattr(fusion, "MAX_NEW_KERNEL_COST", 2 * fusion.compile_cost(text))
    # counted by what is loaded: none may be evicted meanwhile (earlier tests filled it)
    monkeypatch.setattr(inert.config, "inert_kernels_in_memory", 10**6)

    before = len(kernel_cache.loaded_kernels())
    check_jit_backends(windows, (x,))
    assert len(kernel_cache.loaded_kernels()) - before == 2
    before = len(kernel_cache.loaded_kernels())
    check_jit_backends(lambda x: x[3:9] * 2.0 - 0.0 * 0, (x,))
    check_jit_backends(lambda x: inp.exp(x), (x,))  # one equation: numpy's own call
    assert len(kernel_cache.loaded_kernels()) - before <= 1


def test_a_long_cluster_is_cut_into_kernels_within_the_budget(rng):
    """The gradient of a loop slicing one element at a time: a cluster of as many pads
    as elements is cut at `MAX_CLUSTER_EQNS`, and kernels past the budget run on numpy
    (one kernel of 199 pads and sums took numba 40 s to compile)."""
    from inert.interpreters import fusion

    x = rng.standard_normal(100)
    g = inert.grad(lambda x: sum(inp.sin(x[n]) for n in range(x.shape[0])))
    pads = [e for e in inert.make_jaxpr(g)(x).jaxpr.eqns if e.primitive.name == "pad"]
    assert len(pads) == x.size
    assert max(len(c) for c in clusters_of(g, x) if "pad" in c) == fusion.MAX_CLUSTER_EQNS
    fused = len(pads) - driver_steps(g, x).count("pad")
    assert 0 < fused * (1 + fusion.BRANCH_COST) <= fusion.MAX_NEW_KERNEL_COST
    check_jit_backends(g, (x,))


def test_a_view_read_outside_a_kernel_stays_numpys_view(rng):
    """`x @ x.T`: the transpose reaches the matmul as numpy's view (BLAS's symmetric
    rank-k update, not a copy and a general product), while a kernel beside it reads
    `x` through the transpose's index map."""
    x = rng.standard_normal((32, 32))  # tanh stays numpy's at this size
    t = lambda x: x.T
    f = lambda x: (x @ t(x), inp.sum(t(x) * 2.0 + 1.0))
    assert clusters_of(f, x)[0] == ["transpose"]
    assert driver_steps(f, x) == ["transpose", "dot_general", "kernel"]
    g = lambda x: (inp.sum(inp.tanh(x)), x @ x.T)
    assert clusters_of(g, x)[:2] == ["tanh", ["reduce_sum", "transpose"]]
    assert driver_steps(g, x) == ["tanh", "reduce_sum", "transpose", "dot_general"]
    h = lambda x: (inp.sum(inp.tanh(x) * 2.0 + 1.0), x @ x.T)
    assert driver_steps(h, x) == ["tanh", "transpose", "kernel", "dot_general"]
    both = lambda x: (lambda t: (inp.sum(t * 2.0 + 1.0), x @ t))(x.T)  # read inside too
    assert clusters_of(both, x)[0] == ["transpose", "mul", "add", "reduce_sum"]
    assert driver_steps(both, x) == ["transpose", "kernel", "dot_general"]
    for fn in (f, g, h, both, inert.grad(lambda x: inp.mean(inp.sin(x @ x.T)) + inp.sum(x.T))):
        check_jit_backends(fn, (x,))
    scalar = lambda x: lax.squeeze(x, (0,))  # a 0-d cluster left with nothing to do
    assert driver_steps(scalar, x[0, :1]) == ["squeeze"]
    check_jit_backends(scalar, (x[0, :1],))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float32, np.float64])
def test_small_integer_powers_are_products_that_wrap_and_round_like_numpy(dtype):
    """`x ** 3` fuses as `x * x * x` (numba's `np.power` is a libm call per element):
    integers wrap as numpy's do, floats agree to rounding. Larger integer powers are
    numpy's exact ones (`vector_math.signed_power`), not numba's through float64."""
    x = (np.arange(-20, 21) * 7).astype(dtype) if dtype != np.uint16 else np.arange(0, 400, 9,
                                                                                   dtype=dtype)
    f = lambda x: tuple(lax.integer_pow(x + x, y) for y in (1, 2, 3, 4, 5))
    check_jit_backends(f, (x,))
    jaxpr = inert.make_jaxpr(f)(x).jaxpr
    (cluster,) = plan(jaxpr)
    text = kernel_source(cluster, set(jaxpr.outvars)).text()
    power = "np.power(" if x.dtype.kind == "f" else "_power(np."
    assert text.count(power) == 1  # the fifth power only


def test_a_program_of_kernels_runs_without_an_errstate_and_warns_nothing():
    """Kernels give inf and nan as numpy does, never warning, so a program of kernels
    alone skips the `errstate` (µs per call); one with a numpy step keeps it."""
    x = np.array([0.0, -1.0, 2.0])
    kernels_only = lambda x: (inp.log(x * 1.0) * 2.0, inp.sum(1.0 / x))
    with_numpy = lambda x: inp.log(x)
    for f, warns in ((kernels_only, False), (with_numpy, True)):
        jaxpr = inert.make_jaxpr(f)(x).jaxpr
        assert compile_jaxpr_numba(jaxpr).args[2] is warns  # `_run(generated, jaxpr, warns)`
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            inert.jit(f, backend="numba")(x)
        check_jit_backends(f, (x,))


@pytest.mark.parametrize("size", [None, 2000])  # a scalar kernel, a numba loop
def test_maximum_and_minimum_break_ties_of_zeros_and_propagate_nan_as_numpy_does(size):
    zeros = np.array([-0.0, 0.0, np.nan, 1.0])
    x, y = (a.ravel() for a in np.meshgrid(zeros, zeros))
    for i in range(len(x)):
        a, b = (np.full(size, v) if size else np.float64(v) for v in (x[i], y[i]))
        f = lambda a, b: (1.0 / inp.maximum(a, b), 1.0 / inp.minimum(a, b))
        want = (1.0 / np.maximum(a, b), 1.0 / np.minimum(a, b))
        for backend in ("numpy", "numba"):
            for got, w in zip(inert.jit(f, backend=backend)(a, b), want):
                np.testing.assert_array_equal(got, w, err_msg=f"{backend} {x[i]} {y[i]}")
