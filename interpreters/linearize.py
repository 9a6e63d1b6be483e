"""Reverse mode as `transpose ∘ partial_eval ∘ jvp`.

`linearize_flat` stages the jvp of a function with its primal inputs *known* and its
tangents unknown: the whole program is recorded, partial evaluation chooses as
residuals the known values the (pruned) tangent program must read, and only then
does the forward pass run — just the known work the outputs and residuals need.
The result is a `LinearFunction`: the tangent program plus its residuals, which can
be run forwards (`linearize`) or transposed (`vjp`).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray, tangent_aval
from ..core.ir import Jaxpr, SourceInfo, Var
from ..core.rules import RuleTable
from ..core.staging import KnownStaging, cyclic_gc_paused, stage_with_known
from ..core.trace import get_aval
from .ad import jvp_flat
from .eval import eval_jaxpr
from .partial_eval import Split, partial_eval_jaxpr, partial_eval_rules
from .remat import Cost, nonlinear_cost
from .transpose import repeated_backward_pass

residual_origin_rules = RuleTable("residual origin")
"""`rule(eqn, index) -> (origin, source_info)`: where output `index` of an equation with
a body came from inside it (a checkpoint's saved value names the body's primitive)."""


@attrs.frozen
class ResidualInfo:
    """What one residual is: its type and where it came from."""

    aval: ShapedArray
    origin: str  # "input 0", "constant", or the primitive that produced it
    source_info: SourceInfo | None

    @property
    def nbytes(self) -> int:
        return self.aval.nbytes


@attrs.frozen(eq=False)
class LinearFunction:
    """A linear map from the active inputs' tangents to the outputs' tangents.

    `jaxpr` takes the residuals then one tangent per active input, and returns one
    tangent per output whose tangent is not symbolically zero (`out_zero`).
    """

    jaxpr: Jaxpr
    residuals: tuple[Any, ...]
    residual_info: tuple[ResidualInfo, ...]
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    out_zero: tuple[bool, ...]

    def apply(self, tangents: list) -> list:
        outs = iter(eval_jaxpr(self.jaxpr, (), [*self.residuals, *tangents]))
        return [Zero(a) if z else next(outs) for a, z in zip(self.out_avals, self.out_zero)]

    def recomputed(self) -> Cost:
        """What the backward pass computes again from the residuals before its linear
        work: checkpointed bodies, and the cheap values partial evaluation did not save."""
        return nonlinear_cost(self.jaxpr,
                              [False] * len(self.residuals) + [True] * len(self.in_avals))

    def transpose(self, cts: list) -> list:
        nonzero_cts = [ct for ct, z in zip(cts, self.out_zero) if not z]
        mask = [False] * len(self.residuals) + [True] * len(self.in_avals)
        return repeated_backward_pass(self.jaxpr, list(self.residuals), mask, nonzero_cts)


def linearize_flat(fun, primals: list, active: list[bool], n_diff_outputs=None,
                   name: str = "vjp", diff_values: bool = True) -> tuple[list, LinearFunction]:
    """Run `fun` at `primals` and linearize it in the `active` inputs.

    `n_diff_outputs()`, asked once `fun` has run, says how many leading outputs are
    differentiated (the rest are `has_aux` outputs: computed, never differentiated,
    never keeping residuals); None differentiates all. `name` is the user's
    transformation, for error messages. Without `diff_values` the differentiated
    outputs' values are not computed (`grad` discards them), their avals stand in:
    the forward pass runs only what the residuals and the other outputs need.
    """
    with cyclic_gc_paused():
        return _linearize_flat(fun, primals, active, n_diff_outputs, name, diff_values)


def _linearize_flat(fun, primals, active, n_diff_outputs, name, diff_values):
    traced = trace_jvp(fun, primals, active, n_diff_outputs, name)
    return run_forward(traced, split_known(traced), diff_values)


@attrs.frozen(eq=False)
class TracedJvp:
    """The first phase's result: the staged jvp, whose known values are not computed
    yet, and its inputs' and outputs' tangent structure."""

    staged: KnownStaging
    tangent_avals: list[ShapedArray]
    out_zero: list[bool]  # per differentiated output: is its tangent symbolically zero
    n_out: int  # primal outputs of the staged jvp (its tangent outputs follow)


def trace_jvp(fun, primals: list, active: list[bool], n_diff_outputs, name: str) -> TracedJvp:
    """Phase 1 of `linearize_flat`: stage the jvp of `fun`, primals known."""
    primal_avals = [get_aval(p) for p in primals]
    tangent_avals = [tangent_aval(a) for a, act in zip(primal_avals, active) if act]
    jvp_fun, out_zero = _jvp_of(fun, primal_avals, active, n_diff_outputs, name)
    staged = stage_with_known(jvp_fun, primal_avals + tangent_avals,
                              [*primals, *[None] * len(tangent_avals)], partial_eval_rules,
                              eager_calls=True)
    n_out = len(staged.jaxpr.outvars) - (len(out_zero) - sum(out_zero))
    return TracedJvp(staged, tangent_avals, out_zero, n_out)


def split_known(traced: TracedJvp) -> Split:
    """Phase 2: partial evaluation chooses the residuals and the tangent program."""
    jaxpr, n_out = traced.staged.jaxpr, traced.n_out
    unknown_inputs = [False] * (len(jaxpr.invars) - len(traced.tangent_avals)) + \
        [True] * len(traced.tangent_avals)
    return partial_eval_jaxpr(jaxpr, unknown_inputs,
                              [False] * n_out + [True] * (len(jaxpr.outvars) - n_out),
                              known_defs=traced.staged.builder.known_defs)


def run_forward(traced: TracedJvp, split: Split, diff_values: bool = True
                ) -> tuple[list, LinearFunction]:
    """Phase 3, the forward pass: only the outputs asked for and the residuals are
    computed. Returns the primal outputs and the linear function (phase 4, the
    backward pass, is its `transpose`)."""
    staged, n_out, out_zero = traced.staged, traced.n_out, traced.out_zero
    jaxpr = staged.jaxpr
    skipped = 0 if diff_values else len(out_zero)
    values = staged.final_values([*jaxpr.outvars[skipped:n_out], *split.residuals])
    out_primals = [a.aval for a in jaxpr.outvars[:skipped]] + values[:n_out - skipped]
    residuals = values[n_out - skipped:]
    diff_avals = [tangent_aval(get_aval(p)) for p in out_primals[:len(out_zero)]]
    linear = LinearFunction(split.unknown, tuple(map(_unviewed, residuals)),
                            _residual_infos(split.residuals, jaxpr, staged.builder.known_defs),
                            tuple(traced.tangent_avals),
                            tuple(diff_avals), tuple(out_zero))
    return out_primals, linear


def _jvp_of(fun, primal_avals, active, n_diff_outputs, name):
    """`(primals, active tangents) -> (primal outputs, nonzero output tangents)`, and
    the list it fills with which differentiated outputs have a zero tangent."""
    out_zero: list[bool] = []

    def jvp_fun(*args):
        ps, ts = args[:len(primal_avals)], iter(args[len(primal_avals):])
        tangents = [next(ts) if act else Zero(tangent_aval(a)) for a, act in
                    zip(primal_avals, active)]
        out_primals, out_tangents = jvp_flat(fun, ps, tangents, name)
        n_diff = len(out_primals) if n_diff_outputs is None else n_diff_outputs()
        out_zero.extend(type(t) is Zero for t in out_tangents[:n_diff])
        return [*out_primals, *(t for t in out_tangents[:n_diff] if type(t) is not Zero)]

    return jvp_fun, out_zero


def _unviewed(value):
    """A residual that is a view of a larger array (a strided slice) is copied, so the
    backward pass does not keep the whole base alive for it."""
    if isinstance(value, np.ndarray) and value.base is not None and \
            value.base.nbytes > value.nbytes:
        return value.copy()
    return value


def _residual_infos(residuals: list[Var], jaxpr: Jaxpr, known_defs: dict
                    ) -> tuple[ResidualInfo, ...]:
    """Where each residual came from; `known_defs` (known var -> index of its equation)
    finds a residual's equation without a pass over the whole program."""
    inputs = {v: i for i, v in enumerate(jaxpr.invars)}
    infos = []
    for v in residuals:
        if v in known_defs:
            eqn = jaxpr.eqns[known_defs[v]]
            infos.append(ResidualInfo(v.aval, *residual_origin(eqn, eqn.outputs.index(v))))
        else:
            infos.append(ResidualInfo(v.aval, f"input {inputs[v]}" if v in inputs else
                                      "constant", None))
    return tuple(infos)


def residual_origin(eqn, index: int) -> tuple[str, SourceInfo | None]:
    """The primitive and line that computed output `index` of `eqn`."""
    rule = residual_origin_rules.get(eqn.primitive)
    return rule(eqn, index) if rule else (eqn.primitive.name, eqn.source_info)
