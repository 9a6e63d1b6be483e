"""Test configuration: every jaxpr a transformation builds is checked, and the shared
checks in `harness.py` are importable as `harness`."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import inert  # noqa: E402

inert.enable_checks(True)


@pytest.fixture(autouse=True)
def clean_trace_state():
    """Every test must leave no transformation behind, whatever it raised."""
    yield
    from inert.core.trace import trace_depth  # noqa: PLC0415 — a test-only probe

    assert trace_depth() == 0, "a transformation leaked its level"
    assert not inert.config.jax_debug_nans, "a test left jax_debug_nans on"


@pytest.fixture
def rng():
    return np.random.default_rng(0)
