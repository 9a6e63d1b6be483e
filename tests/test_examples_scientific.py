"""The scientific examples run, small, and do what they say: the MAP fit climbs the
log posterior and recovers the weights within a few posterior standard deviations;
the neural ODE's loss falls."""

from __future__ import annotations

import pathlib
import runpy

import numpy as np

EXAMPLES = pathlib.Path(__file__).parent.parent / "examples"


def _example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="example")


def test_bayesian_logistic_regression():
    result = _example("bayesian_logistic_regression")["main"](n=300, dim=3, steps=6,
                                                                 verbose=False)
    assert result["history"][-1] > result["history"][0]
    std = np.sqrt(np.diag(result["covariance"]))
    assert np.all(np.abs(result["weights"] - result["true_weights"]) < 4 * std)
    assert result["accuracy"] > 0.65


def test_neural_ode():
    result = _example("neural_ode")["main"](steps=4, hidden=4, n_times=4, verbose=False)
    history = result["history"]
    assert np.all(np.isfinite(history)) and history[-1] < history[0]
