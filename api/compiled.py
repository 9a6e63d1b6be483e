"""`jit`: trace a function once per argument signature, run the compiled program.

The program is compiled by one of jit's backends (`interpreters/eval.py`'s numpy one,
`interpreters/fusion.py`'s numba one) or, by default, first the one, then the other
(`_NumpyThenNumba`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import threading
import time
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..core.activity import Inactive
from ..core.avals import ShapedArray
from ..core.check import checks_enabled
from ..core.config import config
from ..core.errors import JitCompileWarning
from ..core.ir import ClosedJaxpr, does_io
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Tracer, current_dynamic, get_aval
from ..core.traceback_util import filtered, mark_boundary, outermost
from ..interpreters.cse import cse_jaxpr
from ..interpreters.dce import dce_jaxpr
from ..interpreters.eval import compile_jaxpr, eval_jaxpr
from ..interpreters.fusion import (
    compile_jaxpr_numba,
    numba_available,
    require_numba,
    warn_numba_missing,
)
from ..interpreters.kernel_cache import counting_kernels
from .arguments import as_tuple, is_inactive, static_positions
from .numpy._array import Array, returned_leaves
from .transforms import trace_to_closed_jaxpr


def jit(fun: Callable | None = None, /, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: Any = (),
        donate_argnames: Any = (), backend: str | None = None, keep_unused: bool = False,
        inline: bool = False, device: Any = None, in_shardings: Any = None,
        out_shardings: Any = None, compiler_options: Any = None,
        abstracted_axes: Any = None) -> Callable:
    """`fun`, traced once per argument signature; later calls run the cached jaxpr,
    compiled to a Python function (or interpreted, under another transformation).

    Static arguments (by position or by name, either way as in JAX) are part of the
    cache key instead of being traced, compared by value *and type* (`_static_key`);
    keyword arguments that are not static are traced like positional ones. As in JAX,
    `jit(static_argnames="n")` without a function is a decorator, as is
    `functools.partial(jit, static_argnames="n")`. Donation, `keep_unused`, `inline`,
    `device` and shardings are accepted and have no effect: outputs are new numpy
    arrays, as JAX's are when it cannot reuse a buffer, and there is one device.

    `backend` chooses the code generator: "numba" fuses elementwise clusters into
    compiled loops and scalar code into native code (`interpreters.fusion`), "numpy"
    calls numpy once per equation: no compile time, slower calls. The default,
    `$INERT_JIT_BACKEND` or else "auto", runs numpy's code until the function has run
    for a second, then numba's, compiled meanwhile in a background thread so that no call
    waits for it (`_NumpyThenNumba`; `block_until_compiled` waits); without numba
    installed, numpy's, with one warning when it would have compiled. `backend="numba"`
    without numba is a `BackendUnavailableError`. `inert.config.update(
    "inert_log_compiles", True)` logs each compile, as `jax_log_compiles` does.

    Args:
        fun: the function; without it, `jit(...)` returns a decorator.
        static_argnums: positions of arguments that are part of the cache key (Python
            values the program depends on: sizes, flags), not traced.
        static_argnames: the same, by keyword name.
        backend: "auto", "numpy" or "numba" (see above).
        donate_argnums: this and the other arguments of JAX's (donation, `keep_unused`,
            `inline`, `device`, shardings, compiler options): accepted, no effect.

    Returns:
        The compiled function, with `fun`'s signature and results.

    Differences from JAX:
        There is no XLA: the numba backend compiles fused elementwise loops and calls
        numpy for the rest, and the first calls run numpy's code while numba compiles.

    Example:
        >>> from functools import partial
        >>> @partial(inert.jit, static_argnums=1)
        ... def power(x, n):
        ...     return x ** n
        >>> print(power(np.array([1.0, 2.0]), 3))
        [1. 8.]
    """
    del donate_argnums, donate_argnames, keep_unused, inline, device, in_shardings
    del out_shardings, compiler_options, abstracted_axes
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, backend=backend)
    return _jitted(fun, as_tuple(static_argnums),
                   frozenset((static_argnames,) if isinstance(static_argnames, str)
                             else static_argnames), _backend(backend))


def _jitted(f: Callable, static_nums: tuple, static_names: frozenset, backend: str) -> Callable:
    named_positions = _positions_of_names(f, static_names)
    cache: dict = {}

    @functools.wraps(f)
    def jitted(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 — pytest and IPython hide this frame
        if config.jax_disable_jit:
            return f(*args, **kwargs)
        try:  # an entry point, inline (a wrapper would cost a call per dispatch)
            if kwargs or static_nums or named_positions:
                call, args, positions, static_kw = _split_static(
                    f, args, kwargs, static_nums, static_names, named_positions)
                dynamic = tuple(a for i, a in enumerate(args) if i not in positions)
                static = _static_key(tuple(args[i] for i in sorted(positions)), static_kw)
            else:  # the common case, a training loop's step: nothing static
                call, positions, static, dynamic = f, frozenset(), (), args
            leaves, treedef = _jit_leaves(dynamic)
            key = (treedef, tuple(map(signature, leaves)), static)
            try:
                entry = cache.get(key)
            except TypeError:
                raise TypeError(f"jit: static arguments must be hashable, got "
                                f"{[kind.__name__ for kind, _ in static[0]]} and "
                                f"{[kind.__name__ for _, (kind, _) in static[1]]}") from None
            if entry is None:
                return _first_call(f, backend, cache, key, call, args, positions, leaves)
            return _run_entry(entry, leaves)
        except Exception as e:
            if outermost(sys._getframe(1)):
                raise filtered(e)  # noqa: B904 — the same error, with another traceback
            raise

    mark_boundary(jitted)
    return jitted


def _run_entry(entry: tuple, leaves: list):
    """A cached trace run on `leaves`: its compiled program, or interpreted under a
    transformation."""
    closed, out_store, compiled = entry
    if current_dynamic().level == 0 and (_ARRAY_TYPES.issuperset(map(type, leaves)) or not any(
            isinstance(x, Tracer) for x in leaves)):
        outs = compiled(closed.consts, leaves)
    else:
        outs = eval_jaxpr(closed.jaxpr, closed.consts, leaves)
    return tree_unflatten(out_store[0], returned_leaves(outs, leaves))


def _first_call(f: Callable, backend: str, cache: dict, key, call: Callable, args: tuple,
                positions: frozenset, leaves: list):
    """A signature's first call: trace, simplify (common subexpressions merged, products
    with a broadcast one dropped: `cse_jaxpr`, as a replayed grad's program is; the
    backward pass of a sum makes such products), compile for `backend`, run (numba
    compiles its kernels in their first call) and log it (`inert_log_compiles`)."""
    name = getattr(f, "__name__", repr(f))
    start = time.perf_counter()
    closed, out_store = trace_to_closed_jaxpr(call, args, positions)
    jaxpr, _ = dce_jaxpr(cse_jaxpr(closed.jaxpr), [True] * len(closed.jaxpr.outvars))
    traced = time.perf_counter()
    with counting_kernels() as count:
        entry = cache[key] = (ClosedJaxpr(jaxpr, closed.consts), out_store,
                              _program(backend, jaxpr, name))
        result = _run_entry(entry, leaves)
    log_compile("jit(%s) for %s: traced in %.3f s, compiled for the %s backend and run in "
                "%.3f s, %s", name, ", ".join(v.aval.str_short() for v in jaxpr.invars),
                traced - start, backend, time.perf_counter() - traced, kernels_text(count))
    return result


def _static_key(positional: tuple, keywords: tuple) -> tuple:
    """What the static arguments contribute to the cache key: their values and their
    types, inside tuples and lists too. `2 == 2.0 == True` and they hash alike, but
    the trace differs: a Python int, float or bool gives its operations a different
    (weak) type. (A list stays a list: unhashable, refused as JAX does.) A traced value
    cannot be static: a trace keyed by it would be used again for other values (and
    the cache would keep its transformation alive)."""
    return (tuple(map(_typed, positional)), tuple((k, _typed(v)) for k, v in keywords))


def _typed(value):
    kind = type(value)
    if kind in _ATOMS:  # the usual static argument: a number, a string, a flag
        return kind, value
    if isinstance(value, tuple):  # named tuples too
        return kind, tuple(map(_typed, value))
    if isinstance(value, Tracer):
        raise TypeError(f"jit: a static argument is a traced value ({value!r}): a "
                        "transformation outside jit traces it; make it a traced argument "
                        "of jit, or keep it out of the transformation (argnums, Inactive)")
    return kind, value


_ATOMS = frozenset((bool, int, float, complex, str, type(None)))


def _split_static(f: Callable, args: tuple, kwargs: dict, static_nums: tuple,
                  static_names: frozenset, named_positions: frozenset):
    """`f` as jit traces it (keyword arguments passed as a dict after the positional
    ones), its arguments so, the positions of the static ones among them, and the
    static keyword arguments."""
    static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in static_names))
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in static_names}
    call = _with_keywords(f, len(args), dict(static_kw)) if kwargs else f
    args = (*args, dynamic_kw) if kwargs else args
    positions = static_positions(static_nums, len(args)) | {
        i for i in named_positions if i < len(args) - bool(kwargs)}
    return call, args, positions, static_kw


_ARRAY_TYPES = frozenset((np.ndarray, Array, bool, int, float, complex,
                          *(t for t in np.sctypeDict.values() if issubclass(t, np.generic))))


def _jit_leaves(dynamic: tuple) -> tuple[list, object]:
    """The leaves `trace_to_closed_jaxpr` flattens the arguments to (an `Inactive`
    marker's value flattened in its place), and a structure to key the cache by: one
    flattening, plus one per marker (jit is called at every step of a training loop).
    Arguments that are all arrays or numbers are their own leaves, keyed by their count."""
    if _ARRAY_TYPES.issuperset(map(type, dynamic)):
        return list(dynamic), len(dynamic)
    items, treedef = tree_flatten(list(dynamic), is_leaf=is_inactive)
    if not any(isinstance(x, Inactive) for x in items):
        return items, treedef
    flat = [tree_flatten(x.value) if isinstance(x, Inactive) else ([x], None) for x in items]
    return [leaf for leaves, _ in flat for leaf in leaves], (treedef, tuple(d for _, d in flat))


def _positions_of_names(f: Callable, names: frozenset) -> frozenset[int]:
    """The positions of the parameters `names` of `f`, for arguments passed by position."""
    if not names:
        return frozenset()
    try:
        parameters = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):  # a builtin without a signature: names only
        return frozenset()
    return frozenset(i for i, p in enumerate(parameters) if p in names)


def _with_keywords(f: Callable, nargs: int, static_kw: dict) -> Callable:
    """`f` called with its positional arguments, then a dict of traced keyword arguments
    (the last argument), then the static ones."""
    return lambda *args: f(*args[:nargs], **args[nargs], **static_kw)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """jax.device_put: inert has one device, numpy's memory, so this is the identity.

    Example:
        >>> x = np.ones(2)
        >>> inert.device_put(x) is x
        True
    """
    del device, src, donate, may_alias
    return x


HOT_SECONDS = 1.0  # time in numpy's code after which jit's default compiles with numba


class _NumpyThenNumba:
    """jit's default backend, "auto": numpy's code first, numba's once the program has
    spent `HOT_SECONDS` in numpy's, compiled in a background thread meanwhile.

    numba's first call compiles for half a second to 4 s (importing numba alone takes
    half a second), numpy's code is ready in milliseconds: a script calling a jitted
    step a hundred times (the README's, 60 ms in all) would be done long before numba
    had compiled it, and a training loop that has run for about what compiling costs
    will likely run for longer still. So a function pays for numba's compile only once
    it has run for about as long (the rent-or-buy rule), and a short script never
    does. Nor does a call wait for it: the compile runs in a daemon thread (so the
    interpreter never waits for it at exit), calls keep running numpy's code, and the
    first call after the compile has finished runs numba's; `block_until_compiled`
    waits for it. numba compiles a kernel at its first call, for the types it meets,
    so the thread also runs numba's code once, on a copy of the arguments of the call
    that made the program hot, and discards the result; a program that calls back
    into Python (`debug.print`, `debug.callback`) would call back from that run, so it
    keeps numpy's code (`backend="numba"` compiles it in its first call). A compile
    that fails leaves numpy's code in place, and the next call reports the error once:
    it raises it with checks on (`enable_checks`, as in the tests), else warns
    (`JitCompileWarning`). The switch keeps a result's bits but for transcendental
    functions (2 ulp) and the reassociated sums of numba's reductions (1e-12;
    docs/design.md). numba's compile time per program is bounded besides
    (`fusion.MAX_NEW_KERNEL_COST`, about 4 s)."""

    def __init__(self, jaxpr, name: str):
        self.jaxpr, self.name = jaxpr, name
        self.run = compile_jaxpr(jaxpr)
        # seconds in numpy's code; None: numba's compile has started, or never will
        self.spent: float | None = None if any(map(does_io, jaxpr.eqns)) else 0.0
        self.failure: Exception | None = None  # the background compile's, until reported
        self.lock = threading.Lock()

    def __call__(self, consts, args) -> list:
        run = self.run
        if self.spent is None or not _ARRAY_TYPES.issuperset(map(type, args)):
            if self.failure is not None:
                self._report_failure()
            return run(consts, args)  # (Dask's, CuPy's or masked arrays: numba's code
            # would not run them faster, or at all, so their time does not count)
        start = time.perf_counter()
        outs = run(consts, args)
        jaxpr = self._hot(time.perf_counter() - start)
        if jaxpr is not None:  # (copies: the caller may write its arrays once this returns)
            _in_background(self._compile, jaxpr, consts,
                           [a.copy(order="K") if isinstance(a, np.ndarray) else a
                            for a in args])
        return outs

    def _hot(self, seconds: float):
        """Adds `seconds` to the time spent; the jaxpr to compile with numba if that makes
        the program hot. Under the lock: threads calling at once count every call, and
        one of them starts the compile."""
        with self.lock:
            if self.spent is None:  # another thread started it while this one ran
                return None
            self.spent += seconds
            if self.spent < HOT_SECONDS:
                return None
            if not numba_available():
                self.spent = None  # numpy's code for good
                warn_numba_missing()
                return None
            self.spent, jaxpr, self.jaxpr = None, self.jaxpr, None
            return jaxpr

    def _compile(self, jaxpr, consts, args) -> None:
        """In the background: numba's program, run once on `args` (which compiles its
        kernels for their types), then what calls run; or the error, kept for a call
        to report."""
        start = time.perf_counter()
        try:
            with counting_kernels() as count:
                program = compile_jaxpr_numba(jaxpr)
                program(consts, args)
        except Exception as error:  # noqa: BLE001 — reported by the next call
            self.failure = error
            log_compile("jit(%s): numba's compile failed after %.2f s (%s: %s); it keeps "
                        "numpy's code", self.name, time.perf_counter() - start,
                        type(error).__name__, error)
            return
        self.run = program  # one store: a call runs either program, whole
        log_compile("jit(%s): numba's code compiled in the background in %.2f s, %s; calls "
                    "run it from now on", self.name, time.perf_counter() - start,
                    kernels_text(count))

    def _report_failure(self) -> None:
        error, self.failure = self.failure, None
        if error is None:  # another thread reported it
            return
        if checks_enabled():
            raise error
        warnings.warn(f"jit({self.name}): compiling numba's code failed ({type(error).__name__}"
                      f": {error}); the function keeps numpy's code", JitCompileWarning,
                      stacklevel=4)


_pending: set[threading.Thread] = set()  # background compiles still running
_pending_lock = threading.Lock()


def _in_background(target: Callable, *args) -> None:
    """`target(*args)` in a daemon thread that `block_until_compiled` waits for."""
    def compiling():
        try:
            target(*args)
        finally:
            with _pending_lock:
                _pending.discard(thread)

    thread = threading.Thread(target=compiling, name="inert-jit-compile", daemon=True)
    with _pending_lock:
        _pending.add(thread)
    thread.start()


def block_until_compiled() -> None:
    """Wait until the compiles jit's default backend runs in the background have
    finished (`jax.block_until_ready` waits for values; this waits for code): the next
    call of a function whose compile had started runs numba's code (or, if the compile
    failed, reports why). For timing a steady state, and for tests; a program never
    needs it.

    Example:
        >>> f = inert.jit(lambda x: x * 2.0)
        >>> print(f(np.arange(3.0)))
        [0. 2. 4.]
        >>> inert.block_until_compiled()  # nothing pending: returns at once
    """
    while True:
        with _pending_lock:
            threads = list(_pending)
        if not threads:
            return
        for thread in threads:
            thread.join()


BACKENDS = ("auto", "numba", "numpy")


def _backend(backend: str | None) -> str:
    """The backend jit compiles with: `backend`, else `$INERT_JIT_BACKEND`, else "auto"
    ("numba" without numba installed is an error; "auto" then keeps numpy's code)."""
    backend = backend or os.environ.get("INERT_JIT_BACKEND") or "auto"
    if backend not in BACKENDS:
        raise ValueError(f"jit: unknown backend {backend!r}; choose one of {sorted(BACKENDS)}")
    if backend == "numba":
        require_numba()
    return backend


def _program(backend: str, jaxpr, name: str) -> Callable:
    """`(consts, args) -> list` running `jaxpr`, compiled for `backend`."""
    if backend == "auto":
        return _NumpyThenNumba(jaxpr, name)
    return (compile_jaxpr_numba if backend == "numba" else compile_jaxpr)(jaxpr)


_log = logging.getLogger(__name__)  # "inert.api.compiled", under the "inert" logger


def log_compile(message: str, *args) -> None:
    """Log a compile: at WARNING with `inert_log_compiles` on (so that it shows without
    configuring logging), else at DEBUG, as JAX logs with `jax_log_compiles`."""
    _log.log(logging.WARNING if config.inert_log_compiles else logging.DEBUG, message, *args)


def kernels_text(count) -> str:
    """A `KernelCount` in words: how many kernels, compiled or found in which cache."""
    origins = count.by_origin()
    if not origins:
        return "no kernels"
    words = {"compiled": "compiled", "disk": "from the kernel cache on disk",
             "memory": "loaded already"}
    return f"{sum(origins.values())} kernels: " + ", ".join(
        f"{origins[k]} {word}" for k, word in words.items() if origins[k])


def signature(x):
    """What jit's cache key holds of a traced argument: its aval's type, shape, dtype and
    weak type; for a numpy array (or an `Array`), whose aval is always a strongly typed
    `ShapedArray` of its shape and dtype, read without making the aval (jit dispatch)."""
    if type(x) in _NUMPY_ARRAYS:
        return ShapedArray, x.shape, x.dtype, False
    aval = get_aval(x)
    return (type(aval), aval.shape, aval.dtype, aval.weak_type)


_NUMPY_ARRAYS = frozenset((np.ndarray, Array))
