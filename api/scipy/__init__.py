"""`inert.scipy`: holds the `linalg` and `special` namespaces, as `scipy` does."""

from . import linalg as linalg  # noqa: F401
from . import special as special  # noqa: F401

__all__ = [
    "linalg", "special",
]


def __dir__():
    return __all__
