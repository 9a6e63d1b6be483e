"""jax.numpy code that updates arrays with `.at` runs eagerly too."""

import numpy as np

import inert
import inert.numpy as jnp


def test_eager_results_have_at_and_stay_arrays():
    x = jnp.zeros(3).at[0].set(1.0)
    assert isinstance(x, jnp.ndarray) and isinstance(x, np.ndarray)
    y = (x * 2 + 1).at[1].add(5.0).at[np.array([0, 2])].multiply(10.0)
    np.testing.assert_array_equal(y, [30.0, 6.0, 10.0])
    assert y.at[1].get() == 6.0
    assert type(np.asarray(y)) is np.ndarray


def test_at_on_eager_arrays_under_every_transform():
    f = lambda v: jnp.sum(jnp.zeros(3).at[0].set(v) ** 2)
    assert inert.grad(f)(3.0) == 6.0
    assert inert.jvp(f, (3.0,), (1.0,))[1] == 6.0
    assert inert.jacfwd(f)(3.0) == 6.0
    assert inert.jit(f)(3.0) == 9.0


def test_namespace_errors_name_the_function_and_the_line():
    import pytest

    from inert.errors import ShapeError

    cases = [lambda: jnp.einsum("ij,jk->il", np.ones((2, 2)), np.ones((2, 2))),
             lambda: jnp.concatenate([]), lambda: jnp.tile(np.ones(2), -1),
             lambda: jnp.repeat(np.ones(2), -1)]
    for case, name in zip(cases, ["einsum", "concatenate", "tile", "repeat"]):
        with pytest.raises(ShapeError, match=name) as info:
            case()
        assert __file__ in str(info.value)


def test_bad_indices_and_lax_reshape_sizes_name_the_line():
    import pytest

    from inert.errors import IndexingError, ShapeError

    with pytest.raises(IndexingError, match="too many indices") as info:
        inert.grad(lambda a: a[0, 0])(np.ones(3))
    assert isinstance(info.value, IndexError) and __file__ in str(info.value)
    with pytest.raises(ShapeError, match="negative size"):
        inert.lax.reshape(np.ones(4), (-1,))


def test_integer_floor_division_is_exact_and_numpy_like():
    big = np.int64(2**60 + 1)
    assert inert.jit(lambda a, b: a // b)(big, np.int64(1)) == big
    a, b = np.array([7, -7, 7, 0]), np.array([2, 2, -2, 3])
    np.testing.assert_array_equal(jnp.floor_divide(a, b), np.floor_divide(a, b))
    np.testing.assert_array_equal(jnp.floor_divide(a * 1.5, 2.0), np.floor_divide(a * 1.5, 2.0))
    np.testing.assert_array_equal(inert.grad(lambda x: jnp.sum(x // 2.0 + x))(np.ones(2)), 1.0)


def test_iteration_stops_at_the_end_though_indexing_past_it_clamps():
    x = inert.numpy.arange(6.0).reshape(3, 2)
    first, second, third = x
    np.testing.assert_array_equal(third, [4.0, 5.0])
    assert x[3].tolist() == [4.0, 5.0] and len(list(x)) == 3
