"""`inert.scipy`: holds the `special` and `stats` namespaces, as `scipy` does."""

from . import special as special  # noqa: F401
from . import stats as stats  # noqa: F401 — after special, which it uses

__all__ = [
    "special",
    "stats",
]


def __dir__():
    return __all__
