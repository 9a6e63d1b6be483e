"""revolve: the schedule reverses every step once, in order, with at most `c` snapshots,
recomputing exactly the optimum, which the closed form gives (checked against the
dynamic programme it solves)."""

import functools

import pytest

from inert.interpreters import remat as revolve


@functools.lru_cache(maxsize=None)
def fewest_forward_steps(steps: int, snapshots: int) -> int:
    """Brute force: split at every `m` (advance `m`, store, reverse the rest with one
    snapshot fewer, then the first `m`); one snapshot reverses step by step from 0."""
    if steps <= 1:
        return 0
    if snapshots == 1:
        return steps * (steps - 1) // 2
    return min(m + fewest_forward_steps(steps - m, snapshots - 1) +
               fewest_forward_steps(m, snapshots) for m in range(1, steps))


def test_the_closed_form_is_the_optimum():
    for snapshots in range(1, 7):
        for steps in range(1, 45):
            assert revolve.min_forward_steps(steps, snapshots) == \
                fewest_forward_steps(steps, snapshots), (steps, snapshots)


def run(actions, snapshots):
    """Play a schedule: returns the forward steps taken and the steps reversed, checking
    every advance starts at a stored carry and every reversal has its input carry."""
    stored, at, forward, reversed_steps, peak = set(), None, 0, [], 0
    for action in actions:
        kind, *where = action
        if kind == "store":
            assert where[0] == at or where[0] == 0
            stored.add(where[0])
            peak = max(peak, len(stored))
        elif kind == "drop":
            stored.remove(where[0])
        elif kind == "advance":
            start, end = where
            assert start in stored and end > start
            forward += end - start
            at = end
        else:
            assert where[0] in stored or where[0] == at
            reversed_steps.append(where[0])
            at = None
    assert peak <= snapshots and not stored
    return forward, reversed_steps


@pytest.mark.parametrize("steps,snapshots", [(1, 1), (7, 1), (10, 2), (30, 3), (100, 4),
                                             (1000, 5), (200, 50)])
def test_the_schedule_reverses_each_step_at_the_optimal_cost(steps, snapshots):
    forward, reversed_steps = run(revolve.schedule(steps, snapshots), snapshots)
    assert reversed_steps == list(range(steps - 1, -1, -1))
    assert forward == revolve.min_forward_steps(steps, snapshots)


def test_a_long_loop_repeats_each_step_a_few_times():
    # 10^5 steps with 20 snapshots: r = 6 (C(26, 6) = 230,230 >= 10^5 > C(25, 5))
    assert revolve.repetitions(10 ** 5, 20) == 6
    assert revolve.min_forward_steps(10 ** 5, 20) == 6 * 10 ** 5 - revolve.beta(21, 5)
