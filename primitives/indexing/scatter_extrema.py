"""`scatter_min` and `scatter_max`: `x.at[idx].min(u)` and `.max(u)`, numpy's
`np.minimum.at` / `np.maximum.at` (of duplicate indices, every update takes part).

Each output entry is the extremum of its old value and the updates written to it.
Its derivative is the tangent of whichever of them attains it; where several tie,
their tangents are averaged (as JAX does), so the derivative is a subgradient and
never counts a tied value twice. Neither is linear: no transpose. An update out of
bounds is dropped or clamped, as for the other scatters (`bounds`).
"""

from __future__ import annotations

import numpy as np

from ...core.activity import Zero
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import add, div, eq, select_n
from ..shape.structural import convert_element_type
from .bounds import read_mode_of
from .gather_scatter import (
    axes_param,
    full,
    gather,
    scatter_abstract_eval,
    scatter_add,
    scatter_batch,
    scatter_impl,
)


def _extremum_jvp(prim: Primitive):
    def rule(primals, tangents, *, axes, mode):
        x, updates, *indices = primals
        t_x, t_updates = tangents[:2]
        out = prim.bind(x, updates, *indices, axes=axes, mode=mode)
        x_attains = eq(x, out)
        read, fill = read_mode_of(mode)  # a dropped update's tie is dropped with it
        updates_attain = eq(updates, gather(out, *indices, axes=axes, mode=read,
                                            fill_value=fill))
        aval = get_aval(out)
        dtype, zero = aval.dtype, full(0, aval.dtype, aval.shape)
        ties = add(convert_element_type(x_attains, dtype),
                   scatter_add(zero, convert_element_type(updates_attain, dtype), *indices,
                               axes=axes, mode=mode))
        parts = []
        if type(t_x) is not Zero:
            parts.append(select_n(x_attains, 0.0, t_x))
        if type(t_updates) is not Zero:
            parts.append(scatter_add(zero, select_n(updates_attain, 0.0, t_updates),
                                     *indices, axes=axes, mode=mode))
        total = parts[0] if len(parts) == 1 else add(*parts)
        return [out], [div(total, ties)]

    return rule


scatter_min_p = Primitive("scatter_min", operand_names=("operand", "updates"))


def scatter_min(x, updates, *indices, axes, mode="drop"):
    """`x` with each region entry lowered to the least update written to it."""
    return scatter_min_p.bind(x, updates, *indices, axes=axes_param(axes), mode=mode)


abstract_eval_rules[scatter_min_p] = scatter_abstract_eval("scatter_min")
impl_rules[scatter_min_p] = scatter_impl(np.minimum.at, abstract_eval_rules[scatter_min_p])
jvp_rules[scatter_min_p] = _extremum_jvp(scatter_min_p)
# transpose: none (not linear)
batch_rules[scatter_min_p] = scatter_batch(scatter_min_p)

scatter_max_p = Primitive("scatter_max", operand_names=("operand", "updates"))


def scatter_max(x, updates, *indices, axes, mode="drop"):
    """`x` with each region entry raised to the greatest update written to it."""
    return scatter_max_p.bind(x, updates, *indices, axes=axes_param(axes), mode=mode)


abstract_eval_rules[scatter_max_p] = scatter_abstract_eval("scatter_max")
impl_rules[scatter_max_p] = scatter_impl(np.maximum.at, abstract_eval_rules[scatter_max_p])
jvp_rules[scatter_max_p] = _extremum_jvp(scatter_max_p)
# transpose: none (not linear)
batch_rules[scatter_max_p] = scatter_batch(scatter_max_p)
