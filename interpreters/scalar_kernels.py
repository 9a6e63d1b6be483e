"""Scalar kernels compiled straight to LLVM, for jit's numba backend.

numba spends about a millisecond per expression on type inference and lowering, in
Python, before LLVM sees the code: a 10,000-operation scalar chain under `grad` would
take minutes to compile. A kernel over a 0-d iteration space is straight-line code
whose every type is known, so this module translates its source (the text `fusion`
generates for numba, parsed back with `ast`) into LLVM IR and compiles that with
llvmlite, numba's binding to LLVM. LLVM's time on one huge basic block grows faster
than its length, so the code is cut into functions of `CHUNK` statements that pass
the values crossing a cut through one buffer, the *frame*, which also carries the
inputs in and the outputs out (8 bytes a value: floats as float64, integers and
booleans as int64, exactly). The functions are compiled `PART` at a time, each part
in a thread while Python translates the next, and linked into one engine.

The translation covers what scalar chains are made of: arithmetic, comparisons,
selections, casts between float, signed-integer and boolean types, the math
functions (libm's, as numba calls them) and a few numpy ufuncs. Anything else raises
`Unsupported`, and the kernel goes to numba instead.

The object code is saved in the kernel cache folder (`kernel_cache`), named by a
digest of the kernel's text and types, the translation's source and LLVM's version
(`object_name`) and signed by this user: a second process links it, translating and
compiling nothing. The `config.inert_kernels_in_memory` kernels used last stay linked;
the others go with the jitted functions using them, and their memory with them.
"""

from __future__ import annotations

import ast
import concurrent.futures
import ctypes
import functools
import hashlib
import importlib
import itertools
import json
import pathlib
import re
import struct
import threading
from typing import Callable, Iterator

import attrs
import numpy as np

from . import kernel_cache, vector_math
from .kernel_cache import digest

CHUNK = 500  # statements per LLVM function
PART = 8  # chunks per object file (each compiles while the next is translated)
# LLVM's optimising code generator (SelectionDAG, the greedy register allocator) makes
# a third of the machine code its fast one does, and a long kernel's code is fetched
# from beyond the first-level caches on every call: W7's gradient (4,000 statements)
# takes 0.040 µs per operation rather than 0.063. It compiles 3 times slower, about
# 50 µs a statement, so past this many lines of kernel text the fast one compiles (the
# 10,000-operation chain's gradient, 20,000 statements: 0.33 s rather than 1 s)
OPTIMISED_LINES = 5_000

_TYPES = {"float64": "double", "float32": "float", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "bool": "i1"}
_FLOAT_BINOPS = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}
_INT_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}
_NP_SELECTIONS = {"maximum": "oge", "minimum": "ole"}
_FLOAT_COMPARE = {ast.Eq: "oeq", ast.NotEq: "une", ast.Lt: "olt", ast.LtE: "ole",
                  ast.Gt: "ogt", ast.GtE: "oge"}
_INT_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt",
                ast.GtE: "sge"}
# booleans unsigned: LLVM's i1 `true` is -1 signed, and numpy orders False < True
_BOOL_COMPARE = {**_INT_COMPARE, ast.Lt: "ult", ast.LtE: "ule", ast.Gt: "ugt", ast.GtE: "uge"}
_LIBM = {"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p", "asin",
         "acos", "atan", "asinh", "acosh", "atanh", "cbrt", "exp2"}
_INTRINSICS = {"sqrt": "llvm.sqrt", "trunc": "llvm.trunc", "floor": "llvm.floor",
               "ceil": "llvm.ceil", "rint": "llvm.rint", "absolute": "llvm.fabs"}


F64 = np.dtype(np.float64)
BOOL = np.dtype(bool)


class Unsupported(Exception):
    """The kernel uses something this translation does not cover."""


_TYPE_OF = {np.dtype(name): t for name, t in _TYPES.items()}  # dtype.name is slow


def dtype_type(dtype: np.dtype) -> str:
    t = _TYPE_OF.get(dtype)
    if t is None:
        raise Unsupported(str(dtype))
    return t


