"""checkpoint policies: each saves what JAX's saves, and gradients do not change.

The expected sets are derived from JAX's documented semantics (jax.checkpoint_policies;
`partial_eval_jaxpr_custom`): a known value the tangent program reads is saved when the
policy calls its equation saveable, else recomputed from saved values and the inputs;
an input the tangent program reads is saved as it is. JAX's jvp rules read what
inert's do here: `sin` keeps `cos(x)`, `dot_general` both operands, names pass the
tangent through unnamed. JAX is not installed, so they are written as data.
"""

import numpy as np
import pytest
from harness import assert_allclose, check_grads, checkpoint_policies

import inert
import inert.numpy as inp
from inert import checkpoint_policies as cp
from inert import lax
from inert.benchmarks.memory import reachable_array_bytes


def mlp(w1, w2, x):
    h = inp.sin(inert.checkpoint_name(w1 @ x, "a"))
    return inp.sum(inp.sin(inert.checkpoint_name(w2 @ h, "b")))


def attention(q, k):
    """A dot with batch dimensions (scores), then one without (a projection)."""
    s = inp.einsum("bij,bkj->bik", q, k)
    return inp.sum(inp.tanh(inp.einsum("bik,kl->bil", s, k[0])))


IN = [("input 0", (4, 4)), ("input 1", (4, 4)), ("input 2", (4,))]
# policy -> what JAX saves for `mlp` (besides the three inputs every policy keeps)
MLP_SAVED = {
    "nothing_saveable": [],
    "everything_saveable": [("cos", (4,)), ("sin", (4,)), ("cos", (4,))],
    "dots_saveable": [("dot_general", (4,)), ("dot_general", (4,))],
    "dots_with_no_batch_dims_saveable": [("dot_general", (4,)), ("dot_general", (4,))],
    "save_only_these_names('a')": [("name", (4,))],
    "save_any_names_but_these('a')": [("name", (4,))],  # b's
    "save_anything_except_these_names('a')": [("cos", (4,)), ("sin", (4,)), ("cos", (4,))],
    # both dots may be saved, but b's name makes the second dot unnecessary
    "both(dots_with_no_batch_dims, only('b'))": [("dot_general", (4,)), ("name", (4,))],
}
POLICIES = checkpoint_policies(cp)


def saved(f, *args):
    return sorted((r.origin, r.aval.shape) for r in inert.saved_residuals(f, *args))


@pytest.fixture
def mlp_args(rng):
    return rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), rng.standard_normal(4)


@pytest.mark.parametrize("name", list(POLICIES))
def test_each_policy_saves_what_jax_saves(name, mlp_args):
    f = inert.checkpoint(mlp, policy=POLICIES[name])
    assert saved(f, *mlp_args) == sorted(IN + MLP_SAVED[name])
    _, vjp_fn = inert.vjp(f, *mlp_args)
    assert reachable_array_bytes(vjp_fn) == sum(r.nbytes for r in inert.saved_residuals(
        f, *mlp_args))


@pytest.mark.parametrize("name", list(POLICIES))
def test_gradients_do_not_depend_on_the_policy(name, mlp_args):
    want = inert.grad(mlp, argnums=(0, 1, 2))(*mlp_args)
    got = inert.grad(inert.checkpoint(mlp, policy=POLICIES[name]), argnums=(0, 1, 2))(
        *mlp_args)
    for g, w in zip(got, want):
        assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_batch_dimensions_decide_between_the_dot_policies(rng):
    q, k = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))
    dots = saved(inert.checkpoint(attention, policy=cp.dots_saveable), q, k)
    no_batch = saved(inert.checkpoint(attention, policy=cp.dots_with_no_batch_dims_saveable),
                     q, k)
    # JAX: dots_saveable keeps the scores (2,3,3) and the projection (2,3,3); the other
    # only the projection, recomputing the scores (read by the projection's tangent)
    assert dots == sorted([("input 0", (2, 3, 5)), ("input 1", (2, 3, 5)),
                           ("dot_general", (2, 3, 3)), ("dot_general", (2, 3, 5))])
    assert no_batch == sorted([("input 0", (2, 3, 5)), ("input 1", (2, 3, 5)),
                               ("dot_general", (2, 3, 5))])


def test_recomputation_is_reported(mlp_args, capsys):
    inert.print_saved_residuals(inert.checkpoint(mlp), *mlp_args)
    nothing = capsys.readouterr().out
    inert.print_saved_residuals(inert.checkpoint(mlp, policy=cp.dots_saveable), *mlp_args)
    dots = capsys.readouterr().out
    # nothing saved: both dots (2*4*4 flops each), then both names, sin and the two cos
    # (4 each); with the dots saved only those five
    assert "recomputed in the backward pass: 7 equations, about 84 flops" in nothing
    assert "recomputed in the backward pass: 5 equations, about 20 flops" in dots
    inert.print_saved_residuals(mlp, *mlp_args)
    assert "0 equations" in capsys.readouterr().out


