"""`check_jaxpr`: is a jaxpr well formed?

Single assignment, every variable defined before use, and each equation's output
avals equal to what its primitive's abstract evaluation gives for its inputs.
Sub-jaxprs found in params are checked too, and must be free of refs: control flow
discharges the refs its bodies use into carries (`primitives.state`). The tests switch
`enable_checks` on, which runs this on every jaxpr a transformation produces.
"""

from __future__ import annotations

from .avals import AbstractRef
from .errors import InertError
from .ir import ClosedJaxpr, Jaxpr, Literal, Var, state_effects
from .trace import abstract_eval


class JaxprTypeError(InertError, TypeError):
    """A jaxpr that breaks the IR's invariants: an internal error, not the user's."""


class _Checks:
    enabled = False


def enable_checks(on: bool = True) -> None:
    """Check every jaxpr a transformation builds (slow; the test suite turns it on).

    Example:
        >>> inert.enable_checks()  # from here on, every transformation's output is checked
    """
    _Checks.enabled = on


def checks_enabled() -> bool:
    return _Checks.enabled


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Type-check a jaxpr (or a closed one) and every sub-jaxpr: each variable defined once
    before use, each equation's output types those its primitive's abstract eval gives, refs
    confined to where they may be. Raises `JaxprTypeError` naming the equation; the tests
    run it on every transformation's output (`enable_checks`).

    Example:
        >>> inert.check_jaxpr(inert.make_jaxpr(jnp.sin)(1.0))  # a well-typed program: None
    """
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise JaxprTypeError("a closed jaxpr needs one const per constvar")
        jaxpr = jaxpr.jaxpr
    defined: set[Var] = set()
    for v in (*jaxpr.constvars, *jaxpr.invars):
        _define(v, defined, "an input")
    for eqn in jaxpr.eqns:
        for atom in eqn.inputs:
            _check_use(atom, defined, eqn.primitive.name)
        expected = abstract_eval(eqn.primitive, [a.aval for a in eqn.inputs], eqn.params)
        got = [v.aval for v in eqn.outputs]
        if [a.strong() for a in expected] != [a.strong() for a in got]:
            raise JaxprTypeError(
                f"{eqn.primitive.name}: outputs typed {list(map(str, got))} but its abstract "
                f"eval gives {list(map(str, expected))} (at {eqn.source_info})")
        for v in eqn.outputs:
            _define(v, defined, eqn.primitive.name)
        for param in eqn.params.values():
            for sub in param if isinstance(param, tuple) else (param,):
                if isinstance(sub, (Jaxpr, ClosedJaxpr)):
                    _check_ref_free(sub, eqn.primitive.name)
                    check_jaxpr(sub)
    for atom in jaxpr.outvars:
        _check_use(atom, defined, "the jaxpr's outputs")


def _check_ref_free(jaxpr: Jaxpr | ClosedJaxpr, where: str) -> None:
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    if state_effects(jaxpr) or any(type(v.aval) is AbstractRef for v in
                                   (*jaxpr.constvars, *jaxpr.invars, *jaxpr.outvars)):
        raise JaxprTypeError(f"a sub-jaxpr of {where} has refs: they should have been "
                             "discharged into its operands and outputs")


def _define(v: Var, defined: set, where: str) -> None:
    if not isinstance(v, Var):
        raise JaxprTypeError(f"{where} binds {v!r}, which is not a Var")
    if v in defined:
        raise JaxprTypeError(f"variable {v.aval} assigned twice (by {where})")
    defined.add(v)


def _check_use(atom, defined: set, where: str) -> None:
    if isinstance(atom, Literal):
        return
    if atom not in defined:
        raise JaxprTypeError(f"{where} reads a variable {atom.aval} before it is defined")