def constant(value, dtype: np.dtype) -> str:
    if dtype.kind == "f":  # LLVM spells float constants as the bits of a double
        return f"0x{struct.unpack('<Q', struct.pack('<d', float(value)))[0]:016X}"
    if dtype.kind == "b":
        return "true" if value else "false"
    return str(int(value))


class Function:
    """The LLVM body of one chunk: registers, and the declarations it needs."""

    def __init__(self, declarations: set):
        self.lines: list[str] = []
        self.declarations = declarations
        self.count = 0

    def emit(self, instruction: str, dtype: np.dtype) -> tuple[str, np.dtype]:
        self.count += 1
        register = f"%r{self.count}"
        self.lines.append(f"  {register} = {instruction}")
        return register, dtype

    def call(self, name: str, args: list[tuple[str, np.dtype]], dtype: np.dtype):
        t = dtype_type(dtype)
        signature = ", ".join(t for _ in args)
        suffix = ".f64" if t == "double" else ".f32"
        symbol = name + suffix if name.startswith("llvm.") else name
        self.declarations.add(f"declare {t} @{symbol}({signature})")
        return self.emit(f"call {t} @{symbol}({', '.join(f'{t} {r}' for r, _ in args)})", dtype)

    def convert(self, value: tuple[str, np.dtype], to: np.dtype) -> tuple[str, np.dtype]:
        register, dtype = value
        if dtype == to:
            return value
        src, dst = dtype_type(dtype), dtype_type(to)
        if dtype.kind == "f" and to.kind == "f":
            op = "fpext" if to.itemsize > dtype.itemsize else "fptrunc"
        elif dtype.kind in "bi" and to.kind == "f":
            op = "uitofp" if dtype.kind == "b" else "sitofp"
        elif dtype.kind in "bi" and to.kind == "i":
            op = "zext" if dtype.kind == "b" else ("sext" if to.itemsize > dtype.itemsize
                                                 else "trunc")
        elif to.kind == "b":
            zero = constant(0, dtype)
            compare = f"fcmp une {src} {register}, {zero}" if dtype.kind == "f" else \
                f"icmp ne {src} {register}, {zero}"
            return self.emit(compare, to)
        else:  # float to integer: numpy's result for NaN and overflow is not LLVM's
            raise Unsupported(f"{dtype} to {to}")
        return self.emit(f"{op} {src} {register} to {dst}", to)


