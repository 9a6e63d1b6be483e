"""Activity: which values no derivative depends on.

Two markers carry it:

* `Inactive(x)` is what a user writes around an argument of a transform (`grad`,
  `vjp`, `jvp`, `jacfwd`, ...) to say that the transform does not differentiate
  with respect to it. It applies to that transform's level only: an outer transform
  still sees the value as active if it is.
* `Zero(aval, level)` is the tangent of an inactive value inside the jvp of the
  given level (and, with level None, a cotangent nobody contributed to). It is a
  value, not an absence: rules receive it and emit no work for that operand, and
  zeros are materialised only when a user asks for a tangent.
"""

from __future__ import annotations

from typing import Any

import attrs

from .avals import ShapedArray


@attrs.frozen
class Inactive:
    """Marks an argument of a transform as inactive for that transform only: data, not
    a variable. Nothing flows from it into a derivative, so its work moves to the
    known (forward) side, and the backward pass keeps nothing for its derivative.

    Any transform takes it in place of an argument (`grad`, `vjp`, `jvp`, `jacrev`,
    `print_saved_residuals`, ...). A value inactive for an inner transform can still be
    active for an outer one: the marker is tagged with the level it was given at.

    Args:
        value: the argument (a pytree); the function receives it unwrapped.

    Differences from JAX:
        JAX has no marker: it infers activity from `argnums`, and its backward pass may
        keep residuals for derivatives no one asked for.

    Example:
        >>> f = lambda w, x: jnp.sum(w * x)
        >>> inert.grad(f, argnums=(0, 1))(np.ones(2), inert.Inactive(np.array([1.0, 2.0])))
        (Array([1., 2.]), None)
    """

    value: Any


@attrs.frozen
class Zero:
    """The symbolic zero tangent of an inactive value at one jvp level. The level is
    checked when checks are on: a `Zero` of another jvp reaching this one's rules
    would be perturbation confusion (a transformation bug, not the user's)."""

    aval: ShapedArray
    level: int | None = None
