"""Seeing what activity analysis decides: which values are active (`print_activity`),
and what the backward pass keeps (`saved_residuals`, `print_saved_residuals`)."""

from __future__ import annotations

from typing import Callable, Sequence

from ..core.ir import pp_jaxpr
from ..interpreters.ad import active_vars
from ..interpreters.linearize import ResidualInfo
from ..interpreters.remat import Cost
from .transforms import as_tuple, check_argnums, flatten_args, trace_to_closed_jaxpr, vjp

# ---------------------------------------------------------------------------------
# Seeing residuals


def saved_residuals(f: Callable, *args) -> list[ResidualInfo]:
    """What the backward pass of `vjp(f, *args)` keeps: one entry per residual."""
    _, vjp_fn = vjp(f, *args)
    return list(vjp_fn.linear.residual_info)


def print_saved_residuals(f: Callable, *args) -> None:
    """The residuals' table, then what the backward pass recomputes instead of keeping
    (checkpointed bodies run again): equations and an estimate of their flops."""
    _, vjp_fn = vjp(f, *args)
    linear = vjp_fn.linear
    print(format_residuals(list(linear.residual_info), linear.recomputed()))


def format_residuals(infos: list[ResidualInfo], recomputed: Cost | None = None) -> str:
    rows = [("shape", "dtype", "bytes", "produced by", "source")]
    for r in infos:
        rows.append((r.aval.str_short(), r.aval.dtype.name, f"{r.nbytes:,}", r.origin,
                     str(r.source_info) if r.source_info else ""))
    total = sum(r.nbytes for r in infos)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths))) + "  " + row[4] for row in rows]
    lines.append(f"{len(infos)} residual{'s' if len(infos) != 1 else ''}, "
                 f"{total:,} bytes in total")
    if recomputed is not None:
        lines.append(f"recomputed in the backward pass: {recomputed.eqns:,} equation"
                     f"{'s' if recomputed.eqns != 1 else ''}, about {recomputed.flops:,} flops")
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------------------------
# Seeing activity


def print_activity(f: Callable, *args, argnums: int | Sequence[int] | None = None) -> None:
    """Print the jaxpr of `f` with each active variable marked `*`: those that carry a
    derivative when differentiating in `argnums` (default: every float argument not
    wrapped in `Inactive`)."""
    closed, active = activity_jaxpr(f, *args, argnums=argnums)
    print(pp_jaxpr(closed.jaxpr, marked=active))


def activity_jaxpr(f: Callable, *args, argnums=None):
    """`(closed_jaxpr, active_vars)`: what `print_activity` shows."""
    nums = None if argnums is None else check_argnums(as_tuple(argnums), len(args))
    flat = flatten_args(args, nums)
    closed, _ = trace_to_closed_jaxpr(lambda *a: f(*flat.unflatten(a)),
                                       tuple(flat.leaves), ())
    return closed, active_vars(closed.jaxpr, closed.consts, flat.active)
