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
    """Marks an argument of a transform as inactive for that transform only."""

    value: Any


@attrs.frozen
class Zero:
    """The symbolic zero tangent of an inactive value at one jvp level. The level is
    checked when checks are on: a `Zero` of another jvp reaching this one's rules
    would be perturbation confusion (a transformation bug, not the user's)."""

    aval: ShapedArray
    level: int | None = None
