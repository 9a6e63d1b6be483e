"""conv_general_dilated: one table of cases (1-d to 3-d; strides, padding, dilations,
groups, batch groups, layouts) drives values against a plain loop over output and
kernel positions, abstract eval against impl, jvp against finite differences, the
dot-product test of both transposes, jacfwd == jacrev, vmap == a loop (each operand
batched, and both) and jit == eager; then residuals, dtypes and bad inputs."""

from __future__ import annotations

import itertools

import attrs
import numpy as np
import pytest
from harness import assert_allclose, check_abstract_eval, check_jvp, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
from inert import lax
from inert.errors import ShapeError
from inert.primitives.conv import correlation
from inert.primitives.conv.convolution import conv_general_dilated_p


@attrs.frozen
class Case:
    name: str
    lhs_shape: tuple  # in the layout of `dims`
    rhs_shape: tuple
    strides: tuple
    padding: object
    lhs_dilation: tuple | None = None
    rhs_dilation: tuple | None = None
    dims: object = None
    groups: int = 1
    batch_groups: int = 1

    def f(self, x, w):
        return lax.conv_general_dilated(x, w, self.strides, self.padding, self.lhs_dilation,
                                        self.rhs_dilation, self.dims, self.groups,
                                        self.batch_groups)

    def operands(self, rng):
        return rng.standard_normal(self.lhs_shape), rng.standard_normal(self.rhs_shape)


CASES = [
    Case("1d_valid", (2, 3, 7), (4, 3, 3), (1,), "VALID"),
    Case("1d_strided_same", (2, 2, 8), (3, 2, 3), (2,), "SAME"),
    Case("1d_dilated_both", (1, 2, 6), (2, 2, 2), (1,), ((1, 2),), (2,), (3,)),
    Case("2d_valid", (2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "VALID"),
    Case("2d_strides_same", (2, 2, 7, 6), (3, 2, 3, 3), (2, 3), "SAME"),
    Case("2d_same_lower", (1, 2, 6, 5), (2, 2, 2, 3), (2, 1), "SAME_LOWER"),
    Case("2d_explicit_negative", (1, 2, 7, 6), (2, 2, 3, 2), (1, 2), ((2, -1), (-1, 1))),
    Case("2d_rhs_dilation", (2, 2, 7, 7), (3, 2, 2, 3), (1, 2), ((1, 0), (0, 1)), None, (2, 2)),
    Case("2d_lhs_dilation", (1, 2, 4, 3), (2, 2, 3, 2), (1, 1), ((1, 1), (0, 2)), (2, 3)),
    Case("2d_strides_skip_tail", (1, 1, 8, 7), (2, 1, 2, 2), (3, 3), "VALID"),
    Case("2d_groups", (2, 4, 5, 5), (6, 2, 2, 2), (1, 1), "SAME", groups=2),
    Case("2d_depthwise", (2, 3, 5, 4), (3, 1, 3, 2), (2, 1), ((1, 1), (0, 0)), groups=3),
    Case("2d_batch_groups", (4, 2, 5, 4), (6, 2, 2, 2), (1, 1), "VALID", batch_groups=2),
    Case("2d_nhwc_hwio", (2, 5, 6, 3), (3, 2, 3, 4), (1, 2), "SAME", None, None,
         ("NHWC", "HWIO", "NHWC")),
    Case("2d_mixed_layouts", (5, 2, 3, 6), (4, 2, 3, 3), (2, 1), "VALID", (1, 2), None,
         ("HNCW", "OHIW", "WCNH")),
    Case("2d_groups_nhwc", (1, 4, 4, 4), (2, 2, 2, 4), (1, 1), "VALID", None, (2, 1),
         ("NHWC", "HWIO", "NHWC"), groups=2),
    # fewer output than input features: computed by shifted products, not patches
    Case("2d_fewer_outputs", (2, 4, 6, 5), (1, 4, 3, 2), (2, 1), ((2, -1), (1, 3)), (1, 2),
         (2, 1)),
    Case("2d_fewer_outputs_groups", (1, 6, 5, 4), (2, 3, 2, 2), (1, 2), "SAME", None, None,
         ("NHWC", "HWIO", "NHWC"), groups=2),
    Case("3d", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2), (1, 2, 1), ((0, 1), (1, 1), (0, 0))),
    Case("3d_dilations_groups", (2, 2, 4, 4, 4), (4, 1, 2, 2, 2), (2, 1, 1), "SAME",
         (1, 1, 2), (1, 2, 1), groups=2),
]
IDS = [c.name for c in CASES]


