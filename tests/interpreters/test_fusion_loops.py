"""jit's numba backend on control flow: loops whose bodies compile run as native code.

Each case checks values and dtypes against the numpy backend (`check_jit_backends`)
and which top-level loops became one compiled function (`native`). Sizes are small
and shared between cases, since every distinct loop is one numba compile."""

import re

import numpy as np
import pytest
from harness import check_jit_backends

import inert
import inert.numpy as inp
from inert import lax
from inert.core.ir import Jaxpr, Var
from inert.interpreters import fusion, kernel_cache
from inert.interpreters.ad import add_tangents, zeros_p
from inert.interpreters.fusion_loops import (
    MAX_EQNS,
    NATIVE_PROGRAM_SIZE,
    loop_source,
    native_rules,
    native_step,
    program_source,
)
from inert.primitives.linalg.dot_general import DEFERRED_OUTER, OUTER_BLOCK
from inert.primitives.shape.structural import reshape_p

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def native(f, *args) -> list[tuple[str, bool]]:
    """Each top-level control-flow equation of `f`'s program, and whether it compiles."""
    jaxpr = inert.make_jaxpr(f)(*args).jaxpr
    return [(e.primitive.name, native_step(e, [99]) is not None)
            for e in jaxpr.eqns if e.primitive in fusion.step_rules]


def loop_text(f, *args) -> str:
    """The module compiled for the last top-level loop of `f`'s program."""
    eqn = [e for e in inert.make_jaxpr(f)(*args).jaxpr.eqns if e.primitive in fusion.step_rules][-1]
    return loop_source(eqn, list(dict.fromkeys(a for a in eqn.inputs if type(a) is Var)))


def program_text(f, *args) -> str:
    """The module of `f`'s whole program as one native function (`native_program`)."""
    jaxpr = inert.make_jaxpr(f)(*args).jaxpr
    return program_source(Jaxpr((), (*jaxpr.constvars, *jaxpr.invars), jaxpr.eqns,
                                tuple(dict.fromkeys(jaxpr.outvars))))


def rnn(W, h0, xs):
    return inp.sum(lax.scan(lambda h, x: (inp.tanh(W @ h + x), h * 2.0), h0, xs)[1]) + \
        inp.sum(lax.scan(lambda h, x: (inp.tanh(W @ h + x), None), h0, xs)[0])


@pytest.fixture
def rnn_args(rng):
    return rng.standard_normal((4, 4)) / 2, rng.standard_normal(4), rng.standard_normal((5, 4))


@pytest.mark.parametrize("argnums", [(1, 2), (0, 1, 2)], ids=["W inactive", "W active"])
def test_an_rnns_gradient_runs_every_loop_natively(argnums, rnn_args):
    """The forward scans and the backward ones (matrix-vector products, an outer
    product accumulated into a carry, reversed) each compile to one function."""
    f = inert.value_and_grad(rnn, argnums=argnums)
    check_jit_backends(f, rnn_args)
    loops = native(f, *rnn_args)
    assert len(loops) >= 3 and all(ok for _, ok in loops)


def test_sums_into_a_carry_are_in_place_on_the_loops_own_copy(rng):
    """A cotangent summed over the steps (`add_any` of an outer product, or of a
    matrix product) updates its carry in place; the user's initial array is untouched."""
    def f(c, d, xs):
        def step(carry, x):
            c, d = carry
            return (add_tangents(c, lax.dot_general(x, x, (((), ()), ((), ())))),
                    add_tangents(d, x[:, None] @ x[None, :])), None
        return lax.scan(step, (c, d), xs)[0]

    c, d, xs = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), rng.standard_normal((5, 4))
    kept = c.copy(), d.copy()
    check_jit_backends(f, (c, d, xs))
    np.testing.assert_array_equal(c, kept[0])
    np.testing.assert_array_equal(d, kept[1])
    assert native(f, c, d, xs) == [("scan", True)]


