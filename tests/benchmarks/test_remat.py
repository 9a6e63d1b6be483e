"""The remat benchmark: the budgeted vjp keeps about the budget's carries."""

import re

from inert.benchmarks import remat
from inert.interpreters.remat import min_forward_steps


def test_budgeted_vjp_keeps_the_weight_and_a_carry(capsys):
    remat.main(["--steps", "300", "--snapshots", "5", "--backward"])
    out = capsys.readouterr().out
    kept = dict(re.findall(r"(\w+)\s+vjp: .* = ([\d,.]+) carries", out))
    # the 16x16 weight is 16 carries, the initial carry one more, and the budget's
    # slack (what the greedy plan may add) one more
    assert float(kept["budgeted"]) <= 18 < float(kept["plain"].replace(",", "")) / 10
    assert f"revolve recomputes {min_forward_steps(300, 5):,} forward steps" in out
