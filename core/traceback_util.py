"""Tracebacks that point at the user: inert's own frames are filtered out of them.

A user's shape error under `grad` travels through some 25 frames of inert's machinery
(the transform, the jvp and staging traces, `bind`, the abstract eval rule) before it
reaches the user; none of them is actionable, and the message already names the user's
line. So, as JAX does, an error leaving inert through a public entry point — a
transform's returned function, an `inert.numpy` function — is re-raised with a
traceback built of the frames *outside* inert only (`types.TracebackType` is
constructible). Only the outermost entry point filters: an inner one (a `jnp.dot`
inside the user's function under `grad`) re-raises untouched, so the work is done once.

`inert.config.inert_traceback_filtering` chooses (`$INERT_TRACEBACK_FILTERING` sets
its default):

* "auto" (the default) and "quiet_remove_frames": remove inert's frames and add a note
  saying so and how to see them;
* "remove_frames": as well, and chain the unfiltered traceback as the error's cause
  (`UnfilteredTraceback`), printed before it;
* "off": leave tracebacks alone (for debugging inert itself).

The success path pays a `try` block, which costs nothing in Python 3.11.

The same test, "is this frame's code inert's", finds the user's source line
(`user_line_from`, for `core.trace.user_source_info`): `is_internal`.

Warnings point at the user too. numpy attributes a floating-point warning to the
innermost Python frame, which for an eager `jnp.log(-1.0)` is `eval_primitive`'s. A
warnings filter installed at import (`route_eager_warnings`) turns RuntimeWarnings
*attributed to the modules that run numpy eagerly* into exceptions, which those
modules catch, re-issue at the user's line (`warn_at_user_line`) and recompute quietly:
nothing is paid until numpy warns (an `errstate` or `catch_warnings` per operation
would cost more than the operation). A filter the user adds later comes first and
wins (`simplefilter("always")` shows numpy's own attribution again).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import types
import warnings

import numpy as np

from .config import config
from .ir import SourceInfo

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL = (
    *(os.path.join(_PACKAGE_ROOT, d) + os.sep
      for d in ("core", "interpreters", "primitives", "api")),
    os.path.join(_PACKAGE_ROOT, "__init__.py"),
    contextlib.__file__,
    "<attrs generated",
    np.errstate()(lambda: None).__code__.co_filename,  # numpy's errstate as a decorator,
)  # which `core.trace.quietly` calls through

NOTE = ("(inert removed its internal frames from this traceback; "
        "inert.config.update('inert_traceback_filtering', 'off') shows them)")


def route_eager_warnings() -> None:
    """Make RuntimeWarnings raised in `EAGER_MODULES` exceptions, for them to re-issue
    at the user's line (see the module docstring)."""
    warnings.filterwarnings("error", category=RuntimeWarning, module=EAGER_MODULES)


EAGER_MODULES = rf"{__name__.rpartition('.core.')[0]}\.(core\.trace|api\.numpy\._methods)\Z"
"""The modules whose frames call numpy eagerly on the user's behalf: `eval_primitive`
and the operators of `Array`."""


def warn_at_user_line(warning: Warning) -> None:
    """Issue `warning` (numpy's, raised as an exception by `route_eager_warnings`'s
    filter) again, at the first frame outside inert, once per line as Python's
    default filter does (that frame's module's registry)."""
    frame = sys._getframe(1)
    while frame is not None and is_internal(frame.f_code):
        frame = frame.f_back
    if frame is None:
        return
    warnings.warn_explicit(str(warning), type(warning), frame.f_code.co_filename,
                           frame.f_lineno, module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def ignoring_warnings(fn, *args):
    """`fn(*args)` with numpy's floating-point warnings off: how an operation whose
    warning was re-issued at the user's line is computed again. A warning numpy issues
    from Python (`nanmean`'s "Mean of empty slice") needs every filter off too, which
    is tried second: changing the filters resets the registries of what was shown."""
    with np.errstate(all="ignore"):
        try:
            return fn(*args)
        except RuntimeWarning:
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)