class Translation:
    """Python statements of a scalar kernel, as typed LLVM values."""

    def __init__(self, types: dict[str, np.dtype], function: Function, load: Callable):
        self.types = types  # the kernel's locals and arguments, by name
        self.values: dict[str, tuple[str, np.dtype]] = {}
        self.f = function
        self.load = load  # reads a value an earlier chunk (or the caller) defined
        self.names: list[str] = []  # what the current statement's `_0`, `_1` ... stand for

    def statement(self, expression, names: list[str]) -> tuple[str, np.dtype]:
        """The value of a statement's `expression` whose placeholders stand for `names`."""
        self.names = names
        return self.expr(expression)

    def value(self, name: str) -> tuple[str, np.dtype]:
        value = self.values.get(name)
        if value is None:
            value = self.values[name] = self.load(name)
        return value

    def expr(self, node) -> tuple[str, np.dtype]:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise Unsupported(ast.dump(node))
        return method(node)

    def expr_Name(self, node):
        if not node.id.startswith("_"):
            raise Unsupported(node.id)
        return self.value(self.names[int(node.id[1:])])

    def expr_Constant(self, node):
        value = node.value
        dtype = np.dtype(bool if isinstance(value, bool) else
                         np.int64 if isinstance(value, int) else np.float64)
        return constant(value, dtype), dtype

    def expr_UnaryOp(self, node):
        value = self.expr(node.operand)
        if not isinstance(node.op, ast.USub):
            raise Unsupported("unary operator")
        t = dtype_type(value[1])
        if value[1].kind == "f":
            return self.f.emit(f"fneg {t} {value[0]}", value[1])
        return self.f.emit(f"sub {t} 0, {value[0]}", value[1])

    def promoted(self, *nodes):
        values = [self.expr(n) for n in nodes]
        dtypes = {d for _, d in values}
        dtype = dtypes.pop() if len(dtypes) == 1 else np.result_type(*dtypes)
        return [self.f.convert(v, dtype) for v in values], dtype

    def expr_BinOp(self, node):
        (a, b), dtype = self.promoted(node.left, node.right)
        table = _FLOAT_BINOPS if dtype.kind == "f" else _INT_BINOPS
        if type(node.op) not in table or dtype.kind == "b":
            raise Unsupported("binary operator")
        return self.f.emit(f"{table[type(node.op)]} {dtype_type(dtype)} {a[0]}, {b[0]}", dtype)

    def expr_Compare(self, node):
        if len(node.ops) != 1:
            raise Unsupported("chained comparison")
        (a, b), dtype = self.promoted(node.left, node.comparators[0])
        if dtype.kind == "f":
            op = f"fcmp {_FLOAT_COMPARE[type(node.ops[0])]}"
        else:
            table = _BOOL_COMPARE if dtype.kind == "b" else _INT_COMPARE
            op = f"icmp {table[type(node.ops[0])]}"
        return self.f.emit(f"{op} {dtype_type(dtype)} {a[0]}, {b[0]}", BOOL)

    def expr_IfExp(self, node):
        test = self.f.convert(self.expr(node.test), BOOL)
        (yes, no), dtype = self.promoted(node.body, node.orelse)
        t = dtype_type(dtype)
        return self.f.emit(f"select i1 {test[0]}, {t} {yes[0]}, {t} {no[0]}", dtype)

    def expr_BoolOp(self, node):
        values = [self.f.convert(self.expr(v), BOOL) for v in node.values]
        op = "and" if isinstance(node.op, ast.And) else "or"
        result = values[0]
        for v in values[1:]:
            result = self.f.emit(f"{op} i1 {result[0]}, {v[0]}", BOOL)
        return result

    def expr_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id in vector_math.LIBM:  # one value: no loop
            return self.libm(vector_math.LIBM[func.id], node.args)
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            raise Unsupported("call")
        module, name = func.value.id, func.attr
        if module == "math" and name == "sqrt":
            x = self.f.convert(self.expr(node.args[0]), F64)
            return self.f.call("llvm.sqrt", [x], F64)
        if module == "math" and name in _LIBM:
            return self.libm(name, node.args)
        if module != "np":
            raise Unsupported(f"{module}.{name}")
        if name in ("bool_",) or name in _TYPES:  # a cast
            return self.f.convert(self.expr(node.args[0]), np.dtype(name))
        return self.ufunc(name, node.args)

    def libm(self, name: str, args: list):
        """libm's double function: numpy's float32 loops round the same value once."""
        return self.f.call(name, [self.f.convert(self.expr(a), F64) for a in args], F64)

    def expr_Attribute(self, node):
        special = {"nan": float("nan"), "inf": float("inf")}
        if isinstance(node.value, ast.Name) and node.value.id == "np" and node.attr in special:
            return constant(special[node.attr], F64), F64
        raise Unsupported(ast.dump(node))

    def ufunc(self, name: str, args: list):
        if name in ("cbrt", "exp2"):
            return self.libm(name, args)
        if name == "arctan2":
            return self.libm("atan2", args)
        values, dtype = self.promoted(*args)
        if dtype.kind != "f":
            raise Unsupported(f"np.{name} on {dtype}")
        if name in _INTRINSICS and len(values) == 1:
            return self.f.call(_INTRINSICS[name], values, dtype)
        if name in _NP_SELECTIONS:  # numba's np.maximum: the first operand on a tie
            a, b = values
            t = dtype_type(dtype)
            picked, _ = self.f.emit(f"fcmp {_NP_SELECTIONS[name]} {t} {a[0]}, {b[0]}", BOOL)
            nan, _ = self.f.emit(f"fcmp uno {t} {a[0]}, {a[0]}", BOOL)
            first, _ = self.f.emit(f"or i1 {picked}, {nan}", BOOL)
            return self.f.emit(f"select i1 {first}, {t} {a[0]}, {t} {b[0]}", dtype)
        if name == "fmod":
            return self.f.emit(f"frem {dtype_type(dtype)} {values[0][0]}, {values[1][0]}",
                               dtype)
        raise Unsupported(f"np.{name}")


