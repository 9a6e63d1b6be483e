"""Errors point at the user: inert's frames are filtered from their tracebacks, eager
operators and writes into traced arrays raise inert's errors with the user's line,
and eager numpy warnings name the user's line."""

import re
import traceback
import warnings

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.core import traceback_util
from inert.errors import ConcretizationError, ImmutableArrayError, ShapeError

X = np.ones((2, 3))


def mismatched(x):
    return inp.sum(inp.dot(x, inp.ones((4, 2))))  # the user's line


def frames(info) -> list:
    return traceback.extract_tb(info.value.__traceback__)


@pytest.fixture
def filtering():
    """Tracebacks as users get them (the default), whatever the environment says."""
    previous = inert.config.inert_traceback_filtering
    inert.config.update("inert_traceback_filtering", "auto")
    yield
    inert.config.update("inert_traceback_filtering", previous)


@pytest.mark.parametrize("transform", [inert.grad, inert.jit, inert.vmap, lambda f: f,
                                       lambda f: inert.jit(inert.grad(f))])
def test_a_shape_error_at_depth_1_has_few_frames_all_but_one_the_users(transform, filtering):
    with pytest.raises(ShapeError, match=r"dot_general: .* f64\[(5,)?2,3\] .* f64\[4,2\]") as info:
        transform(mismatched)(X if transform is not inert.vmap else np.ones((5, 2, 3)))
    tb = frames(info)
    assert len(tb) <= 10
    assert [f.name for f in tb if f.filename == __file__][-1] == "mismatched"
    assert sum(f.filename != __file__ for f in tb) == 1  # the entry point's re-raise
    assert traceback_util.NOTE in info.value.__notes__
    assert f"{__file__}:{mismatched.__code__.co_firstlineno + 1}" in str(info.value)


def test_off_keeps_inert_frames(filtering):
    inert.config.update("inert_traceback_filtering", "off")
    with pytest.raises(ShapeError) as info:
        inert.grad(mismatched)(X)
    assert len(frames(info)) > 15 and not hasattr(info.value, "__notes__")


def test_remove_frames_chains_the_full_traceback(filtering):
    inert.config.update("inert_traceback_filtering", "remove_frames")
    with pytest.raises(ShapeError) as info:
        inert.grad(mismatched)(X)
    full = info.value.__cause__
    assert isinstance(full, traceback_util.UnfilteredTraceback)
    assert len(traceback.extract_tb(full.__traceback__)) > 15 >= len(frames(info))


def test_filtering_mode_is_checked():
    with pytest.raises(ValueError, match="inert_traceback_filtering must be one of"):
        inert.config.update("inert_traceback_filtering", "tracebackhide")


def test_a_users_own_error_keeps_the_users_frames(filtering):
    def helper(x):
        raise KeyError("the user's")

    with pytest.raises(KeyError) as info:
        inert.grad(lambda x: helper(x))(1.0)
    names = [f.name for f in frames(info)]
    assert names[-2:] == ["<lambda>", "helper"] and len(names) <= 5


@pytest.mark.parametrize("op", ["+", "*", "-", "@", "<"])
def test_eager_operators_on_arrays_raise_shape_errors_at_the_users_line(op, filtering):
    a, b = inp.ones((2, 3)), inp.ones((4, 2))
    shapes = r"(\(2, 3\).*\(4, 2\)|f64\[2,3\])"
    with pytest.raises(ShapeError, match=rf"`x {re.escape(op)} y`: .*{shapes}") as info:
        eval(f"a {op} b")
    assert len(frames(info)) <= 3 and "<string>:1" in str(info.value)
    assert isinstance(info.value, ValueError)
    c = a.copy()
    with pytest.raises(ShapeError, match=r"`x \+ y`"):
        c += b  # in-place operators too
    assert np.array_equal(a + a, 2 * np.ones((2, 3)))  # and numpy's own results otherwise
    assert type(np.ones(3) + inp.ones(3)) is inert.Array


@pytest.mark.parametrize("transform", [inert.grad, inert.jit])
def test_item_assignment_on_a_tracer_is_jaxs_message(transform, filtering):
    def f(x):
        x[0] = 1.0  # the user's line
        return inp.sum(x)

    message = (r"object does not support item assignment: the traced array f64\[3\] is "
               r"immutable.*x = x\.at\[idx\]\.set\(y\)")
    with pytest.raises(ImmutableArrayError, match=message) as info:
        transform(f)(np.ones(3))
    assert isinstance(info.value, TypeError) and len(frames(info)) <= 4
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(info.value)


def test_eager_warnings_name_the_users_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traceback_util.route_eager_warnings()  # first, as after `import inert`
        line = test_eager_warnings_name_the_users_line.__code__.co_firstlineno + 5
        out = inp.log(-1.0)
        inp.ones(3) / inp.zeros(3)
    assert np.isnan(out)
    assert [(w.filename, w.lineno, w.category) for w in caught] == [
        (__file__, line, RuntimeWarning), (__file__, line + 1, RuntimeWarning)]
    assert "invalid value encountered in log" in str(caught[0].message)


def test_a_traced_shape_suggests_static_argnums(filtering):
    with pytest.raises(ConcretizationError, match="static_argnums=.*static_argnames") as info:
        inert.jit(lambda n: inp.ones(n))(3)
    assert "where" not in str(info.value) and len(frames(info)) <= 4
    assert inert.jit(lambda n: inp.ones(n), static_argnums=0)(3).shape == (3,)


def test_a_concretization_error_names_the_arguments_the_value_depends_on(filtering):
    def f(scale, params, y):
        if params["w"] * scale > 0:  # the user's line
            return y
        return -y

    with pytest.raises(ConcretizationError, match=r"depends on the arguments `scale`, "
                       r"`params` of `.*\.f` \(defined at .*test_user_errors.py:\d+\)"):
        inert.jit(f)(1.0, {"w": 2.0, "b": 0.0}, 3.0)
    with pytest.raises(ConcretizationError, match=r"depends on the argument `params` of"):
        inert.make_jaxpr(f, static_argnums=0)(1.0, {"w": 2.0, "b": 0.0}, 3.0)
    with pytest.raises(ConcretizationError, match=r"depends on the argument `n`"):
        inert.jit(lambda x, n: inp.zeros(n) + x)(1.0, 3)
