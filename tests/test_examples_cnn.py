"""examples/cnn_stax.py trains: its loss falls and it separates the two classes."""

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cnn_stax.py"


def test_cnn_example_trains():
    example = runpy.run_path(str(EXAMPLE))
    losses, accuracy = example["train"](steps=12)
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.9
