"""Test configuration: every jaxpr a transformation builds is checked, the shared
checks in `harness.py` are importable as `harness`, and tests that call `jit` run
with each of its backends."""

import inspect
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import inert  # noqa: E402

inert.enable_checks(True)


def pytest_addoption(parser):
    parser.addoption("--resave-notebooks", action="store_true",
                     help="write each notebook back with the outputs of a fresh run "
                          "(tests/test_notebooks.py)")


@pytest.fixture(autouse=True)
def clean_trace_state():
    """Every test must leave no transformation behind, whatever it raised, and no
    background compile of jit's default backend running into the next test."""
    yield
    inert.block_until_compiled()
    from inert.core.trace import trace_depth  # noqa: PLC0415 — a test-only probe

    assert trace_depth() == 0, "a transformation leaked its level"
    assert not inert.config.jax_debug_nans, "a test left jax_debug_nans on"


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_generate_tests(metafunc):
    """Every test that calls `jit` runs with each of jit's backends."""
    source = inspect.getsource(metafunc.function)
    if "jit(" in source and "backend=" not in source:
        metafunc.parametrize("jit_backend", ["numpy", "numba"], indirect=True)


@pytest.fixture(autouse=True)
def jit_backend(request, monkeypatch):
    """The default backend of `jit` for this test (when parametrised)."""
    backend = getattr(request, "param", None)
    if backend is not None:
        monkeypatch.setenv("INERT_JIT_BACKEND", backend)
    return backend
