"""examples/logistic_dask.py runs on a LocalCluster and recovers the coefficients."""

import importlib.util
import os

import numpy as np

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "examples", "logistic_dask.py")


def test_logistic_regression_on_a_cluster_recovers_the_model(capsys):
    spec = importlib.util.spec_from_file_location("logistic_dask", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    w, losses, w_true = example.main(["--rows", "20000", "--features", "4", "--steps", "8"])
    assert losses[-1] < 0.8 * losses[0]
    assert all(b < a for a, b in zip(losses, losses[1:]))  # descent
    assert np.corrcoef(w, w_true)[0, 1] > 0.99  # heading for the true coefficients
    assert "fitted coefficients" in capsys.readouterr().out
