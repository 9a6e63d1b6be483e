"""The structural primitives: one table of cases drives values against numpy, abstract
eval against the impl, staging, jvp against finite differences and the exactness of
every transpose (the dot-product test); then properties over random shapes, pad's
cotangent for its padding value, and the errors bad parameters give."""

import numpy as np
import pytest
from harness import check_abstract_eval, check_grads, check_staged
from hypothesis import given, settings
from hypothesis import strategies as hs

import inert
from inert.errors import DTypeError, ShapeError
from inert.primitives.shape import slicing as sl
from inert.primitives.shape import structural as st

R = np.random.default_rng(1)


def normal(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def ints(*shape, dtype=np.int32):
    return R.integers(-5, 5, shape).astype(dtype)


def reference_pad(x, value, config):
    """lax.pad element by element: operand element i of an axis lands at
    low + i * (interior + 1); positions outside the result are cropped."""
    x = np.asarray(x)
    shape = [lo + ((n - 1) * (i + 1) + 1 if n else 0) + hi
             for n, (lo, hi, i) in zip(x.shape, config)]
    out = np.full(shape, value, x.dtype)
    for index in np.ndindex(*x.shape):
        where = tuple(lo + k * (i + 1) for k, (lo, _, i) in zip(index, config))
        if all(0 <= w < n for w, n in zip(where, shape)):
            out[where] = x[index]
    return out


def reference_slice(x, start, limit, strides):
    return x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))]


PAD_CONFIGS = [((1, 2, 0), (0, 3, 0)), ((0, 0, 2), (1, 1, 1)), ((-1, 2, 1), (2, -3, 0)),
               ((-2, -1, 0), (1, -1, 3))]

