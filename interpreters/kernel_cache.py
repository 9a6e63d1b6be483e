"""Where jit's numba backend keeps compiled kernels between processes.

A kernel is a file named by the hash of what defines it, under `$INERT_CACHE_DIR` or
`~/.cache/inert/kernels`: numba's loop kernels as their Python source (numba's own
cache sits beside it), scalar kernels as LLVM object code. A file is written whole (a
process reading a file another one is writing must never see half of it); a loop
kernel's source once, never rewritten: numba's cache checks its time stamp. An object
file found not whole (a crash before its data reached the disk) is written again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile


def cache_dir() -> str:
    base = os.environ.get("INERT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "inert", "kernels")
    try:
        os.makedirs(base, exist_ok=True)
        return base
    except OSError:
        return tempfile.mkdtemp(prefix="inert-kernels-")


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def write_once(path: str, data: bytes) -> None:
    """`data` as the file `path`, unless it exists."""
    if not os.path.exists(path):
        write_whole(path, data)


def write_whole(path: str, data: bytes) -> None:
    """`data` as the file `path`, written aside, then renamed: a reader sees all or none."""
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "wb") as f:
        f.write(data)
    os.replace(partial, path)
