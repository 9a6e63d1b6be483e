"""`eval_shape` traces without computing, on arrays, numbers and ShapeDtypeStructs."""

import numpy as np

import inert
import inert.numpy as jnp


def test_eval_shape_gives_the_output_structure_shapes_and_dtypes():
    x = inert.ShapeDtypeStruct((3, 4), np.float32)
    out = inert.eval_shape(lambda x, y: {"a": x @ y, "b": jnp.sum(x)}, x, np.ones((4, 2)))
    assert out == {"a": inert.ShapeDtypeStruct((3, 2), np.float64),
                   "b": inert.ShapeDtypeStruct((), np.float32)}
    assert repr(out["b"]) == "ShapeDtypeStruct(shape=(), dtype=float32)"
    assert out["a"].ndim == 2 and out["a"].size == 6


def test_eval_shape_computes_nothing_and_passes_keywords():
    calls = []

    def f(x, scale):
        calls.append(type(x).__name__)
        return x * scale

    huge = inert.ShapeDtypeStruct((10**6, 10**6), np.float64)  # 8 TB if it were made
    assert inert.eval_shape(f, huge, scale=2.0) == inert.ShapeDtypeStruct((10**6, 10**6),
                                                                          np.float64)
    assert calls and all("Tracer" in name for name in calls)


def test_every_returned_array_is_an_inert_array():
    assert isinstance(jnp.ones(3), inert.Array)
    assert isinstance(inert.grad(jnp.sum)(np.ones(2)), inert.Array)
    assert inert.jacobian is inert.jacrev
