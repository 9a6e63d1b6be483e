"""Custom rules run as JAX runs them: which of the body, the rule, `fwd` and `bwd` each
transformation calls, in which order, compared with JAX's sequences.

`JAX_CALLS` is data: what JAX 0.10.2 (float64, CPU, `jax.clear_caches()` before each
case) recorded for the same cases, run on `jax`/`jax.numpy` in place of
`inert`/`inert.numpy`. Where JAX is installed, `test_jax_still_calls_so` records them
again and checks the table.
"""

import functools
import types

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.api import replaying


def make_functions(A, np_, calls):
    """The custom functions of the cases, for the API `A` (inert or jax) and its numpy."""

    @A.custom_jvp
    def f(x):
        calls.append("f")
        return np_.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("f_jvp")
        (x,), (t,) = primals, tangents
        return f(x), np_.cos(x) * t

    @A.custom_vjp
    def g(x):
        calls.append("g")
        return np_.sin(x)

    def g_fwd(x):
        calls.append("g_fwd")
        return g(x), x  # the residual is x: bwd differentiates again through cos

    def g_bwd(x, ct):
        calls.append("g_bwd")
        return (np_.cos(x) * ct,)

    g.defvjp(g_fwd, g_bwd)

    @functools.partial(A.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        calls.append("apply")
        return fn(x)

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        calls.append("apply_jvp")
        (x,), (t,) = primals, tangents
        return apply(fn, x), 2.0 * t

    @functools.partial(A.custom_vjp, nondiff_argnums=(0,))
    def apply_vjp(fn, x):
        calls.append("apply_vjp")
        return fn(x)

    def apply_fwd(fn, x):
        calls.append("apply_fwd")
        return apply_vjp(fn, x), None

    def apply_bwd(fn, res, ct):
        calls.append("apply_bwd")
        return (3.0 * ct,)

    apply_vjp.defvjp(apply_fwd, apply_bwd)

    @A.custom_jvp
    def relu(x):  # Python control flow on the input, in the body and in the rule
        calls.append("relu")
        return x if x > 0 else 0.0 * x

    @relu.defjvp
    def relu_jvp(primals, tangents):
        calls.append("relu_jvp")
        (x,), (t,) = primals, tangents
        return relu(x), t if x > 0 else 0.0 * t

    @A.custom_vjp
    def halve(x):  # a Python while loop on the input
        calls.append("halve")
        n = 0
        while x / 2.0 ** n > 1.0:
            n += 1
        return x / 2.0 ** n

    def halve_fwd(x):
        calls.append("halve_fwd")
        y = halve(x)
        return y, y / x

    def halve_bwd(scale, ct):
        calls.append("halve_bwd")
        return (scale * ct,)

    halve.defvjp(halve_fwd, halve_bwd)
    return types.SimpleNamespace(f=f, g=g, apply=apply, apply_vjp=apply_vjp, relu=relu,
                                 halve=halve)


X, XS = 0.3, np.array([0.1, 0.2, 0.3])


def _total(A, np_, fn):
    return lambda x: np_.sum(fn(x))


def _scan_of(A, fn):
    return lambda c: A.lax.scan(lambda c, _: (fn(c), None), c, length=2)[0]


def _per_function(name):
    """The cases run on `f` (custom_jvp) and `g` (custom_vjp): name -> run(A, np, fn)."""
    return {
        f"{name} eager": lambda A, np_, fn: fn(X),
        f"jvp {name}": lambda A, np_, fn: A.jvp(fn, (X,), (1.0,)),
        f"grad {name}": lambda A, np_, fn: A.grad(fn)(X),
        f"grad {name} three times": lambda A, np_, fn: [A.grad(fn)(X) for _ in range(3)],
        f"vjp {name}": lambda A, np_, fn: A.vjp(fn, X)[1](1.0),
        f"linearize {name}": lambda A, np_, fn: A.linearize(fn, X)[0],
        f"value_and_grad {name}": lambda A, np_, fn: A.value_and_grad(fn)(X),
        f"jit {name}": lambda A, np_, fn: A.jit(fn)(X),
        f"vmap {name}": lambda A, np_, fn: A.vmap(fn)(XS),
        f"grad jit {name}": lambda A, np_, fn: A.grad(A.jit(fn))(X),
        f"jit grad {name}": lambda A, np_, fn: A.jit(A.grad(fn))(X),
        f"vmap grad {name}": lambda A, np_, fn: A.vmap(A.grad(fn))(XS),
        f"grad vmap {name}": lambda A, np_, fn: A.grad(_total(A, np_, A.vmap(fn)))(XS),
        f"grad vmap jit {name}": lambda A, np_, fn: A.grad(
            _total(A, np_, A.vmap(A.jit(fn))))(XS),
        f"jit vmap grad {name}": lambda A, np_, fn: A.jit(A.vmap(A.grad(fn)))(XS),
        f"jvp vmap {name}": lambda A, np_, fn: A.jvp(A.vmap(fn), (XS,), (XS,)),
        f"vmap jvp {name}": lambda A, np_, fn: A.vmap(lambda x: A.jvp(fn, (x,), (1.0,)))(XS),
        f"grad grad {name}": lambda A, np_, fn: A.grad(A.grad(fn))(X),
        f"jvp grad {name}": lambda A, np_, fn: A.jvp(A.grad(fn), (X,), (1.0,)),
        f"jacfwd {name}": lambda A, np_, fn: A.jacfwd(fn)(XS),
        f"jacrev {name}": lambda A, np_, fn: A.jacrev(fn)(XS),
        f"hessian {name}": lambda A, np_, fn: A.hessian(fn)(X),
        f"grad of an inactive {name}": lambda A, np_, fn: A.grad(lambda y, x: y * fn(x))(2.0, X),
        f"grad scan {name}": lambda A, np_, fn: A.grad(_scan_of(A, fn))(X),
        f"grad checkpoint {name}": lambda A, np_, fn: A.grad(A.checkpoint(fn))(X),
    }


def _on(attr: str, run):
    """`run(A, np, fn)` as a case on the function `attr` of `make_functions`."""
    return lambda A, np_, fs: run(A, np_, getattr(fs, attr))


F_CASES, G_CASES = _per_function("f"), _per_function("g")
CASES = {
    **{name: _on("f", run) for name, run in F_CASES.items()},
    **{name: _on("g", run) for name, run in G_CASES.items()},
    "grad apply(sin)": lambda A, np_, fs: A.grad(lambda x: fs.apply(np_.sin, x))(X),
    "jit grad apply(sin)": lambda A, np_, fs: A.jit(A.grad(lambda x: fs.apply(np_.sin, x)))(X),
    "vmap grad apply(sin)": lambda A, np_, fs: A.vmap(A.grad(lambda x: fs.apply(np_.sin, x)))(
        XS),
    "grad apply_vjp(sin)": lambda A, np_, fs: A.grad(lambda x: fs.apply_vjp(np_.sin, x))(X),
    "jit grad apply_vjp(sin)": lambda A, np_, fs: A.jit(
        A.grad(lambda x: fs.apply_vjp(np_.sin, x)))(X),
    "vmap grad apply_vjp(sin)": lambda A, np_, fs: A.vmap(
        A.grad(lambda x: fs.apply_vjp(np_.sin, x)))(XS),
    "grad relu": lambda A, np_, fs: A.grad(fs.relu)(X),
    "jvp relu": lambda A, np_, fs: A.jvp(fs.relu, (-X,), (1.0,)),
    "grad grad relu": lambda A, np_, fs: A.grad(A.grad(fs.relu))(X),
    "jit grad relu": lambda A, np_, fs: A.jit(A.grad(fs.relu))(X),
    "grad halve": lambda A, np_, fs: A.grad(fs.halve)(5.0),
    "grad grad halve": lambda A, np_, fs: A.grad(A.grad(fs.halve))(5.0),
    "jit halve": lambda A, np_, fs: A.jit(fs.halve)(5.0),
}

# Recorded from JAX 0.10.2 (see the module docstring). "raises": the case raised
# (JAX's TypeError for forward mode through a custom_vjp, or a concretization error
# for Python control flow on a traced value under jit).
JAX_CALLS = {
    "f eager": ["f"],
    "jvp f": ["f_jvp", "f"],
    "grad f": ["f_jvp", "f"],
    "grad f three times": ["f_jvp", "f", "f_jvp", "f", "f_jvp", "f"],
    "vjp f": ["f_jvp", "f"],
    "linearize f": ["f_jvp", "f"],
    "value_and_grad f": ["f_jvp", "f"],
    "jit f": ["f"],
    "vmap f": ["f"],
    "grad jit f": ["f", "f_jvp", "f"],
    "jit grad f": ["f_jvp", "f"],
    "vmap grad f": ["f_jvp", "f"],
    "grad vmap f": ["f_jvp", "f"],
    "grad vmap jit f": ["f", "f_jvp", "f"],
    "jit vmap grad f": ["f_jvp", "f"],
    "jvp vmap f": ["f_jvp", "f"],
    "vmap jvp f": ["f_jvp", "f"],
    "grad grad f": ["f_jvp", "f_jvp", "f"],
    "jvp grad f": ["f_jvp", "f_jvp", "f"],
    "jacfwd f": ["f_jvp", "f"],
    "jacrev f": ["f_jvp", "f"],
    "hessian f": ["f_jvp", "f_jvp", "f"],
    "grad of an inactive f": ["f"],
    "grad scan f": ["f", "f_jvp", "f"],
    "grad checkpoint f": ["f", "f_jvp", "f"],
    "g eager": ["g"],
    "jvp g": ["g_fwd", "g", "raises"],
    "grad g": ["g_fwd", "g", "g_bwd"],
    "grad g three times": ["g_fwd", "g", "g_bwd", "g_fwd", "g", "g_bwd", "g_fwd", "g",
                           "g_bwd"],
    "vjp g": ["g_fwd", "g", "g_bwd"],
    "linearize g": ["g_fwd", "g"],
    "value_and_grad g": ["g_fwd", "g", "g_bwd"],
    "jit g": ["g"],
    "vmap g": ["g"],
    "grad jit g": ["g", "g_fwd", "g", "g_bwd"],
    "jit grad g": ["g_fwd", "g", "g_bwd"],
    "vmap grad g": ["g_fwd", "g", "g_bwd"],
    "grad vmap g": ["g_fwd", "g", "g_bwd"],
    "grad vmap jit g": ["g", "g_fwd", "g", "g_bwd"],
    "jit vmap grad g": ["g_fwd", "g", "g_bwd"],
    "jvp vmap g": ["g_fwd", "g", "raises"],
    "vmap jvp g": ["g_fwd", "g", "raises"],
    "grad grad g": ["g_fwd", "g_fwd", "g", "g_bwd"],  # the outer grad runs through bwd's ops
    "jvp grad g": ["g_fwd", "g_fwd", "g", "raises"],
    "jacfwd g": ["g_fwd", "g", "raises"],
    "jacrev g": ["g_fwd", "g", "g_bwd"],
    "hessian g": ["g_fwd", "g_fwd", "g", "raises"],
    "grad of an inactive g": ["g"],
    "grad scan g": ["g", "g_fwd", "g", "g_bwd"],
    "grad checkpoint g": ["g", "g_fwd", "g", "g_bwd"],
    "grad apply(sin)": ["apply_jvp", "apply"],
    "jit grad apply(sin)": ["apply_jvp", "apply"],
    "vmap grad apply(sin)": ["apply_jvp", "apply"],
    "grad apply_vjp(sin)": ["apply_fwd", "apply_vjp", "apply_bwd"],
    "jit grad apply_vjp(sin)": ["apply_fwd", "apply_vjp", "apply_bwd"],
    "vmap grad apply_vjp(sin)": ["apply_fwd", "apply_vjp", "apply_bwd"],
    "grad relu": ["relu_jvp", "relu"],
    "jvp relu": ["relu_jvp", "relu"],
    "grad grad relu": ["relu_jvp", "relu_jvp", "relu"],
    "jit grad relu": ["relu_jvp", "relu", "raises"],
    "grad halve": ["halve_fwd", "halve", "halve_bwd"],
    "grad grad halve": ["halve_fwd", "halve_fwd", "halve", "halve_bwd", "halve_bwd"],
    "jit halve": ["halve", "raises"],
}


def record_calls(A, np_, case: str, clear=lambda: None) -> list[str]:
    return run_case(A, np_, case, clear)[0]


def run_case(A, np_, case: str, clear=lambda: None) -> tuple[list[str], list]:
    """The calls the case made, and its results' leaves (none if it raised)."""
    calls: list[str] = []
    fs = make_functions(A, np_, calls)
    clear()
    try:
        out = CASES[case](A, np_, fs)
    except Exception:  # noqa: BLE001 — which calls came before the error is the point
        calls.append("raises")
        return calls, []
    return calls, [np.asarray(x) for x in inert.tree_util.tree_leaves(out)]


def test_every_case_has_jax_calls():
    assert set(CASES) == set(JAX_CALLS)


# Called again, a transformation replays (`api.replaying`): the second call records the
# program (the body runs while the recording stages it) and differentiates the recording
# (the rules run), the third compiles that (the rules are traced); later calls run
# neither, as `jit(grad(f))` called again would not.
REPLAYED_CALLS = {
    "grad f three times": ["f_jvp", "f", "f", "f_jvp", "f", "f_jvp", "f"],
    "grad g three times": ["g_fwd", "g", "g_bwd", "g", "g_fwd", "g", "g_bwd", "g_fwd", "g",
                           "g_bwd"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inert_calls_what_jax_calls(case):
    """Each case a function's first call (the replay cache is emptied), as JAX's are."""
    calls = record_calls(inert, inp, case, replaying._entries.clear)
    assert calls == REPLAYED_CALLS.get(case, JAX_CALLS[case])


@pytest.mark.parametrize("case", sorted([*F_CASES, *G_CASES]))
def test_results_are_those_of_differentiating_sin(case):
    """f's rule and g's fwd/bwd are sin's own derivative: every transformation gives
    what it gives for inp.sin itself."""
    run = {**F_CASES, **G_CASES}[case]
    calls, got = run_case(inert, inp, case)
    if "raises" in calls:
        return
    want = inert.tree_util.tree_leaves(run(inert, inp, inp.sin))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def test_jax_still_calls_so_with_the_same_results():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for case in CASES:
        calls, got = run_case(jax, jax.numpy, case, jax.clear_caches)
        assert calls == JAX_CALLS[case], case
        assert len(got) == len(run_case(inert, inp, case)[1]), case
        for g, w in zip(got, run_case(inert, inp, case)[1]):
            np.testing.assert_allclose(w, g, rtol=1e-12, atol=1e-14, err_msg=case)


def test_replayed_calls_run_no_rule_and_a_rule_needing_values_keeps_the_plain_path():
    """A replayed call runs neither the body nor the rules of a custom function that
    asks nothing of its values; one whose body asks (a Python `while` on its input)
    runs its body on every call, and as its `fwd` cannot be traced without values, the
    function goes back to the plain path, where the rules run on every call (JAX's)."""
    calls: list[str] = []
    fs = make_functions(inert, inp, calls)
    g = inert.grad(lambda x: fs.g(x) * 3.0)
    for _ in range(3):
        g(X)
    calls.clear()
    assert g(X) == 3.0 * np.cos(X) and calls == []
    h = inert.grad(lambda x: fs.halve(x) * 3.0 if x > 0 else x * 2.0)
    for x, want in ((-1.0, 2.0), (5.0, 0.375), (5.0, 0.375), (-1.0, 2.0), (6.0, 0.375),
                    (6.0, 0.375)):
        calls.clear()
        assert h(x) == want
    assert calls == ["halve_fwd", "halve", "halve_bwd"]
