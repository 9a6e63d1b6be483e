"""Where jit's numba backend keeps compiled kernels, in memory and between processes,
and how it loads numba's loop kernels (`load_kernel`; `scalar_kernels` loads its own
object code through `load_sealed` and `save_sealed`).

**Location.** `$INERT_CACHE_DIR`, else `$XDG_CACHE_HOME/inert/kernels`, else
`~/.cache/inert/kernels`: numba's loop kernels as their Python source `k<digest>.py`
(numba's own cache in `__pycache__` beside them), scalar kernels as LLVM object code
`s<key>.o`, and `key`, this user's secret that signs the object code.

**Trust.** Whatever is in the folder runs as this process: object code directly,
numba's cache files through `pickle`. So the folder is used only when nobody else can
write it: created 0700, it must be a folder owned by this user that neither group
nor others may write (a symbolic link to it must be this user's too), and each folder
above it must be this user's or root's and, if others may write it, sticky (as /tmp
is: nobody renames another's entries). Otherwise inert warns once (`KernelCacheWarning`,
naming the folder and why) and compiles every kernel in memory, writing nothing.

Within a trusted folder a file is used only when it is what this process would write.
A source file is compared with the text inert generated, and the code imported is the
generated text, never the file's: the file exists for numba's cache, whose index is
stamped with the source file's content (numba 0.68; older versions stamp its time
and size), and a source found different is rewritten and its `__pycache__` entries
removed. Object code cannot be compared (recompiling it is what the cache saves), so
each file is signed with an HMAC keyed by `key` (0600, made once with `mkstemp` and
linked into place, so two processes starting together agree on one) over the file's
name and content: a file copied under another kernel's name, cut short or garbled
fails the check and is compiled again and replaced, never linked. With the folder
check this is defence in depth: writing the folder no longer suffices to run code, a
writer must also read the key, which is what a folder left open to a group by a backup
tool or a sync, or shared by mistake, would still deny.

**Faults.** Files are written to a `mkstemp` file in the folder (O_EXCL: a planted
name or symbolic link is never opened) and renamed into place, so a reader sees a
whole file or none; files are opened with O_NOFOLLOW. A read or write that fails (a
full disk, a read-only folder) costs only the cache: one warning, the kernel compiled
in memory, no partial file left, and the folder unused for the rest of the process.

**Bounds.** Each kind of kernel keeps the `config.inert_kernels_in_memory` used last
(`Recent`) besides those the live jitted functions hold. The folder is kept under
`config.inert_kernel_cache_bytes`: past it, the kernels used longest ago (by access
time, which a load sets, else modification time) are removed, a source with numba's
files for it.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import hmac
import os
import stat
import sys
import tempfile
import threading
import time
import types
import warnings
from typing import Callable

from ..core.config import config
from ..core.errors import KernelCacheWarning

KEY_FILE = "key"
KEY_BYTES = 32
NUMBA_FOLDER = "__pycache__"
SCAN_EVERY = 64  # files written between two measures of the folder
STALE_SECONDS = 3600  # a partial file this old was left by a process that died writing it

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_folders: dict[str, str | None] = {}  # the configured path -> the trusted folder, or None
_failed: set[str] = set()  # folders a read or write failed in: unused from then on
_warned: set[str] = set()  # the kinds of warning given already
_writes = [0]  # files written since the folder was last measured


def configured_path() -> str:
    return os.environ.get("INERT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "inert", "kernels")


def folder() -> str | None:
    """The cache folder, or None: it is not trusted, or failed, and kernels stay in memory."""
    path = configured_path()
    if path not in _folders:
        _folders[path] = _trusted_folder(path)
    found = _folders[path]
    return None if found in _failed else found


def _trusted_folder(path: str) -> str | None:
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        problem = untrusted_because(path) or untrusted_because(os.path.join(path, NUMBA_FOLDER),
                                                               create=True)
    except OSError as error:
        problem = f"it cannot be created or read ({error.strerror or error})"
    if problem is None:
        found = os.path.realpath(path)
        evict(found, config.inert_kernel_cache_bytes)
        return found
    warn_once("untrusted", f"inert's kernel cache folder {path!r} is not used: {problem}; "
                           "kernels are compiled in memory")
    return None


def untrusted_because(path: str, create: bool = False) -> str | None:
    """Why another user could plant a file in the folder `path`, or None: it is safe."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    me = os.geteuid()
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode) and link.st_uid != me:
        return f"it is a symbolic link owned by user {link.st_uid}"
    real = os.path.realpath(path)
    problem = _unsafe(real, os.stat(real), own=True)
    for above in {*_parents(real), *_parents(os.path.realpath(os.path.dirname(
            os.path.abspath(path))))}:
        problem = problem or _unsafe(above, os.stat(above), own=False)
    return problem