def test_grad_of_a_fori_loop_and_a_cond_inside_it(rng):
    def f(x):
        def body(i, c):
            return lax.cond(i < 3, lambda c: inp.sin(c) * x, lambda c: c + 0.5 * x, c)
        return inp.sum(lax.fori_loop(0, 6, body, x))

    x = rng.standard_normal(4)
    check_jit_backends(inert.grad(f), (x,))
    assert native(inert.grad(f), x) and all(ok for _, ok in native(inert.grad(f), x))


def test_a_while_loop_on_scalars_keeps_integer_and_float32_carries():
    def newton(a):
        def body(s):
            x, i, n = s
            return (x + a / x) * np.float32(0.5), i + 1, n + np.int32(2)
        return lax.while_loop(lambda s: s[1] < 20, body, (a, 0, np.int32(1)))

    a = np.float32(3.0)
    check_jit_backends(newton, (a,))
    out = inert.jit(newton, backend="numba")(a)
    assert [np.asarray(o).dtype for o in out] == [np.float32, np.int64, np.int32]
    assert native(newton, a) == [("while", True)]


def test_jvp_of_a_while_loop_with_array_carries(rng):
    def f(x):
        return lax.while_loop(lambda c: inp.sum(c[0]) < 100.0,
                              lambda c: (c[0] * 1.5 + 1.0, c[1] + 1), (x, 0))[0]

    x = rng.uniform(1.0, 2.0, 4)
    check_jit_backends(lambda x, t: inert.jvp(f, (x,), (t,)), (x, np.ones(4)))


def test_nested_loops_compile_into_one_function(rng):
    def f(x):
        def outer(c, row):
            inner = lax.fori_loop(0, 3, lambda i, d: d * inp.cos(row) + i, c)
            return inner, inp.sum(inner * row)
        return lax.scan(outer, x, inp.ones((4, 3)) * x)

    x = rng.standard_normal(3)
    check_jit_backends(f, (x,))
    check_jit_backends(inert.grad(lambda x: inp.sum(f(x)[1])), (x,))
    assert native(f, x) == [("scan", True)]


def test_indexing_by_the_loop_counter_and_its_gradient(rng):
    """`x[i]` and `c.at[i].set(...)` with a traced scalar index compile (a gather and a
    scatter; the gradient scatter-adds); an index out of bounds is clamped, as in JAX."""
    def f(x, c):
        x = inp.asarray(x)

        def body(i, carry):
            s, c = carry
            return s + x[i] * x[-1 - i], c.at[i].set(c[i + 1] * x[i])
        return lax.fori_loop(0, 3, body, (0.0, c))

    x, c = rng.standard_normal(4), rng.standard_normal((4, 2))
    check_jit_backends(f, (x, c))
    check_jit_backends(inert.grad(lambda x, c: f(x, c)[0] + inp.sum(f(x, c)[1]), (0, 1)), (x, c))
    assert native(f, x, c) == [("scan", True)]
    beyond = lambda x, n: lax.fori_loop(0, n, lambda i, s: s + inp.asarray(x)[i], 0.0)
    for backend in ("numpy", "numba"):
        np.testing.assert_allclose(inert.jit(beyond, backend=backend, static_argnums=1)(x, 6),
                                   x[0] + x[1] + x[2] + 3 * x[3], rtol=1e-12)


def test_a_body_that_does_not_compile_runs_through_its_impl(rng):
    def f(x):
        return lax.scan(lambda c, row: (inp.sort(c * row), inp.cumsum(c)), x, inp.ones((3, 4)))

    x = rng.standard_normal(4)
    check_jit_backends(f, (x,))
    assert native(f, x) == [("scan", False)]