def test_static_argnums_are_python_values(rng):
    def f(x, power):
        return inp.sum(x ** power) if power > 1 else inp.sum(x)

    x = rng.standard_normal(3)
    g = inert.grad(inert.checkpoint(f, static_argnums=(1,), prevent_cse=False))(x, 3)
    assert_allclose(g, 3 * x ** 2, rtol=1e-12)
    assert_allclose(inert.grad(inert.checkpoint(f, static_argnums=1))(x, 1), np.ones(3))


def test_checkpoint_name_is_an_identity_for_every_transform(rng):
    x = rng.standard_normal((3, 2))
    named = lambda v: inp.sum(inp.sin(inert.checkpoint_name(v, "x")) * v)
    check_grads(named, (x,), rng, order=2)
    assert_allclose(inert.vmap(lambda v: inert.checkpoint_name(v * 2, "y"))(x), 2 * x)
    assert_allclose(inert.checkpoint_name({"a": x}, "z")["a"], x)
    assert_allclose(inert.linear_transpose(lambda v: inert.checkpoint_name(v, "t"), x)(x)[0], x)


def test_policy_inside_a_scan_body(rng):
    w, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((5, 3))
    step = inert.checkpoint(lambda h, x: (inp.tanh(w @ h + x), None), policy=cp.dots_saveable)
    f = lambda h0: inp.sum(lax.scan(step, h0, xs)[0])
    check_grads(f, (rng.standard_normal(3),), rng)


# ---------------------------------------------------------------------------------
# memory_budget: inert's own policy


def tanh_chain(w, x):
    for _ in range(4):
        x = inp.tanh(x @ w)
    return inp.sum(x ** 2)


@pytest.fixture
def chain_args(rng):
    return rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((8, 16))


def nbytes(f, *args):
    return sum(r.nbytes for r in inert.saved_residuals(f, *args))


@pytest.mark.parametrize("budget", [3072, 4096, 6144, 9000, 10 ** 6])
def test_a_budget_is_kept_and_gradients_do_not_change(budget, chain_args):
    f = inert.checkpoint(tanh_chain, policy=cp.memory_budget(budget))
    kept = nbytes(f, *chain_args)
    assert kept <= budget
    _, vjp_fn = inert.vjp(f, *chain_args)
    assert reachable_array_bytes(vjp_fn) == kept
    want = inert.grad(tanh_chain, argnums=(0, 1))(*chain_args)
    for g, w in zip(inert.grad(f, argnums=(0, 1))(*chain_args), want):
        assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_more_budget_recomputes_less(chain_args, capsys):
    flops = []
    for budget in (3072, 4096, 6144, 10 ** 6):
        inert.print_saved_residuals(
            inert.checkpoint(tanh_chain, policy=cp.memory_budget(budget)), *chain_args)
        line = capsys.readouterr().out.splitlines()[-1]
        flops.append(int(line.split("about ")[1].split(" flops")[0].replace(",", "")))
    inert.print_saved_residuals(tanh_chain, *chain_args)
    unchecked = capsys.readouterr().out.splitlines()[-1]
    assert flops == sorted(flops, reverse=True) and flops[0] > flops[-1]
    # the unchecked plan fits: its residuals (tanh outputs, not also 1 - tanh^2 as
    # everything_saveable keeps), its cheap recomputation
    assert f"about {flops[-1]:,} flops" in unchecked
    generous = inert.checkpoint(tanh_chain, policy=cp.memory_budget(10 ** 6))
    assert saved(generous, *chain_args) == saved(tanh_chain, *chain_args)
    assert nbytes(generous, *chain_args) < nbytes(
        inert.checkpoint(tanh_chain, policy=cp.everything_saveable), *chain_args)


def test_a_budget_below_every_plan_names_the_smallest(chain_args):
    # w and x must be kept (every tangent reads them): 2048 + 1024 bytes
    with pytest.raises(inert.errors.MemoryBudgetError, match="smallest feasible budget is "
                       "3,072 bytes") as e:
        inert.grad(inert.checkpoint(tanh_chain, policy=cp.memory_budget(3071)))(*chain_args)
    assert "test_checkpoint_policies.py" in str(e.value)


def test_the_smallest_plan_is_a_cut_not_the_inputs(rng):
    """The tangent reads only cos(sum(x)), computed from all of x: saving the scalar sum
    (or its cosine) is the minimum, 8 bytes, where recomputing from x keeps 800."""
    x = rng.standard_normal(100)
    f = lambda x: inp.sin(inp.sum(x))
    assert nbytes(inert.checkpoint(f), x) == 800
    smallest = inert.checkpoint(f, policy=cp.memory_budget(8))
    assert nbytes(smallest, x) == 8
    assert_allclose(inert.grad(smallest)(x), np.cos(np.sum(x)) * np.ones(100), rtol=1e-12)
    with pytest.raises(inert.errors.MemoryBudgetError, match="is 8 bytes"):
        inert.saved_residuals(inert.checkpoint(f, policy=cp.memory_budget(7)), x)