def _parents(path: str) -> list[str]:
    found = []
    while os.path.dirname(path) != path:
        path = os.path.dirname(path)
        found.append(path)
    return found


def _unsafe(path: str, st: os.stat_result, own: bool) -> str | None:
    """What lets others write in the folder `path`: the folder itself must be ours and
    closed to others; one above it ours or root's, and closed or sticky."""
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if st.st_uid != os.geteuid() and (own or st.st_uid != 0):
        return f"{path} is owned by user {st.st_uid}"
    if st.st_mode & 0o022 and (own or not st.st_mode & stat.S_ISVTX):
        return f"{path} is writable by its group or others (mode {st.st_mode & 0o7777:o})"
    return None



def warn_once(kind: str, message: str) -> None:
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, KernelCacheWarning, stacklevel=2)


def failed(error: BaseException) -> None:
    """A read or write in the folder failed: it is unused for the rest of the process."""
    where = folder()
    if where is not None:
        _failed.add(where)
        warn_once("failed", f"inert's kernel cache folder {where!r} failed "
                            f"({error}); kernels are compiled in memory from now on")


def damaged(path: str) -> None:
    warn_once("damaged", f"inert's kernel cache: {path!r} was not what inert wrote (cut short, "
                         "garbled or planted); it is compiled again and replaced")


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:20]


# ---------------------------------------------------------------------------------
# Reading and writing files


def read(path: str, private: bool = False) -> bytes | None:
    """The content of the regular file `path` if it is this user's (and, if `private`,
    readable by nobody else), or None. A symbolic link is not followed. A read marks the
    file used (its access time) for eviction."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        return None if error.errno == errno.ELOOP else _failed_read(error)
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or (
                    private and st.st_mode & 0o077):
                return None
            data = f.read()
            if os.utime in os.supports_fd:
                os.utime(fd, ns=(time.time_ns(), st.st_mtime_ns))  # (numba stamps by mtime)
            return data
        except OSError as error:
            return _failed_read(error)


def _failed_read(error: OSError) -> None:
    failed(error)
    return None


def write(path: str, data: bytes, replace: bool = True) -> bool:
    """`data` as the file `path` (if `replace` or none is there), whole or not at all:
    written to a new file of a name nobody could plant, then renamed. False: it failed
    (warned once), and nothing is left behind."""
    partial = None
    try:
        fd, partial = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if replace:
            os.replace(partial, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(partial, path)  # the first one's stays
            os.unlink(partial)
    except BaseException as error:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        if not isinstance(error, OSError):
            raise
        failed(error)
        return False
    _wrote(os.path.dirname(path))
    return True


# ---------------------------------------------------------------------------------
# What the kernels' loaders call


def source_file(name: str, text: str) -> str | None:
    """The path of the file `name` in the cache folder, holding `text`, or None: kernels
    are in memory only. A file found different (cut short, planted) is rewritten, and
    numba's cache of it removed."""
    where = folder()
    if where is None:
        return None
    path = os.path.join(where, name)
    data, found = text.encode(), read(path)
    if found == data:
        return path
    if found is not None or os.path.lexists(path):
        damaged(path)
        forget(name)
    return path if write(path, data) else None


def load_sealed(name: str) -> bytes | None:
    """What `save_sealed(name, ...)` saved, or None: not there, or not signed by this
    user for this name (then it is reported and will be replaced)."""
    where, key = folder(), secret()
    if where is None or key is None:
        return None
    found = read(os.path.join(where, name))
    if found is None:
        return None
    mac, _, payload = found.partition(b"\n")
    if hmac.compare_digest(mac, _mac(key, name, payload)):
        return payload
    damaged(os.path.join(where, name))
    return None


def save_sealed(name: str, payload: bytes) -> None:
    where, key = folder(), secret()
    if where is not None and key is not None:
        write(os.path.join(where, name), _mac(key, name, payload) + b"\n" + payload)


