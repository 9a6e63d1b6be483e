"""Binomial checkpointing (revolve, Griewank and Walther): reversing a loop of `T` steps
with `c` carry snapshots, recomputing as few forward steps as possible.

A *snapshot* holds one carry (the first holds the loop's initial carry); reversing a
step needs its input carry, which is advanced to from the nearest snapshot. With `c`
snapshots the fewest forward steps are (Griewank 1992; Griewank and Walther,
*Evaluating Derivatives*, ch. 12)

    t(T, c) = r*T - beta(c + 1, r - 1),   beta(c, r) = C(c + r, c),

where `r` is the least number of times a step is repeated that `beta(c, r) >= T`. The
optimal schedule splits the `T` steps at `m`: advance `m` steps from the first snapshot,
store the carry there, reverse the last `T - m` steps with `c - 1` snapshots, then the
first `m` with `c`; `optimal_split` finds an `m` reaching `t` from the closed form, so the
schedule is built without the O(T^2 c) dynamic programme (which the tests check it
against for small `T` and `c`).

`schedule(T, c)` lists the actions: `("advance", i, j)` steps the carry from step `i` to
step `j`, `("store", i)` keeps it in a snapshot, `("reverse", i)` takes step `i` with its
derivative and runs its backward, `("drop", i)` frees a snapshot.
"""

from __future__ import annotations

import itertools
from math import comb


def beta(c: int, r: int) -> int:
    return comb(c + r, c)


def repetitions(steps: int, snapshots: int) -> int:
    """The least `r` with `beta(snapshots, r) >= steps`."""
    r = 0
    while beta(snapshots, r) < steps:
        r += 1
    return r


def min_forward_steps(steps: int, snapshots: int) -> int:
    """Forward steps (besides the one taped per reversed step) an optimal reversal of
    `steps` steps with `snapshots` snapshots recomputes."""
    if steps <= 1:
        return 0
    r = repetitions(steps, snapshots)
    return r * steps - beta(snapshots + 1, r - 1)


def optimal_split(steps: int, snapshots: int) -> int:
    """A first part `m` of an optimal split, `1 <= m < steps` (`snapshots >= 2`)."""
    best = min_forward_steps(steps, snapshots)
    r = repetitions(steps, snapshots)
    guess = steps - min(beta(snapshots - 1, r - 1) + 1, steps - 1)
    for m in itertools.chain((guess,), range(1, steps)):
        if 1 <= m < steps and m + min_forward_steps(steps - m, snapshots - 1) + \
                min_forward_steps(m, snapshots) == best:
            return m
    raise AssertionError("no split reaches the optimum")


def schedule(steps: int, snapshots: int) -> list[tuple]:
    """The actions reversing `steps` steps, the initial carry in snapshot 0."""
    if snapshots < 1:
        raise ValueError("revolve needs at least one snapshot (the initial carry)")
    actions: list[tuple] = [("store", 0)]
    _reverse(0, steps, snapshots, actions)
    actions.append(("drop", 0))
    return actions


def _reverse(start: int, steps: int, snapshots: int, actions: list) -> None:
    """Reverse steps `start .. start+steps-1`, the carry at `start` in a snapshot."""
    while steps > 0:
        if steps == 1:
            actions.append(("reverse", start))
            return
        if snapshots == 1:
            actions.append(("advance", start, start + steps - 1))
            actions.append(("reverse", start + steps - 1))
            steps -= 1
            continue
        m = optimal_split(steps, snapshots)
        actions.append(("advance", start, start + m))
        actions.append(("store", start + m))
        _reverse(start + m, steps - m, snapshots - 1, actions)
        actions.append(("drop", start + m))
        steps = m
