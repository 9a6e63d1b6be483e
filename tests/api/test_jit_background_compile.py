"""jit's default backend compiles numba's code in a background thread: no call waits
for it, the switch happens when it is ready, a failure is reported once, and the
compiles are logged with `inert_log_compiles`."""

import logging
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.api import compiled
from inert.errors import JitCompileWarning

pytest.importorskip("numba")


def f(x):
    return inp.sum(inp.tanh(x) * x)


@pytest.fixture
def hot_at_once(monkeypatch):
    """The default backend compiles numba's code after a function's first call."""
    monkeypatch.setattr(compiled, "HOT_SECONDS", 0.0)


@pytest.fixture
def slow_compile(monkeypatch, hot_at_once):
    """numba's compile waits until the test sets the event it returns."""
    ready, real = threading.Event(), compiled.compile_jaxpr_numba
    programs = []

    def waiting(jaxpr):
        assert ready.wait(30)
        programs.append(real(jaxpr))
        return programs[-1]

    monkeypatch.setattr(compiled, "compile_jaxpr_numba", waiting)
    yield ready, programs
    ready.set()
    inert.block_until_compiled()


def test_no_call_waits_for_a_compile_it_did_not_ask_for(slow_compile, rng):
    ready, programs = slow_compile
    x = rng.standard_normal(50)
    g = inert.jit(inert.grad(f), backend="auto")
    want = inert.grad(f)(x)
    start = time.perf_counter()
    for _ in range(20):  # numba's compile is pending all along: numpy's code runs
        np.testing.assert_allclose(g(x), want, rtol=1e-12)
    assert time.perf_counter() - start < 10 and not programs
    ready.set()
    inert.block_until_compiled()
    assert len(programs) == 1
    np.testing.assert_allclose(g(x), want, rtol=1e-12)  # numba's code now


def test_the_switch_happens_when_the_kernel_is_ready(hot_at_once, monkeypatch, rng):
    ran = []
    real = compiled.compile_jaxpr_numba

    def counted(jaxpr):
        program = real(jaxpr)
        return lambda consts, args: ran.append(len(args)) or program(consts, args)

    monkeypatch.setattr(compiled, "compile_jaxpr_numba", counted)
    x = rng.standard_normal(8)
    g = inert.jit(f, backend="auto")
    g(x)  # numpy's code; the compile starts, and runs numba's code once (`ran`)
    inert.block_until_compiled()
    assert ran == [1]
    np.testing.assert_allclose(g(x), np.sum(np.tanh(x) * x), rtol=1e-12)
    assert ran == [1, 1]


def test_the_warm_up_run_reads_a_copy_of_the_arguments(slow_compile):
    ready, _ = slow_compile
    x = np.full(4, 0.5)
    g = inert.jit(lambda x: x * 2.0, backend="auto")
    g(x)
    x[:] = np.nan  # the caller reuses its buffer while the compile is pending
    with inert.debug_nans(True):
        ready.set()
        inert.block_until_compiled()  # no NaN met: the run read the call's values
        np.testing.assert_array_equal(g(np.ones(4)), 2.0)


def _failing(jaxpr):
    raise RuntimeError("numba refused")


def test_a_failed_compile_raises_in_the_next_call_with_checks_on(hot_at_once, monkeypatch):
    monkeypatch.setattr(compiled, "compile_jaxpr_numba", _failing)
    g = inert.jit(lambda x: x * 2.0, backend="auto")
    assert g(1.5) == 3.0
    inert.block_until_compiled()
    with pytest.raises(RuntimeError, match="numba refused"):
        g(1.5)
    assert g(2.0) == 4.0  # reported once; numpy's code stays


def test_a_failed_compile_warns_once_and_keeps_numpys_code(hot_at_once, monkeypatch):
    monkeypatch.setattr(compiled, "compile_jaxpr_numba", _failing)
    monkeypatch.setattr(compiled, "checks_enabled", lambda: False)
    g = inert.jit(lambda x: x * 2.0, backend="auto")
    assert g(1.5) == 3.0
    inert.block_until_compiled()
    with pytest.warns(JitCompileWarning, match="numba refused") as caught:
        assert g(1.5) == 3.0 and g(2.0) == 4.0
    assert len(caught) == 1