def is_internal(code: types.CodeType) -> bool:
    """Whether `code` is inert's own (or the glue it runs through: contextlib, attrs'
    generated methods, numpy's errstate decorator) rather than the user's."""
    return code.co_filename.startswith(_INTERNAL)


def user_line_from(frame: types.FrameType | None) -> SourceInfo | None:
    """The line of the first frame outside inert from `frame` outwards."""
    kinds = _code_is_internal
    while frame is not None:
        code = frame.f_code
        entry = kinds.get(id(code))
        if entry is None:
            entry = _remember(kinds, id(code), code, is_internal(code))
        if not entry[1]:
            line = frame.f_lineno
            entry = _source_infos.get((id(code), line))
            if entry is None:
                entry = _remember(_source_infos, (id(code), line), code,
                                  SourceInfo(code.co_filename, line, code.co_name))
            return entry[1]
        frame = frame.f_back
    return None


def _remember(cache: dict, key, code, value) -> tuple:
    """Cache `value` for `code` under a key made of the code object's *identity*: code
    objects compare equal by content, so two identical functions compiled from
    different files would share an entry and name the wrong file. Each entry keeps its
    code object alive, so its id is not reused while it is cached; the cache is
    bounded (cleared whole, so no entry outlives its code object's)."""
    if len(cache) > 65536:
        cache.clear()
    entry = cache[key] = (code, value)
    return entry


_code_is_internal: dict = {}  # id(code) -> (code, is_internal(code)): frames repeat
_source_infos: dict = {}  # (id(code), line) -> (code, SourceInfo): a loop's eqns share one


class UnfilteredTraceback(Exception):
    """The cause chained to an error under "remove_frames": its traceback is the error's
    full one, inert's frames included."""


def api_boundary(fn):
    """`fn` (a public entry point) re-raising errors with inert's frames filtered out
    of their traceback, unless an outer entry point will (see the module docstring)."""

    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 — pytest and IPython hide this frame
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if outermost(sys._getframe(1)):
                raise filtered(e)  # noqa: B904 — the same error, with another traceback
            raise

    return boundary


def mark_boundary(fn) -> None:
    """Count `fn`'s frames as an entry point's: `fn` filters errors itself (with
    `outermost` and `filtered`, inline, where `api_boundary`'s extra call would cost)."""
    _BOUNDARY_CODES.add(fn.__code__)


def outermost(caller: types.FrameType | None) -> bool:
    """Whether an entry point called from `caller` should filter: filtering is on and no
    entry point is further out on the stack."""
    if config.inert_traceback_filtering == "off":
        return False
    codes = _BOUNDARY_CODES
    while caller is not None:
        if caller.f_code in codes:
            return False
        caller = caller.f_back
    return True


def filtered(error: BaseException) -> BaseException:
    """`error` with a traceback of its frames outside inert, and a note saying so."""
    full = error.__traceback__
    user_frames = []
    tb = full
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code):
            user_frames.append(tb)
        tb = tb.tb_next
    new = None
    for tb in reversed(user_frames):
        new = types.TracebackType(new, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    if len(user_frames) == _depth(full):
        return error  # nothing of inert's to remove
    if NOTE not in getattr(error, "__notes__", ()):
        error.add_note(NOTE)
    if config.inert_traceback_filtering == "remove_frames" and error.__cause__ is None:
        error.__cause__ = UnfilteredTraceback(
            "the traceback below is the full one, inert's frames included").with_traceback(full)
    return error.with_traceback(new)


def _depth(tb: types.TracebackType | None) -> int:
    depth = 0
    while tb is not None:
        depth, tb = depth + 1, tb.tb_next
    return depth


_BOUNDARY_CODES: set = set()
mark_boundary(api_boundary(lambda: None))
route_eager_warnings()
