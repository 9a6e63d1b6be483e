"""`debug_callback`: a Python function called with its operands' values while the
program runs, the one primitive with an effect on the world ("io"; see `Primitive`).

It has no outputs, so nothing could ever need it: dead-code elimination and common
subexpressions keep every one (`effect`), and a linearizing trace, which knows its
operands' values, runs it at once, in program order, one level down (its staging
rule), rather than adding it to the known work that partial evaluation keeps only
where an output needs it; so does it with a loop whose body prints (`does_io`). So it runs
eagerly, under `grad` (on the primal values), under `jit` on both backends each call
(its equation stays a numpy step), once per iteration in a loop body, and once per
lane under `vmap`, as JAX's `jax.debug.callback` does."""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from ..core.staging import staging_rules
from ..core.trace import Primitive, abstract_eval_rules, bind_at, impl_rules
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules, batch_size

debug_callback_p = Primitive("debug_callback", multiple_results=True, effect="io")


def debug_callback(callback: Callable, *args) -> None:
    """`callback(*values)` when the program runs, `values` those of `args`."""
    debug_callback_p.bind(*args, callback=callback)


def debug_callback_impl(*args, callback):
    callback(*args)
    return []


impl_rules[debug_callback_p] = debug_callback_impl
abstract_eval_rules[debug_callback_p] = lambda *avals, callback: []


def debug_callback_jvp(primals, tangents, *, callback):
    """The callback sees the primal values; nothing has a tangent."""
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


jvp_rules[debug_callback_p] = debug_callback_jvp


def debug_callback_staging(trace, tracers, *, callback):
    builder = trace.main.global_data
    if builder.eager_calls and all(t.is_known for t in tracers):
        values = builder.values_of([t.atom for t in tracers], free=False)
        bind_at(builder.parent_dynamic, debug_callback_p, values, {"callback": callback})
        return []
    return trace.record(debug_callback_p, tracers, {"callback": callback})


staging_rules[debug_callback_p] = debug_callback_staging
# transpose: none; its jvp binds it on primal values, which the linear program never reads


@attrs.frozen
class PerLane:
    """`callback` called once per lane, in lane order, with each operand's lane (an
    operand without a batch axis as it is)."""

    callback: Callable
    dims: tuple
    size: int

    def __call__(self, *args):
        for lane in range(self.size):
            self.callback(*(a if d is None else np.take(a, lane, axis=d)
                            for a, d in zip(args, self.dims)))


def debug_callback_batch(vals, dims, *, callback):
    debug_callback_p.bind(*vals, callback=PerLane(callback, tuple(dims),
                                                  batch_size(vals, dims)))
    return [], []


batch_rules[debug_callback_p] = debug_callback_batch
