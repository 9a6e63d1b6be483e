"""Every primitive has every rule it needs, or sits on an explicit list saying why not."""

import inert  # noqa: F401 — registers every primitive
from inert.core.trace import ALL_PRIMITIVES, abstract_eval_rules, impl_rules
from inert.interpreters.ad import jvp_rules
from inert.interpreters.transpose import transpose_rules

# Linear in (some of) their operands, so the backward pass can transpose them. Every
# other primitive is nonlinear in all its operands: its tangent program is built from
# these, never from itself.
LINEAR = {
    "add", "add_any", "broadcast_in_dim", "checkpoint", "concatenate", "cond", "custom_jvp_call",
    "custom_lin",
    "convert_element_type", "conv_general_dilated", "reduce_window_sum", "window_gather",
    "window_scatter_add",
    "cumsum", "div", "dot_general", "dynamic_slice", "dynamic_update_slice", "expand_dims",
    "gather", "mul", "name", "neg", "pad", "reduce_sum", "reshape", "rev", "revolve_scan",
    "scan", "scatter",
    "scatter_add", "scatter_mul", "select_n", "slice", "squeeze", "sub", "transpose",
    "xlog1py", "xlogy", "zeros",
    "expm_frechet", "solve", "triangular_solve",  # linear in their second operand
    "solve_sylvester",  # linear in its third
    "psum", "all_gather",  # collectives over a named vmap axis
    "complex", "conj", "imag", "real", "fft",  # real-linear
}


# Not linear, but with a transpose rule that only raises JAX's clear error: a while loop's
# tangent program (linearize works) cannot run backwards without a known trip count.
REFUSES_TRANSPOSE = {"while"}

# custom_lin is the tangent map of a custom_vjp function: only its transpose (the user's
# bwd) is known, so it has no jvp (differentiating it again goes through bwd instead).
NO_JVP = {"custom_lin"}


def test_every_primitive_has_impl_abstract_eval_and_jvp():
    for table, exempt in ((impl_rules, set()), (abstract_eval_rules, set()),
                          (jvp_rules, NO_JVP)):
        missing = sorted(p.name for p in ALL_PRIMITIVES if p not in table and
                         p.name not in exempt)
        assert not missing, f"no {table.kind} rule: {missing}"


def test_exactly_the_linear_primitives_have_transposes():
    with_transpose = {p.name for p in ALL_PRIMITIVES if p in transpose_rules}
    assert with_transpose == LINEAR | REFUSES_TRANSPOSE


def test_primitive_names_are_unique():
    names = [p.name for p in ALL_PRIMITIVES]
    assert len(names) == len(set(names))
