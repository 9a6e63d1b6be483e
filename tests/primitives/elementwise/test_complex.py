"""Complex values through the elementwise primitives, reductions, dot_general, gathers
and select_n: values against numpy, jvp against finite differences (along random
complex directions, and along the real and the imaginary axis alone), transposes by
the dot-product test `Re<J v, u> = Re<v, Jᵀ u>` (no conjugation), batching against a
loop, and both jit backends."""

import numpy as np
import pytest

import inert
import inert.lax as lax
import inert.numpy as jnp
from tests.harness import check_grads, check_jit_backends, check_staged, check_vjp

Z = np.array([1.2 + 0.7j, -0.4 + 1.1j, 0.9 - 0.3j])
W = np.array([0.3 - 0.8j, 1.5 + 0.2j, -0.7 - 0.6j])
X = np.array([0.5, -1.3, 2.1])

# (name, function, arguments): C->C, R->C and C->R, each a row.
CASES = [
    ("add", lambda z, w: z + w, (Z, W)),
    ("sub", lambda z, w: z - w, (Z, W)),
    ("mul", lambda z, w: z * w, (Z, W)),
    ("div", lambda z, w: z / w, (Z, W)),
    ("neg", lambda z: -z, (Z,)),
    ("mul_real", lambda x, w: x * w, (X, W)),
    ("add_real", lambda x, w: x + w, (X, W)),
    ("div_by_real", lambda z, x: z / x, (Z, X)),
    ("python_complex", lambda x: x * (2 - 1j) + 1j, (X,)),
    ("exp", jnp.exp, (Z,)),
    ("log", jnp.log, (Z,)),
    ("sin", jnp.sin, (Z,)),
    ("cos", jnp.cos, (Z,)),
    ("tanh", jnp.tanh, (Z,)),
    ("sqrt", jnp.sqrt, (Z,)),
    ("square", jnp.square, (Z,)),
    ("reciprocal", jnp.reciprocal, (Z,)),
    ("integer_pow", lambda z: z ** 3, (Z,)),
    ("pow", lambda z, w: z ** w, (Z, W)),
    ("real", jnp.real, (Z,)),
    ("imag", jnp.imag, (Z,)),
    ("conj", jnp.conj, (Z,)),
    ("complex", lax.complex, (X, X[::-1])),
    ("abs", jnp.abs, (Z,)),
    ("abs_squared", lambda z: jnp.abs(z) ** 2, (Z,)),
    ("angle", jnp.angle, (Z,)),
    ("sum", jnp.sum, (Z,)),
    ("prod", jnp.prod, (Z,)),
    ("mean", jnp.mean, (Z,)),
    ("cumsum", jnp.cumsum, (Z,)),
    ("dot", jnp.dot, (Z, W)),
    ("matmul_real", lambda a, w: a @ w, (np.outer(X, X[::-1]), W)),
    ("einsum", lambda a, b: jnp.einsum("ij,jk->ik", a, b),
     (np.outer(Z, W), np.outer(W, Z))),
    ("gather", lambda z: z[np.array([2, 0, 0])], (Z,)),
    ("scatter_add", lambda z, w: jnp.asarray(z).at[np.array([0, 0, 2])].add(w), (Z, W)),
    ("where", lambda z, w: jnp.where(jnp.real(z) > 0, z, w), (Z, W)),
    ("reshape_transpose", lambda z: jnp.reshape(jnp.outer(z, z), (9,)), (Z,)),
]
IDS = [c[0] for c in CASES]
LINEAR = {"add", "sub", "neg", "real", "imag", "conj", "complex", "sum", "mean", "cumsum",
          "gather", "reshape_transpose"}


@pytest.mark.parametrize("name, f, args", CASES, ids=IDS)
def test_jvp_and_vjp(name, f, args, rng):
    check_grads(f, args, rng)


@pytest.mark.parametrize("name, f, args", CASES, ids=IDS)
def test_staged_and_second_order(name, f, args, rng):
    check_staged(f, args)
    check_grads(f, args, rng, order=2, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, f, args", [c for c in CASES if c[0] in LINEAR],
                         ids=sorted(LINEAR, key=IDS.index))
def test_linear_primitives_pass_the_dot_product_test_at_any_point(name, f, args, rng):
    """A linear map's transpose does not depend on the point: try another one."""
    check_vjp(f, tuple(a[::-1] * 2 for a in args), rng)


def test_jvp_along_the_real_and_the_imaginary_axis():
    """f(z) = z * conj(z) is not holomorphic: its jvp along 1 is 2x, along 1j is 2y."""
    f = lambda z: z * jnp.conj(z)
    z, eps = 3.0 + 4.0j, 1e-6
    for direction in (1.0 + 0j, 1j):
        _, t = inert.jvp(f, (z,), (direction,))
        fd = (f(z + eps * direction) - f(z - eps * direction)) / (2 * eps)
        np.testing.assert_allclose(complex(t), complex(fd), rtol=1e-6)
    assert complex(inert.jvp(f, (z,), (1j,))[1]) == pytest.approx(8.0)


@pytest.mark.parametrize("name, f, args", CASES, ids=IDS)
def test_vmap_matches_a_loop(name, f, args):
    stacked = [np.stack([a, a * (1 - 0.5j) if a.dtype.kind == "c" else a * 1.5]) for a in args]
    got = inert.vmap(f)(*stacked)
    want = np.stack([np.asarray(f(*lane)) for lane in zip(*stacked)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@pytest.mark.parametrize("name, f, args", CASES, ids=IDS)
def test_jit(name, f, args):
    check_jit_backends(f, args)


def test_values_and_dtypes_match_numpy():
    z32 = Z.astype(np.complex64)
    for got, want in [(jnp.real(z32), np.real(z32)), (jnp.imag(z32), np.imag(z32)),
                      (jnp.conj(z32), np.conj(z32)), (jnp.abs(z32), np.abs(z32)),
                      (jnp.angle(Z, deg=True), np.angle(Z, deg=True)),
                      (lax.complex(X.astype(np.float32), 1.0),
                       X.astype(np.float32) + 1j * np.float32(1)),
                      (X.astype(np.float32) * 1j, X.astype(np.float32) * 1j),
                      (jnp.iscomplex(np.array([1 + 0j, 1j])), np.array([False, True]))]:
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_complex_keeps_infinite_parts():
    assert complex(lax.complex(0.0, np.inf)) == complex(0, np.inf)


def test_python_complex_scalars_are_weakly_typed():
    """NEP 50: `x * 1j` of a float32 array is complex64, of a float64 one complex128."""
    jaxpr = inert.make_jaxpr(lambda x: x * 1j)(X.astype(np.float32))
    assert "c64[3]" in str(jaxpr) and "c128[3]" not in str(jaxpr)
    assert jnp.asarray(X.astype(np.float32) * (1 + 2j)).dtype == np.complex64


def test_parts_refuse_real_operands():
    with pytest.raises(inert.errors.DTypeError, match="real: takes a complex operand"):
        inert.make_jaxpr(lax.real)(X)
    with pytest.raises(inert.errors.DTypeError, match="complex: takes real floating parts"):
        inert.make_jaxpr(lax.complex)(Z, X)
