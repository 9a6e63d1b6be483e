"""`inert.scipy`: holds the `special` namespace, as `scipy` does."""

from . import scipy_special as special  # noqa: F401