def conv_reference(x, w, case: Case):
    """The definition, one output element and kernel position at a time: the input
    element under kernel position k of window p sits at p * stride + k * rhs_dilation
    - low in the dilated input, if that is a (non-hole) element."""
    dims = lax.conv_dimension_numbers(x.shape, w.shape, case.dims)
    x, w = np.transpose(x, dims.lhs_spec), np.transpose(w, dims.rhs_spec)
    n = x.ndim - 2
    aval = inert.make_jaxpr(case.f)(*case.operands(np.random.default_rng(0))).out_avals[0]
    out_shape = [aval.shape[a] for a in dims.out_spec]
    lhs_dil, rhs_dil = case.lhs_dilation or (1,) * n, case.rhs_dilation or (1,) * n
    low = _low_padding(x, w, case, lhs_dil, rhs_dil)
    out = np.zeros(out_shape)
    out_groups, in_features = case.groups * case.batch_groups, w.shape[1]
    per_group = w.shape[0] // out_groups
    for b, o in itertools.product(range(out_shape[0]), range(out_shape[1])):
        group = o // per_group
        src_b = b + group * out_shape[0] if case.batch_groups > 1 else b
        channels = slice(group * in_features, (group + 1) * in_features) if case.groups > 1 \
            else slice(None)
        for p in itertools.product(*map(range, out_shape[2:])):
            for k in itertools.product(*map(range, w.shape[2:])):
                q = [pi * s + ki * d - lo for pi, ki, s, d, lo in
                     zip(p, k, case.strides, rhs_dil, low)]
                if all(0 <= qi < (ni - 1) * ld + 1 and qi % ld == 0
                       for qi, ni, ld in zip(q, x.shape[2:], lhs_dil)):
                    src = tuple(qi // ld for qi, ld in zip(q, lhs_dil))
                    out[(b, o, *p)] += x[(src_b, channels, *src)] @ w[(o, slice(None), *k)]
    return np.transpose(out, np.argsort(dims.out_spec))


def _low_padding(x, w, case, lhs_dil, rhs_dil):
    if not isinstance(case.padding, str):
        return [lo for lo, _ in case.padding]
    in_shape = [(s - 1) * d + 1 for s, d in zip(x.shape[2:], lhs_dil)]
    window = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    return [lo for lo, _ in lax.padtype_to_pads(in_shape, window, case.strides, case.padding)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_against_a_loop(case, rng):
    x, w = case.operands(rng)
    np.testing.assert_allclose(case.f(x, w), conv_reference(x, w, case), rtol=1e-12,
                               atol=1e-12)
    closed = inert.make_jaxpr(case.f)(x, w)
    (eqn,) = closed.jaxpr.eqns
    check_abstract_eval(conv_general_dilated_p, (x, w), eqn.params)
    assert_allclose(inert.jit(case.f)(x, w), case.f(x, w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivatives(case, rng):
    """jvp by finite differences; the transposes by the dot-product test, for each
    operand alone and both; forward and reverse Jacobians agree."""
    x, w = case.operands(rng)
    check_jvp(case.f, (x, w), rng)
    check_vjp(case.f, (x, w), rng)
    check_vjp(lambda x: case.f(x, w), (x,), rng)
    check_vjp(lambda w: case.f(x, w), (w,), rng)
    for argnums in (0, 1):
        np.testing.assert_allclose(inert.jacfwd(case.f, argnums)(x, w),
                                   inert.jacrev(case.f, argnums)(x, w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (2, 0)], ids=str)
def test_vmap_equals_a_loop(case, in_axes, rng):
    x, w = case.operands(rng)
    xs = np.stack([x, 2 * x + 1], axis=in_axes[0]) if in_axes[0] is not None else x
    ws = np.stack([w, w - 1], axis=in_axes[1]) if in_axes[1] is not None else w
    lanes = [case.f(np.take(xs, i, in_axes[0]) if in_axes[0] is not None else x,
                    np.take(ws, i, in_axes[1]) if in_axes[1] is not None else w)
             for i in range(2)]
    np.testing.assert_allclose(inert.vmap(case.f, in_axes)(xs, ws), np.stack(lanes),
                               rtol=1e-12, atol=1e-12)


def test_vmap_of_the_gradient(rng):
    """Per-example kernel gradients: the batching rules of both transposes."""
    case = CASES[IDS.index("2d_groups")]
    x, w = case.operands(rng)
    xs = np.stack([x, -x, 0.5 * x])
    loss = lambda w, x: inert.numpy.sum(case.f(x, w) ** 2)  # noqa: E731
    per_example = inert.vmap(inert.grad(loss), (None, 0))(w, xs)
    np.testing.assert_allclose(per_example, np.stack([inert.grad(loss)(w, x) for x in xs]),
                               rtol=1e-12)


def test_second_derivatives(rng):
    case = CASES[IDS.index("2d_strides_same")]
    x, w = case.operands(rng)
    loss = lambda x, w: inert.numpy.sum(inert.numpy.tanh(case.f(x, w)))  # noqa: E731
    check_jvp(inert.grad(loss, argnums=(0, 1)), (x, w), rng)


def test_inactive_operand_is_the_only_residual_by_reference(rng):
    """Fixed filters keep only the kernel, frozen features only the input: the
    arrays themselves, not copies."""
    x, w = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    f = lambda x, w: inert.numpy.sum(lax.conv(x, w, (1, 1), "SAME"))  # noqa: E731
    (kept,) = inert.saved_residuals(f, x, inert.Inactive(w))
    assert kept.aval.shape == w.shape and kept.nbytes == w.nbytes
    (kept,) = inert.saved_residuals(f, inert.Inactive(x), w)
    assert kept.aval.shape == x.shape and kept.nbytes == x.nbytes
    _, vjp_fn = inert.vjp(f, x, inert.Inactive(w))
    assert any(r is w for r in vjp_fn.linear.residuals)


def test_dtypes(rng):
    x = rng.standard_normal((1, 2, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2))
    assert lax.conv(x, w.astype(np.float32), (1,), "VALID").dtype == np.float32
    with pytest.raises(TypeError, match="same dtype, got f32.* and f64"):  # as in JAX
        lax.conv(x, w, (1,), "VALID")
    out = lax.conv(x, w.astype(np.float32), (1,), "VALID", preferred_element_type=np.float64)
    assert out.dtype == np.float64
    _, vjp_fn = inert.vjp(lambda x, w: lax.conv(x, w, (1,), "VALID",
                                                preferred_element_type=np.float64),
                          x, w.astype(np.float32))
    ct_x, ct_w = vjp_fn(np.ones((1, 3, 4)))
    assert ct_x.dtype == np.float32 and ct_w.dtype == np.float32


def test_conv_transpose_is_the_transpose_of_a_strided_conv(rng):
    """With transpose_kernel, conv_transpose is the vjp of the strided convolution."""
    x, w = rng.standard_normal((2, 8, 8, 3)), rng.standard_normal((3, 3, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    forward = lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn)  # noqa: E731
    y, vjp_fn = inert.vjp(forward, x)
    ct = rng.standard_normal(y.shape)
    out = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True)
    np.testing.assert_allclose(out, vjp_fn(ct)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_output_size(padding, rng):
    x, w = rng.standard_normal((1, 5, 2)), rng.standard_normal((3, 2, 4))
    out = lax.conv_transpose(x, w, (2,), padding)
    assert out.shape == ((1, 10, 4) if padding == "SAME" else (1, 11, 4))
    assert lax.conv_transpose_shape_tuple(x.shape, w.shape, (2,), padding,
                                          ("NHC", "HIO", "NHC")) == out.shape
    check_vjp(lambda x, w: lax.conv_transpose(x, w, (2,), padding), (x, w), rng)


def test_shape_tuple_matches(rng):
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 5))
    dn = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=dn)
    assert lax.conv_general_shape_tuple(x.shape, w.shape, (2, 1), "SAME", dn) == out.shape


@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
@pytest.mark.parametrize("shapes, kwargs, message", [
    (((1, 3, 5), (2, 2, 2)), {}, "lhs features 3 must be rhs input features 2"),
    (((1, 4, 5), (3, 2, 2)), {"feature_group_count": 2}, "multiple of feature_group_count"),
    (((3, 2, 5), (4, 2, 2)), {"batch_group_count": 2}, "lhs batch 3 must be a multiple"),
    (((1, 2, 5), (2, 2, 2, 2)), {}, "need one rank"),
    (((1, 2, 5), (2, 2, 2)), {"window_strides": (0,)}, "window_strides (0,) must be 1"),
    (((1, 2, 5), (2, 2, 2)), {"padding": ((1, 1), (0, 0))}, "padding"),
], ids=["features", "groups", "batch_groups", "rank", "strides", "padding"])
def test_bad_inputs_raise_shape_error(shapes, kwargs, message, staged):
    x, w = (np.ones(s) for s in shapes)
    kwargs = {"window_strides": (1,), "padding": "VALID", **kwargs}
    f = lambda x, w: lax.conv_general_dilated(x, w, **kwargs)  # noqa: E731
    with pytest.raises(ShapeError, match="conv_general_dilated") as info:
        (inert.make_jaxpr(f) if staged else f)(x, w)
    assert message in str(info.value)
    assert "test_convolution.py" in str(info.value)


def test_bad_dimension_spec_and_padding_name():
    for dims, message in ((("NCH", "OIW", "NCH"), "spatial letters"),
                          (("NCH", "OIHW", "NCH"), "dimension spec 'OIHW'")):
        with pytest.raises(ShapeError, match=message) as info:
            lax.conv_general_dilated(np.ones((1, 2, 3)), np.ones((1, 2, 2)), (1,), "VALID",
                                     dimension_numbers=dims)
        assert "test_convolution.py" in str(info.value)
    with pytest.raises(ShapeError, match="conv_general_dilated: padding must be") as info:
        lax.conv_general_dilated(np.ones((1, 2, 3)), np.ones((1, 2, 2)), (1,), "FULL")
    assert "test_convolution.py" in str(info.value)


@st.composite
def conv_problems(draw):
    """A random 1-d or 2-d convolution: sizes, strides, padding, both dilations and
    one kind of grouping, in the default layout."""
    n = draw(st.integers(1, 2))
    groups, batch_groups = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    in_features, group_out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 3)) for _ in range(n)]
    spatial = [draw(st.integers(k, k + 3)) for k in kernel]
    ints = lambda lo, hi: tuple(draw(st.integers(lo, hi)) for _ in range(n))  # noqa: E731
    padding = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(n))
    return Case("random", (2 * batch_groups, in_features * groups, *spatial),
                (group_out * groups * batch_groups, in_features, *kernel), ints(1, 3), padding,
                ints(1, 2), ints(1, 2), None, groups, batch_groups)


