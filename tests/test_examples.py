"""The scripts in examples/ run as written (small), print a falling loss curve and
reach what they claim."""

import os
import re
import runpy
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def run_example(name: str, *args: str) -> None:
    """Run `examples/<name>` as `python <name> args...` in this process."""
    argv = sys.argv
    sys.argv = [name, *args]
    try:
        runpy.run_path(os.path.join(EXAMPLES, name), run_name="__main__")
    finally:
        sys.argv = argv


def losses(out: str) -> list[float]:
    return [float(v) for v in re.findall(r"^step\s+\d+\s+[^\d-]*(-?[\d.]+)$", out, re.M)]


def test_mlp_classifier_learns_the_spirals(capsys):
    run_example("mlp_classifier.py", "--steps", "60", "--points", "40")
    out = capsys.readouterr().out
    curve = losses(out)
    assert len(curve) >= 5 and curve[-1] < 0.5 * curve[0]
    assert float(re.search(r"train accuracy ([\d.]+)", out).group(1)) > 0.8


def test_variational_inference_recovers_the_posterior_mean(capsys):
    run_example("variational_inference.py", "--steps", "300", "--samples", "8")
    out = capsys.readouterr().out
    curve = losses(out)
    assert len(curve) >= 5 and curve[-1] < 0.1 * curve[0]
    assert float(re.search(r"max error of the mean ([\d.]+)", out).group(1)) < 0.05

