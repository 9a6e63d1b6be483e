"""memory_profile: live bytes per equation of both passes; its peak is the real one."""

import matplotlib
import numpy as np

import inert
import inert.numpy as inp
from inert.benchmarks.memory import peak_bytes

matplotlib.use("Agg")


def chain(x, a):
    for _ in range(3):
        x = inp.tanh(x * a) + inp.sin(x)
    return inp.sum(x ** 2)


def layers(w, x):
    for _ in range(3):
        x = inp.tanh(x @ w)
    return inp.sum(x ** 2)


def test_the_peak_agrees_with_tracemalloc(rng):
    """Every float argument is differentiated, as by vjp (grad in all of them)."""
    x, a = rng.standard_normal(200_000), rng.standard_normal(200_000)
    w, h = rng.standard_normal((300, 300)) * 0.05, rng.standard_normal((400, 300))
    for f, args in ((chain, (x, a)), (layers, (w, h))):
        profile = inert.memory_profile(f, *args)
        measured = peak_bytes(lambda f=f, args=args: inert.grad(f, argnums=(0, 1))(*args))
        assert abs(profile.peak.peak_bytes - measured) <= 0.1 * measured
    profile = inert.memory_profile(chain, x, a)
    phases = [s.phase for s in profile.steps]
    assert phases == sorted(phases, key=["forward", "backward"].index) and "backward" in phases
    # the forward pass ends holding the residuals; no step holds less than nothing
    assert all(s.live_bytes >= 0 and s.peak_bytes >= s.live_bytes for s in profile.steps)


def test_the_table_names_the_peak_and_the_lines(rng):
    x, a = rng.standard_normal(1000), rng.standard_normal(1000)
    profile = inert.memory_profile(chain, x, a)
    text = str(profile)
    peak = profile.peak
    assert f"peak: {peak.peak_bytes:,} bytes in the {peak.phase} pass, at {peak.eqn}" in text
    assert "test_memory_profile.py" in text and text.count("\n> ") == 1
    assert len(text.splitlines()) == len(profile.steps) + 2
    ax = profile.plot()
    assert np.allclose(ax.lines[0].get_ydata(), [s.live_bytes for s in profile.steps])


def test_checkpointing_lowers_the_profile(rng):
    x, a = rng.standard_normal(100_000), rng.standard_normal(100_000)
    plain = inert.memory_profile(chain, x, a).peak.peak_bytes
    ck = inert.memory_profile(inert.checkpoint(chain), x, a)
    assert max(s.live_bytes for s in ck.steps if s.phase == "forward") < plain / 2
