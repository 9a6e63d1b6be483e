"""Scalar kernels compiled straight to LLVM: the same values and dtypes as numpy, across
chunk boundaries, and numba taking over what the translation does not cover."""

import os

import numpy as np
import pytest
from harness import check_jit_backends, printed_by_a_new_process
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp
from inert import lax
from inert.errors import KernelCacheWarning
from inert.interpreters import kernel_cache, scalar_kernels
from inert.interpreters.fusion import Cluster, kernel_source, plan, used_outside_clusters

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SCALAR_PROGRAMS = {
    "math": lambda x, y: (inp.sin(x) * inp.exp(y) + inp.tanh(x - y) / inp.cosh(y)
                          + inp.arctan2(x, y) + inp.log1p(x * x) + inp.cbrt(y)),
    "compare_select": lambda x, y: (inp.where(x > y, x, y * 2.0), x <= y, x != y),
    "extremes": lambda x, y: (inp.maximum(x, y), inp.minimum(x, np.nan), inp.fmod(x, y)),
    "rounding": lambda x, y: (inp.floor(x), inp.ceil(y), inp.trunc(x * 3.0), inp.sqrt(y * y)),
    "casts": lambda x, y: ((x > 0).astype(np.float32) * 2.0, (x * 3).astype(np.float32) + y,
                           np.int32(7) + (y > x), inp.abs(x)),
    "logistic": lambda x, y: lax.logistic(x) * lax.rsqrt(y * y + 1.0),
}


@pytest.mark.parametrize("name", SCALAR_PROGRAMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scalar_programs_compile_to_llvm_and_match_numpy(name, dtype):
    x, y = dtype(0.7), dtype(-1.3)
    scalar_kernels.compile_kernel(*scalar_kernel_text(SCALAR_PROGRAMS[name], x, y))
    check_jit_backends(SCALAR_PROGRAMS[name], (x, y))


def chain(x, n):
    for i in range(n):
        x = inp.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
    return x


def test_a_chain_longer_than_a_chunk_crosses_chunks_through_the_frame():
    n = scalar_kernels.CHUNK + 200
    check_jit_backends(inert.value_and_grad(lambda x: chain(x, n)), (0.3,))


def scalar_kernel_text(f, *args):
    jaxpr = inert.make_jaxpr(f)(*args).jaxpr
    steps = plan(jaxpr)
    (cluster,) = [s for s in steps if isinstance(s, Cluster)]
    source = kernel_source(cluster, used_outside_clusters(jaxpr, steps))
    return source.text(), source.types()


def test_what_the_translation_does_not_cover_goes_to_numba():
    text, types = scalar_kernel_text(lambda x: (x * 2.0).astype(np.int32) + 1, 2.5)
    with pytest.raises(scalar_kernels.Unsupported):  # float to int: numpy's rules, not LLVM's
        scalar_kernels.compile_kernel(text, types)
    check_jit_backends(lambda x: (x * 2.0).astype(np.int32) + 1, (np.float64(2.5),))


def test_a_kernel_is_callable_from_several_threads():
    import concurrent.futures

    g = inert.jit(inert.grad(lambda x: chain(x, 30)), backend="numba")
    want = inert.grad(lambda x: chain(x, 30))(0.4)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: g(0.4), range(32)))
    assert all(g == want for g in got)


def test_each_statement_shape_is_parsed_once(monkeypatch):
    text, types = scalar_kernel_text(lambda x: chain(x, 30), 0.3)
    parsed = []
    real = scalar_kernels._parsed_shape
    monkeypatch.setattr(scalar_kernels, "_parsed_shape",
                        lambda line: parsed.append(line) or real(line))
    arguments, statements, returned = scalar_kernels.parse(text)
    assert len(parsed) == 3  # sin, a product and a sum with a literal
    assert [target for target, _, _ in statements] == [f"t{i}" for i in range(30)]
    assert statements[3][2] == ["t3", "t2"] and arguments == ["a0"] and returned == ["t29"]


@pytest.mark.parametrize("optimised_lines", [0, scalar_kernels.OPTIMISED_LINES])
def test_both_code_generators_give_numpys_values(monkeypatch, tmp_path, optimised_lines):
    monkeypatch.setenv("INERT_CACHE_DIR", str(tmp_path))  # compiled here, not found
    monkeypatch.setattr(scalar_kernels, "OPTIMISED_LINES", optimised_lines)
    n = 50 + optimised_lines % 7  # a kernel of its own, not in memory
    check_jit_backends(inert.value_and_grad(lambda x: chain(x, n)), (0.3,))


