"""Differential testing: random programs (tests/random_programs.py) through random
transform stacks, against finite differences always and against JAX where it is
installed (`pip install "inert[oracle]"`; the JAX oracle is skipped without it).

A stack is a *base* derivative (grad, jvp, grad of grad, jvp of grad, jvp of jvp, and
grad of a grad taken with the second argument `Inactive` at the inner level) under a
*wrapper* (none, jit, vmap, jit of vmap). The base result is checked against central
differences of the function it differentiates: a jvp directly, a gradient through
`<grad, t>`. A point within a kink's reach (`where`, `maximum`, a cond's predicate)
is detected by differences at two step sizes disagreeing, and that check skipped.
Wrapped results must equal the base result (jit) or a loop of it (vmap). JAX, given
the same program, must give the same values and derivatives.

INERT_DIFFERENTIAL_EXAMPLES=2000 runs a longer search than the suite's default.
"""

from __future__ import annotations

import os
import traceback

import numpy as np
import pytest
from harness import numerical_jvp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from random_programs import (
    FORWARD_ONLY,
    INERT,
    LENGTH,
    REVERSE_ONLY,
    build,
    jax_backend,
    programs,
    uses,
)

EXAMPLES = int(os.environ.get("INERT_DIFFERENTIAL_EXAMPLES", "40"))
# JAX compiles every program anew (about a second each): few of them unless asked
JAX_EXAMPLES = int(os.environ.get("INERT_DIFFERENTIAL_EXAMPLES", "6"))
JAX = jax_backend()
FD_RTOL, ORACLE_RTOL = 1e-4, 1e-8


