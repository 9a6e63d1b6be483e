"""Every checkpoint policy saves what JAX's saves, on the same programs, asked of JAX
itself (skipped without JAX, which the project does not depend on): the programs are
written once for both namespaces, and JAX's `saved_residuals` descriptions ("from the
argument w1", "output of cos from ...", "named 'a' from ...") are read as inert's
origins ("input 0", "cos", "name")."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import numpy as np
import pytest
from harness import checkpoint_policies

import inert
import inert.numpy as inp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
from jax._src.ad_checkpoint import saved_residuals as jax_saved_residuals  # noqa: E402
from jax.ad_checkpoint import checkpoint_name as jax_checkpoint_name  # noqa: E402


def mlp(np_, name):
    def f(w1, w2, x):
        h = np_.sin(name(w1 @ x, "a"))
        return np_.sum(np_.sin(name(w2 @ h, "b")))
    return f


def attention(np_, name):
    """A dot with batch dimensions (scores, named), then one without (a projection)."""
    def f(q, k, p):
        s = name(np_.einsum("bij,bkj->bik", q, k), "a")
        return np_.sum(np_.sin(np_.einsum("bik,kl->bil", s, p)))
    return f


def chain(np_, name):
    """Layers of different widths, so that every value has a shape of its own."""
    def f(w1, w2, w3, x):
        for i, w in enumerate((w1, w2, w3)):
            h = x @ w
            x = name(np_.sin(h), "a" if i % 2 else "b") * h
        return np_.sum(np_.exp(x))
    return f


PROGRAMS = {
    "mlp": (mlp, [(4, 3), (5, 4), (3,)]),
    "attention": (attention, [(2, 3, 5), (2, 3, 5), (3, 4)]),
    "chain": (chain, [(4, 5), (5, 6), (6, 7), (3, 4)]),
}


def jax_origin(description: str, arg_names: list[str]) -> str:
    """inert's name for the origin JAX describes."""
    argument = re.fullmatch(r"from the argument (\w+)", description)
    if argument:
        return f"input {arg_names.index(argument.group(1))}"
    if description.startswith("named "):
        return "name"
    return re.match(r"output of (\w+)", description).group(1)


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("policy", list(checkpoint_policies(inert.checkpoint_policies)))
def test_the_saved_set_is_jaxs(program, policy, rng):
    make, shapes = PROGRAMS[program]
    args = [rng.standard_normal(s) for s in shapes]
    f_jax = make(jnp, jax_checkpoint_name)
    names = list(inspect.signature(f_jax).parameters)
    theirs = sorted((jax_origin(d, names), tuple(a.shape)) for a, d in jax_saved_residuals(
        jax.checkpoint(f_jax, policy=checkpoint_policies(jax.checkpoint_policies)[policy]),
        *args))
    ours = sorted((r.origin, r.aval.shape) for r in inert.saved_residuals(
        inert.checkpoint(make(inp, inert.checkpoint_name),
                         policy=checkpoint_policies(inert.checkpoint_policies)[policy]), *args))
    assert_same_saved(ours, theirs, refuses_names_only=policy.startswith("save_anything"))


def assert_same_saved(ours: list, theirs: list, refuses_names_only: bool):
    """Equal, except where a policy refused a name over an equation it saves (JAX's
    `save_anything_except_these_names`): both save the equation's output, which JAX
    describes by the name the value carries and inert by the equation (of the same
    shape; every value of these programs' layers has a shape of its own)."""
    ours_left, theirs_left = Counter(ours) - Counter(theirs), Counter(theirs) - Counter(ours)
    assert refuses_names_only or not theirs_left, (ours, theirs)
    assert all(origin == "name" for origin, _ in theirs_left), (ours, theirs)
    assert sorted(s for _, s in ours_left.elements()) == \
        sorted(s for _, s in theirs_left.elements()), (ours, theirs)


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_gradients_are_jaxs(program, rng):
    make, shapes = PROGRAMS[program]
    args = [rng.standard_normal(s) for s in shapes]
    argnums = tuple(range(len(args)))
    want = jax.grad(make(jnp, jax_checkpoint_name), argnums=argnums)(*args)
    f = inert.checkpoint(make(inp, inert.checkpoint_name), policy=inert.checkpoint_policies.
                         memory_budget(sum(a.nbytes for a in args)))
    for got, expected in zip(inert.grad(f, argnums=argnums)(*args), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
