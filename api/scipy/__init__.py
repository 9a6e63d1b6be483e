"""`inert.scipy`: holds the `special` and `signal` namespaces, as `scipy` does."""

from . import signal as signal  # noqa: F401
from . import special as special  # noqa: F401

__all__ = [
    "signal", "special",
]


def __dir__():
    return __all__
