"""Errors name the user's file and line: the source-line cache tells apart code objects
that compare equal (identical functions compiled from different files)."""

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.errors import ShapeError

SOURCE = "def f(x):\n    return inp.ones(3) + x\n"


def compiled_in(filename: str):
    namespace = {"inp": inp}
    exec(compile(SOURCE, filename, "exec"), namespace)
    return namespace["f"]


def test_identical_functions_from_two_files_name_their_own_file():
    f, g = compiled_in("first_file.py"), compiled_in("second_file.py")
    assert f.__code__ == g.__code__ and f.__code__ is not g.__code__
    for fn, name in [(f, "first_file.py"), (g, "second_file.py"), (f, "first_file.py")]:
        with pytest.raises(ShapeError, match=rf"at {name}:2 \(f\)"):
            inert.jit(fn)(np.ones(2))
