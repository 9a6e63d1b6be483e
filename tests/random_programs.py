"""Random programs for differential tests, written once and run on two backends.

A program is data: a list of steps over the values computed so far (the inputs
first), each step naming an operation by its index in one of the tables below. The
same program is built into a function by `build(program, backend)` for inert or for
JAX (`BACKENDS`), so one program can be checked against finite differences and, where
JAX is installed, against JAX. Operations are written against the backend's `np` and
`lax` namespaces, which share JAX's names and signatures.

Every value is a float64 vector of length 3 (mixed dtypes appear inside a step:
booleans, integers and float32 scalars that promote to float64), kept in a range
where the operations are smooth except at kinks (`where`, `maximum`, a `cond`'s
predicate), which the checks detect rather than avoid. Steps cover elementwise math,
`.at` updates and traced indices, `cond`, `switch`, `scan`, `fori_loop`, `while_loop`
(forward mode only, as in JAX), `custom_jvp`/`custom_vjp` (reverse mode only) and
`checkpoint` around a nested program.
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import strategies as st

import inert

LENGTH = 3  # every value is a vector of this length


@attrs.frozen
class Backend:
    """What a program needs from inert or JAX, under the same names."""

    name: str
    np: object
    lax: object
    grad: object
    jvp: object
    jit: object
    vmap: object
    checkpoint: object
    custom_jvp: object
    custom_vjp: object
    inactive: object  # marks an argument inactive for one transform (JAX has no marker)


INERT = Backend("inert", inert.numpy, inert.lax, inert.grad, inert.jvp, inert.jit,
                inert.vmap, inert.checkpoint, inert.custom_jvp, inert.custom_vjp,
                inert.Inactive)


def jax_backend() -> Backend | None:
    """JAX (float64) if it is installed (`pip install inert[oracle]`), else None."""
    try:
        import jax  # noqa: PLC0415 — optional oracle, absent in CI
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return Backend("jax", jax.numpy, jax.lax, jax.grad, jax.jvp, jax.jit, jax.vmap,
                   jax.checkpoint, jax.custom_jvp, jax.custom_vjp, lambda x: x)


def _index(x):
    """A traced integer in 0..2 computed from data."""
    return (x[0] > 0).astype(np.int32) + (x[1] > 0).astype(np.int32)


# Unary operations (B is the backend, x a value).
UNARY = [
    lambda B, x: B.np.sin(x),
    lambda B, x: B.np.tanh(x),
    lambda B, x: B.np.exp(-x * x),
    lambda B, x: x * 0.5 - 1.0,
    lambda B, x: B.np.sqrt(x * x + 1.0),
    lambda B, x: B.np.where(x > 0, x, 0.1 * x),
    lambda B, x: B.np.cumsum(x),
    lambda B, x: x[::-1],
    lambda B, x: B.np.sum(x) + x * 0.0,
    lambda B, x: B.np.log1p(x * x),
    lambda B, x: x ** 2,
    lambda B, x: x ** 3.0,
    lambda B, x: B.np.abs(x) * x,
    # mixed dtypes: booleans, integers and float32 promoting to float64
    lambda B, x: (x > 0) * x + x,
    lambda B, x: B.np.where(x > 0, 2, 1) * x,
    lambda B, x: x * np.arange(1, LENGTH + 1, dtype=np.int32),
    lambda B, x: x * np.float32(0.5) + np.float32(1.0),
    lambda B, x: x * x[_index(x)],  # a traced index
    lambda B, x: B.np.roll(x, _index(x)),  # a traced shift
    lambda B, x: x.at[np.array([0, 2, 0])].multiply(x[1]),
]

# Binary operations.
BINARY = [
    lambda B, x, y: x * y,
    lambda B, x, y: x + y,
    lambda B, x, y: x - y * 2.0,
    lambda B, x, y: x / (y * y + 1.0),
    lambda B, x, y: B.np.maximum(x, y),
    lambda B, x, y: B.np.outer(x, y) @ y,
    lambda B, x, y: x * B.np.dot(x, y),
    lambda B, x, y: B.np.einsum("i,i->i", x, y),
    lambda B, x, y: x.at[np.array([0, 2, 0])].add(y[1]),  # repeated indices
    lambda B, x, y: x.at[1].set(y[0] * 2.0),
    lambda B, x, y: x.at[::2].multiply(y[:2]),
    lambda B, x, y: x.at[_index(y)].add(y[2]),  # a traced index
    lambda B, x, y: x.at[np.array([0, 2, 0])].max(y),
    lambda B, x, y: x.at[1:].divide(y[:2] * y[:2] + 1.0),
    lambda B, x, y: B.np.where(y > 0, x, y),
]


def _cond(B, ops, x, y):
    return B.lax.cond(B.np.sum(x) > 0, lambda a, b: UNARY[ops[0]](B, a) * b,
                      lambda a, b: UNARY[ops[1]](B, b) + a, x, y)


def _switch(B, ops, x, y):
    branches = [lambda a, b, k=k: BINARY[k](B, a, b) for k in ops]
    return B.lax.switch(_index(x), branches, x, y)


# Loop bodies squash their carry with tanh, so that iterating a power does not overflow.
def _scan(B, ops, x, y):
    def step(c, xi):
        return B.np.tanh(UNARY[ops[0]](B, c)) + xi * 0.5, c * xi

    carry, ys = B.lax.scan(step, x, B.np.stack([y, y * 0.5, -y]), reverse=bool(ops[1] % 2))
    return carry + B.np.sum(ys, axis=0)


def _fori(B, ops, x, y):
    return B.lax.fori_loop(0, 3, lambda i, c: B.np.tanh(UNARY[ops[0]](B, c)) + y * i, x)


def _while(B, ops, x, y):
    def body(s):
        return s[0] + 1, B.np.tanh(UNARY[ops[0]](B, s[1])) + y

    return B.lax.while_loop(lambda s: s[0] < 3, body, (0, x))[1]


def _custom_jvp(B, ops, x, y):
    """softplus with its derivative (the logistic function) written by hand."""
    softplus = B.custom_jvp(lambda a: B.np.log1p(B.np.exp(-B.np.abs(a))) + B.np.maximum(a, 0.0))
    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * (0.5 * B.np.tanh(0.5 * p[0]) + 0.5)))
    return softplus(UNARY[ops[0]](B, x)) * y


def _custom_vjp(B, ops, x, y):
    """`a * sin(b)` with its backward pass written by hand (no forward mode, as in JAX)."""
    f = B.custom_vjp(lambda a, b: a * B.np.sin(b))
    f.defvjp(lambda a, b: (f(a, b), (a, b)),
             lambda res, ct: (ct * B.np.sin(res[1]), ct * res[0] * B.np.cos(res[1])))
    return f(UNARY[ops[0]](B, x), y)


# Control flow and custom rules: name -> (how many operation indices it draws, the step).
CONTROL = {"cond": (2, _cond), "switch": (3, _switch), "scan": (2, _scan),
           "fori_loop": (1, _fori), "while_loop": (1, _while),
           "custom_jvp": (1, _custom_jvp), "custom_vjp": (1, _custom_vjp)}
FORWARD_ONLY = {"while_loop"}  # reverse mode needs a trip count known in advance
REVERSE_ONLY = {"custom_vjp"}  # its rule is a backward pass only


def run_steps(B, steps, values: list):
    """Apply the steps in turn; each appends one value."""
    values = list(values)
    for step in steps:
        kind, args = step[0], step[1:]
        if kind == "unary":
            values.append(UNARY[args[0]](B, values[args[1]]))
        elif kind == "binary":
            values.append(BINARY[args[0]](B, values[args[1]], values[args[2]]))
        elif kind == "checkpoint":
            inner, a, b = args
            body = lambda x, y, inner=inner: run_steps(B, inner, [x, y])[-1]
            values.append(B.checkpoint(body)(values[a], values[b]))
        else:
            ops, a, b = args
            values.append(CONTROL[kind][1](B, ops, values[a], values[b]))
    return values


def build(program, B: Backend):
    """The program as a scalar function of its inputs on backend `B`."""
    n_inputs, steps = program

    def f(*inputs):
        v = run_steps(B, steps, [B.np.asarray(x) for x in inputs])[-1]
        return B.np.sum(B.np.tanh(v)) + 0.1 * B.np.sum(v * v)

    return f


def uses(steps, kinds: set) -> bool:
    """Whether a step (a nested one included) is of one of these kinds."""
    return any(s[0] in kinds or (s[0] == "checkpoint" and uses(s[1], kinds)) for s in steps)


SIMPLE = ("unary", "binary")
ALL = ("unary", "binary", "control", "control", "checkpoint")


@st.composite
def steps_of(draw, n_values: int, max_steps: int, kinds=ALL):
    """Up to `max_steps` steps of the given kinds over `n_values` values; a checkpoint
    holds a nested program of the same kinds (but no checkpoint)."""
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        index = st.integers(0, n_values + len(steps) - 1)
        kind = draw(st.sampled_from(kinds))
        if kind == "unary":
            steps.append(("unary", draw(st.integers(0, len(UNARY) - 1)), draw(index)))
        elif kind == "binary":
            steps.append(("binary", draw(st.integers(0, len(BINARY) - 1)), draw(index),
                          draw(index)))
        elif kind == "checkpoint":
            inner = draw(steps_of(2, 3, tuple(k for k in kinds if k != "checkpoint")))
            steps.append(("checkpoint", tuple(inner), draw(index), draw(index)))
        else:
            name = draw(st.sampled_from(sorted(CONTROL)))
            n_ops = CONTROL[name][0]
            table = BINARY if name == "switch" else UNARY
            ops = tuple(draw(st.integers(0, len(table) - 1)) for _ in range(n_ops))
            steps.append((name, ops, draw(index), draw(index)))
    return tuple(steps)


@st.composite
def programs(draw, min_inputs: int = 1, max_inputs: int = 3, max_steps: int = 5, kinds=ALL):
    """`(n_inputs, steps)`: a random program."""
    n_inputs = draw(st.integers(min_inputs, max_inputs))
    return n_inputs, draw(steps_of(n_inputs, max_steps, kinds))
