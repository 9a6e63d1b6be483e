"""The pictures the documentation shows, drawn by inert from small examples so that they
cannot drift from what it draws now: `python docs/pictures.py` writes them into
`docs/_static/`, and `tests/test_docs_pictures.py` checks that the committed files are
what this script draws.

The example is compiled under a fixed file name, so that the source lines in the
drawing's tooltips do not depend on where the checkout lives."""

from pathlib import Path

import numpy as np

import inert

STATIC = Path(__file__).resolve().parent / "_static"

EXAMPLE = '''
import inert.numpy as jnp


def loss(W, b, x):
    h = jnp.tanh(x @ W + b)
    return jnp.sum(jnp.where(h > 0, h ** 2, 0.0))
'''


def activity_svg() -> str:
    """`draw_activity` of one layer trained on inactive data: the data, the comparison
    and the zeros grey; the data and the layer's output kept (the mask and `2h` are
    recomputed from it)."""
    namespace: dict = {}
    exec(compile(EXAMPLE, "example.py", "exec"), namespace)
    rng = np.random.default_rng(0)
    W, b, x = rng.normal(size=(3, 4)), np.zeros(4), rng.normal(size=(8, 3))
    return inert.draw_activity(namespace["loss"], W, b, inert.Inactive(x)).svg


PICTURES = {"activity.svg": activity_svg}


def main() -> None:
    STATIC.mkdir(exist_ok=True)
    for name, draw in PICTURES.items():
        (STATIC / name).write_text(draw(), encoding="utf-8")
        print(f"wrote {STATIC / name}")


if __name__ == "__main__":
    main()
