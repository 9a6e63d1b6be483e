"""The benchmark's JAX ports compute the workloads' own values and gradients, so the
JAX column times the same work (skipped where jax is not installed)."""

import numpy as np
import pytest

import inert
from inert.benchmarks import workloads as W
from inert.benchmarks.jax_column import PORTED, jax_gradient

pytest.importorskip("jax")

WORKLOADS = {w.key: w for w in W.workloads(scale=0.02)}


@pytest.mark.parametrize("key", ["W3", "W9", "W11", "FFT"])
def test_a_jax_port_has_the_workloads_value_and_gradient(key):
    w = WORKLOADS[key]
    args = w.make_args()
    argnums = tuple(i for i, a in enumerate(args) if not isinstance(a, inert.Inactive))
    want = inert.value_and_grad(w.f, argnums=argnums, has_aux=w.has_aux)(*args)
    got = jax_gradient(w.f, W._unwrap(args), argnums, w.has_aux)()
    for g, h in zip(inert.tree_util.tree_leaves(got), inert.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.float64
        np.testing.assert_allclose(np.asarray(g), h, rtol=1e-9, atol=1e-12)


def test_every_ported_workload_exists():
    assert set(PORTED) <= set(WORKLOADS)
