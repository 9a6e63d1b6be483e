"""`inert.example_libraries`: JAX's example libraries (`optimizers`, `stax`)."""

from . import optimizers, stax

__all__ = ["optimizers", "stax"]


def __dir__():
    return __all__
