"""Seeing what activity analysis decides: which values are active (`print_activity`),
and what the backward pass keeps (`saved_residuals`, `print_saved_residuals`)."""

from __future__ import annotations

import html
import re
from typing import Callable, Sequence

from ..core.ir import pp_jaxpr
from ..interpreters.ad import active_vars
from ..interpreters.linearize import ResidualInfo
from .arguments import as_tuple, check_argnums, flatten_args
from .transforms import trace_to_closed_jaxpr, vjp

# ---------------------------------------------------------------------------------
# Seeing residuals


class ResidualReport(list):
    """The residuals `saved_residuals` found: a list of `ResidualInfo`, so code can
    count and sum them, whose repr is the table `print_saved_residuals` prints (the
    REPL shows it) and which a notebook renders as an HTML table."""

    def __repr__(self) -> str:
        return format_residuals(self)

    def _repr_html_(self) -> str:
        header = "".join(f"<th>{h}</th>" for h in
                         ("shape", "dtype", "bytes", "produced by", "source"))
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) +
                       "</tr>" for r in self)
        total = sum(r.nbytes for r in self)
        return (f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>"
                f"<p>{_count(len(self))}, {total:,} bytes in total</p>")


def saved_residuals(f: Callable, *args) -> ResidualReport:
    """What the backward pass of `vjp(f, *args)` keeps: one `ResidualInfo` per residual
    (its type, bytes, the primitive or input it came from and the user's line), as a
    list whose repr is the table `print_saved_residuals` prints. JAX's
    `jax.ad_checkpoint.saved_residuals` returns pairs of an aval and a description."""
    _, vjp_fn = vjp(f, *args)
    return ResidualReport(vjp_fn.linear.residual_info)


def print_saved_residuals(f: Callable, *args) -> None:
    """Print what the backward pass of `vjp(f, *args)` keeps: a table of the residuals
    (shape, dtype, bytes, what produced each, the user's line) and their total. Returns
    None, as JAX's does (a returned report would be shown twice at the REPL);
    `saved_residuals` returns the same table as a value."""
    print(format_residuals(saved_residuals(f, *args)))


def format_residuals(infos: list[ResidualInfo]) -> str:
    """The table `print_saved_residuals` prints: one row per residual, then the total."""
    rows = [("shape", "dtype", "bytes", "produced by", "source"), *map(_cells, infos)]
    total = sum(r.nbytes for r in infos)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths))) + "  " + row[4] for row in rows]
    lines.append(f"{_count(len(infos))}, {total:,} bytes in total")
    return "\n".join(line.rstrip() for line in lines)


def _cells(r: ResidualInfo) -> tuple[str, ...]:
    return (r.aval.str_short(), r.aval.dtype.name, f"{r.nbytes:,}", r.origin,
            str(r.source_info) if r.source_info else "")


def _count(n: int) -> str:
    return f"{n} residual{'s' if n != 1 else ''}"


# ---------------------------------------------------------------------------------
# Seeing activity


def print_activity(f: Callable, *args, argnums: int | Sequence[int] | None = None) -> None:
    """Print the jaxpr of `f` with each active variable marked `*`: those that carry a
    derivative when differentiating in `argnums` (default: every float argument not
    wrapped in `Inactive`)."""
    print(activity_jaxpr(f, *args, argnums=argnums))


class ActivityReport(tuple):
    """`(closed_jaxpr, active_vars)`, what `activity_jaxpr` returns: a pair to unpack,
    whose repr is the jaxpr with active variables marked `*` (what `print_activity`
    prints), rendered in a notebook as that text with the active variables in bold."""

    def __new__(cls, closed, active):
        return super().__new__(cls, (closed, active))

    def __repr__(self) -> str:
        closed, active = self
        return pp_jaxpr(closed.jaxpr, marked=active)

    def _repr_html_(self) -> str:
        marked = re.sub(r"(\w+\*)", r"<b>\1</b>", html.escape(repr(self)))
        return f"<pre>{marked}</pre><p>active values are marked <b>*</b></p>"


def activity_jaxpr(f: Callable, *args, argnums=None) -> ActivityReport:
    """`(closed_jaxpr, active_vars)`: the jaxpr of `f` and the variables that carry a
    derivative, what `print_activity` shows (its repr is that text)."""
    nums = None if argnums is None else check_argnums(as_tuple(argnums), len(args))
    flat = flatten_args(args, nums)
    closed, _ = trace_to_closed_jaxpr(lambda *a: f(*flat.unflatten(a)),
                                       tuple(flat.leaves), ())
    return ActivityReport(closed, active_vars(closed.jaxpr, closed.consts, flat.active))