def test_a_body_too_long_for_numba_to_compile_quickly_runs_through_its_impl():
    def chain(c):
        for _ in range(MAX_EQNS // 2 + 1):
            c = c * 0.5 + 0.25
        return c

    assert native(lambda x: lax.fori_loop(0, 2, lambda i, c: chain(c), x), 1.0) == [
        ("scan", False)]


@pytest.mark.parametrize("length", [0, 3])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_of_any_length_and_direction(length, reverse, rng):
    def f(c, xs):
        return lax.scan(lambda c, x: (c * 0.5 + x[0], (c, x[1] > 0)), c, xs, reverse=reverse)

    check_jit_backends(f, (np.float64(1.5), rng.standard_normal((length, 2))))


def test_a_switch_of_three_branches(rng):
    def f(i, x):
        return lax.switch(i, [lambda x: inp.sin(x), lambda x: x * 2.0, lambda x: -x], x)

    x = rng.standard_normal(4)
    for i in range(4):
        check_jit_backends(f, (np.int32(i), x))
    assert native(f, np.int32(0), x) == [("cond", True)]


def test_a_second_jit_of_a_loop_loads_no_new_kernel(rng):
    def f(x):
        return lax.fori_loop(0, 4, lambda i, c: c * 0.75 - 1.0, x)

    x = rng.standard_normal(3)
    inert.jit(f, backend="numba")(x)
    before = set(map(id, kernel_cache.loaded_kernels()))  # (a count would not see one
    np.testing.assert_allclose(inert.jit(f, backend="numba")(x), f(x), rtol=1e-12)
    assert set(map(id, kernel_cache.loaded_kernels())) == before  # loaded and one evicted)


def test_a_kernel_numba_fails_to_compile_falls_back_to_the_impl(rng):
    """Generated code numba cannot type (here a rule made to emit some) is no error for
    the user: the loop runs through its impl. With checks on, as in these tests, the
    refusal is raised instead, so every loop the other tests call native compiled."""
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: inp.reshape(c, (2, 3)).T.ravel() + 1.0, x)

    x = rng.standard_normal(6)
    rule = native_rules[reshape_p]
    dict.__setitem__(native_rules, reshape_p, lambda *args, **params: ["np.no_such_thing()"])
    try:
        with pytest.raises(AttributeError, match="no_such_thing"):
            inert.jit(f, backend="numba")(x)
        inert.enable_checks(False)
        np.testing.assert_allclose(inert.jit(f, backend="numba")(x), f(x), rtol=1e-12)
        assert native(f, x) == [("scan", True)]
    finally:
        inert.enable_checks(True)
        dict.__setitem__(native_rules, reshape_p, rule)


def test_reshapes_in_a_loop_dropping_leading_unit_axes_are_indices(rng):
    """`reshape` from (1, 1, 1, 3) to (3,) is the view `x[0, 0, 0]`, from (6,) to (3, 2)
    numba's reshape, to and from one element an index and a filled array; the values
    are the numpy backend's, NaN and -0.0 included."""
    def f(x, s):
        def step(c, _):
            row = inp.reshape(c, (1, 1, 1, 3)) * 2.0
            one = inp.reshape(inp.reshape(s, (1, 1)), ())
            return inp.reshape(row, (3,)) + one, inp.reshape(inp.concatenate([c, c]), (3, 2))
        return lax.scan(step, x, None, length=2)

    args = np.array([np.nan, -0.0, 1.5]), np.float64(-0.0)
    check_jit_backends(f, args)
    text = loop_text(f, *args)
    assert re.search(r"= \w+\[0, 0, 0\]\n", text) and ".reshape((3,))" not in text
    assert ".reshape((3, 2))" in text


def test_a_loop_clamps_reads_and_drops_writes_out_of_bounds(rng):
    """As JAX does: a read past the end reads the last element, a write there is
    dropped, in the native loop as in the impl; the next call is right too."""
    def f(x, i):
        x = inp.asarray(x)
        return lax.fori_loop(0, 2, lambda j, c: (c[0] + x[i + j], c[1].at[i + j].set(1.0)),
                             (0.0, x))

    x = rng.standard_normal(4)
    for backend in ("numpy", "numba"):
        total, written = inert.jit(f, backend=backend)(x, 3)
        np.testing.assert_allclose(total, 2 * x[3], rtol=1e-12)
        np.testing.assert_array_equal(written, [*x[:3], 1.0])
        np.testing.assert_allclose(inert.jit(f, backend=backend)(x, 1)[0], x[1] + x[2],
                                   rtol=1e-12)
    assert native(f, x, 3) == [("scan", True)]  # the numba loop clamps and drops itself