# (id, primitive, params, args, numpy reference)
CASES = [
    ("broadcast_in_dim", st.broadcast_in_dim_p, dict(shape=(2, 3), broadcast_dimensions=(1,)),
     (normal(3),), lambda x: np.broadcast_to(x, (2, 3))),
    ("broadcast_in_dim-keep1", st.broadcast_in_dim_p,
     dict(shape=(3, 4), broadcast_dimensions=(0, 1)), (normal(3, 1),),
     lambda x: np.broadcast_to(x, (3, 4))),
    ("broadcast_in_dim-scalar", st.broadcast_in_dim_p,
     dict(shape=(2, 2), broadcast_dimensions=()), (2.5,), lambda x: np.full((2, 2), x)),
    ("reshape", st.reshape_p, dict(new_sizes=(2, 6)), (normal(3, 4),),
     lambda x: x.reshape(2, 6)),
    ("reshape-i32", st.reshape_p, dict(new_sizes=(4, 1, 3)), (ints(2, 6),),
     lambda x: x.reshape(4, 1, 3)),
    ("reduce_sum", st.reduce_sum_p, dict(axes=(0, 2)), (normal(2, 3, 4),),
     lambda x: np.sum(x, axis=(0, 2))),
    ("reduce_sum-f32", st.reduce_sum_p, dict(axes=(1,)), (normal(3, 4, dtype=np.float32),),
     lambda x: np.sum(x, axis=1)),
    ("reduce_sum-i32", st.reduce_sum_p, dict(axes=(0,)), (ints(3, 4),),
     lambda x: np.sum(x, axis=0)),
    ("reduce_sum-bool", st.reduce_sum_p, dict(axes=(0, 1)), (normal(3, 4) > 0,), np.sum),
    ("convert-f32", st.convert_element_type_p, dict(new_dtype=np.dtype(np.float32)),
     (normal(3),), lambda x: x.astype(np.float32)),
    ("convert-i32-f64", st.convert_element_type_p, dict(new_dtype=np.dtype(np.float64)),
     (ints(3),), lambda x: x.astype(np.float64)),
    ("convert-scalar", st.convert_element_type_p, dict(new_dtype=np.dtype(np.float32)),
     (1.5,), np.float32),
    ("transpose", st.transpose_p, dict(permutation=(2, 0, 1)), (normal(2, 3, 4),),
     lambda x: np.transpose(x, (2, 0, 1))),
    ("transpose-bool", st.transpose_p, dict(permutation=(1, 0)), (normal(2, 3) > 0,),
     np.transpose),
    ("squeeze", st.squeeze_p, dict(dimensions=(1, 3)), (normal(3, 1, 4, 1),),
     lambda x: np.squeeze(x, (1, 3))),
    ("squeeze-to-scalar", st.squeeze_p, dict(dimensions=(0,)), (ints(1),), np.squeeze),
    ("expand_dims", st.expand_dims_p, dict(dimensions=(0, 3)), (normal(3, 4),),
     lambda x: np.expand_dims(x, (0, 3))),
    ("expand_dims-scalar", st.expand_dims_p, dict(dimensions=(0,)), (2.0,),
     lambda x: np.array([x])),
    ("rev", st.rev_p, dict(dimensions=(0, 1)), (normal(3, 4),), lambda x: np.flip(x, (0, 1))),
    ("rev-i32", st.rev_p, dict(dimensions=(1,)), (ints(2, 5),), lambda x: np.flip(x, 1)),
    ("iota-i32", st.iota_p, dict(dtype=np.dtype(np.int32), shape=(2, 3), dimension=1), (),
     lambda: np.tile(np.arange(3, dtype=np.int32), (2, 1))),
    ("iota-f64", st.iota_p, dict(dtype=np.dtype(np.float64), shape=(4,), dimension=0), (),
     lambda: np.arange(4.0)),
    ("concatenate", sl.concatenate_p, dict(dimension=0), (normal(2, 3), normal(4, 3)),
     lambda *xs: np.concatenate(xs, 0)),
    ("concatenate-3", sl.concatenate_p, dict(dimension=1),
     (normal(2, 1), normal(2, 3), normal(2, 0)), lambda *xs: np.concatenate(xs, 1)),
    ("concatenate-f32", sl.concatenate_p, dict(dimension=0),
     (normal(1, dtype=np.float32), normal(2, dtype=np.float32)), np.append),
    ("concatenate-i32", sl.concatenate_p, dict(dimension=1), (ints(2, 2), ints(2, 1)),
     lambda *xs: np.concatenate(xs, 1)),
    ("pad-np", sl.pad_p, dict(padding_config=((1, 2, 0), (0, 3, 0))),
     (normal(3, 4), np.float64(0.5)),
     lambda x, v: np.pad(x, ((1, 2), (0, 3)), constant_values=v)),
    ("pad-f32-weak", sl.pad_p, dict(padding_config=((2, 1, 0),)),
     (normal(3, dtype=np.float32), -1.0), lambda x, v: np.pad(x, (2, 1), constant_values=v)),
    ("pad-i32", sl.pad_p, dict(padding_config=((0, 1, 0), (1, 0, 0))), (ints(2, 2), np.int32(7)),
     lambda x, v: np.pad(x, ((0, 1), (1, 0)), constant_values=v)),
    *[(f"pad-{i}", sl.pad_p, dict(padding_config=c), (normal(3, 4), np.float64(0.5)),
       lambda x, v, c=c: reference_pad(x, v, c)) for i, c in enumerate(PAD_CONFIGS)],
    ("pad-empty", sl.pad_p, dict(padding_config=((2, 1, 3), (1, 0, 0))),
     (normal(0, 2), np.float64(2.0)), lambda x, v: np.full((3, 3), v)),
    ("slice", sl.slice_p, dict(start_indices=(1, 0), limit_indices=(3, 4), strides=(1, 1)),
     (normal(4, 4),), lambda x: x[1:3]),
    ("slice-strided", sl.slice_p,
     dict(start_indices=(0, 1), limit_indices=(5, 6), strides=(2, 3)), (normal(5, 7),),
     lambda x: x[0:5:2, 1:6:3]),
    ("slice-empty-i32", sl.slice_p, dict(start_indices=(2,), limit_indices=(2,), strides=(1,)),
     (ints(4),), lambda x: x[2:2]),
]
IDS = [c[0] for c in CASES]


