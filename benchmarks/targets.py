"""The benchmark's targets (docs/benchmarks.md, "Targets for inert") as data, and the mark
a figure that misses its target gets in the printed tables: any row or line formats its
figure with `against` (or appends `miss`), so a reader sees at once what falls short.

A figure is compared as it is printed (a residual ratio of 1.0004 prints 1.00 and meets
the target 1.00), so the mark never contradicts the digits beside it."""

from __future__ import annotations

MISS = "✗"

LARGE_ARRAYS = ("W1", "W5", "W6", "W9", "W10", "W12")  # what the peak-memory target covers

TARGETS: dict[str, dict[str, float]] = {
    # column of the gradient table -> workload key -> the most the figure may be
    "ratio": {},  # residual bytes / analytic minimum: 1.00 on every workload (DEFAULTS)
    "peak": dict.fromkeys(LARGE_ARRAYS, 1.3),
    "time": {**dict.fromkeys(("W1", "W2", "W6", "W9"), 1.2),
             **dict.fromkeys(("W5", "W10", "W11", "W12"), 2.0)},
    "us_per_op": {"W7": 3.5},  # interpreted, at or below PyTorch
    "jit_numba_us_per_op": {"W7": 0.05},
}
DEFAULTS = {"ratio": 1.0}
JIT_AT_OR_BELOW_JAX = ("W3", "W4", "W5", "W6", "W7", "W8")  # jit numba / numpy <= JAX's


def legend(scale: float) -> str:
    """The line under a table that carries marks; the targets are set for full scale."""
    where = "" if scale == 1 else f"; they are set at --scale 1, this run is at {scale}"
    return f'{MISS}: misses its target in docs/benchmarks.md ("Targets for inert"){where}'


def target(column: str, row: dict) -> float | None:
    """The target of `row[column]` in the gradient table (None: it has none). numba's jit
    column is held to JAX jit's ratio of the same row, where JAX ran."""
    if column == "jit_numba" and row["key"] in JIT_AT_OR_BELOW_JAX:
        return row.get("jit_jax")
    return TARGETS.get(column, {}).get(row["key"], DEFAULTS.get(column))


def miss(value: float, limit: float | None, fmt: str = ".2f") -> str:
    """`" ✗"` when `value`, printed with `fmt`, is above `limit` (None: no target), else
    `""`: for the end of a line that states its own target."""
    return f" {MISS}" if limit is not None and float(format(value, fmt)) > limit else ""


def against(value: float, limit: float | None, fmt: str = ".2f") -> str:
    """`value` printed with `fmt`, marked `✗` when it misses `limit`: a table's cell."""
    return format(value, fmt) + miss(value, limit, fmt)


def mark(row: dict, column: str, fmt: str = ".2f") -> str:
    """`row[column]` as a cell of the gradient table, marked if it misses its target."""
    return against(row[column], target(column, row), fmt)