@settings(max_examples=20, deadline=None)
@given(conv_problems())
def test_random_convolutions(case):
    rng = np.random.default_rng(1)
    x, w = case.operands(rng)
    out = case.f(x, w)
    np.testing.assert_allclose(out, conv_reference(x, w, case), rtol=1e-12, atol=1e-12)
    if out.size:
        check_vjp(case.f, (x, w), rng)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fft_path_against_a_loop(case, rng, monkeypatch):
    """Every case computed by FFTs (chosen by cost for large windows only): the same
    values up to the FFT's rounding, and derivatives that pass the dot-product test."""
    monkeypatch.setattr(correlation, "_fft_is_cheaper", lambda *args: True)
    x, w = case.operands(rng)
    np.testing.assert_allclose(case.f(x, w), conv_reference(x, w, case), rtol=1e-9, atol=1e-12)
    check_vjp(case.f, (x, w), rng, rtol=1e-9)


def test_fft_path_is_chosen_for_long_filters(rng, monkeypatch):
    chosen = []
    original = correlation._by_fft
    monkeypatch.setattr(correlation, "_by_fft", lambda *a: chosen.append(1) or original(*a))
    a, v = rng.standard_normal(20000), rng.standard_normal(1000)
    np.testing.assert_allclose(inert.numpy.convolve(a, v), np.convolve(a, v), rtol=1e-9,
                               atol=1e-11)
    assert chosen
    chosen.clear()
    lax.conv(rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 3, 3, 3)), (1, 1),
             "SAME")
    assert not chosen