def test_a_kernel_of_many_parts_runs_them_in_order(monkeypatch, tmp_path):
    """Parts compile while the next is translated; values cross them by the frame."""
    monkeypatch.setenv("INERT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(scalar_kernels, "CHUNK", 7)
    monkeypatch.setattr(scalar_kernels, "PART", 2)
    f = lambda x, y: chain(x, 61) * y + chain(y, 5)  # an argument read by many chunks
    layout, parts = scalar_kernels.translated(*scalar_kernel_text(inert.grad(f), 0.3, 0.4))
    assert len(list(parts)) > 5 and layout.crossing
    check_jit_backends(inert.value_and_grad(f, argnums=(0, 1)), (0.3, 0.4))


def test_a_second_process_loads_a_scalar_kernels_object_code_from_disk(tmp_path):
    script = (
        "import inert, inert.numpy as inp\n"
        "from inert.interpreters import scalar_kernels\n"
        "translated = []\n"
        "real = scalar_kernels.translated\n"
        "scalar_kernels.translated = lambda *a: translated.append(a) or real(*a)\n"
        "f = lambda x: inp.sin(x) * inp.cos(x * 3.0) + x\n"
        "print(repr(inert.jit(inert.grad(f), backend='numba')(0.3)), len(translated))\n")
    first, second = (printed_by_a_new_process(script, tmp_path) for _ in range(2))
    assert first[1] == "1" and second == [first[0], "0"]
    assert any(name.endswith(".o") for name in os.listdir(tmp_path))


def test_a_cached_object_file_that_is_not_whole_is_compiled_again(tmp_path, monkeypatch):
    """An empty, garbled or cut short file (a crash before its data reached the disk)
    is neither loaded (LLVM would crash linking it) nor raised about: it is replaced."""
    monkeypatch.setenv("INERT_CACHE_DIR", str(tmp_path))
    text, types = scalar_kernel_text(lambda x: inp.sin(x) * 3.0 + x, 0.3)
    layout = scalar_kernels._native_kernel(text, types, "a0:d t0:d")[1:]
    (path,) = tmp_path.glob("s*.o")
    whole = path.read_bytes()
    for broken in (b"", b"[1]\n", whole[:len(whole) // 2], whole[:-1] + bytes([whole[-1] ^ 1])):
        path.write_bytes(broken)
        monkeypatch.setattr(kernel_cache, "_warned", set())
        with pytest.warns(KernelCacheWarning, match="not what inert wrote"):
            assert scalar_kernels._native_kernel(text, types, "a0:d t0:d")[1:] == layout
        assert path.read_bytes() == whole


def test_object_files_are_keyed_by_the_translation_too(tmp_path, monkeypatch):
    """A new version of the translation (a fixed bug) never links an old one's code."""
    monkeypatch.setenv("INERT_CACHE_DIR", str(tmp_path))
    text, types = scalar_kernel_text(lambda x: inp.cos(x) * 3.0 + x, 0.3)
    scalar_kernels._native_kernel(text, types, "a0:d t0:d")
    monkeypatch.setattr(scalar_kernels, "_translator", lambda: "another version")
    scalar_kernels._native_kernel(text, types, "a0:d t0:d")
    assert len(list(tmp_path.glob("s*.o"))) == 2


def test_booleans_compare_as_numpy_orders_them():
    """False < True, as 0 < 1: a boolean is LLVM's i1, whose signed order has true = -1."""
    f = lambda x, y: (x > y, y < x, x >= y, x <= y, inp.where(x < y, 1.0, 2.0), y > True)
    for x, y in ((np.bool_(True), np.bool_(False)), (np.bool_(False), np.bool_(True))):
        scalar_kernels.compile_kernel(*scalar_kernel_text(f, x, y))  # translated, not numba's
        check_jit_backends(f, (x, y))


_UNARY = [lambda a: a + 0.5, lambda a: a * 2, lambda a: a - True, lambda a: a > 0.5,
          lambda a: a >= 1, lambda a: inp.sin(a), lambda a: inp.abs(a), lambda a: -a,
          lambda a: a.astype(np.float32), lambda a: a.astype(np.int32),
          lambda a: inp.where(a > 0, a, 1.5), lambda a: inp.sqrt(inp.abs(a))]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a < b, lambda a, b: a == b,
           lambda a, b: inp.where(a > b, a, b), lambda a, b: inp.maximum(a, b)]
_SCALARS = [np.float64(0.7), np.float32(-1.3), np.int8(3), np.int32(-2), np.int64(5),
            np.bool_(True), np.bool_(False)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_SCALARS), min_size=1, max_size=2),
       st.lists(st.tuples(st.booleans(), st.integers(0, 11), st.integers(0, 5),
                          st.integers(0, 5)), min_size=1, max_size=4))
def test_random_scalar_programs_of_mixed_dtypes_agree_with_numpy_and_the_staged_types(
        args, steps):
    """Scalar programs over numpy scalars of several dtypes, with weakly typed literals:
    each backend's values and dtypes are eager numpy's, and the staged types say them."""
    def f(*xs):
        values = [inp.asarray(x) for x in xs]
        for unary, op, i, j in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            values.append(_UNARY[op](a) if unary else _BINARY[op % len(_BINARY)](a, b))
        return values[len(xs):]

    try:
        f(*args)
    except Exception:  # noqa: BLE001 — an operation the dtypes do not allow
        assume(False)
    check_jit_backends(f, tuple(args))
    staged = [v.aval.dtype for v in inert.make_jaxpr(f)(*args).jaxpr.outvars]
    assert staged == [np.asarray(v).dtype for v in f(*args)]


def test_unsigned_integers_go_to_numba():
    """The translation covers signed integers only: an unsigned one was read as a bool
    (`sum(uint8 array) * 1.0` was 1.0)."""
    text, types = scalar_kernel_text(lambda x: x * 1.0 + 2.0, np.uint64(57))
    with pytest.raises(scalar_kernels.Unsupported):
        scalar_kernels.compile_kernel(text, types)
    x = np.arange(7, 13, dtype=np.uint8)
    check_jit_backends(lambda x: (inp.sum(x) * 1.0, inp.sin(inp.max(x) * 2.0)), (x,))
