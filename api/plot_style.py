"""One look for every picture inert draws: the activity graph (`api/pictures.py`, SVG), the
residual bar chart and the memory-profile curve (`api/residuals.py`, matplotlib). A value's
colour means the same everywhere: orange carries a derivative, blue is kept for the
backward pass, grey is known work. matplotlib is imported only when a chart is drawn: it
is an optional dependency (the `dev` and `notebooks` extras), the SVG needs nothing."""

from __future__ import annotations

ACTIVE = "#e8833a"  # carries a derivative
ACTIVE_EDGE = "#a4501a"
INACTIVE = "#e4e4e4"  # known: computed in the forward pass, no derivative reads it for it
INACTIVE_EDGE = "#8c8c8c"
RESIDUAL = "#3b75af"  # kept between the forward and the backward pass
TEXT = "#262626"
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"  # matplotlib's default font first

_UNITS = ("B", "kB", "MB", "GB", "TB")


def human_bytes(n: float) -> str:
    """`n` bytes in decimal units, as the benchmark and docs write them: 512 B, 16.4 kB."""
    value, unit = float(n), 0
    while abs(value) >= 1000 and unit < len(_UNITS) - 1:
        value, unit = value / 1000, unit + 1
    return f"{value:.0f} {_UNITS[unit]}" if unit == 0 else f"{value:.3g} {_UNITS[unit]}"


def new_axes(ax=None, figsize=(7.0, 3.5)):
    """`ax`, or the axes of a new figure, styled as every inert chart: no top or right
    spine, a light grid behind the data."""
    import matplotlib.pyplot as plt  # noqa: PLC0415 — optional, only to draw

    if ax is None:
        ax = plt.figure(figsize=figsize).gca()
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_axisbelow(True)
    ax.grid(True, color=INACTIVE, linewidth=0.8)
    return ax


def bytes_axis(axis) -> None:
    """Label a matplotlib axis's ticks in bytes (`human_bytes`)."""
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415 — optional, only to draw

    axis.set_major_formatter(FuncFormatter(lambda value, _: human_bytes(value)))
