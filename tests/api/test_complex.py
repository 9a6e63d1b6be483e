"""JAX's conventions for complex derivatives: grad of a real function of complex inputs
is `∂f/∂x - i ∂f/∂y`; `holomorphic=True` for complex outputs, with JAX's errors; jvp,
vjp, jacfwd, jacrev and hessian for C->C, R->C and C->R; activity of complex values."""

import numpy as np
import pytest

import inert
import inert.numpy as jnp
from tests.harness import check_grads

Z = np.array([1.2 + 0.7j, -0.4 + 1.1j])


def _wirtinger_grad(f, z, eps=1e-6):
    """∂f/∂x - i ∂f/∂y of a real f, by central differences."""
    dx = (float(f(z + eps)) - float(f(z - eps))) / (2 * eps)
    dy = (float(f(z + 1j * eps)) - float(f(z - 1j * eps))) / (2 * eps)
    return dx - 1j * dy


def test_grad_of_a_real_function_of_a_complex_input_is_jaxs():
    assert complex(inert.grad(lambda z: jnp.abs(z) ** 2)(3 + 4j)) == pytest.approx(6 - 8j)
    for f in (lambda z: jnp.abs(z), lambda z: jnp.real(z * jnp.sin(z)),
              lambda z: jnp.imag(jnp.exp(z)) * jnp.angle(z)):
        want = _wirtinger_grad(f, 0.8 - 0.6j)
        assert complex(inert.grad(f)(0.8 - 0.6j)) == pytest.approx(want, rel=1e-6)


def test_holomorphic_grad_is_the_complex_derivative():
    assert complex(inert.grad(lambda z: z ** 2, holomorphic=True)(1 + 1j)) == 2 + 2j
    np.testing.assert_allclose(inert.grad(lambda z: jnp.sum(jnp.sin(z)), holomorphic=True)(Z),
                               np.cos(Z))


