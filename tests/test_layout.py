"""The layout holds: four floors importing only downwards, small folders and modules,
namespaces that show only their API, and nothing that points outside the repository."""

import ast
import pathlib
import types

import pytest

import inert

ROOT = pathlib.Path(inert.__file__).parent
FLOORS = ["core", "interpreters", "primitives", "api"]
PACKAGE_FOLDERS = FLOORS + ["benchmarks"]


def package_modules():
    for folder in PACKAGE_FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def module_name(path: pathlib.Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported_inert_modules(path: pathlib.Path):
    """Each `(line, module)` of inert that `path` imports, as a list of name parts."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)]
            yield node.lineno, base + (node.module.split(".") if node.module else [])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inert"):
            yield node.lineno, node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "inert":
                    yield node.lineno, alias.name.split(".")[1:]


def floor_of(parts: list[str]) -> int | None:
    return FLOORS.index(parts[0]) if parts and parts[0] in FLOORS else None


@pytest.mark.parametrize("path", list(package_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_only_downwards(path):
    source_floor = floor_of(module_name(path))
    if source_floor is None:  # benchmarks sit above every floor
        return
    for line, target in imported_inert_modules(path):
        target_floor = floor_of(target)
        assert target_floor is not None and target_floor <= source_floor, (
            f"{path.relative_to(ROOT)}:{line} imports {'.'.join(target) or 'inert'}, "
            f"which is not on the {FLOORS[source_floor]} floor or below it")


def test_no_module_imports_inert_inside_a_function():
    """A function-local import is how a cycle hides; restructure instead."""
    local = []
    for path in package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (
                            inner.level or (inner.module or "").startswith("inert")):
                        local.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert not local


def test_folders_and_modules_stay_small():
    for folder in [ROOT / f for f in PACKAGE_FOLDERS] + [
            p for f in PACKAGE_FOLDERS for p in (ROOT / f).rglob("*") if p.is_dir()]:
        if folder.name == "__pycache__":
            continue
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= 15, f"{folder.relative_to(ROOT)} holds {len(modules)} modules"
    for path in package_modules():
        lines = len(path.read_text().splitlines())
        assert lines <= 600, f"{path.relative_to(ROOT)} has {lines} lines"


def test_nothing_at_the_root_shadows_numpy_or_scipy():
    for name in ("numpy", "numpy.py", "scipy", "scipy.py"):
        assert not (ROOT / name).exists()


@pytest.mark.parametrize("namespace", [
    inert.numpy, inert.numpy.linalg, inert.lax, inert.lax.linalg, inert.scipy,
    inert.scipy.linalg, inert.scipy.special,
    inert.scipy.stats, inert.scipy.integrate, inert.experimental, inert.experimental.ode,
    inert.tree_util, inert.ref, inert.random, inert.nn, inert.nn.initializers,
    inert.example_libraries, inert.example_libraries.optimizers, inert.tree,
    inert.flatten_util, inert.test_util,
    *(getattr(inert.scipy.stats, name) for name in inert.scipy.stats.DISTRIBUTIONS)],
    ids=lambda m: m.__name__)
def test_namespaces_show_only_their_api(namespace):
    shown = dir(namespace)
    assert shown == sorted(namespace.__all__)
    for name in shown:
        value = getattr(namespace, name)
        assert not name.startswith("_")
        assert not isinstance(value, types.ModuleType) or value.__name__.startswith("inert."), name
    assert not {"np", "functools", "annotations", "get_aval"} & set(shown)


def test_no_file_points_outside_the_repository():
    suffixes = {".py", ".md", ".toml", ".ipynb", ".cfg", ".txt"}
    outside = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
               if p.suffix in suffixes and ".git" not in p.parts and "egg-info" not in str(p)
               and "../" + "shared" in p.read_text(errors="ignore")]
    assert not outside
