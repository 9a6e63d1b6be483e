"""`inert.scipy`: holds the `special` namespace, as `scipy` does."""

from . import special as special  # noqa: F401

__all__ = [
    "special",
]


def __dir__():
    return __all__
