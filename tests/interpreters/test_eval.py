"""The eval interpreter's caches hold nothing beyond the programs still in use."""

import gc

import numpy as np

import inert
import inert.numpy as inp
from inert import lax
from inert.interpreters import eval as eval_interpreter


def test_repeated_grads_of_loops_leak_nothing():
    """Each grad of a loop compiles fresh bodies; they must die with the call (a
    cache entry whose value held its key never did)."""
    xs = np.ones((5, 3))
    f = lambda x: inp.sum(lax.scan(lambda c, y: (inp.sin(c) * y, c), x, xs)[0]
                          + lax.fori_loop(0, 3, lambda i, c: inp.tanh(c) * 1.1, x))
    x = np.ones(3)
    for _ in range(3):  # let every one-off cache fill
        inert.grad(f)(x)
    gc.collect()
    entries, objects = len(eval_interpreter._compiled), len(gc.get_objects())
    for _ in range(20):
        inert.grad(f)(x)
    gc.collect()
    assert len(eval_interpreter._compiled) == entries
    assert len(gc.get_objects()) - objects < 20  # was about 120 per call
