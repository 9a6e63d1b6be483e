"""`inert.config`: global flags, with JAX's names.

* `jax_enable_x64` (True, the only setting): inert computes in numpy's dtypes, so
  float64 is the default, as in JAX with this flag on. Code ported from JAX often
  sets it to True, which is accepted. False (JAX's 32-bit defaults) is refused with
  a `ValueError` saying so: cast inputs to float32 to compute in single precision.
* `jax_debug_nans` (False): when True, evaluating a primitive that produces a NaN
  raises `FloatingPointError` naming the primitive and the user's source line —
  eagerly, in grad's forward and backward passes, and under `jit` (whose compiled
  code is re-run one primitive at a time when its outputs hold a NaN, as JAX does).
* `jax_disable_jit` (False): when True, `jit`-ted functions run as plain Python,
  eagerly (so `print` shows values and a debugger steps through them), as in JAX.

* `inert_grad_replay` (True): `grad`, `value_and_grad`, `vjp`, `jvp`, `linearize`,
  `jacfwd`, `jacrev`, `hessian` and `vmap` called again replay the recorded program
  and run its compiled transformation (`api/replaying.py`); False transforms every
  call afresh, as the first call does.

* `inert_kernels_in_memory` (256): how many compiled kernels of each kind (numba's
  loop kernels, scalar kernels) jit's numba backend keeps for reuse beyond those its
  live jitted functions hold (`interpreters/kernel_cache.py`). A scalar kernel holds
  about 55 KB, so 256 of them hold 14 MB. numba's hold 1 to 2.5 MB each (measured),
  which numba never gives back (its target context keeps every function it compiled),
  so for them a smaller count releases only the module and the reference.
* `inert_kernel_cache_bytes` (512 MiB): the size past which the kernel cache folder
  (`$INERT_CACHE_DIR` or `~/.cache/inert/kernels`) loses the kernels used longest ago.
* `inert_traceback_filtering` ("auto"; `$INERT_TRACEBACK_FILTERING` sets the default):
  errors leaving inert's entry points have inert's own frames removed from their
  traceback, as JAX's `jax_traceback_filtering` does; "off" keeps them, "remove_frames"
  chains the full traceback as the error's cause, "quiet_remove_frames" is "auto"
  (`core/traceback_util.py`). JAX's "tracebackhide" is refused: Python offers no way to
  mark a frame hidden that every traceback printer honours.

* `inert_log_compiles` (False): when True, jit logs each compile at WARNING through
  `logging` (logger `inert.api.compiled`, under `inert`), as JAX's `jax_log_compiles`
  does: a signature's first call (the function, its argument types, the trace's and
  the compile's time, the backend, its kernels and which came from the kernel cache),
  and the default backend's compile of numba's code in the background. Off, the same
  messages go at DEBUG.

`inert.debug_nans(True)` and `inert.disable_jit()` are context managers setting
`jax_debug_nans` and `jax_disable_jit` for a block.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

CHOICES = {"inert_traceback_filtering": ("auto", "off", "quiet_remove_frames", "remove_frames")}


class Config:
    """The flags, read as attributes (`inert.config.jax_debug_nans`) and set with
    `update(name, value)`. Plain attributes, so reading one costs nothing measurable
    on the per-primitive path."""

    def __init__(self):
        self.jax_enable_x64 = True
        self.jax_debug_nans = False
        self.jax_disable_jit = False
        self.inert_grad_replay = True
        self.inert_kernels_in_memory = 256
        self.inert_kernel_cache_bytes = 512 * 2**20
        self.inert_traceback_filtering = "auto"
        self.inert_log_compiles = False
        self.update("inert_traceback_filtering",
                    os.environ.get("INERT_TRACEBACK_FILTERING", "auto"))

    def update(self, name: str, value: Any) -> None:
        """Set the flag `name` to `value` (as `jax.config.update`); an unknown name, or a
        value the flag does not take, is an error naming the flags or the choices.

        Example:
            >>> inert.config.update("jax_debug_nans", True)
            >>> inert.config.jax_debug_nans
            True
            >>> inert.config.update("jax_debug_nans", False)
        """
        if name not in vars(self):
            raise AttributeError(f"inert.config has no flag {name!r}; its flags are "
                                 f"{sorted(vars(self))}")
        if name == "jax_enable_x64" and not value:
            raise ValueError("inert.config: jax_enable_x64=False (32-bit default dtypes) is "
                             "not supported: inert computes in numpy's dtypes, float64 by "
                             "default; pass float32 arrays to compute in single precision")
        if name in CHOICES:
            if value not in CHOICES[name]:
                raise ValueError(f"inert.config: {name} must be one of {CHOICES[name]}, "
                                 f"got {value!r}")
            setattr(self, name, value)
            return
        setattr(self, name, type(getattr(self, name))(value))  # a flag's bool, a size's int

    def __repr__(self) -> str:
        return f"inert.config({', '.join(f'{k}={v}' for k, v in vars(self).items())})"


config = Config()


@contextlib.contextmanager
def _flag_set(name: str, value: bool):
    previous = getattr(config, name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, previous)


def debug_nans(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """`jax_debug_nans` set to `enabled` inside the block, restored after it.

    Example:
        >>> with inert.debug_nans():  # doctest: +IGNORE_EXCEPTION_DETAIL
        ...     inert.jit(jnp.log)(-1.0)
        Traceback (most recent call last):
        NaNError: invalid value (nan) encountered in log (jax_debug_nans is on)
    """
    return _flag_set("jax_debug_nans", enabled)


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager[None]:
    """jax.disable_jit: inside the block, `jit`-ted functions run eagerly, as Python
    (so `print` shows values and a debugger steps through them).

    Example:
        >>> with inert.disable_jit():
        ...     inert.jit(lambda x: print(x + 1))(np.ones(2))
        [2. 2.]
    """
    return _flag_set("jax_disable_jit", disable)
