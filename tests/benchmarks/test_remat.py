"""The remat benchmark at a small size: budgets are kept, the long loop holds about c
carries and runs revolve's count of forward steps, the gradients do not change."""

import re

from inert.benchmarks import remat
from inert.benchmarks.run import median_times
from inert.benchmarks.workloads import workloads
from inert.interpreters.remat import min_forward_steps


def test_the_long_loop_holds_c_carries_and_runs_revolves_count():
    (line,) = remat.long_scan_lines(scale=0.003)  # 300 steps
    assert "vjp holds" in line and "(target ≤ 22: ok)" in line
    assert f"revolve's t(T, c) = {min_forward_steps(300, 20):,} (ok)" in line
    held = float(re.search(r"vjp holds ([\d.]+) carries", line).group(1))
    plain = float(re.search(r"plain ([\d,.]+)", line).group(1).replace(",", ""))
    assert held <= 22 < plain


def test_a_budgeted_workload_keeps_its_budget():
    (w4,) = [w for w in workloads(0.05) if w.key == "W4"]
    smallest, run = remat.budget_lines("W4", w4, (0.25,), median_times, 1, lambda f: None)
    assert "smallest feasible budget" in smallest
    budget, kept = (int(n.replace(",", "")) for n in re.search(
        r"budget \(([\d,]+) B\): vjp holds ([\d,]+) B", run).groups())
    assert kept <= budget and "revolve over 10 steps" in run
    assert re.search(r"gradient differs by \S+ \(ok\)", run)
