"""`inert.example_libraries`: JAX's example libraries (`optimizers`)."""

from . import optimizers

__all__ = ["optimizers"]


def __dir__():
    return __all__
