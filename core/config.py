"""`inert.config`: global flags, with JAX's names.

* `jax_enable_x64` (True, the only setting): inert computes in numpy's dtypes, so
  float64 is the default, as in JAX with this flag on. Code ported from JAX often
  sets it to True, which is accepted. False (JAX's 32-bit defaults) is refused with
  a `ValueError` saying so: cast inputs to float32 to compute in single precision.
* `jax_debug_nans` (False): when True, evaluating a primitive that produces a NaN
  raises `FloatingPointError` naming the primitive and the user's source line —
  eagerly, in grad's forward and backward passes, and under `jit` (whose compiled
  code is re-run one primitive at a time when its outputs hold a NaN, as JAX does).

* `inert_grad_replay` (True): `grad` and `value_and_grad` called again replay the
  recorded program and run its compiled gradient (`interpreters/replay.py`); False
  differentiates every call afresh, as the first call does.

* `inert_traceback_filtering` ("auto"; `$INERT_TRACEBACK_FILTERING` sets the default):
  errors leaving inert's entry points have inert's own frames removed from their
  traceback, as JAX's `jax_traceback_filtering` does; "off" keeps them, "remove_frames"
  chains the full traceback as the error's cause, "quiet_remove_frames" is "auto"
  (`core/traceback_util.py`). JAX's "tracebackhide" is refused: Python offers no way to
  mark a frame hidden that every traceback printer honours.

`inert.debug_nans(True)` is a context manager setting `jax_debug_nans` for a block.
"""

from __future__ import annotations

import contextlib
import os

CHOICES = {"inert_traceback_filtering": ("auto", "off", "quiet_remove_frames", "remove_frames")}


class Config:
    """The flags, read as attributes (`inert.config.jax_debug_nans`) and set with
    `update(name, value)`. Plain attributes, so reading one costs nothing measurable
    on the per-primitive path."""

    def __init__(self):
        self.jax_enable_x64 = True
        self.jax_debug_nans = False
        self.inert_grad_replay = True
        self.inert_traceback_filtering = "auto"
        self.update("inert_traceback_filtering",
                    os.environ.get("INERT_TRACEBACK_FILTERING", "auto"))

    def update(self, name: str, value) -> None:
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
        setattr(self, name, bool(value))

    def __repr__(self) -> str:
        return f"inert.config({', '.join(f'{k}={v}' for k, v in vars(self).items())})"


config = Config()


@contextlib.contextmanager
def debug_nans(enabled: bool = True):
    """`jax_debug_nans` set to `enabled` inside the block, restored after it."""
    previous = config.jax_debug_nans
    config.update("jax_debug_nans", enabled)
    try:
        yield
    finally:
        config.update("jax_debug_nans", previous)
