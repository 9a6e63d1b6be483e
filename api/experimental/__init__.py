"""`inert.experimental`: JAX's experimental names that inert provides (`ode`)."""

from . import ode as ode  # noqa: F401

__all__ = ["ode"]


def __dir__():
    return __all__