def rnn_state(W, h0, xs):
    return inp.sum(lax.scan(lambda h, x: (inp.tanh(W @ h + x), None), h0, xs)[0])


def test_a_weights_outer_product_cotangent_is_summed_by_blocks_of_rows(rng):
    """From `DEFERRED_OUTER` elements a side, the backward loop copies each step's two
    factors into blocks of rows and adds each full block (and, after the loop, what is
    left) by loops, no BLAS call (smaller ones are added in place, as tested above)."""
    n = DEFERRED_OUTER
    W = rng.standard_normal((n, n)) / (2 * np.sqrt(n))
    args = W, rng.standard_normal(n), rng.standard_normal((OUTER_BLOCK + 6, n))
    f = inert.value_and_grad(rnn_state, argnums=(0, 1, 2))
    check_jit_backends(f, args)
    text = loop_text(f, *args)
    assert "np.dot(" not in text
    assert len(re.findall(r"r\d+ = [pq]\d+\[n\d+\]\n\s+for j", text)) == 2  # (`copy`)


@pytest.mark.parametrize("rows", [DEFERRED_OUTER, DEFERRED_OUTER + 1], ids=["even", "odd"])
def test_a_blocked_sum_of_outer_products_has_the_numpy_backends_bits(rows, rng):
    """The blocks of rows add each element's products in the order of the steps, with
    no contraction or reassociation: W's cotangent, a sum of `y_t ⊗ x_t` over 70 steps
    (a full block and a rest), is the numpy backend's bit for bit, signed zeros,
    infinities and NaNs included, for an even number of rows (added two at a time)
    and an odd one."""
    def f(W, xs, ys):
        return lax.scan(lambda c, xy: (c + inp.sum((W @ xy[0]) * xy[1]), None), 0.0,
                        (xs, ys))[0]

    n, steps = DEFERRED_OUTER, OUTER_BLOCK + 6
    xs, ys = rng.standard_normal((steps, n)), rng.standard_normal((steps, rows)) * 1e10
    xs[3, :4], ys[5, 4:8], ys[steps - 1, rows - 4:] = [np.inf, -0.0, 0.0, np.nan], -0.0, -np.inf
    xs[7, 8:12] = 1e300
    args = rng.standard_normal((rows, n)), xs, ys
    g = [inert.jit(inert.grad(f), backend=b)(*args) for b in ("numpy", "numba")]
    assert np.isnan(g[0]).any() and np.isinf(g[0]).any()
    np.testing.assert_array_equal(np.isnan(g[1]), np.isnan(g[0]))
    finite = ~np.isnan(g[0])
    np.testing.assert_array_equal(g[1][finite].view(np.int64), g[0][finite].view(np.int64))
    assert "np.dot(" not in loop_text(inert.grad(f), *args)


def test_matrix_vector_products_in_a_loop_read_matrices_by_rows(rng):
    """`W @ h` and `h @ W.T` are products by rows; `u @ W` and `W.T @ u`, by columns,
    read a transposed copy of W (a parameter: made once, by loops, before the loops,
    here two deep); `u @ V` for V computed in the body sums rows scaled by `u`. No BLAS
    call, nor any of numba's array functions."""
    def f(W, h0, xs):
        def step(h, x):
            u = W @ h + h @ W.T
            V = W * x[0]
            inner = lax.fori_loop(0, 2, lambda i, v: inp.tanh(v + u @ W), W.T @ u)
            return inp.tanh(inner + u @ V) * 0.5, None
        return inp.sum(lax.scan(step, h0, xs)[0])

    W, h0, xs = (rng.standard_normal(s) for s in ((5, 3), 3, (4, 3)))
    check_jit_backends(f, (W, h0, xs))
    text = loop_text(f, W, h0, xs)
    assert "vector_matvec_5_3(" in text and "vector_matvec_3_5(" in text
    assert "vector_vecmat(" in text and "np.dot" not in text and "np.ascontiguousarray" not in text
    assert re.search(r"t\d+\[i\d+, j\d+\] = a0\[j\d+, i\d+\]", text)  # W.T's copy, by loops


