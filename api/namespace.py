"""What a user namespace (`inert.numpy`, `inert.lax`, ...) shows: only its API.

A namespace module imports helpers (`numpy as np`, `functools`) and its own private
submodules; `public_names` lists the rest, so that `__all__` and `dir()` (through a
module-level `__dir__`, PEP 562) show what a user may call and nothing else.
"""

from __future__ import annotations
import __future__

import types


def public_names(namespace: dict, submodules: tuple[str, ...] = ()) -> list[str]:
    """The names of `namespace` (a module's globals) a user may call: no underscore,
    no imported module (except the public `submodules`), no `__future__` feature."""
    return sorted(
        name for name, value in namespace.items()
        if not name.startswith("_")
        and not isinstance(value, (types.ModuleType, __future__._Feature))
        or name in submodules)