_NAME = re.compile(r"\b[at][0-9]+\b")  # fusion's names for a kernel's arguments and locals


def parse(text: str) -> tuple[list[str], list[tuple[str, ast.expr, list[str]]], list[str]]:
    """The argument names, the statements (target, expression, the names it mentions)
    and the returned names of the kernel in the module `text`.

    `ast.parse` of a whole 10,000-operation gradient takes half a second, but a Python
    loop writes few statement *shapes*: each line is parsed once per shape, its names
    replaced by placeholders `_0`, `_1` ... in the order they appear (`_0` the target)."""
    lines = text[text.index("\ndef kernel(") + 1:].split("\n")
    arguments = lines[0][len("def kernel("):-len("):")].split(", ")
    body = list(itertools.takewhile(lambda line: line.startswith("    "), lines[1:]))
    if not body or not body[-1].startswith("    return ("):
        raise Unsupported("not straight-line code")
    shapes: dict[str, ast.expr] = {}
    statements = []
    for line in body[:-1]:
        shape = _NAME.sub("_", line)
        if shape not in shapes:
            shapes[shape] = _parsed_shape(line)
        names = _NAME.findall(line)
        statements.append((names[0], shapes[shape], names))
    return [a for a in arguments if a], statements, _NAME.findall(body[-1])


def _parsed_shape(line: str) -> ast.expr:
    """The expression of the assignment `line`, its names numbered placeholders."""
    count = itertools.count()
    numbered = _NAME.sub(lambda _: f"_{next(count)}", line.strip())
    try:
        (statement,) = ast.parse(numbered).body
    except (SyntaxError, ValueError):
        raise Unsupported(line) from None
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == "_0"):
        raise Unsupported("not straight-line code")
    return statement.value


@attrs.frozen
class Layout:
    """The frame of a kernel: its arguments in the first slots, then the values that
    cross between chunks, then its results."""

    arguments: list[str]
    crossing: list[str]
    returned: list[str]

    @property
    def slots(self) -> dict[str, int]:
        return {name: k for k, name in enumerate([*self.arguments, *self.crossing])}


def translated(text: str, types: dict[str, np.dtype]) -> tuple[Layout, Iterator[str]]:
    """The frame layout of the kernel `text`, and the LLVM IR of its parts, translated
    as they are asked for: modules of `PART` chunks, each a function `@chunk<k>(i64*
    frame)`, then the module of `@kernel(i64* frame)`, which calls them in order."""
    for dtype in set(types.values()):  # (an unsigned integer would load as a bool)
        dtype_type(dtype)  # raises Unsupported for a dtype the translation does not cover
    arguments, statements, returned = parse(text)
    chunks = [statements[i:i + CHUNK] for i in range(0, len(statements), CHUNK)] or [[]]
    layout = Layout(arguments, _crossing(chunks, returned), returned)
    return layout, _parts(chunks, types, layout)


def _crossing(chunks: list, returned: list[str]) -> list[str]:
    """The values a chunk reads (or the kernel returns) that an earlier chunk defines."""
    home: dict[str, int] = {}
    crossing: dict[str, None] = {}
    for k, chunk in enumerate(chunks):
        for name, _, names in chunk:
            crossing.update((n, None) for n in names[1:] if home.get(n, k) < k)
            home[name] = k
    crossing.update((n, None) for n in returned if home.get(n, len(chunks) - 1) < len(chunks) - 1)
    return list(crossing)


