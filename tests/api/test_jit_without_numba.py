"""numba is a core dependency (jit is fast by default), and inert still runs without it:
`backend="numba"` is then a clear error, and the default backend ("auto") keeps numpy's
code with exactly one warning a process. numba's absence is simulated: a `None` in
`sys.modules` is what the import machinery reads as "not installed"."""

import sys
import warnings

import numpy as np
import pytest

import inert
import inert.api.compiled as compiled
import inert.numpy as jnp
from inert.interpreters import fusion


@pytest.fixture
def without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setattr(compiled, "HOT_SECONDS", 0.0)  # every function hot at once
    fusion.warn_numba_missing.cache_clear()
    assert not fusion.numba_available()
    yield
    fusion.warn_numba_missing.cache_clear()


def test_backend_numba_without_numba_is_an_error_saying_what_to_do(without_numba):
    with pytest.raises(inert.errors.BackendUnavailableError) as info:
        inert.jit(jnp.sin, backend="numba")
    assert isinstance(info.value, ImportError)
    message = str(info.value)
    assert 'backend="numba"' in message and "pip install numba" in message
    assert 'backend="numpy"' in message


def test_backend_numba_from_the_environment_too(without_numba, monkeypatch):
    monkeypatch.setenv("INERT_JIT_BACKEND", "numba")
    with pytest.raises(inert.errors.BackendUnavailableError):
        inert.jit(jnp.sin)


def test_auto_keeps_numpys_code_with_one_warning_a_process(without_numba):
    x = np.linspace(0.0, 1.0, 5)
    f = inert.jit(lambda x: jnp.sin(x) * 2.0, backend="auto")
    g = inert.jit(lambda x: jnp.cos(x) + x, backend="auto")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_array_equal(f(x), np.sin(x) * 2.0)
            np.testing.assert_array_equal(g(x), np.cos(x) + x)
    fallbacks = [w for w in caught if issubclass(w.category, inert.errors.BackendFallbackWarning)]
    assert len(fallbacks) == 1
    assert "numba" in str(fallbacks[0].message) and fallbacks[0].filename == __file__


def test_backend_numpy_never_warns(without_numba):
    f = inert.jit(lambda x: jnp.sin(x) * 2.0, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            f(np.ones(3))
