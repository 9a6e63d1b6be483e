"""`inert.example_libraries`: JAX's example libraries (`stax`)."""

from . import stax

__all__ = ["stax"]


def __dir__():
    return __all__