def test_misused_holomorphic_raises_jaxs_errors():
    with pytest.raises(TypeError, match=r"grad requires real-valued outputs \(output dtype that "
                                        r"is a sub-dtype of np.floating\), but got complex128"):
        inert.grad(lambda z: z * z)(1 + 1j)
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with "
                                        "complex dtype, but got float64"):
        inert.grad(lambda x: x * 1j, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="grad with holomorphic=True requires outputs with "
                                        "complex dtype, but got float64"):
        inert.grad(jnp.abs, holomorphic=True)(1j)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        inert.jacfwd(lambda z: z * z)(Z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        inert.jacrev(lambda z: z * z)(Z)


def test_jvp_and_vjp_conventions():
    out, t = inert.jvp(lambda z: 2 * z, (1 + 1j,), (1 + 0j,))
    assert (complex(out), complex(t)) == (2 + 2j, 2 + 0j)
    # vjp is a transpose, not conjugated: the cotangent of z * c is ct * c
    _, pull = inert.vjp(lambda z: z * (2 - 1j), 1 + 1j)
    assert complex(pull(1j)[0]) == 1j * (2 - 1j)
    # R->C: a real input's cotangent is the real part; C->R: complex(ct, 0) of real
    _, pull = inert.vjp(lambda x: x * (1 + 2j), 2.0)
    assert pull(1 + 1j)[0] == -1.0
    _, pull = inert.vjp(jnp.imag, 1 + 2j)
    assert complex(pull(3.0)[0]) == -3j


@pytest.mark.parametrize("jac", [inert.jacfwd, inert.jacrev])
def test_jacobians(jac):
    x = np.array([0.5, -1.5])
    holo = jac(lambda z: z ** 3, holomorphic=True)(Z)
    np.testing.assert_allclose(holo, np.diag(3 * Z ** 2))
    if jac is inert.jacfwd:  # R->C
        np.testing.assert_allclose(jac(lambda x: jnp.exp(1j * x))(x), np.diag(1j * np.exp(1j * x)))
    else:  # C->R: each row is the gradient of one output
        np.testing.assert_allclose(jac(lambda z: jnp.abs(z) ** 2)(Z), np.diag(2 * np.conj(Z)))


def test_hessian_of_a_holomorphic_function():
    h = inert.hessian(lambda z: jnp.sum(z ** 3), holomorphic=True)(Z)
    np.testing.assert_allclose(h, np.diag(6 * Z))


def test_grad_replays_with_complex_inputs():
    g = inert.grad(lambda z: jnp.sum(jnp.abs(z * (1 - 2j)) ** 2))
    for _ in range(4):
        np.testing.assert_allclose(g(Z), 2 * 5 * np.conj(Z))


def test_an_inactive_complex_operand_keeps_nothing(capsys):
    """Only `c` (complex, 16 bytes each) is kept for `x * c` with x active."""
    c = np.full(1000, 1 - 1j)
    f = lambda x, c: jnp.sum(jnp.real(x * c))
    residuals = inert.saved_residuals(f, np.ones(1000), inert.Inactive(c))
    assert [(r.aval.str_short(), r.origin) for r in residuals] == [("c128[1000]", "input 1")]
    inert.print_saved_residuals(lambda z: jnp.sum(jnp.abs(jnp.sin(z))), Z)
    printed = capsys.readouterr().out
    assert "c128[2]" in printed and "bytes" in printed
    np.testing.assert_allclose(inert.grad(f)(np.ones(3), inert.Inactive(c[:3])), np.ones(3))


@pytest.mark.parametrize("name, args", [
    ("vdot", (Z, Z[::-1] * 2j)), ("correlate", (Z, np.array([1j, 2.0, 1 - 1j]))),
    ("correlate", (np.array([1j, 2.0, 1 - 1j]), Z)), ("var", (Z,)), ("std", (Z,)),
    ("linalg.norm", (Z,)), ("linalg.norm", (np.outer(Z, Z),)),
    ("linalg.vector_norm", (Z,))])
def test_numpy_functions_conjugate_where_numpy_does(name, args):
    ours, theirs = jnp, np
    for part in name.split("."):
        ours, theirs = getattr(ours, part), getattr(theirs, part)
    got, want = ours(*args), theirs(*args)
    if name == "linalg.vector_norm":
        for ord in (0, 1, 3, np.inf):  # noqa: A001 — numpy's name
            np.testing.assert_allclose(ours(*args, ord=ord), theirs(*args, ord=ord))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_of_a_norm_of_complex_values():
    np.testing.assert_allclose(inert.grad(jnp.linalg.norm)(Z), np.conj(Z) / np.linalg.norm(Z))


def _complex_matrix(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("name", ["solve", "solve_real_b", "inv", "det", "slogdet"])
def test_complex_solve_inv_det(name, rng):
    """lu and the solves are holomorphic (plain transposes, no conjugates). Each case
    returns a tuple (slogdet's pair)."""
    a = _complex_matrix(rng, 3, 3) + 3 * np.eye(3)
    b = _complex_matrix(rng, 3, 2)
    ours, theirs, args = {
        "solve": (jnp.linalg.solve, np.linalg.solve, (a, b)),
        "solve_real_b": (jnp.linalg.solve, np.linalg.solve, (a, b.real)),
        "inv": (jnp.linalg.inv, np.linalg.inv, (a,)),
        "det": (jnp.linalg.det, np.linalg.det, (a,)),
        "slogdet": (jnp.linalg.slogdet, np.linalg.slogdet, (a,)),
    }[name]
    f = lambda *xs: tuple(ours(*xs)) if name == "slogdet" else (ours(*xs),)
    want = tuple(theirs(*args)) if name == "slogdet" else (theirs(*args),)
    for got, expected in zip(f(*args), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    check_grads(f, args, rng, order=2)
    lanes = inert.vmap(f)(*(np.stack([x, 2 * x]) for x in args))
    for got, expected in zip(lanes, f(*(2 * x for x in args))):
        np.testing.assert_allclose(np.asarray(got)[1], np.asarray(expected), rtol=1e-12)


def test_complex_slogdet_of_a_singular_matrix():
    sign, logabsdet = jnp.linalg.slogdet(np.ones((2, 2)) * (1 + 1j))
    assert complex(sign) == 0 and float(logabsdet) == -np.inf


def test_complex_convolution_and_its_gradient_in_both_operands():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    v = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    np.testing.assert_allclose(jnp.convolve(a, v), np.convolve(a, v), rtol=1e-13)
    ours = lambda a, v: jnp.sum(jnp.abs(jnp.convolve(a, v)) ** 2)  # noqa: E731
    theirs = lambda a, v: np.sum(np.abs(np.convolve(a, v)) ** 2)  # noqa: E731
    grads, h = inert.grad(ours, argnums=(0, 1))(a, v), 1e-6
    for i, g in enumerate(grads):  # JAX's convention: Re<g, d> is the slope along d
        d = rng.standard_normal(g.shape) + 1j * rng.standard_normal(g.shape)
        plus, minus = [a, v], [a, v]
        plus[i], minus[i] = plus[i] + h * d, minus[i] - h * d
        np.testing.assert_allclose(np.real(np.sum(g * d)),
                                   (theirs(*plus) - theirs(*minus)) / (2 * h), rtol=1e-7)
