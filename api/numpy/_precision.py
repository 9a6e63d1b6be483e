"""`Precision`: JAX's hint for how precisely a matrix product or convolution is
computed on accelerators (bfloat16 passes, tensor-float 32, float32).

inert computes every product in its operands' dtype with numpy's BLAS, which is what
JAX does on CPU: the argument is checked (so a misspelt one fails as in JAX) and
otherwise ignored, and it never becomes a param of the IR, so programs that differ
only in `precision=` share one jaxpr and one compiled kernel.
"""

from __future__ import annotations

import enum


class Precision(enum.Enum):
    """jax.lax.Precision: DEFAULT, HIGH, HIGHEST; also made from JAX's strings
    ('default', 'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32')."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "high": cls.HIGH,
                 "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self) -> str:
        return self.name


def check_precision(precision, name: str) -> None:
    """Accept what JAX accepts for `precision=`: None, a `Precision` or its string, or
    a pair of them (one per operand); raise ValueError, naming `name`, otherwise."""
    pair = precision if isinstance(precision, (tuple, list)) else (precision,)
    if len(pair) not in (1, 2):
        raise ValueError(f"{name}: precision must be None, a Precision or a pair of them, "
                         f"got {precision!r}")
    for p in pair:
        if p is not None and not isinstance(p, Precision):
            try:
                Precision(p)
            except ValueError:
                raise ValueError(f"{name}: unknown precision {p!r}; expected a lax.Precision "
                                 "or one of 'default', 'high', 'highest', 'bfloat16', "
                                 "'tensorfloat32', 'float32'") from None