def _parts(chunks: list, types: dict[str, np.dtype], layout: Layout) -> Iterator[str]:
    slots, crossing = layout.slots, set(layout.crossing)
    bodies: list[str] = []
    declarations: set = set()
    for k, chunk in enumerate(chunks):
        f = Function(declarations)
        translation = Translation(types, f, lambda name, f=f: load(f, slots[name], types[name]))
        for name, expression, names in chunk:
            value = translation.values[name] = f.convert(
                translation.statement(expression, names), types[name])
            if name in crossing:
                store(f, value, slots[name])
        if k == len(chunks) - 1:
            for j, name in enumerate(layout.returned):
                store(f, translation.value(name), len(slots) + j)
        bodies.append(f"define void @chunk{k}(i64* %frame) noinline {{\n"
                      + "\n".join(f.lines) + "\n  ret void\n}")
        if len(bodies) == PART or k == len(chunks) - 1:
            yield "\n".join(sorted(declarations)) + "\n\n" + "\n\n".join(bodies)
            bodies, declarations = [], set()
    calls = "\n".join(f"  call void @chunk{k}(i64* %frame)" for k in range(len(chunks)))
    yield "\n".join(f"declare void @chunk{k}(i64*)" for k in range(len(chunks))) + \
        f"\n\ndefine void @kernel(i64* %frame) {{\n{calls}\n  ret void\n}}"


def load(f: Function, slot: int, dtype: np.dtype) -> tuple[str, np.dtype]:
    pointer, _ = f.emit(f"getelementptr i64, i64* %frame, i64 {slot}", dtype)
    word, _ = f.emit(f"load i64, i64* {pointer}", np.dtype(np.int64))
    if dtype.kind == "f":
        value = f.emit(f"bitcast i64 {word} to double", F64)
        return f.convert(value, dtype)
    return f.convert((word, np.dtype(np.int64)), dtype) if dtype.kind == "i" else f.emit(
        f"icmp ne i64 {word}, 0", BOOL)


def store(f: Function, value: tuple[str, np.dtype], slot: int) -> None:
    register, dtype = value
    if dtype.kind == "f":
        register, _ = f.convert(value, F64)
        word, _ = f.emit(f"bitcast double {register} to i64", np.dtype(np.int64))
    else:
        word, _ = f.convert(value, np.dtype(np.int64)) if dtype.kind == "i" else f.emit(
            f"zext i1 {register} to i64", np.dtype(np.int64))
    pointer, _ = f.emit(f"getelementptr i64, i64* %frame, i64 {slot}", dtype)
    f.lines.append(f"  store i64 {word}, i64* {pointer}")


_FORMAT = 4  # of a cached kernel file: a JSON header (layout, objects' sizes), the objects
_compile_lock = threading.Lock()
# (text, dtype signature) -> the compiled kernel and its frame layout, of those used last
_native = kernel_cache.Recent()


def object_name(text: str, signature: str) -> str:
    """The name of a kernel's object file: a digest of all that its code depends on, the
    kernel's text and argument types, the translation's own source (a new version's
    translation is never an old one's), LLVM's version, the platform and the file's
    format. Its content is authenticated besides (`kernel_cache.load_sealed`): the name
    says what a file should hold, the signature that this user's inert wrote it."""
    llvm = _llvm()
    return "s" + digest(f"{_translator()}\n{text}\n{signature}\n{llvm.llvm_version_info}"
                        f"{llvm.get_default_triple()}{_FORMAT}") + ".o"


def _native_kernel(text: str, types: dict[str, np.dtype], signature: str):
    """The compiled kernel and its frame layout: the object code an earlier process
    saved in the cache folder, else the translation's, saved there."""
    name = object_name(text, signature)
    saved = _saved(name)
    if saved is None:
        layout, objects = _compiled(text, types)
        header = [layout.arguments, layout.crossing, layout.returned, [len(o) for o in objects]]
        kernel_cache.save_sealed(name, json.dumps(header).encode() + b"\n" + b"".join(objects))
    else:
        layout, objects = saved
    kernel_cache.count_scalar_kernel("compiled" if saved is None else "disk")
    return _load(objects), layout


