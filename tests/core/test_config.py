"""inert.config: JAX's flags; evaluation without floating-point warnings; debug_nans."""

import warnings

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert import lax


def test_x64_is_accepted_on_and_refused_off():
    inert.config.update("jax_enable_x64", True)
    assert inert.config.jax_enable_x64
    with pytest.raises(ValueError, match="float64 by default"):
        inert.config.update("jax_enable_x64", False)
    assert inert.config.jax_enable_x64
    with pytest.raises(AttributeError, match="jax_debug_nans"):
        inert.config.update("jax_debug_nan", True)


def test_debug_nans_is_off_by_default_and_restored():
    assert not inert.config.jax_debug_nans
    with inert.debug_nans():
        assert inert.config.jax_debug_nans
        with inert.debug_nans(False):
            assert not inert.config.jax_debug_nans
        assert inert.config.jax_debug_nans
    assert not inert.config.jax_debug_nans


def _untaken_sqrt(x):
    return inp.sum(inp.where(x > 0, inp.sqrt(x), 0.0))


@pytest.mark.parametrize("transform", ["eager scan", "jit", "grad", "jit of grad", "vmap"])
def test_evaluation_gives_nan_and_inf_without_warnings(transform):
    """As in JAX: the untaken branch's sqrt(-1) is nan, silently. (A single eager
    operation is numpy's own, and warns as numpy does.)"""
    x = np.array([-1.0, 0.0, 4.0])
    eager_scan = lambda x: lax.scan(lambda c, _: (c + _untaken_sqrt(x), None), 0.0, None,
                                    length=1)[0]
    f = {"eager scan": eager_scan, "jit": inert.jit(_untaken_sqrt),
         "grad": inert.grad(_untaken_sqrt), "jit of grad": inert.jit(inert.grad(_untaken_sqrt)),
         "vmap": inert.vmap(lambda r: inp.log(r) / 0.0)}[transform]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = f(x)
    if transform in ("grad", "jit of grad"):
        np.testing.assert_array_equal(out, [0.0, 0.0, 0.25])
    elif transform == "vmap":
        assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == np.inf
    else:
        assert out == 2.0


def _log_twice(x):
    y = inp.log(x)  # NaN_LINE: the NaN appears here
    return inp.sum(y * 2.0)


_NAN_LINE = next(i for i, line in enumerate(open(__file__), 1) if "# NaN_LINE" in line)


@pytest.mark.parametrize("where", ["eager", "jit", "grad forward", "scan body", "jit of scan"])
def test_debug_nans_names_the_primitive_and_the_line(where):
    x = np.array([1.0, -1.0])
    scan_log = lambda x: lax.scan(lambda c, a: (c + _log_twice(a), None), 0.0, x)[0]
    run = {"eager": lambda: _log_twice(x), "jit": lambda: inert.jit(_log_twice)(x),
           "grad forward": lambda: inert.value_and_grad(_log_twice)(x)[0],
           "scan body": lambda: scan_log(x[:, None]),
           "jit of scan": lambda: inert.jit(scan_log)(x[:, None])}[where]
    with np.errstate(invalid="ignore"):  # an eager log is numpy's own, and would warn
        assert np.isnan(run())  # off: a NaN, no error
        with inert.debug_nans(), pytest.raises(FloatingPointError, match="nan.* in log") as info:
            run()
    assert f"{__file__}:{_NAN_LINE}" in str(info.value)


def test_debug_nans_in_the_backward_pass_names_the_forward_line():
    f = lambda x: inp.sum(inp.sqrt(x) * 0.0 + x)  # d sqrt at 0 is 0.5 / 0, times 0: nan
    x = np.array([0.0, 1.0])
    assert np.isnan(inert.grad(f)(x)[0])
    with inert.debug_nans(), pytest.raises(FloatingPointError, match="in mul") as info:
        inert.grad(f)(x)
    assert "test_config.py" in str(info.value)


def test_debug_nans_under_jit_ignores_a_nan_that_does_not_reach_the_outputs():
    with inert.debug_nans():
        assert inert.jit(_untaken_sqrt)(np.array([-1.0, 4.0])) == 2.0


def test_disable_jit_runs_jitted_functions_as_python_and_is_restored():
    seen = []

    @inert.jit
    def f(x, n):
        seen.append(type(x).__name__)
        return x * n

    f(np.ones(2), 2.0)
    with inert.disable_jit():
        assert inert.config.jax_disable_jit
        np.testing.assert_array_equal(f(np.ones(2), 3.0), [3.0, 3.0])
        np.testing.assert_array_equal(f(np.ones(2), 3.0), [3.0, 3.0])
    assert not inert.config.jax_disable_jit
    assert seen[1:] == ["ndarray", "ndarray"] and seen[0] != "ndarray"  # traced once, then eager
    f(np.ones(2), 2.0)
    assert len(seen) == 3  # the cached trace again