def test_small_matrix_and_dot_products_in_a_loop_are_loops(rng):
    """`A @ C`, `C.T @ B`, `C @ B.T` (each operand contracted along either axis) and a
    dot product of two rows, on small matrices: `small_matmul`'s loops and a loop, no
    BLAS call (numba compiles its `np.dot` for each kind of product); values to
    rounding, a NaN where numpy has one."""
    def f(A, B, C0):
        def step(C, _):
            C = inp.tanh(A @ C + C.T @ B - C @ B.T)
            return C, inp.dot(C[0], C[1])
        return lax.scan(step, C0, None, length=3)

    A, B, C0 = (rng.standard_normal((4, 4)) for _ in range(3))
    check_jit_backends(f, (A, B, C0))
    B[1, 2] = np.nan
    check_jit_backends(f, (A, B, C0))
    text = loop_text(f, A, B, C0)
    assert "np.dot" not in text and text.count("small_matmul(") == 4  # 3 calls, 1 definition


def test_stacked_outputs_are_written_by_the_kernels_computing_them(rng):
    """A stacked row a body's kernel computes is its output buffer, which the carry
    then reads; the same value stacked twice, an input, a reduction and a matrix
    product stacked are copied into their rows, arrays by loops (numba's setitem of an
    array costs seconds of compile time: `NativeFunction.copy`)."""
    def f(W, c, xs):
        def step(c, x):
            y = inp.tanh(c + x)
            return y, (y, y, x, inp.sum(y), W @ y)
        return lax.scan(step, c, xs)

    args = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((4, 3))
    check_jit_backends(f, args)
    text = loop_text(f, *args)
    assert len(re.findall(r"= k\d+\([^)]*, s\d+\[i\d+\]\)", text)) == 1
    assert len(re.findall(r"r\d+ = s\d+\[i\d+\]\n\s+for j", text)) == 3
    assert native(f, *args) == [("scan", True)]


def test_a_concatenate_in_a_body_compiles(rng):
    def f(x, xs):
        return lax.scan(lambda c, r: (inp.concatenate([c[1:], r[:1] * c[0]]), None), x, xs)[0]

    args = rng.standard_normal(3), rng.standard_normal((4, 2))
    check_jit_backends(f, args)
    assert native(f, *args) == [("scan", True)]


def _copied_operands(text: str) -> int:
    return len(re.findall(r"\br\d+ = v\d+\n", text))  # (`copy` into a result)


def _read_elsewhere_too(c, r):
    y = c[1:] * 2.0
    return inp.concatenate([y, r[:1] + y[:1]])


def _twice(c, r):
    y = c[:1] * r[0]
    return inp.concatenate([y, y, c[2:] + 1.0])


CONCATENATIONS = {  # a scan body (carry, row) -> its new carry; the operands it copies
    "two computed": (lambda c, r: inp.concatenate([c[1:] * 2.0, r[:1] * c[0]]), 0),
    "one read elsewhere too": (_read_elsewhere_too, 1),
    "one twice": (_twice, 2),
    "a zero-size one": (lambda c, r: inp.concatenate([c[:0] * 2.0, c * r[1], c[3:]]), 0),
    "along axis 1, int": (lambda c, r: inp.concatenate(
        [c[:, 1:] + 1, c[:, :1] * r[:1].astype(np.int64)], axis=1), 0),
    "bool": (lambda c, r: inp.concatenate([~c[1:], r[:1] > 0.0]), 0),
}