def _saved(name: str) -> tuple[Layout, list[bytes]] | None:
    """The layout and object code saved as `name`, or None: none is, or not by this
    user's inert for this kernel (`kernel_cache.load_sealed`)."""
    payload = kernel_cache.load_sealed(name)
    if payload is None:
        return None
    try:
        header, code = payload.split(b"\n", 1)
        arguments, crossing, returned, sizes = json.loads(header)
    except (ValueError, TypeError):
        return None
    if sum(sizes) != len(code):
        return None
    ends = list(itertools.accumulate(sizes))
    return Layout(arguments, crossing, returned), [code[end - size:end]
                                                   for size, end in zip(sizes, ends)]


def _compiled(text: str, types: dict[str, np.dtype]) -> tuple[Layout, list[bytes]]:
    """The kernel's layout and object code. LLVM compiles each part in a thread of its
    own while Python translates the next (llvmlite lets go of the interpreter's lock
    while LLVM works): a 10,000-operation chain's gradient compiles 0.3 s sooner."""
    layout, parts = translated(text, types)
    opt = 1 if text.count("\n") <= OPTIMISED_LINES else 0
    with concurrent.futures.ThreadPoolExecutor(1, "inert-llvm") as thread:  # (not kept:
        futures = [thread.submit(_object_code, ir, opt) for ir in parts]  # a fork kills it)
    return layout, [future.result() for future in futures]


@functools.cache
def _translator() -> str:
    """A digest of what translates a kernel's text to LLVM: this module and `vector_math`."""
    return hashlib.sha1(b"".join(pathlib.Path(path).read_bytes()  # (not text: no decoding)
                                 for path in (__file__, vector_math.__file__))).hexdigest()[:20]


def compile_kernel(text: str, types: dict[str, np.dtype],
                   boxes: list[Callable] | None = None) -> Callable:
    """`run(*args) -> list` for the scalar kernel `text` whose locals and arguments
    have `types`, returning numpy scalars of their dtypes, or what each of `boxes`
    makes of its result; raises Unsupported if the translation does not cover it. A
    loop unrolled by Python makes the same kernel once per iteration: it compiles once."""
    with _compile_lock:  # ast.parse is not safe to run in several threads at once
        signature = " ".join(f"{name}:{dtype.char}" for name, dtype in sorted(types.items()))
        key = (text, signature)  # (a dtype's repr takes microseconds: not for 20,000)
        if key in _native:
            kernel_cache.count_scalar_kernel("memory")
        else:
            _native.put(key, _native_kernel(text, types, signature))
        native, layout = _native.get(key)
    base = len(layout.arguments) + len(layout.crossing)  # the results' first slot
    frame_size = base + len(layout.returned)
    arg_kinds = [types[n].kind for n in layout.arguments]
    out_types = [types[n] for n in layout.returned]
    boxes = boxes or [t.type for t in out_types]
    local = threading.local()

    def run(*args):
        frame = getattr(local, "frame", None)
        if frame is None:
            frame = local.frame = np.zeros(frame_size, np.float64)
            local.words = frame.view(np.int64)
            local.address = frame.ctypes.data
        words = local.words
        for k, (a, kind) in enumerate(zip(args, arg_kinds)):
            if kind == "f":
                frame[k] = a
            else:
                words[k] = a
        native(local.address)
        return [box(frame[base + j] if t.kind == "f" else words[base + j])
                for j, (t, box) in enumerate(zip(out_types, boxes))]

    return run


@functools.cache
def _llvm():
    llvm = importlib.import_module("llvmlite.binding")  # with numba, when first needed
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


def _machine(opt: int):
    """LLVM's code generator for this machine's architecture, not its particular
    processor: object code in the cache folder runs wherever the folder is shared."""
    return _llvm().Target.from_default_triple().create_target_machine(opt=opt)


def _object_code(ir: str, opt: int) -> bytes:
    module = _llvm().parse_assembly(ir)
    module.verify()
    return _machine(opt).emit_object(module)


def _load(objects: list[bytes]) -> Callable:
    """`kernel` in the object code `objects`, linked into this process. The function
    holds the engine its code lives in: both go when the last jitted function using
    it and `_native` have let go of it (measured: RSS comes back)."""
    llvm = _llvm()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _machine(0))
    for code in objects:
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    native = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.get_function_address("kernel"))
    native.engine = engine
    return native
