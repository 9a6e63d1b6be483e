"""How much of JAX's namespaces inert covers: inert.numpy against jax.numpy,
inert.scipy.special against jax.scipy.special, inert.scipy.stats against
jax.scipy.stats (distribution by distribution, function by function).

JAX is not a dependency, so its names are stored in `jax_names.json` (generated once
from an installed JAX; the file records its version). The test prints what is still
missing and checks that the README's figures are the real ones."""

from __future__ import annotations

import json
import pathlib
import re

import inert

HERE = pathlib.Path(__file__).parent
JAX = json.loads((HERE / "jax_names.json").read_text())


def _stats_functions(namespace_names: dict) -> set[str]:
    return {f"{dist}.{fn}" for dist, fns in namespace_names.items() for fn in fns or ()}


def coverage() -> dict[str, tuple[set, set]]:
    """For each namespace: (JAX's names, the ones inert has)."""
    stats = inert.scipy.stats
    inert_stats = {d: getattr(stats, d).__all__ for d in stats.DISTRIBUTIONS}
    return {
        "numpy": (set(JAX["jax.numpy"]), set(inert.numpy.__all__)),
        "scipy.special": (set(JAX["jax.scipy.special"]), set(inert.scipy.special.__all__)),
        "scipy.stats": (set(JAX["jax.scipy.stats"]), set(inert.scipy.stats.__all__)),
        "scipy.stats functions": (_stats_functions(JAX["jax.scipy.stats"]),
                                  _stats_functions(inert_stats)),
    }


def test_print_coverage_and_the_names_still_missing():
    print(f"\nagainst JAX {JAX['jax_version']}:")
    for name, (jax_names, ours) in coverage().items():
        missing = sorted(jax_names - ours)
        print(f"inert.{name}: {len(jax_names & ours)} of {len(jax_names)}; missing: "
              f"{', '.join(missing)}")
        assert jax_names & ours


def test_readme_figures_are_the_real_coverage():
    readme = (HERE.parent / "README.md").read_text()
    figures = coverage()
    claims = re.findall(r"`inert\.([\w.]+(?: functions)?)`\s+covers\s+(\d+)\s+of\s+\S+\s+(\d+)",
                        readme)
    assert {name for name, _, _ in claims} == set(figures), claims
    for name, covered, total in claims:
        jax_names, ours = figures[name]
        assert int(total) == len(jax_names), name
        assert int(covered) == len(jax_names & ours), (name, len(jax_names & ours))
