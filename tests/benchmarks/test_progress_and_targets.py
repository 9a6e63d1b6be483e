"""The benchmark's progress lines (on stderr), the mark on figures that miss their
documented targets, and the cold-compile line's medians."""

import io

from inert.benchmarks.default_jit import cold_compile_lines, first_call_seconds
from inert.benchmarks.progress import Progress, duration
from inert.benchmarks.targets import MISS, against, legend, mark, miss, target


def test_progress_names_each_step_how_far_and_the_time_left():
    stream = io.StringIO()
    progress = Progress(3, stream)
    for name in ("W1", "W2", "overheads"):
        with progress.step(name):
            pass
    progress.done()
    lines = stream.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == ["[1/3] W1", "[2/3] W2",
                                                          "[3/3] overheads"]
    assert "time left unknown yet" in lines[0]
    assert lines[1].endswith("about 0 s left") and lines[-1].startswith("done: 3 steps")


def test_durations_read_as_a_wait():
    assert [duration(s) for s in (0.4, 45, 125)] == ["0 s", "45 s", "2 min 05 s"]


def test_a_figure_above_its_target_is_marked_as_printed():
    assert against(1.21, 1.2) == f"1.21 {MISS}" and against(1.2, 1.2) == "1.20"
    assert against(1.0004, 1.0) == "1.00"  # prints 1.00: meets 1.00
    assert against(5.0, None) == "5.00" and miss(3.5, 3.0) == f" {MISS}"


def test_the_rows_targets_come_from_docs_benchmarks():
    w1 = {"key": "W1", "ratio": 1.02, "peak": 1.1, "time": 1.5, "jit_numba": 0.9,
          "jit_jax": 0.7}
    assert [mark(w1, c) for c in ("ratio", "peak", "time")] == [
        f"1.02 {MISS}", "1.10", f"1.50 {MISS}"]
    assert target("jit_numba", w1) is None  # W3 to W8 are held to JAX's
    w3 = {"key": "W3", "jit_numba": 0.30, "jit_jax": 0.23}
    assert mark(w3, "jit_numba") == f"0.30 {MISS}"
    assert mark({"key": "W3", "jit_numba": 0.30}, "jit_numba") == "0.30"  # no JAX here
    assert target("time", {"key": "W5"}) == 2.0 and target("time", {"key": "W3"}) is None


def test_the_legend_says_when_the_run_is_not_at_the_targets_scale():
    assert "--scale 1" not in legend(1.0) and "this run is at 0.1" in legend(0.1)


def test_the_cold_compile_line_takes_medians_of_new_processes(tmp_path):
    """Each run a new cache folder, the first call cold, then warm on what it filled; the
    medians, the cold one marked where it misses 3 s. One real pair of processes on a
    small workload: its second process compiles nothing."""
    calls = []

    def first_call(key, folder):
        calls.append((key, folder))
        return [4.0, 0.5, 2.0, 0.4, 3.5, 0.6][len(calls) - 1]

    cold, warm = cold_compile_lines(3, "W4", first_call)
    assert "3.50 s, median of 3 (4.00, 2.00, 3.50; target ≤ 3 s) " + MISS in cold
    assert warm.endswith("0.50 s, median of 3")
    assert [c[1] for c in calls[::2]] == [c[1] for c in calls[1::2]]  # warm: the same folder
    assert len({c[1] for c in calls}) == 3
    assert MISS not in cold_compile_lines(1, "W4", lambda key, folder: 2.9)[0]
    cold_run = first_call_seconds("W5", str(tmp_path))
    warm_run = first_call_seconds("W5", str(tmp_path))
    assert 0 < warm_run < cold_run and any(tmp_path.iterdir())
