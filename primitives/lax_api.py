"""`inert.lax`: the jax.lax subset, on inert's primitives (being written)."""

from .elementwise import add, cos, div, exp, gt, log, mul, neg, sin, stop_gradient, sub, tanh  # noqa: F401
from .structural import broadcast_in_dim, convert_element_type, reduce_sum, reshape  # noqa: F401
