"""`inert.checkpoint_policies`: which values a function under `checkpoint` may keep.

JAX's policies, with JAX's signature `policy(prim, *avals, **params) -> bool`: asked of
each equation of the body whose outputs the backward pass would read, True lets its
outputs be saved between the passes, False makes the backward pass recompute them.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core.trace import Primitive
from ..interpreters.remat import MemoryBudget
from ..primitives.control.checkpoint import name_p
from ..primitives.conv.convolution import conv_general_dilated_p
from ..primitives.linalg.dot_general import dot_general_p

__all__ = [
    "everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
    "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
    "save_only_these_names", "save_any_names_but_these", "save_anything_except_these_names",
    "save_from_both_policies", "memory_budget",
]


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Keep whatever the backward pass reads (what no checkpoint would keep)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Keep only the inputs; recompute everything else (checkpoint's default)."""
    return False


def dots_saveable(prim: Primitive, *_: Any, **__: Any) -> bool:
    """Keep matrix products and convolutions, the expensive operations to recompute."""
    return prim is dot_general_p or prim is conv_general_dilated_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim: Primitive, *_: Any, **params: Any) -> bool:
    """Keep matrix products without batch dimensions (a transformer's projections, not
    its attention scores)."""
    if prim is not dot_general_p:
        return False
    _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """Keep the values `checkpoint_name` gave one of `names`, and nothing else."""
    allowed = frozenset(names)
    return lambda prim, *_, **params: prim is name_p and params["name"] in allowed


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """Keep named values except those of `names`; no unnamed value."""
    refused = frozenset(names)
    return lambda prim, *_, **params: prim is name_p and params["name"] not in refused


def save_anything_except_these_names(*names: str) -> Callable[..., bool]:
    """Keep every value except the named values of `names`."""
    refused = frozenset(names)
    return lambda prim, *_, **params: prim is not name_p or params["name"] not in refused


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable[..., bool]:
    """Keep what either policy keeps."""
    return lambda prim, *avals, **params: bool(policy_1(prim, *avals, **params)
                                               or policy_2(prim, *avals, **params))


def memory_budget(nbytes: int) -> MemoryBudget:
    """inert's own policy: plan the checkpointed body to keep at most `nbytes` of
    residuals, recomputing what costs the fewest flops; a budget below every plan's
    bytes is a `MemoryBudgetError` naming the smallest feasible one. It plans the whole
    body at once, so it is not combined with the per-equation policies."""
    return MemoryBudget(int(nbytes))
