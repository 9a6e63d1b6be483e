"""`inert.experimental.ode`: `odeint` under the name JAX first gave it."""

from ..scipy.integrate import odeint  # noqa: F401

__all__ = ["odeint"]


def __dir__():
    return __all__
