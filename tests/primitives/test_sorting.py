"""The sort primitive: values and permutation against numpy, abstract eval against
impl, jvp against finite differences, the vjp dot-product test, and batching against
a loop, along each axis."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_abstract_eval, check_jvp, check_vjp

import inert
from inert.primitives import sorting


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_sort_along_each_axis(axis, rng):
    x = rng.standard_normal((3, 4, 5))
    values, perm = sorting.sort(x, axis)
    np.testing.assert_array_equal(values, np.sort(x, axis))
    np.testing.assert_array_equal(perm, np.argsort(x, axis, kind="stable"))
    check_abstract_eval(sorting.sort_p, [x], {"axis": axis})
    check_jvp(lambda x: sorting.sort(x, axis)[0], (x,), rng)
    check_vjp(lambda x: sorting.sort(x, axis)[0], (x,), rng)
    lane_axis = min(axis, 1)  # each lane (x[:, i]) has two axes
    batched = inert.vmap(lambda x: sorting.sort(x, lane_axis)[0], in_axes=1)(x)
    loop = np.stack([np.sort(x[:, i], lane_axis) for i in range(x.shape[1])])
    np.testing.assert_array_equal(batched, loop)


def test_ties_and_nans_sort_like_numpy():
    x = np.array([2.0, np.nan, 1.0, 2.0, -np.inf])
    values, perm = sorting.sort(x, 0)
    np.testing.assert_array_equal(values, np.sort(x))
    np.testing.assert_array_equal(perm, [4, 2, 0, 3, 1])
