"""What reverse mode keeps between the passes: only what active derivatives need."""

import numpy as np

import inert
import inert.numpy as inp
from inert import lax
from inert.benchmarks.memory import reachable_array_bytes


def total_bytes(f, *args) -> int:
    return sum(r.nbytes for r in inert.saved_residuals(f, *args))


def test_mul_with_inactive_operand_keeps_only_that_operand(rng):
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    f = lambda x, y: inp.sum(x * y)
    infos = inert.saved_residuals(f, x, inert.Inactive(y))
    assert [r.origin for r in infos] == ["input 1"]
    assert total_bytes(f, x, y) == 2 * x.nbytes  # all active: both operands


def test_linear_function_with_literals_keeps_nothing(rng):
    x = rng.standard_normal(1000)
    assert inert.saved_residuals(lambda x: inp.sum(x * 2.0 + 1.0), x) == []


def test_tanh_keeps_its_output_once(rng):
    x = rng.standard_normal(100)
    infos = inert.saved_residuals(lambda x: inp.sum(inp.tanh(x)), x)
    assert len(infos) == 1 and infos[0].nbytes == x.nbytes


def test_values_computed_from_the_same_inputs_keep_those_inputs(rng):
    """maximum's mask and the square's coefficient both come from x and tanh(c): saving
    those two beats saving the mask, the coefficient and the square one by one (found
    by the hypothesis programs: with c Inactive, more was kept than with c active)."""
    def f(x, c):
        v = inp.maximum(x, inp.tanh(c)) ** 2
        return inp.sum(v * v + v)

    x, c = rng.standard_normal(1000), rng.standard_normal(1000)
    assert total_bytes(f, x, inert.Inactive(c)) == 2 * x.nbytes
    assert total_bytes(f, x, c) == 2 * x.nbytes


def test_residual_source_line_points_at_user_code(rng):
    x = rng.standard_normal(10)
    infos = inert.saved_residuals(lambda x: inp.sum(inp.sin(x)), x)
    assert infos[0].source_info.filename == __file__


def test_aux_output_keeps_nothing(rng):
    x = rng.standard_normal((8, 8))

    def f(x):
        return inp.sum(inp.tanh(x)), inp.sum(inp.sin(x) * x)

    _, vjp_fn, _ = inert.vjp(f, x, has_aux=True)
    assert [r.origin for r in vjp_fn.linear.residual_info] == ["tanh"]


def _returned_functions(f, args):
    """Every function reverse and forward mode hand the user for `f` at `args`, and
    the residual bytes saved_residuals reports for it."""
    _, vjp_fn = inert.vjp(f, *args)
    _, f_jvp = inert.linearize(f, *args)
    tangents = [np.zeros_like(a.value if isinstance(a, inert.Inactive) else a) for a in args]
    tangents = [None if isinstance(a, inert.Inactive) else t for a, t in zip(args, tangents)]
    f_t = inert.linear_transpose(f_jvp, *tangents)  # a Python None is an empty pytree
    reported = sum(r.nbytes for r in inert.saved_residuals(f, *args))
    return {"vjp": vjp_fn, "linearize": f_jvp, "transposed linearize": f_t}, reported


@inert.custom_vjp
def _cube(x):
    return x ** 3


_cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3.0 * x * x * g,))


def _loop_programs(rng):
    W, h0, xs = rng.standard_normal((6, 6)) / 3, rng.standard_normal(6), rng.standard_normal((9, 6))

    def fori_rnn(W, h0, xs):
        return inp.sum(lax.fori_loop(0, 9, lambda i, h: inp.tanh(W @ h + xs[i]), h0))

    def scan_rnn(h0, xs):
        return inp.sum(lax.scan(lambda h, x: (inp.tanh(h * x), None), h0, xs)[0])

    return [(fori_rnn, (inert.Inactive(W), h0, inert.Inactive(xs))), (fori_rnn, (W, h0, xs)),
            (scan_rnn, (h0, inert.Inactive(xs))), (scan_rnn, (h0, xs))]


def test_returned_functions_hold_exactly_the_reported_bytes(rng):
    """What the user holds is what inert reports: the arrays reachable from each
    returned function are the residuals, never the primal inputs themselves."""
    x, y = rng.standard_normal(5000), rng.standard_normal(5000)
    f = lambda x, y: inp.sum(inp.tanh(x) * y + inp.sin(y))
    g = lambda x, y: inp.sum(_cube(x) * y)
    cases = [(f, (x, y)), (f, (x, inert.Inactive(y))), (f, (inert.Inactive(x), y)),
             (lambda x, y: inp.sum(x * y), (x, inert.Inactive(y))),
             (g, (x, inert.Inactive(y))), *_loop_programs(rng)]
    for fun, args in cases:
        if fun is g:  # custom_vjp has no forward mode
            _, vjp_fn = inert.vjp(fun, *args)
            returned = {"vjp": vjp_fn}
            reported = sum(r.nbytes for r in inert.saved_residuals(fun, *args))
        else:
            returned, reported = _returned_functions(fun, args)
        for what, obj in returned.items():
            assert reachable_array_bytes(obj) == reported, (what, args, reported)


def test_w1_holds_y_only(rng):
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    _, vjp_fn = inert.vjp(lambda x, y: inp.sum(x * y), x, inert.Inactive(y))
    assert reachable_array_bytes(vjp_fn) == y.nbytes  # x was kept too, for its shape


def test_print_saved_residuals_table(rng, capsys):
    x = rng.standard_normal(4)
    inert.print_saved_residuals(lambda x: inp.sum(inp.sin(x)), x)
    out = capsys.readouterr().out
    assert "cos" in out and "1 residual, 32 bytes in total" in out


def test_where_against_a_constant_keeps_no_zeros_and_has_no_nan(rng):
    x = rng.uniform(0.1, 2.0, 1000)
    x[::10] = 0.0
    f = lambda x: inp.sum(inp.where(x > 0, inp.sqrt(x), 0.0))
    infos = inert.saved_residuals(f, x)
    assert sum(r.nbytes for r in infos) == 8 * x.size + x.size  # sqrt output and the mask
    g = inert.grad(f)(x)
    np.testing.assert_array_equal(g[::10], 0.0)  # the true derivative, not 0 * inf = NaN
    np.testing.assert_allclose(g[x > 0], 0.5 / np.sqrt(x[x > 0]))
    assert np.all(np.isfinite(inert.hessian(f)(x[:20])))


def test_masked_cotangents_keep_the_operand_dtype():
    c = np.array([True, False, True])
    x = np.ones(3, np.float32)
    for f in (lambda x: inp.sum(inp.where(c, x.astype(np.float64), 0.0)),
              lambda x: inp.sum(inp.where(c, x * np.ones(3), 0.0))):
        g = inert.grad(f)(x)
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, c.astype(np.float32))


def test_nested_wheres_compose_their_masks():
    x = np.array([-1.0, 0.0, 1.0, 4.0])
    with np.errstate(invalid="ignore"):
        g = inert.grad(lambda x: inp.sum(inp.where(x > 0, inp.where(x > -5, inp.sqrt(x), 0.0),
                                                   0.0)))(x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.25])
    g = inert.grad(lambda x: inp.sum(inp.where(x > 1, x * 2, inp.where(x > 0, x * 3, x))))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0, 3.0, 2.0])