def _mac(key: bytes, name: str, payload: bytes) -> bytes:
    return hmac.new(key, name.encode() + b"\n" + payload, hashlib.sha256).hexdigest().encode()


_secrets: dict[str, bytes] = {}


def secret() -> bytes | None:
    """This user's key signing the folder's object code: read, else made."""
    where = folder()
    if where is None:
        return None
    if where not in _secrets:
        path = os.path.join(where, KEY_FILE)
        found = read(path, private=True)
        if found is None or len(found) != KEY_BYTES:
            write(path, os.urandom(KEY_BYTES), replace=os.path.lexists(path))
            found = read(path, private=True)
        if found is None or len(found) != KEY_BYTES:
            return None
        _secrets[where] = found
    return _secrets[where]


def forget(name: str) -> None:
    """Remove numba's cache files of the source `name` (they index its old content)."""
    where = folder()
    if where is not None:
        stem = os.path.splitext(name)[0] + "."
        numba_folder = os.path.join(where, NUMBA_FOLDER)
        with contextlib.suppress(OSError):
            for entry in os.scandir(numba_folder):
                if entry.name.startswith(stem):
                    os.unlink(entry.path)


# ---------------------------------------------------------------------------------
# Bounds


class Recent:
    """The `config.inert_kernels_in_memory` values used last, by key: an LRU. A value
    dropped goes to `dropped(key, value)`."""

    def __init__(self, dropped=None):
        self._values: collections.OrderedDict = collections.OrderedDict()
        self._dropped = dropped

    def get(self, key):
        value = self._values.get(key)
        if value is not None:
            self._values.move_to_end(key)
        return value

    def __contains__(self, key) -> bool:
        return key in self._values

    def put(self, key, value) -> None:
        self._values[key] = value
        while len(self._values) > max(1, config.inert_kernels_in_memory):
            old = self._values.popitem(last=False)
            if self._dropped is not None:
                self._dropped(*old)

    def values(self) -> list:
        return list(self._values.values())


def _wrote(where: str) -> None:
    _writes[0] += 1
    if _writes[0] >= SCAN_EVERY:
        _writes[0] = 0
        evict(where, config.inert_kernel_cache_bytes)


def evict(where: str, limit: int) -> None:
    """Keep the folder `where` under `limit` bytes: remove the kernels used longest ago
    (to three quarters of it, so that eviction is not run again at once), a kernel's
    source with numba's files of it, and partial files of processes that died."""
    kernels: dict[str, list] = collections.defaultdict(list)
    with contextlib.suppress(OSError):
        for folder_path in (where, os.path.join(where, NUMBA_FOLDER)):
            for entry in os.scandir(folder_path):
                _measure(entry, kernels)
    total = sum(size for files in kernels.values() for _, size, _ in files)
    if total <= limit:
        return
    oldest_first = sorted(kernels.values(), key=lambda files: max(t for _, _, t in files))
    for files in oldest_first:
        if total <= limit * 3 // 4:
            break
        for path, size, _ in files:
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size


def _measure(entry: os.DirEntry, kernels: dict) -> None:
    """Files by the kernel they hold (`k<digest>` for a source and numba's files of it)."""
    if not entry.is_file(follow_symlinks=False) or entry.name == KEY_FILE:
        return
    st = entry.stat(follow_symlinks=False)
    used = max(st.st_atime, st.st_mtime)
    if entry.name.endswith(".tmp") and entry.name.startswith("."):
        if time.time() - st.st_mtime > STALE_SECONDS:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        return
    kernels[entry.name.split(".", 1)[0]].append((entry.path, st.st_size, used))


# ---------------------------------------------------------------------------------
# numba's loop kernels, in memory and in the folder


def _dropped(key: str, kernel: Callable) -> None:
    sys.modules.pop(_module_name(key), None)


_kernels = Recent(_dropped)  # source digest -> numba dispatcher, of those used last
_load_lock = threading.Lock()


def has_kernel(text: str) -> bool:
    """Whether the kernel `text` is loaded in this process already."""
    return digest(text) in _kernels


def loaded_kernels() -> list:
    return _kernels.values()