def test_a_program_that_calls_back_keeps_numpys_code(hot_at_once, monkeypatch):
    """A warm-up run would call back once more than the program is called."""
    compiles, seen = [], []
    monkeypatch.setattr(compiled, "compile_jaxpr_numba", lambda j: compiles.append(j))

    def h(x):
        inert.debug.callback(seen.append, x)
        return x * 2.0

    g = inert.jit(h, backend="auto")
    for k in range(3):
        assert g(float(k)) == 2.0 * k
    inert.block_until_compiled()
    assert seen == [0.0, 1.0, 2.0] and not compiles


EXIT_DURING_COMPILE = """
import time, numpy as np, inert, inert.numpy as inp
from inert.api import compiled
compiled.HOT_SECONDS = 0.0
compiled.compile_jaxpr_numba = lambda jaxpr: time.sleep(600)
g = inert.jit(lambda x: inp.sum(inp.tanh(x) * x), backend="auto")
g(np.ones(3)); g(np.ones(3))
print("done")
"""


def test_the_interpreter_exits_without_waiting_for_a_compile():
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", EXIT_DURING_COMPILE], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["done"], done.stderr
    assert time.perf_counter() - start < 100


def test_log_compiles_logs_each_compile_with_its_kernels(hot_at_once, monkeypatch, caplog,
                                                         rng):
    monkeypatch.setattr(inert.config, "inert_log_compiles", True)
    x = rng.standard_normal(16)
    with caplog.at_level(logging.WARNING, logger="inert"):
        g = inert.jit(inert.grad(f), backend="auto")
        g(x)
        inert.block_until_compiled()
        g(x)
        inert.jit(inert.grad(f), backend="numpy")(x)
    first, background, numpys = (r.getMessage() for r in caplog.records)
    assert first.startswith("jit(f) for f64[16]: traced in ") and "auto backend" in first
    assert "no kernels" in first  # numpy's code
    assert background.startswith("jit(f): numba's code compiled in the background in ")
    assert " kernels: " in background and ("compiled" in background or "cache" in background)
    assert "numpy backend" in numpys
    assert all(r.name == "inert.api.compiled" and r.levelno == logging.WARNING
               for r in caplog.records)


def test_compiles_log_at_debug_without_the_flag(caplog):
    with caplog.at_level(logging.DEBUG, logger="inert"):
        inert.jit(lambda x: x + 1.0, backend="numpy")(1.0)
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_log_compiles_counts_kernels_from_the_cache(monkeypatch, caplog, rng):
    """A second function of the same program finds its kernels loaded already."""
    monkeypatch.setattr(inert.config, "inert_log_compiles", True)
    x = rng.standard_normal(16)
    with caplog.at_level(logging.WARNING, logger="inert"):
        inert.jit(inert.grad(f), backend="numba")(x)
        inert.jit(inert.grad(f), backend="numba")(x)
    first, second = (r.getMessage() for r in caplog.records)
    assert "numba backend" in first and " kernels: " in first
    assert "loaded already" in second and "compiled" not in second.split("kernels:")[1]


LOGGED_COMPILE = """
import logging, numpy as np, inert, inert.numpy as inp
logging.basicConfig(format="%(message)s")
inert.config.update("inert_log_compiles", True)
f = inert.jit(lambda x, y: (inp.sum(x * 3.0 + 1.0), y * 3.0 + 1.0), backend="numba")
f(np.linspace(0.0, 1.0, 8), 0.3)
"""


def test_log_compiles_says_which_kernels_came_from_the_disk_cache(tmp_path):
    """A loop kernel and a scalar kernel, compiled by one process, loaded by the next."""
    env = {**os.environ, "INERT_CACHE_DIR": str(tmp_path / "kernels")}
    logged = [subprocess.run([sys.executable, "-c", LOGGED_COMPILE], env=env, text=True,
                             capture_output=True, timeout=120).stderr for _ in range(2)]
    assert logged[0].strip().endswith("2 kernels: 2 compiled"), logged[0]
    assert logged[1].strip().endswith("2 kernels: 2 from the kernel cache on disk"), logged[1]
