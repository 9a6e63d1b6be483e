"""Every public name has a docstring: what `help()` and a notebook's `?` show.

The walk starts at `inert.__all__` and enters every public namespace (`inert.numpy`,
`inert.lax`, `inert.scipy.*`, `inert.random`, `inert.nn`, `inert.tree_util`,
`inert.example_libraries.*`, ...) through its own `__all__`. A name may sit on
`STILL_UNDOCUMENTED` only while it has no docstring: the list can only shrink (the test
fails when a listed name gains one, so that it is taken off), and it is empty now. Type
aliases (`inert.typing.ArrayLike`) cannot hold a docstring: a `#:` comment documents them.
"""

import inspect
import types
import typing

import pytest

import inert

STILL_UNDOCUMENTED: frozenset[str] = frozenset()


def public_names() -> dict[str, object]:
    """`qualified name -> object` for every public name of every public namespace,
    named by the path users write (`inert.numpy.sum`, not `inert.api.numpy.sum`)."""
    found, queue, seen = {}, [("inert", inert)], set()
    while queue:
        path, module = queue.pop()
        if module.__name__ in seen:
            continue
        seen.add(module.__name__)
        names = getattr(module, "__all__", None) or [
            n for n, v in vars(module).items() if not n.startswith("_")
            and getattr(v, "__module__", "").startswith(module.__name__)]
        for name in names:
            value = getattr(module, name)
            if isinstance(value, types.ModuleType):
                if value.__name__.startswith("inert"):
                    queue.append((f"{path}.{name}", value))
            elif callable(value) and typing.get_origin(value) is None:  # not a type alias
                found[f"{path}.{name}"] = value
    return found


NAMES = public_names()


def test_the_walk_reaches_every_namespace():
    namespaces = {name.rpartition(".")[0] for name in NAMES}
    assert {"inert", "inert.numpy", "inert.numpy.linalg", "inert.lax", "inert.scipy.special",
            "inert.scipy.stats", "inert.random", "inert.nn", "inert.tree_util",
            "inert.example_libraries.optimizers", "inert.errors"} <= namespaces
    assert len(NAMES) > 800


def test_every_public_name_has_a_docstring():
    missing = sorted(name for name, value in NAMES.items()
                     if not (inspect.getdoc(value) or "").strip())
    assert [m for m in missing if m not in STILL_UNDOCUMENTED] == []
    assert sorted(STILL_UNDOCUMENTED - set(missing)) == [], "documented now: take them off"


@pytest.mark.parametrize("name", ["inert.numpy.cumsum", "inert.numpy.log10", "inert.lax.add",
                                  "inert.scipy.special.digamma"])
def test_a_derived_docstring_names_what_it_computes_and_whose_version_it_is(name):
    doc = inspect.getdoc(NAMES[name])
    short = name.rpartition(".")[2]
    assert "inert's version of `" in doc and f".{short}`" in doc
    assert doc.splitlines()[0].strip() and not doc.startswith(short + "(")