def _case(n_inputs: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    vec = lambda: rng.standard_normal(LENGTH)
    args = tuple(vec() for _ in range(n_inputs))
    return {"args": args, "t": tuple(vec() for _ in args), "t2": tuple(vec() for _ in args),
            "w": vec(), "batch": tuple(np.stack([a, a + 0.1 * vec()]) for a in args)}


# Bases: name -> (mode, g(B, f, case) -> the function differentiated, direction key).
# mode "grad": the result is the gradient of the scalar g in every argument;
# mode "jvp": the result is g's jvp along the direction.
def _grad_grad(B, f, case):
    return lambda *a: B.np.vdot(B.grad(f)(*a), case["w"])


def _grad_grad_inactive(B, f, case):
    return lambda x, y, *rest: B.np.vdot(B.grad(f)(x, B.inactive(y), *rest), case["w"])


BASES = {
    "grad": ("grad", lambda B, f, case: f, "t"),
    "jvp": ("jvp", lambda B, f, case: f, "t"),
    "grad(grad)": ("grad", _grad_grad, "t"),
    "jvp(grad)": ("jvp", lambda B, f, case: B.grad(f), "t"),
    "grad(grad with Inactive)": ("grad", _grad_grad_inactive, "t"),
    "jvp(jvp)": ("jvp", lambda B, f, case: lambda *a: B.jvp(f, a, case["t"])[1], "t2"),
}
FORWARD_BASES = ("jvp", "jvp(jvp)")  # only forward mode of the program itself
WITH_FORWARD = ("jvp", "jvp(jvp)", "jvp(grad)")  # some forward mode of it
WRAPPERS = ("none", "jit", "vmap", "jit(vmap)")


def derivative(B, base: str, f, case):
    """The base derivative of f as a function of the arguments, on backend B."""
    mode, make_g, direction = BASES[base]
    g = make_g(B, f, case)
    if mode == "grad":
        return B.grad(g, argnums=tuple(range(len(case["args"]))))
    return lambda *a: B.jvp(g, a, case[direction])[1]


def _close(got, want, rtol: float) -> bool:
    """Equal within `rtol` of the largest finite magnitude; infinities and NaNs (a
    program that overflows) must be where they are in `want`."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    finite = np.isfinite(want)
    scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
    return (np.array_equal(got[~finite], want[~finite], equal_nan=True)
            and bool(np.all(np.abs(got[finite] - want[finite]) <= rtol * scale)))


def _flat(x) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(p, np.float64)) for p in _as_tuple(x)])


def _check_fd(base: str, f, case, result) -> str | None:
    """The base result against central differences (None if it agrees or the point
    is too near a kink to tell)."""
    mode, make_g, direction = BASES[base]
    g = make_g(INERT, f, case)
    fds = [_flat(numerical_jvp(g, case["args"], case[direction], eps)) for eps in (1e-5, 1e-6)]
    if not np.all(np.isfinite(fds)) or not _close(fds[0], fds[1], 1e-3):
        return None  # overflowing, or within a kink's reach: differences do not converge
    got = (_flat(result) if mode == "jvp" else
           np.sum(_flat(result) * _flat(case[direction]), keepdims=True))
    if not _close(got, fds[1], FD_RTOL):
        return f"{base}: {got} but finite differences give {fds[1]}"
    return None


def _wrapped(base: str, wrapper: str, f, case):
    d = derivative(INERT, base, f, case)
    if wrapper == "jit":
        return INERT.jit(d)(*case["args"])
    if wrapper == "vmap":
        return INERT.vmap(d)(*case["batch"])
    return INERT.jit(INERT.vmap(d))(*case["batch"])


def _check_wrapper(base: str, wrapper: str, f, case, result) -> str | None:
    got = _as_tuple(_wrapped(base, wrapper, f, case))
    if wrapper == "jit":
        want = _as_tuple(result)
    else:  # each lane of the batch by itself
        d = derivative(INERT, base, f, case)
        lanes = [_as_tuple(d(*(b[i] for b in case["batch"]))) for i in range(2)]
        want = tuple(np.stack([lane[k] for lane in lanes]) for k in range(len(lanes[0])))
    if not _close(_flat(got), _flat(want), 1e-10):
        return f"{wrapper} of {base}: {_flat(got)} but unwrapped {_flat(want)}"
    return None


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _check_jax(program, base: str, case, result) -> str | None:
    f_jax = build(program, JAX)
    try:
        want = JAX.jit(derivative(JAX, base, f_jax, case))(*case["args"])
    except Exception:  # noqa: BLE001 — JAX refuses too: nothing to compare
        return None
    if not _close(_flat(result), _flat(want), ORACLE_RTOL):
        return f"{base}: {_flat(result)} but JAX gives {_flat(want)}"
    return None


def check_program(program, base: str, wrapper: str, seed: int, use_jax: bool) -> list[str]:
    """Every disagreement of inert with the oracles on this program and stack."""
    case = _case(program[0], seed)
    f = build(program, INERT)
    problems = []
    # a program whose values overflow is data, not a finding: its checks compare infinities
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            value = f(*case["args"])
            if use_jax and not _close(value, build(program, JAX)(*case["args"]), ORACLE_RTOL):
                problems.append(f"value {value} differs from JAX's")
            result = derivative(INERT, base, f, case)(*case["args"])
            problems.append(_check_fd(base, f, case, result))
            if use_jax:
                problems.append(_check_jax(program, base, case, result))
            if wrapper != "none":
                problems.append(_check_wrapper(base, wrapper, f, case, result))
        except Exception as e:  # noqa: BLE001 — an error is a finding, reported with its origin
            frame = traceback.extract_tb(e.__traceback__)[-1]
            problems.append(f"{type(e).__name__}: {str(e).splitlines()[0]} "
                            f"[{os.path.basename(frame.filename)}:{frame.lineno}]")
    return [p for p in problems if p]


@st.composite
def stacks(draw, program):
    """A base and a wrapper the program supports: no reverse mode through a while_loop,
    no forward mode through a custom_vjp (as in JAX)."""
    no_reverse, no_forward = uses(program[1], FORWARD_ONLY), uses(program[1], REVERSE_ONLY)
    bases = [b for b in BASES if (b in FORWARD_BASES or not no_reverse)
             and not (b in WITH_FORWARD and no_forward)
             and (b != "grad(grad with Inactive)" or program[0] >= 2)]
    assume(bases)
    return draw(st.sampled_from(bases)), draw(st.sampled_from(WRAPPERS))


def _test(use_jax: bool):
    @settings(max_examples=JAX_EXAMPLES if use_jax else EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def test(data):
        program = data.draw(programs(min_inputs=1, max_inputs=3, max_steps=4), "program")
        base, wrapper = data.draw(stacks(program), "stack")
        seed = data.draw(st.integers(0, 2**31 - 1), "seed")
        problems = check_program(program, base, wrapper, seed, use_jax)
        assert not problems, "\n".join(problems)

    return test


test_random_programs_against_finite_differences = _test(use_jax=False)


@pytest.mark.skipif(JAX is None, reason="the JAX oracle needs jax (pip install inert[oracle])")
def test_random_programs_against_jax():
    _test(use_jax=True)()
