"""The errors inert raises, re-exported as `inert.errors`.

Every error that is the user's fault carries the user's source line: rules raise
with a message naming the primitive and the shapes, and the tracing machinery
appends where in the user's code the offending operation was written (see
`with_source`). Subclassing the matching builtin (`TypeError`, `ValueError`) keeps
`except TypeError:` code written against numpy or JAX working.
"""

from __future__ import annotations

import numpy as np


class InertError(Exception):
    """Base class of every error inert raises on purpose."""

    source: str | None = None

    def with_source(self, source: object) -> InertError:
        """Append the user's source line to the message, once."""
        if self.source is None and source is not None:
            self.source = str(source)
            self.args = (f"{self.args[0] if self.args else ''}\n  at {self.source}",)
        return self


class ShapeError(InertError, ValueError):
    """Operand shapes that do not fit a primitive (names the primitive and shapes)."""


class DTypeError(InertError, TypeError):
    """Operand dtypes that do not fit a primitive."""


class TypeMismatchError(InertError, TypeError):
    """Values that must have one type do not: a loop carry that changes shape or dtype,
    `cond` branches returning different types or structures, a custom rule's output
    that does not fit its primal (a TypeError, as in JAX)."""


class IndexingError(InertError, IndexError):
    """An index that does not fit the array it indexes (out of bounds, wrong kind)."""


class ImmutableArrayError(InertError, TypeError):
    """A write into an inert array: they are immutable, as JAX's are (use `.at[]`)."""


class NumpyFunctionError(InertError, TypeError):
    """A numpy function inert.numpy does not cover (or a keyword it lacks), on a traced value."""


class ConcretizationError(InertError, TypeError):
    """A concrete Python value (bool, int, index) was needed from a traced value.
    `depends_on` says which arguments of the traced function it depends on, when known."""

    depends_on: str | None = None


class NonDifferentiableError(InertError, TypeError):
    """An operand without a derivative (an order, an index, ...) was active."""


class EscapedTracerError(InertError, RuntimeError):
    """A tracer was used after the transformation that created it had finished."""


class LinAlgError(InertError, np.linalg.LinAlgError):
    """A matrix a decomposition or solve cannot handle (singular), as numpy raises."""


class ActivityError(InertError, TypeError):
    """A value that a transformation differentiates (or maps) was written into a ref
    from outside that transformation, which the transformation does not differentiate
    (or map): the derivative (or the lanes) would be lost. Names the level, the ref's
    creation line, the write's line and the fix."""


class NaNError(InertError, FloatingPointError):
    """A primitive produced a NaN while `inert.config.jax_debug_nans` is on."""


class BackendError(InertError, TypeError):
    """A primitive has no implementation for an array library (Dask, CuPy, an Array-API
    library), its operands mix libraries, or its impl left the operands' library."""


class BackendUnavailableError(InertError, ImportError):
    """jit was asked for a backend whose package is not installed (`backend="numba"`
    without numba): names the backend and how to install it, or the backend that runs
    without it."""


class BackendFallbackWarning(UserWarning):
    """jit's default backend ("auto") would compile a function that has run long enough
    with numba, which is not installed: it keeps running numpy's code (once a process)."""


class KernelCacheWarning(UserWarning):
    """jit's kernel cache folder is not used (another user could write it, or a read or
    write in it failed): kernels are compiled in memory, the results are the same."""


class JitCompileWarning(UserWarning):
    """jit's default backend could not compile a function with numba in the background
    (the error is in the message): the function keeps numpy's code, whose results are
    the same."""


class MemoryBudgetError(InertError, ValueError):
    """A checkpoint's memory budget is below what any plan can keep: the message names
    the smallest feasible budget, which `smallest` holds in bytes (for a program that
    looks for the tightest budget)."""

    def __init__(self, message: str, smallest: int | None = None):
        super().__init__(message)
        self.smallest = smallest