@pytest.mark.parametrize("case", CONCATENATIONS)
def test_a_concatenates_operands_are_written_in_place_by_their_clusters(case, rng):
    """An operand of a concatenate that a cluster computes for it alone is written by
    the cluster into its place in the result: no copy. One read elsewhere too, or
    twice, is copied; the values are numpy's, bit for bit."""
    body, copies = CONCATENATIONS[case]
    c = {"along axis 1, int": rng.integers(-3, 3, (2, 3)), "bool": rng.random(3) > 0.5
         }.get(case, rng.standard_normal(3))
    args = c, rng.standard_normal((4, 2))
    f = lambda c, xs: lax.scan(lambda c, r: (body(c, r), None), c, xs)[0]
    check_jit_backends(f, args, rtol=0)
    assert native(f, *args) == [("scan", True)]
    assert _copied_operands(loop_text(f, *args)) == copies


def test_a_gradients_shifted_states_and_zeros_carry_are_not_copied(rnn_args):
    """An RNN's gradient concatenates its initial state with the states but the last,
    each written into the concatenation where it is computed; the last state is a view
    of the states; the backward loop sums the weight's cotangent into the zeros made
    for it, not into a copy of them."""
    f = inert.value_and_grad(rnn_state, argnums=(0, 1, 2))
    check_jit_backends(f, rnn_args)  # (tanh and sums: not numpy's bits)
    text = program_text(f, *rnn_args)
    assert _copied_operands(text) == 0 and ".copy()" not in text
    assert re.search(r"v\d+ = v\d+\[4:5\]\n", text)


@pytest.mark.parametrize("read_elsewhere", [False, True], ids=["alone", "read elsewhere"])
def test_a_carrys_zeros_read_elsewhere_too_are_copied_before_the_sums(read_elsewhere, rng):
    """Zeros read elsewhere too (by a view, a slice of them) are copied for the loop to
    sum into: the view still reads zeros."""
    def f(xs):
        zeros = zeros_p.bind(shape=(3, 3), dtype=np.dtype(np.float64))
        step = lambda c, x: (add_tangents(c, x[:, None] @ x[None, :]), None)
        total = lax.scan(step, zeros, xs)[0]
        return (total, zeros[1:] @ xs[0]) if read_elsewhere else total

    xs = rng.standard_normal((5, 3))
    check_jit_backends(f, (xs,), rtol=0)
    text = program_text(f, xs)
    assert (".copy()" in text) == read_elsewhere
    assert bool(re.search(r"v\d+ = v\d+\[1:3\]\n", text)) == read_elsewhere


def test_a_slice_a_program_returns_is_its_own_array_not_a_view(rng):
    """A slice the program returns is copied by its loops (a view of the states inside
    is exact: nothing writes into them after their loop)."""
    f = lambda xs: lax.scan(lambda c, x: (c + x, c * x), xs[0], xs)[1][2:]
    xs = rng.standard_normal((5, 3))
    check_jit_backends(f, (xs,), rtol=0)
    assert not re.search(r"= v\d+\[2:5\]", program_text(f, xs))
    assert not np.shares_memory(inert.jit(f, backend="numba")(xs), xs)


def test_a_program_with_loops_runs_as_one_native_function(rnn_args, rng):
    """Every equation of an RNN's gradient compiles, so jit's driver has one step; an
    equation outside the loops making more than `NATIVE_PROGRAM_SIZE` elements, or a
    libm function numpy computes faster (1024 elements or more), or an equation with
    no native form (a sort) keeps the plan: the loops alone are compiled."""
    f = inert.value_and_grad(rnn_state, argnums=(0, 1, 2))
    check_jit_backends(f, rnn_args)
    assert len(fusion.numba_steps(inert.make_jaxpr(f)(*rnn_args).jaxpr)) == 1

    loop = lambda x: lax.fori_loop(0, 2, lambda i, c: c * 0.5 + 1.0, x)
    big = rng.standard_normal(NATIVE_PROGRAM_SIZE + 1)
    for g, x in ((lambda x: loop(x) * 2.0, big), (lambda x: inp.sin(loop(x)), big[:2000]),
                 (lambda x: inp.sort(loop(x)), big[:2000])):
        check_jit_backends(g, (x,))
        assert len(fusion.numba_steps(inert.make_jaxpr(g)(x).jaxpr)) > 1