def load_kernel(text: str) -> Callable:
    """The numba dispatcher defined by `text`: numba's cache keeps its compiled code in
    the cache folder, beside a file holding `text`, so a second process compiles
    nothing; without the folder, compiled in memory."""
    key = digest(text)
    with _load_lock:
        kernel = _kernels.get(key)
        if kernel is None:
            kernel = _import_kernel(key, text)
            _kernels.put(key, kernel)
    count = getattr(_counting, "count", None)
    if count is not None:
        count.numba.setdefault(id(kernel), (kernel, *_compiles(kernel)))
    return kernel


def _module_name(key: str) -> str:
    return f"inert_kernel_{key}"


def _import_kernel(key: str, text: str) -> Callable:
    """The kernel of the module `text`. What runs is always `text`, compiled here, never
    what a file holds: the file (`source_file`, checked to hold `text`)
    only names the source for numba's cache. Its module stays in `sys.modules` while
    the kernel is in `_kernels`: numba's cache looks a kernel's module up by name when
    it loads the kernel's code."""
    name = _module_name(key)
    path = source_file(f"k{key}.py", text)
    if path is not None:
        module = sys.modules[name] = types.ModuleType(name)
        module.__file__ = path
        try:
            exec(compile(text, path, "exec"), vars(module))
            for value in vars(module).values():
                if hasattr(value, "enable_caching"):  # a numba dispatcher
                    value._cache = _GuardedCache(value._cache, f"k{key}.py")
            return module.kernel
        except (OSError, RuntimeError) as error:  # numba's cache refused the folder
            sys.modules.pop(name, None)
            failed(error)
    module = types.ModuleType(name)
    exec(compile(_uncached(text), f"<inert kernel {key}>", "exec"), vars(module))
    return module.kernel


def _uncached(text: str) -> str:
    """`text` with numba's cache off: it needs a source file (the decorators `fusion`,
    `fusion_loops` and `vector_math` write all start so)."""
    return text.replace("@numba.njit(cache=True", "@numba.njit(cache=False")


# ---------------------------------------------------------------------------------
# What one compile used, for `inert_log_compiles`

_counting = threading.local()


class KernelCount:
    """The kernels one program's compile used, by origin: "memory" (loaded in this
    process already), "disk" (the cache folder) or "compiled". numba compiles a loop
    kernel at its first call, so its dispatchers are kept with numba's counts of cache
    hits and misses when loaded, and sorted when the count is read."""

    def __init__(self):
        self.scalar: collections.Counter = collections.Counter()
        self.numba: dict[int, tuple] = {}  # id -> (dispatcher, hits, misses) when loaded

    def by_origin(self) -> collections.Counter:
        counts = collections.Counter(self.scalar)
        for kernel, hits, misses in self.numba.values():
            now_hits, now_misses = _compiles(kernel)
            counts["compiled" if now_misses > misses else
                   "disk" if now_hits > hits else "memory"] += 1
        return counts


def _compiles(kernel) -> tuple[int, int]:
    """numba's counts of a dispatcher's signatures loaded from its cache, and compiled."""
    stats = kernel.stats
    return sum(stats.cache_hits.values()), sum(stats.cache_misses.values())


@contextlib.contextmanager
def counting_kernels():
    """The `KernelCount` of the kernels this thread loads inside the block."""
    previous = getattr(_counting, "count", None)
    count = _counting.count = KernelCount()
    try:
        yield count
    finally:
        _counting.count = previous


def count_scalar_kernel(origin: str) -> None:
    """A scalar kernel was loaded from `origin` ("memory", "disk" or "compiled")."""
    count = getattr(_counting, "count", None)
    if count is not None:
        count.scalar[origin] += 1


class _GuardedCache:
    """numba's cache of one function of a kernel, whose failures cost a compile, never
    the call: a file numba cannot read (cut short, garbled) is removed, one it cannot
    write (a full disk) leaves the kernel compiled in memory; either warns once."""

    def __init__(self, cache, source: str):
        self._cache, self._source = cache, source

    def load_overload(self, sig, target_context):
        try:
            return self._cache.load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 — whatever unpickling a damaged file raises
            damaged(self._cache.cache_path)
            forget(self._source)
            return None

    def save_overload(self, sig, data) -> None:
        try:
            self._cache.save_overload(sig, data)
        except OSError as error:
            failed(error)

    def __getattr__(self, name):
        return getattr(self._cache, name)
