"""`inert.scipy`: the `linalg`, `special`, `stats`, `integrate` and `signal` namespaces,
as in scipy."""

from . import integrate as integrate  # noqa: F401
from . import linalg as linalg  # noqa: F401
from . import signal as signal  # noqa: F401
from . import special as special  # noqa: F401
from . import stats as stats  # noqa: F401 — after special, which it uses

__all__ = [
    "integrate",
    "linalg",
    "signal",
    "special",
    "stats",
]


def __dir__():
    return __all__
