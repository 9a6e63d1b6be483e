"""inert: JAX-style program transformations for numpy, with activity analysis.

This module only re-exports; see DESIGN in the README for where things live.
"""

import sys as _sys

from .core import errors
from .core.activity import Inactive
from .core.check import check_jaxpr, enable_checks
from .interpreters.api import (
    grad,
    jit,
    jvp,
    linearize,
    make_jaxpr,
    print_saved_residuals,
    saved_residuals,
    value_and_grad,
    vjp,
)
from .interpreters.eval import eval_jaxpr
from .primitives import array_methods as _array_methods  # noqa: F401 — installs operators
from .primitives import numpy_api as numpy
from .primitives.elementwise import stop_gradient

_sys.modules[__name__ + ".numpy"] = numpy

__all__ = [
    "Inactive", "check_jaxpr", "enable_checks", "errors", "eval_jaxpr", "grad", "jit", "jvp",
    "linearize", "make_jaxpr", "numpy", "print_saved_residuals", "saved_residuals",
    "stop_gradient", "value_and_grad", "vjp",
]
