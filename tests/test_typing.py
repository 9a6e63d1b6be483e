"""The public API's type hints: present on the transforms and the other functions at
`inert.`, resolvable (a hint naming something never imported fails only when a type
checker or `typing.get_type_hints` reads it), and shipped (`py.typed`, PEP 561)."""

import inspect
import os
import tomllib
import typing

import pytest

import inert

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOP_LEVEL_FUNCTIONS = sorted(
    name for name in inert.__all__
    if callable(getattr(inert, name)) and not inspect.isclass(getattr(inert, name))
    and not inspect.ismodule(getattr(inert, name)))


@pytest.mark.parametrize("name", TOP_LEVEL_FUNCTIONS)
def test_every_function_at_inert_annotates_its_parameters_and_result(name):
    signature = inspect.signature(getattr(inert, name))
    unannotated = [p.name for p in signature.parameters.values()
                   if p.annotation is inspect.Parameter.empty]
    assert unannotated == [], f"inert.{name} leaves {unannotated} unannotated"
    assert signature.return_annotation is not inspect.Signature.empty, name


@pytest.mark.parametrize("value", [
    *(getattr(inert, name) for name in TOP_LEVEL_FUNCTIONS), inert.config.update,
    inert.Inactive, inert.custom_jvp, inert.custom_vjp, inert.numpy.sum, inert.numpy.where,
    inert.numpy.array, inert.numpy.dot, inert.random.normal, inert.tree_util.tree_map,
    inert.lax.scan, inert.lax.cond, inert.lax.switch, inert.lax.while_loop, inert.lax.fori_loop,
], ids=lambda v: v.__qualname__)
def test_the_hints_resolve(value):
    target = value.__init__ if inspect.isclass(value) else inspect.unwrap(value)
    assert typing.get_type_hints(target) or inspect.isclass(value)


def test_py_typed_ships_in_the_package():
    assert os.path.isfile(os.path.join(os.path.dirname(inert.__file__), "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    assert "py.typed" in package_data["inert"]