def apply(prim, params):
    return lambda *args: prim.bind(*args, **params)


def is_differentiable(args, reference):
    """Float64 in and out: finite differences are too coarse in float32."""
    return args and all(np.asarray(a).dtype == np.float64 for a in (*args, reference(*args)))


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_matches_numpy(name, prim, params, args, reference):
    got = apply(prim, params)(*args)
    want = reference(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_abstract_eval_matches_impl(name, prim, params, args, reference):
    check_abstract_eval(prim, args, params)


@pytest.mark.parametrize("name, prim, params, args, reference", CASES, ids=IDS)
def test_staged(name, prim, params, args, reference):
    check_staged(apply(prim, params), args)


DIFFERENTIABLE = [c for c in CASES if is_differentiable(c[3], c[4])]


@pytest.mark.parametrize("name, prim, params, args, reference", DIFFERENTIABLE,
                         ids=[c[0] for c in DIFFERENTIABLE])
def test_derivatives(name, prim, params, args, reference, rng):
    """jvp against finite differences, the transpose by the dot-product test, and the
    same for the derivative itself (order 2)."""
    check_grads(apply(prim, params), args, rng, order=2)


def test_wrappers_canonicalize_and_skip_no_ops():
    x = normal(2, 3)
    assert st.transpose(x, (0, 1)) is x
    assert st.rev(x, ()) is x
    assert sl.pad(x, 0.0, ((0, 0, 0), (0, 0, 0))) is x
    assert sl.slice(x, (0, 0), (2, 3)) is x
    assert sl.concatenate([x], 0) is x
    np.testing.assert_array_equal(st.squeeze(x[:, :1], (-1,)), x[:, 0])
    np.testing.assert_array_equal(st.expand_dims(x, (-1,)), x[..., None])
    np.testing.assert_array_equal(sl.concatenate([x, x], -1), np.concatenate([x, x], -1))
    np.testing.assert_array_equal(st.reduce_sum(x, (-1,)), x.sum(-1))
    np.testing.assert_array_equal(sl.slice_in_dim(x, 1, 3, axis=1), x[:, 1:3])
    jaxpr = inert.make_jaxpr(lambda x: st.rev(x, (-1, 0)))(x)
    assert jaxpr.jaxpr.eqns[0].params == {"dimensions": (0, 1)}


# ---------------------------------------------------------------------------------
# pad's padding value: its cotangent is the sum over the padding positions


@pytest.mark.parametrize("config", [*PAD_CONFIGS, ((-1, -2, 0), (0, 0, 0))])
def test_pad_value_gradient_counts_padding_positions(config):
    x = normal(3, 4)
    out = reference_pad(x, np.nan, config)
    grad_v = inert.grad(lambda v: st.reduce_sum(sl.pad(x, v, config), (0, 1)))(1.5)
    assert grad_v == np.isnan(out).sum()


def test_pad_float32_operand_with_python_scalar_value():
    x = normal(4, dtype=np.float32)
    out, t = inert.jvp(lambda x: sl.pad(x, 1.0, ((1, 1, 1),)), (x,), (np.ones(4, np.float32),))
    assert out.dtype == t.dtype == np.float32
    np.testing.assert_array_equal(t, [0, 1, 0, 1, 0, 1, 0, 1, 0])


@pytest.mark.parametrize("config", PAD_CONFIGS)
def test_pad_value_only_active(config):
    """With the operand inactive, the padding value's cotangent is exactly the sum of
    the output cotangent over the padding positions."""
    x = normal(3, 4)
    _, vjp_fn = inert.vjp(lambda x, v: sl.pad(x, v, config), inert.Inactive(x), 0.5)
    padding = np.isnan(reference_pad(x, np.nan, config))
    ct = normal(*padding.shape)
    ct_x, ct_v = vjp_fn(ct)
    assert ct_x is None
    np.testing.assert_allclose(ct_v, ct[padding].sum(), rtol=1e-12)


def test_convert_element_type_derivatives_change_dtype():
    x = normal(3)
    out, t = inert.jvp(lambda x: st.convert_element_type(x, np.float32), (x,), (np.ones(3),))
    assert out.dtype == t.dtype == np.float32
    _, vjp_fn = inert.vjp(lambda x: st.convert_element_type(x, np.float32), x)
    (ct,) = vjp_fn(np.arange(3, dtype=np.float32))
    assert ct.dtype == np.float64
    np.testing.assert_array_equal(ct, [0, 1, 2])
    _, t = inert.jvp(lambda x: st.convert_element_type(x, np.int32), (x,), (np.ones(3),))
    assert t.dtype == inert.float0


def test_concatenate_transpose_skips_known_operands(rng):
    x, y = normal(2, 3), normal(1, 3)
    _, vjp_fn = inert.vjp(lambda x, y: sl.concatenate([x, y, x], 0), x, inert.Inactive(y))
    ct = normal(5, 3)
    ct_x, ct_y = vjp_fn(ct)
    assert ct_y is None
    np.testing.assert_array_equal(ct_x, ct[:2] + ct[3:])


# ---------------------------------------------------------------------------------
# Properties over random shapes and parameters

FEW = settings(max_examples=25, deadline=None)
SHAPES = hs.lists(hs.integers(0, 4), min_size=1, max_size=3).map(tuple)


@FEW
@given(hs.data())
def test_pad_matches_reference(data):
    shape = data.draw(SHAPES)
    config = tuple(data.draw(hs.tuples(hs.integers(-3, 3), hs.integers(-3, 3),
                                       hs.integers(0, 2))) for _ in shape)
    try:
        want = reference_pad(np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                             -1.0, config)
    except ValueError:  # a negative size
        with pytest.raises(ShapeError, match="^pad"):
            sl.pad(np.zeros(shape), -1.0, config)
        return
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    np.testing.assert_array_equal(sl.pad(x, -1.0, config), want)
    check_abstract_eval(sl.pad_p, (x, np.float64(-1.0)), dict(padding_config=config))
    rng = np.random.default_rng(0)
    check_grads(lambda x, v: sl.pad(x, v, config), (normal(*shape), np.float64(0.5)), rng)


@FEW
@given(hs.data())
def test_slice_and_transpose_match_numpy(data):
    shape = data.draw(SHAPES)
    start = [data.draw(hs.integers(0, n)) for n in shape]
    limit = [data.draw(hs.integers(a, n)) for a, n in zip(start, shape)]
    strides = [data.draw(hs.integers(1, 3)) for _ in shape]
    permutation = data.draw(hs.permutations(range(len(shape))))
    x = normal(*shape)
    np.testing.assert_array_equal(sl.slice(x, start, limit, strides),
                                  reference_slice(x, start, limit, strides))
    np.testing.assert_array_equal(st.transpose(x, permutation), np.transpose(x, permutation))
    rng = np.random.default_rng(0)
    check_grads(lambda x: st.transpose(sl.slice(x, start, limit, strides), permutation),
                (x,), rng)


@FEW
@given(hs.data())
def test_concatenate_squeeze_expand_rev_match_numpy(data):
    shape = data.draw(SHAPES)
    axis = data.draw(hs.integers(0, len(shape) - 1))
    sizes = data.draw(hs.lists(hs.integers(0, 3), min_size=1, max_size=3))
    xs = [normal(*shape[:axis], n, *shape[axis + 1:]) for n in sizes]
    dims = data.draw(hs.sets(hs.integers(0, len(shape) - 1)))
    new = data.draw(hs.sets(hs.integers(0, len(shape)), max_size=2))
    joined = sl.concatenate(xs, axis)
    np.testing.assert_array_equal(joined, np.concatenate(xs, axis))
    np.testing.assert_array_equal(st.rev(joined, dims), np.flip(joined, tuple(dims)))
    np.testing.assert_array_equal(st.expand_dims(joined, new), np.expand_dims(joined, tuple(new)))
    np.testing.assert_array_equal(st.squeeze(st.expand_dims(joined, new), new), joined)
    rng = np.random.default_rng(0)
    check_grads(lambda *xs: st.rev(st.expand_dims(sl.concatenate(xs, axis), new), dims),
                tuple(xs), rng)


# ---------------------------------------------------------------------------------
# Bad parameters: errors that name the primitive, eagerly and when staged

BAD = [
    (ShapeError, "^reshape", lambda x: st.reshape(x, (5,))),
    (ShapeError, "^transpose", lambda x: st.transpose(x, (0, 0))),
    (ShapeError, "^transpose", lambda x: st.transpose(x, (1, 0, 2))),
    (ShapeError, "^reduce_sum", lambda x: st.reduce_sum(x, (2,))),
    (ShapeError, "^reduce_sum", lambda x: st.reduce_sum(x, (0, 0))),
    (ShapeError, "^squeeze", lambda x: st.squeeze(x, (1,))),
    (ShapeError, "^squeeze", lambda x: st.squeeze(x, (5,))),
    (ShapeError, "^expand_dims", lambda x: st.expand_dims(x, (4,))),
    (ShapeError, "^rev", lambda x: st.rev(x, (2,))),
    (ShapeError, "^broadcast_in_dim", lambda x: st.broadcast_in_dim(x, (3, 5), (0, 1))),
    (ShapeError, "^broadcast_in_dim", lambda x: st.broadcast_in_dim(x, (4, 3), (1, 0))),
    (ShapeError, "^concatenate", lambda x: sl.concatenate([x, np.zeros((3, 2))], 0)),
    (ShapeError, "^concatenate", lambda x: sl.concatenate([x, np.zeros(4)], 0)),
    (ShapeError, "^concatenate", lambda x: sl.concatenate([x, x], 2)),
    (DTypeError, "^concatenate", lambda x: sl.concatenate([x, np.zeros((1, 4), np.float32)], 0)),
    (ShapeError, "^pad", lambda x: sl.pad(x, 0.0, ((1, 1, 0),))),
    (ShapeError, "^pad", lambda x: sl.pad(x, 0.0, ((1, 1, -1), (0, 0, 0)))),
    (ShapeError, "^pad", lambda x: sl.pad(x, 0.0, ((-3, -1, 0), (0, 0, 0)))),
    (ShapeError, "^pad", lambda x: sl.pad(x, np.zeros(2), ((1, 1, 0), (0, 0, 0)))),
    (DTypeError, "^pad", lambda x: sl.pad(x, np.float32(0), ((1, 1, 0), (0, 0, 0)))),
    (DTypeError, "^pad", lambda x: sl.pad(st.convert_element_type(x, np.int32), 1.5,
                                          ((1, 1, 0), (0, 0, 0)))),
    (ShapeError, "^slice", lambda x: sl.slice(x, (0, 0), (3, 5))),
    (ShapeError, "^slice", lambda x: sl.slice(x, (2, 0), (1, 4))),
    (ShapeError, "^slice", lambda x: sl.slice(x, (0, 0), (3, 4), (1, 0))),
    (ShapeError, "^slice", lambda x: sl.slice(x, (0,), (3,))),
]


@pytest.mark.parametrize("error, match, f", BAD)
def test_bad_parameters(error, match, f):
    x = normal(3, 4)
    with pytest.raises(error, match=match):
        f(x)
    with pytest.raises(error, match=match):
        inert.make_jaxpr(f)(x)


def test_bad_iota():
    with pytest.raises(ShapeError, match="^iota"):
        st.iota(np.int32, (2, 3), 2)
    with pytest.raises(ShapeError, match="^iota"):
        st.iota(np.int32, (2, 3), -1)


@pytest.mark.parametrize("value", [1.0, -0.0, np.float32(2.5), 3, True, np.array(np.nan)])
@pytest.mark.parametrize("shape", [(), (4,), (2, 0, 3), (3, 5)])
def test_broadcasting_a_scalar_is_a_read_only_view_equal_to_numpys(value, shape):
    got = st.broadcast_in_dim_impl(value, shape=shape, broadcast_dimensions=())
    want = np.broadcast_to(value, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got).tolist() == np.signbit(want).tolist()
    assert not got.flags.writeable and all(s == 0 for s in got.strides)
