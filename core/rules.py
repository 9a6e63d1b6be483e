"""Rule tables: one per kind of rule, keyed by primitive.

A primitive is just a name (Autodidax): everything it means lives in rule tables,
each owned by the interpreter that consumes it. A table refuses a second
registration, so a primitive's rules cannot be silently overridden elsewhere, and a
lookup of a missing rule names the primitive and the kind of rule.
"""

from __future__ import annotations

from typing import Any

from .errors import InertError


class MissingRuleError(InertError, NotImplementedError):
    """A transformation met a primitive it has no rule for."""


class RuleTable(dict):
    """`{primitive: rule}` for one kind of rule; registering twice is an error."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def __setitem__(self, prim: Any, rule: Any) -> None:
        if prim in self:
            raise ValueError(f"{prim.name} already has a {self.kind} rule")
        super().__setitem__(prim, rule)

    def __missing__(self, prim: Any):
        raise MissingRuleError(f"primitive {prim.name!r} has no {self.kind} rule")
