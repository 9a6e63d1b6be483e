"""vmap: every primitive's batching rule against a Python loop, then vmap's API (pytrees,
in_axes/out_axes, errors, Inactive) and its composition with the other transforms.

One table has a case per primitive: one lane's operands and a function applying the
primitive. Each case is vmapped with every operand batched along axis 0, along axis 1
(the last axis for a vector lane), and with each operand in turn unbatched (in_axes
None), and compared with the function applied lane by lane and stacked with numpy.
"""

from __future__ import annotations

import functools
from typing import Callable

import attrs
import numpy as np
import pytest
from harness import assert_allclose, check_grads, check_staged
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp
from inert.core.avals import ShapedArray
from inert.core.trace import ALL_PRIMITIVES
from inert.errors import ConcretizationError
from inert.interpreters.ad import add_any_p, zeros
from inert.interpreters.batching import batch_rules, collective_rules
from inert.primitives import elementwise as ew
from inert.primitives import fft, sorting
from inert.primitives import reductions as rd
from inert.primitives import special as sp
from inert.primitives.control.cond import cond, switch
from inert.primitives.control.scan import scan
from inert.primitives.control.while_loop import fori_loop, while_loop
from inert.primitives.conv import windowed as wd
from inert.primitives.conv.convolution import conv_general_dilated
from inert.primitives.debugging import debug_callback
from inert.primitives.indexing import dynamic_slices as ds
from inert.primitives.indexing import gather_scatter as ix
from inert.primitives.indexing import scatter_extrema as ext
from inert.primitives.linalg import cholesky as chol
from inert.primitives.linalg import dot_general as la
from inert.primitives.linalg import eig as eig_prims
from inert.primitives.linalg import eigh, expm, lu, qr, svd, sylvester
from inert.primitives.random import distributions as rdist
from inert.primitives.random import keys as rk
from inert.primitives.shape import slicing as slc
from inert.primitives.shape import structural as stl
from inert.primitives.state import refs as st_refs

LANES = 3

# ---------------------------------------------------------------------------------
# Operand generators: `domain(*shape)(rng)` is one lane's value


def real(*shape):
    return lambda rng: rng.standard_normal(shape)


def cplx(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    return lambda rng: rng.uniform(-0.9, 0.9, shape)


def prob(*shape):
    return lambda rng: rng.uniform(0.1, 0.9, shape)


def uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


def nonzero(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def spd(n):
    """Symmetric positive definite n x n matrices (and their Cholesky factors)."""
    def make(rng):
        a = rng.standard_normal((n, n))
        return a @ a.T + n * np.eye(n)
    return make


def lower_factor(n):
    return lambda rng: np.linalg.cholesky(spd(n)(rng))


def boolean(*shape):
    return lambda rng: rng.random(shape) < 0.5


def ints(lo, hi, *shape):
    return lambda rng: rng.integers(lo, hi, shape)


def words(*shape):
    """uint32 values: a random key is two (`words(2)`)."""
    return lambda rng: rng.integers(0, 2**32, shape, dtype=np.uint32)


@attrs.frozen
class Case:
    name: str  # the primitive exercised (a suffix after "-" tells cases apart)
    fn: Callable
    operands: tuple  # one generator per operand

    @property
    def primitive(self) -> str:
        return self.name.split("-")[0]

    def lanes(self, rng) -> list[list]:
        return [[g(rng) for g in self.operands] for _ in range(LANES)]


UNARY = [
    ("neg", ew.neg, real), ("sin", ew.sin, real), ("cos", ew.cos, real),
    ("tan", ew.tan, unit), ("asin", ew.asin, unit), ("acos", ew.acos, unit),
    ("atan", ew.atan, real), ("sinh", ew.sinh, real), ("cosh", ew.cosh, real),
    ("tanh", ew.tanh, real), ("asinh", ew.asinh, real),
    ("acosh", ew.acosh, functools.partial(uniform, 1.2, 3.0)), ("atanh", ew.atanh, unit),
    ("exp", ew.exp, real), ("exp2", ew.exp2, real), ("expm1", ew.expm1, real),
    ("log", ew.log, positive), ("log1p", ew.log1p, positive), ("logistic", ew.logistic, real),
    ("sqrt", ew.sqrt, positive), ("rsqrt", ew.rsqrt, positive), ("cbrt", ew.cbrt, real),
    ("square", ew.square, real), ("abs", ew.abs, real),
    ("integer_pow", functools.partial(ew.integer_pow, y=3), real),
    ("sign", ew.sign, real), ("floor", ew.floor, real), ("ceil", ew.ceil, real),
    ("round", ew.round, real), ("is_finite", ew.is_finite, real), ("not", ew.not_, boolean),
    ("stop_gradient", ew.stop_gradient, real),
    ("convert_element_type", functools.partial(stl.convert_element_type, new_dtype=np.float32),
     real),
    ("erf", sp.erf, real), ("erfc", sp.erfc, real), ("erfinv", sp.erfinv, unit),
    ("ndtr", sp.ndtr, real), ("log_ndtr", sp.log_ndtr, real), ("gammaln", sp.gammaln, positive),
    ("digamma", sp.digamma, positive), ("entr", sp.entr, positive), ("logit", sp.logit, prob),
    ("erfcinv", sp.erfcinv, prob), ("ndtri", sp.ndtri, prob), ("gamma", sp.gamma, positive),
    ("rgamma", sp.rgamma, positive), ("gammasgn", sp.gammasgn, real),
    ("loggamma", sp.loggamma, positive), ("erfcx", sp.erfcx, real), ("dawsn", sp.dawsn, real),
    ("j0", sp.j0, real), ("j1", sp.j1, real), ("y0", sp.y0, positive), ("y1", sp.y1, positive),
    ("i0", sp.i0, real), ("i1", sp.i1, real), ("i0e", sp.i0e, real), ("i1e", sp.i1e, real),
    ("spence", sp.spence, positive), ("expi", sp.expi, positive), ("exp1", sp.exp1, positive),
    ("cosm1", sp.cosm1, real), ("sinc", sp.sinc, real),
]

# n-ary elementwise operations broadcast: the first operand has a lower rank
NARY = [
    ("add", ew.add, (real, real)), ("sub", ew.sub, (real, real)), ("mul", ew.mul, (real, real)),
    ("div", ew.div, (real, nonzero)), ("rem", ew.rem, (real, nonzero)),
    ("floor_divide", ew.floor_divide, (real, nonzero)),
    ("pow", ew.pow, (positive, real)), ("atan2", ew.atan2, (real, nonzero)),
    ("max", ew.max, (real, real)), ("min", ew.min, (real, real)),
    ("eq", ew.eq, (real, real)), ("ne", ew.ne, (real, real)), ("lt", ew.lt, (real, real)),
    ("le", ew.le, (real, real)), ("gt", ew.gt, (real, real)), ("ge", ew.ge, (real, real)),
    ("and", ew.and_, (boolean, boolean)), ("or", ew.or_, (boolean, boolean)),
    ("xor", ew.xor, (boolean, boolean)), ("select_n", ew.select_n, (boolean, real, real)),
    ("select_n-3", ew.select_n, (functools.partial(ints, 0, 3), real, real, real)),
    ("clamp", ew.clamp, (functools.partial(uniform, -1.5, -0.5), real,
                         functools.partial(uniform, 0.5, 1.5))),
    ("polygamma", sp.polygamma, (lambda *s: lambda rng: rng.integers(0, 3, s) * 1.0, positive)),
    ("betaln", sp.betaln, (positive, positive)), ("igamma", sp.igamma, (positive, positive)),
    ("igamma_grad_a", sp.igamma_grad_a, (positive, positive)),
    ("igammac", sp.igammac, (positive, positive)),
    ("betainc", sp.betainc, (positive, positive, prob)),
    ("zeta", sp.zeta, (functools.partial(uniform, 1.5, 3.0), positive)),
    ("jv", sp.jv, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("iv", sp.iv, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("kv", sp.kv, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("xlogy", sp.xlogy, (real, positive)), ("xlog1py", sp.xlog1py, (real, positive)),
    ("beta", sp.beta, (positive, positive)), ("poch", sp.poch, (positive, positive)),
    ("binom", sp.binom, (functools.partial(uniform, 3.0, 6.0), positive)),
    ("yv", sp.yv, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("ive", sp.ive, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("kve", sp.kve, (functools.partial(uniform, 0.0, 2.0), positive)),
    ("rel_entr", sp.rel_entr, (positive, positive)), ("kl_div", sp.kl_div, (positive, positive)),
    ("expn", sp.expn, (lambda *s: lambda rng: rng.integers(1, 3, s) * 1.0, positive)),
    ("hyp1f1", sp.hyp1f1, (positive, functools.partial(uniform, 1.5, 3.0), real)),
    ("hyp2f1", sp.hyp2f1, (positive, positive, functools.partial(uniform, 3.0, 4.0),
                           functools.partial(uniform, -0.5, 0.5))),
    ("boxcox", sp.boxcox, (positive, real)), ("boxcox1p", sp.boxcox1p, (positive, real)),
    ("copysign", ew.copysign, (real, real)), ("nextafter", ew.nextafter, (real, real)),
]


def rnn(w, h, xs):
    return scan(lambda h, x: (inp.tanh(w @ h + x), inp.sum(h)), h, xs)


@inert.jit  # staged, so that an unbatched predicate is a traced `cond`, not a Python `if`
def two_branches(p, x):
    return cond(p > 0, lambda x: (inp.sin(x), inp.sum(x)), lambda x: (x * 2.0, 1.0), x)


def doubling_loop(x, n):
    return while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5 + 1.0), (0, x))


@inert.custom_jvp
def _softplus(x):
    return inp.log1p(inp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * ew.logistic(x)


@inert.custom_vjp
def _log_abs(x):
    return inp.log(inp.abs(x))


_log_abs.defvjp(lambda x: (_log_abs(x), (x,)), lambda res, ct: (ct / res[0],))


def _swapped(x, u, i):
    ref = st_refs.new_ref(x)
    return st_refs.swap(ref, u, i, axes=(0,)), st_refs.freeze(ref)


def _swapped_apart(x, u, i, k):
    ref = st_refs.new_ref(x)
    return st_refs.swap(ref, u, i, k, axes=(0, 2)), st_refs.freeze(ref)


def _added(x, u, i):
    ref = st_refs.new_ref(x)
    st_refs.addupdate(ref, u, i, axes=(0,))
    return st_refs.freeze(ref)


CASES = [
    *(Case(name, fn, (domain(2, 3),)) for name, fn, domain in UNARY),
    *(Case(name, fn, (domains[0](3),) + tuple(d(2, 3) for d in domains[1:]))
      for name, fn, domains in NARY),
    Case("add_any", add_any_p.bind, (real(2, 3), real(2, 3))),
    Case("zeros", lambda x: add_any_p.bind(x, zeros(ShapedArray((2, 3), np.float64))),
         (real(2, 3),)),
    Case("broadcast_in_dim", lambda x: stl.broadcast_in_dim(x, (2, 3, 4), (0, 2)),
         (real(2, 1),)),
    Case("reshape", lambda x: stl.reshape(x, (3, 1, 2)), (real(2, 3),)),
    Case("reduce_sum", lambda x: stl.reduce_sum(x, (0, 2)), (real(2, 3, 4),)),
    Case("transpose", lambda x: stl.transpose(x, (2, 0, 1)), (real(2, 3, 4),)),
    Case("squeeze", lambda x: stl.squeeze(x, (1, 3)), (real(2, 1, 3, 1),)),
    Case("expand_dims", lambda x: stl.expand_dims(x, (0, 2)), (real(2, 3),)),
    Case("rev", lambda x: stl.rev(x, (1,)), (real(2, 3),)),
    Case("iota", lambda x: x + stl.iota(np.float64, (2, 3), 1), (real(2, 3),)),
    Case("concatenate", lambda *xs: slc.concatenate(xs, 0), (real(2, 3), real(1, 3), real(4, 3))),
    Case("pad", lambda x, v: slc.pad(x, v, ((1, 2, 0), (0, 1, 1))), (real(2, 3), real())),
    Case("pad-crop", lambda x, v: slc.pad(x, v, ((-1, 2, 1), (2, -1, 0))), (real(3, 4), real())),
    Case("slice", lambda x: slc.slice(x, (1, 0), (3, 5), (1, 2)), (real(4, 5),)),
    Case("reduce_max", lambda x: rd.reduce_max(x, (1,)), (real(2, 3, 4),)),
    Case("reduce_min", lambda x: rd.reduce_min(x, (0, 2)), (real(2, 3, 4),)),
    Case("reduce_prod", lambda x: rd.reduce_prod(x, (1,)), (real(2, 3),)),
    Case("argmax", lambda x: rd.argmax(x, 1), (real(3, 4),)),
    Case("argmin", lambda x: rd.argmin(x, 0), (real(3, 4),)),
    Case("reduce_and", lambda x: rd.reduce_and(x, (1,)), (boolean(3, 4),)),
    Case("reduce_or", lambda x: rd.reduce_or(x, (0,)), (boolean(3, 4),)),
    Case("cumsum", lambda x: rd.cumsum(x, 1), (real(3, 4),)),
    Case("real", ew.real, (cplx(2, 3),)), Case("imag", ew.imag, (cplx(2, 3),)),
    Case("conj", ew.conj, (cplx(2, 3),)), Case("complex", ew.complex, (real(3,), real(2, 3))),
    Case("fft", lambda z: fft.fft(z, "FFT", (3, 4)), (cplx(2, 3, 4),)),
    Case("fft-rfft", lambda x: fft.fft(x, "RFFT", (4,)), (real(2, 4),)),
    Case("fft-irfft", lambda z: fft.fft(z, "IRFFT", (6,)), (cplx(2, 4),)),
    Case("cumprod", lambda x: rd.cumprod(x, 0, reverse=True), (real(3, 4),)),
    Case("cummax", lambda x: rd.cummax(x, 1), (real(3, 4),)),
    Case("cummin", lambda x: rd.cummin(x, 0, reverse=True), (real(3, 4),)),
    Case("sort", lambda x: sorting.sort(x, 1)[0], (real(3, 4),)),
    Case("dot_general", lambda x, y: la.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
         (real(2, 3, 4), real(2, 4, 5))),
    Case("dot_general-matmul", lambda x, y: x @ y, (real(3, 4), real(4, 2))),
    Case("cholesky", chol.cholesky, (spd(3),)),
    Case("triangular_solve", lambda a, b: chol.triangular_solve(a, b, left_side=True, lower=True),
         (lower_factor(3), real(3, 2))),
    Case("triangular_solve-right", lambda a, b: chol.triangular_solve(
        a, b, left_side=False, lower=True, transpose_a=True), (lower_factor(3), real(2, 3))),
    Case("lu", lu.lu, (spd(3),)),
    Case("lu_pivots_to_permutation", lambda p: lu.lu_pivots_to_permutation(p, 4),
         (ints(0, 4, 3),)),
    Case("solve", lu.solve, (spd(3), real(3, 2))),
    Case("qr", qr.qr, (real(4, 3),)),
    Case("eigh", lambda a: eigh.eigh(a)[1], (spd(3),)),
    Case("eigvalsh", eigh.eigvalsh, (spd(3),)),
    Case("svd", lambda a: svd.svd(a, compute_uv=False), (real(4, 3),)),
    Case("expm", expm.expm, (real(3, 3),)),
    Case("expm_frechet", expm.expm_frechet, (real(3, 3), real(3, 3))),
    Case("sqrtm", sylvester.sqrtm, (spd(3),)),
    Case("eig", lambda a: eig_prims.eig(a)[0], (real(3, 3),)),
    Case("debug_callback", lambda x: [debug_callback(lambda v: None, x), x * 2.0][1],
         (real(2, 3),)),
    Case("solve_sylvester", sylvester.solve_sylvester, (spd(3), spd(2), real(3, 2))),
    Case("dynamic_slice", lambda x, i, j: ds.dynamic_slice(x, (i, j), (2, 3)),
         (real(4, 5), ints(-1, 5), ints(-1, 5))),
    Case("dynamic_update_slice", lambda x, u, i, j: ds.dynamic_update_slice(x, u, (i, j)),
         (real(4, 5), real(2, 3), ints(-1, 5), ints(-1, 5))),
    Case("gather", lambda x, i: ix.gather(x, i, axes=(0,)), (real(5, 6), ints(-5, 5, 2, 2))),
    Case("gather-apart", lambda x, i, k: ix.gather(x, i, k, axes=(0, 2)),
         (real(3, 4, 5), ints(0, 3, 2, 1), ints(0, 5, 3))),
    Case("gather-adjacent", lambda x, j, k: ix.gather(x, j, k, axes=(1, 2)),
         (real(3, 4, 5), ints(0, 4, 2, 1), ints(0, 5, 3))),
    Case("scatter_add", lambda x, u, i: ix.scatter_add(x, u, i, axes=(0,)),
         (real(5, 6), real(4, 6), ints(0, 5, 4))),
    Case("scatter_add-apart", lambda x, u, i, k: ix.scatter_add(x, u, i, k, axes=(0, 2)),
         (real(3, 4, 5), real(2, 3, 4), ints(0, 3, 2, 1), ints(0, 5, 3))),
    Case("scatter", lambda x, u, j, k: ix.scatter(x, u, j, k, axes=(1, 2)),
         (real(3, 4, 5), real(3, 2, 3), ints(0, 4, 2, 1), ints(0, 5, 3))),
    Case("scatter_mul", lambda x, u, i: ix.scatter_mul(x, u, i, axes=(0,)),
         (real(5), real(7), ints(0, 5, 7))),
    Case("scatter_min", lambda x, u, i: ext.scatter_min(x, u, i, axes=(0,)),
         (real(5, 2), real(7, 2), ints(0, 5, 7))),
    Case("scatter_max", lambda x, u, j, k: ext.scatter_max(x, u, j, k, axes=(1, 2)),
         (real(3, 4, 5), real(3, 2, 3), ints(0, 4, 2, 1), ints(0, 5, 3))),
    Case("scan", rnn, (real(3, 3), real(3), real(4, 3))),
    Case("cond", two_branches, (real(), real(3))),
    Case("while", doubling_loop, (real(3), ints(0, 4))),
    Case("checkpoint", inert.checkpoint(lambda w, x: inp.tanh(w @ x) * 2.0), (real(3, 3), real(3))),
    Case("name", lambda x: inert.checkpoint_name(inp.sin(x), "s") * 2.0, (real(3),)),
    # a call from Python; a staged one (checkpoint stages its body), whose body is batched
    Case("custom_jvp", lambda x, y: _softplus(x) * y, (real(3), real(3))),
    Case("custom_vjp", lambda x, y: _log_abs(x) * y, (nonzero(3), real(3))),
    Case("custom_jvp_call", inert.checkpoint(lambda x, y: _softplus(x) * y), (real(3), real(3))),
    Case("custom_vjp_call", inert.checkpoint(lambda x, y: _log_abs(x) * y),
         (nonzero(3), real(3))),
    Case("random_bits", lambda k: rk.random_bits(k, (2, 3), np.uint32), (words(2),)),
    Case("random_split", lambda k: rk.random_split(k, (3,)), (words(2),)),
    Case("random_fold_in", rk.random_fold_in, (words(2), words())),
    Case("random_permutation", lambda k: rk.random_permutation(k, 5), (words(2),)),
    Case("random_gamma", rdist.random_gamma, (positive(3), prob(3))),
    Case("random_gamma_grad", rdist.random_gamma_grad, (positive(3), positive(3))),
    Case("random_poisson", rdist.random_poisson, (positive(3), prob(3))),
    Case("random_binomial", rdist.random_binomial, (ints(0, 9, 3), prob(3), prob(3))),
    Case("conv_general_dilated", lambda x, w: conv_general_dilated(x, w, (1, 2), "SAME"),
         (real(2, 2, 5, 4), real(3, 2, 2, 2))),
    Case("conv_general_dilated-groups", lambda x, w: conv_general_dilated(
        x, w, (1,), "VALID", feature_group_count=2), (real(1, 4, 5), real(4, 2, 2))),
    Case("conv_general_dilated-batch_groups", lambda x, w: conv_general_dilated(
        x, w, (1,), "VALID", batch_group_count=2), (real(4, 2, 5), real(4, 2, 2))),
    *(Case(f"reduce_window_{kind}", functools.partial(
        getattr(wd, f"reduce_window_{kind}"), window_dimensions=(2, 2), window_strides=(1, 2),
        padding=((1, 0), (0, 1))), (real(4, 5),)) for kind in ("sum", "max", "min")),
    *(Case(f"reduce_window_{kind}", lambda x, kind=kind: getattr(wd, f"reduce_window_{kind}_p")
           .bind(x, **wd.window_params(1, (3,), (2,), ((1, 1),))), (real(6),))
      for kind in ("argmax", "argmin")),
    Case("window_gather", lambda x, i: wd.window_gather(x, i, **wd.window_params(
        2, (2, 2), (2, 1), ((0, 1), (1, 0)))), (real(4, 3), ints(0, 4, 2, 3))),
    Case("window_scatter_add", lambda u, i: wd.window_scatter_add(
        u, i, operand_shape=(4, 3), **wd.window_params(2, (2, 2), (2, 1), ((0, 1), (1, 0)))),
        (real(2, 3), ints(0, 4, 2, 3))),
    # refs created inside the vmapped function: one value per lane
    Case("new_ref", lambda x: st_refs.freeze(st_refs.new_ref(x)), (real(2, 3),)),
    Case("get", lambda x, i: st_refs.get(st_refs.new_ref(x), i, axes=(0,)),
         (real(5, 3), ints(-5, 5, 2))),
    Case("get-apart", lambda x, i, k: st_refs.get(st_refs.new_ref(x), i, k, axes=(0, 2)),
         (real(3, 4, 5), ints(0, 3, 2, 1), ints(0, 5, 3))),
    Case("swap", _swapped, (real(5, 3), real(2, 3), ints(0, 5, 2))),
    Case("swap-apart", _swapped_apart, (real(3, 4, 5), real(2, 3, 4), ints(0, 3, 2, 1),
                                        ints(0, 5, 3))),
    Case("addupdate", _added, (real(5, 3), real(4, 3), ints(0, 5, 4))),
    Case("freeze", lambda x, y: st_refs.freeze(st_refs.new_ref(x)) * y, (real(3), real(3))),
]


def stack(values, axis):
    return np.stack([np.asarray(v) for v in values], axis)


def loop(f, lanes, in_axes):
    """`f` applied lane by lane (an unbatched operand is lane 0's), stacked on axis 0."""
    outs = [f(*(a if ax is not None else lanes[0][i] for i, (a, ax) in
                enumerate(zip(lane, in_axes)))) for lane in lanes]
    return inert.tree_util.tree_map(lambda *xs: stack(xs, 0), *outs)


def batched_args(lanes, in_axes):
    return [lanes[0][i] if ax is None else stack([lane[i] for lane in lanes], ax)
            for i, ax in enumerate(in_axes)]


def check_batching(f, lanes, in_axes, rtol=1e-12):
    got = inert.vmap(f, in_axes=tuple(in_axes))(*batched_args(lanes, in_axes))
    want = loop(f, lanes, in_axes)
    got_leaves, got_tree = inert.tree_util.tree_flatten(got)
    want_leaves, want_tree = inert.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == w.shape and np.asarray(g).dtype == w.dtype, (
            f"in_axes={in_axes}: got {np.asarray(g).dtype}{np.shape(g)}, want {w.dtype}{w.shape}")
    assert_allclose(got, want, rtol=rtol, atol=1e-13, err_msg=f"in_axes={in_axes}")


def in_axes_variants(lanes) -> list[tuple]:
    """Every operand along axis 0; along axis 1 (the last of a vector lane); and each
    operand in turn the same for every lane, the others along axis 0."""
    ndims = [np.ndim(v) for v in lanes[0]]
    variants = [tuple(0 for _ in ndims), tuple(min(1, n) for n in ndims)]
    if len(ndims) > 1:
        variants += [tuple(None if j == i else 0 for j in range(len(ndims)))
                     for i in range(len(ndims))]
    return variants


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_batching_matches_a_loop(case, rng):
    lanes = case.lanes(rng)
    for in_axes in in_axes_variants(lanes):
        check_batching(case.fn, lanes, in_axes, rtol=1e-10)


@pytest.mark.parametrize("case", CASES[::7], ids=[c.name for c in CASES[::7]])
def test_staged_vmap_evaluates_to_the_same(case, rng):
    """Under make_jaxpr the rules see staging tracers: the jaxpr checks and agrees."""
    check_staged(inert.vmap(case.fn), batched_args(case.lanes(rng), [0] * len(case.operands)),
                 rtol=1e-10, atol=1e-13)


# custom_lin (a custom_vjp function's tangent map) is never evaluated, only transposed:
# its bwd then runs on batched values directly.
NO_BATCHING = {"custom_lin"}
# a budgeted scan's tangent map and its backward pass exist only inside a budgeted
# function's derivative: tests/primitives/control/test_revolve_compose.py batches them
CASES_ELSEWHERE = {"revolve_scan", "revolve_backward"}


# the collectives are batched by the vmap their axis names (`collective_rules`), which
# these cases' unnamed vmap is not: tests/api/test_collectives.py
COLLECTIVES = {"psum", "pmax", "pmin", "all_gather"}


def test_every_primitive_has_a_batching_rule_and_a_case():
    assert not sorted(p.name for p in ALL_PRIMITIVES if p not in batch_rules and
                      p not in collective_rules and p.name not in NO_BATCHING)
    assert sorted(p.name for p in ALL_PRIMITIVES if p in collective_rules) == sorted(
        COLLECTIVES)
    assert {p.name for p in ALL_PRIMITIVES} - NO_BATCHING - COLLECTIVES - CASES_ELSEWHERE <= {
        c.primitive for c in CASES}


def test_vmap_vectorizes_instead_of_looping():
    """The batched program has as many equations whatever the batch size."""
    def f(x, w):
        return inp.sum(inp.tanh(x @ w) ** 2, axis=0)

    def n_eqns(size):
        x, w = np.ones((size, 4, 3)), np.ones((3, 2))
        return len(inert.make_jaxpr(inert.vmap(f, in_axes=(0, None)))(x, w).jaxpr.eqns)

    assert n_eqns(2) == n_eqns(7) <= 6


# ---------------------------------------------------------------------------------
# Property tests: random shapes and batch axes


@st.composite
def broadcasting_lanes(draw):
    """Two operands that broadcast numpy-style, each batched on a random axis or not."""
    shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    other = [draw(st.sampled_from([d, 1])) for d in shape][draw(st.integers(0, len(shape))):]
    shapes = draw(st.permutations([tuple(shape), tuple(other)]))
    axes = [draw(st.one_of(st.none(), st.integers(0, len(s)))) for s in shapes]
    if axes == [None, None]:
        axes[0] = 0
    return shapes, axes


@settings(max_examples=25, deadline=None)
@given(broadcasting_lanes(), st.sampled_from([ew.mul, ew.atan2, ew.select_n]))
def test_broadcasting_ops_with_random_batch_axes(spec, op):
    (sx, sy), in_axes = spec
    rng = np.random.default_rng(0)
    first = (lambda: rng.random(sx) < 0.5) if op is ew.select_n else (
        lambda: rng.standard_normal(sx))
    fn = (lambda w, y: op(w, y, -y)) if op is ew.select_n else op
    lanes = [[first(), rng.standard_normal(sy)] for _ in range(LANES)]
    check_batching(fn, lanes, in_axes)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_shape_operations_with_random_batch_axes(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    axis = data.draw(st.integers(0, len(shape)))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1)))))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    new_dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape)), max_size=2))))
    rng = np.random.default_rng(1)
    lanes = [[rng.standard_normal(shape)] for _ in range(LANES)]
    for f in [lambda x: stl.reduce_sum(x, axes), lambda x: rd.cumsum(x, len(shape) - 1),
              lambda x: stl.transpose(x, perm), lambda x: stl.rev(x, axes),
              lambda x: stl.expand_dims(x, new_dims), lambda x: stl.reshape(x, (x.size,)),
              lambda x: stl.broadcast_in_dim(x, (2, *shape), range(1, 1 + len(shape)))]:
        check_batching(f, lanes, (axis,))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_dot_general_with_random_batch_axes(data):
    rng = np.random.default_rng(2)
    lanes = [[rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2, 5))]
             for _ in range(LANES)]
    in_axes = [data.draw(st.one_of(st.none(), st.integers(0, 3))) for _ in range(2)]
    if in_axes == [None, None]:
        in_axes[1] = 3
    dims = (((2,), (0,)), ((0,), (1,)))
    check_batching(lambda x, y: la.dot_general(x, y, dims), lanes, in_axes, rtol=1e-10)


# ---------------------------------------------------------------------------------
# The API: pytrees, in_axes and out_axes


def test_pytree_arguments_and_in_axes_prefixes(rng):
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    xs = rng.standard_normal((5, 3))

    def layer(p, x):
        return {"y": inp.tanh(x @ p["w"] + p["b"]), "n": inp.sum(x)}

    out = inert.vmap(layer, in_axes=(None, 0))(params, xs)
    np.testing.assert_allclose(out["y"], np.tanh(xs @ params["w"] + params["b"]))
    np.testing.assert_allclose(out["n"], xs.sum(1))
    stacked = {"w": np.stack([params["w"]] * 5), "b": params["b"]}
    out2 = inert.vmap(layer, in_axes=({"w": 0, "b": None}, 0))(stacked, xs)
    assert_allclose(out2, out, rtol=1e-13)
    out3 = inert.vmap(layer, in_axes=[None, 0])(params, xs)  # a list means one per argument
    assert_allclose(out3, out, rtol=1e-13)


def test_out_axes_variants(rng):
    xs = rng.standard_normal((4, 2, 3))

    def f(x):
        return x * 2.0, inp.sum(x), 7.0

    a, b, c = inert.vmap(f, out_axes=(1, 0, None))(xs)
    np.testing.assert_allclose(a, np.moveaxis(xs * 2, 0, 1))
    np.testing.assert_allclose(b, xs.sum((1, 2)))
    assert c == 7.0
    last = inert.vmap(lambda x: x + 1.0, out_axes=-1)(xs)
    np.testing.assert_allclose(last, np.moveaxis(xs + 1, 0, -1))
    constant = inert.vmap(lambda x: np.ones(2), out_axes=1)(xs)  # stacked for every lane
    np.testing.assert_allclose(constant, np.ones((2, 4)))
    in_last = inert.vmap(lambda x: x, in_axes=-1, out_axes=0)(xs)
    np.testing.assert_allclose(in_last, np.moveaxis(xs, -1, 0))


def test_inactive_passes_through_to_an_inner_grad(rng):
    """The marker is transparent to in_axes and put back for the inner grad."""
    xs, c = rng.standard_normal((5, 3)), 2.5
    f = inert.grad(lambda x, c: inp.sum(inp.sin(x) * c))
    per_example = inert.vmap(f, in_axes=(0, None))(xs, inert.Inactive(c))
    np.testing.assert_allclose(per_example, c * np.cos(xs))
    cs = rng.standard_normal(5)
    mapped = inert.vmap(f, in_axes=(0, 0))(xs, inert.Inactive(cs))
    np.testing.assert_allclose(mapped, cs[:, None] * np.cos(xs))
    # the Bessel order has no derivative: only an Inactive order can be passed to grad
    g = inert.grad(lambda z, v: inp.sum(sp.jv(v, z)))
    zs, vs = rng.uniform(0.5, 2, (4, 3)), rng.uniform(0, 2, (4, 3))
    got = inert.vmap(g)(zs, inert.Inactive(vs))
    np.testing.assert_allclose(got, [g(z, inert.Inactive(v)) for z, v in zip(zs, vs)])


def test_inactive_inside_vmap_of_jvp(rng):
    xs, c = rng.standard_normal((4, 3)), rng.standard_normal(3)

    def f(x, c):
        return inert.jvp(lambda x, c: x * c, (x, c), (np.ones(3), None))

    out, tangent = inert.vmap(f, in_axes=(0, None))(xs, inert.Inactive(c))
    np.testing.assert_allclose(out, xs * c)
    np.testing.assert_allclose(tangent, np.broadcast_to(c, (4, 3)))


@pytest.mark.parametrize("call, match", [
    (lambda: inert.vmap(lambda x, y: x + y)(np.ones(3), np.ones(4)),
     r"different sizes:\n  args\[0\] of shape \(3,\) has size 3 along axis 0\n  args\[1\]"),
    (lambda: inert.vmap(lambda p: p["a"] + p["b"])({"a": np.ones(3), "b": np.ones((2, 3))}),
     r"args\[0\]\['b'\] of shape \(2, 3\) has size 2"),
    (lambda: inert.vmap(lambda x: x, in_axes=2)(np.ones((3, 4))),
     r"maps args\[0\] along axis 2, but it has shape \(3, 4\)"),
    (lambda: inert.vmap(lambda x: x)(1.0), r"maps args\[0\] along axis 0, but it has shape \(\)"),
    (lambda: inert.vmap(lambda x, y: x, in_axes=None)(np.ones(3), np.ones(3)),
     "maps no argument"),
    (lambda: inert.vmap(lambda x, y: x, in_axes=(0,))(np.ones(3), np.ones(3)),
     "in_axes has 1 entries, but the function was called with 2"),
    (lambda: inert.vmap(lambda p: p, in_axes=({"a": 0},))({"a": np.ones(3), "b": np.ones(3)}),
     "not a prefix"),
    (lambda: inert.vmap(lambda x: x, out_axes=None)(np.ones(3)), r"out_axes is None for output"),
    (lambda: inert.vmap(lambda x: (x, x), out_axes=(0, 2))(np.ones(3)),
     r"out_axes puts the batch axis of output\[1\] at 2"),
])
def test_bad_axes_are_value_errors_naming_the_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_axis_types_and_python_control_flow():
    with pytest.raises(TypeError, match="in_axes must be ints or None"):
        inert.vmap(lambda x: x, in_axes=1.0)(np.ones(3))

    def branchy(x):
        return x if x > 0 else -x

    with pytest.raises(ConcretizationError, match="under vmap this array bool\\[\\] has one "
                                                  "value per lane"):
        inert.vmap(branchy)(np.ones(3))


# ---------------------------------------------------------------------------------
# Composition with the other transforms


def loss(w, x, y):
    return inp.sum((inp.tanh(x @ w) - y) ** 2)


def test_per_example_gradients_and_gradient_of_vmap(rng):
    w, xs, ys = rng.standard_normal((3, 2)), rng.standard_normal((6, 4, 3)), \
        rng.standard_normal((6, 4, 2))
    per_example = inert.vmap(inert.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = np.stack([inert.grad(loss)(w, x, y) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(per_example, want, rtol=1e-12)

    def total(w):
        return inp.sum(inert.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys))

    np.testing.assert_allclose(inert.grad(total)(w), want.sum(0), rtol=1e-12)
    check_grads(total, (w,), rng, order=2)


def test_jvp_of_vmap_and_vmap_of_jvp(rng):
    w, xs, ys = rng.standard_normal((3, 2)), rng.standard_normal((5, 4, 3)), \
        rng.standard_normal((5, 4, 2))
    t = rng.standard_normal((3, 2))
    batched = inert.vmap(loss, in_axes=(None, 0, 0))
    _, tangent = inert.jvp(lambda w: batched(w, xs, ys), (w,), (t,))
    want = [inert.jvp(functools.partial(loss, x=x, y=y), (w,), (t,))[1] for x, y in zip(xs, ys)]
    np.testing.assert_allclose(tangent, want, rtol=1e-12)
    ts = rng.standard_normal((5, 3, 2))
    _, tangents = inert.vmap(lambda t: inert.jvp(lambda w: loss(w, xs[0], ys[0]), (w,), (t,)))(ts)
    np.testing.assert_allclose(
        tangents, [inert.jvp(lambda w: loss(w, xs[0], ys[0]), (w,), (t,))[1] for t in ts])


@pytest.mark.parametrize("jacobian", [inert.jacfwd, inert.jacrev, inert.hessian])
def test_jacobians_are_vmapped_not_looped(jacobian):
    def n_eqns(n):
        return len(inert.make_jaxpr(jacobian(lambda x: inp.sum(inp.sin(x) ** 2)))(
            np.ones(n)).jaxpr.eqns)

    assert n_eqns(2) == n_eqns(9)


def test_nested_vmap_and_jacobians_inside_vmap(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 6))
    pairwise = inert.vmap(inert.vmap(inp.dot, in_axes=(0, None)), in_axes=(None, 1))
    np.testing.assert_allclose(pairwise(a, b), (a @ b).T, rtol=1e-13)
    xs = rng.standard_normal((3, 4))

    def f(x):
        return inp.sum(inp.sin(x) ** 3)

    np.testing.assert_allclose(inert.vmap(inert.hessian(f))(xs),
                               np.stack([inert.hessian(f)(x) for x in xs]), rtol=1e-12)
    np.testing.assert_allclose(inert.vmap(inert.jacrev(inp.sin))(xs),
                               np.stack([np.diag(np.cos(x)) for x in xs]))


# ---------------------------------------------------------------------------------
# Control flow under vmap, and under vmap of derivatives


def test_vmap_of_scan_batches_carries_by_fixed_point(rng):
    """The carry starts the same for every lane; a batched const makes it batched."""
    def f(c, xs):
        return scan(lambda k, x: (k * c + x, x * 2.0), 0.0, xs)

    lanes = [[rng.standard_normal(), rng.standard_normal(5)] for _ in range(LANES)]
    check_batching(f, lanes, (0, None))
    check_batching(f, lanes, (None, 0))
    check_batching(rnn, [[rng.standard_normal((3, 3)), rng.standard_normal(3),
                          rng.standard_normal((4, 3))] for _ in range(LANES)], (2, None, 1))


def test_vmap_of_grad_through_scan(rng):
    w, h = rng.standard_normal((3, 3)) / 2, rng.standard_normal(3)

    def f(w, h, xs):
        return inp.sum(rnn(w, h, xs)[0])

    lanes = [[w, h, rng.standard_normal((4, 3))] for _ in range(LANES)]
    check_batching(inert.grad(f, argnums=(0, 1)), lanes, (None, None, 0), rtol=1e-10)
    xs = batched_args(lanes, (None, None, 0))[2]
    total = inert.grad(lambda w: inp.sum(inert.vmap(f, in_axes=(None, None, 0))(w, h, xs)))
    np.testing.assert_allclose(total(w), sum(inert.grad(f)(w, h, x) for x in xs), rtol=1e-12)


def test_vmap_of_cond_and_switch(rng):
    def f(i, x):
        return switch(i, [lambda a: a, lambda a: a * 2.0, inp.sin], x)

    lanes = [[rng.integers(-1, 4), rng.standard_normal(2)] for _ in range(5)]
    check_batching(f, lanes, (0, 0))
    check_batching(f, lanes, (0, None))
    check_batching(inert.grad(lambda x: inp.sum(cond(inp.sum(x) > 0, inp.sin, inp.square, x))),
                   [[rng.standard_normal(3)] for _ in range(4)], (0,))


def test_vmap_of_while_and_fori_loop(rng):
    """A predicate per lane runs until the last lane stops, the others left as they were."""
    lanes = [[rng.standard_normal(3), n] for n in (0, 3, 1, 5)]
    check_batching(doubling_loop, lanes, (0, 0))
    check_batching(doubling_loop, lanes, (0, None))
    check_batching(doubling_loop, lanes, (None, 0))

    def summed(x, n):
        return fori_loop(0, n, lambda i, v: v + ix.getitem(x, i), 0.0 * x[0])

    check_batching(summed, [[rng.standard_normal((6, 2)), n] for n in (1, 3, 0, 5)], (0, 0))
    check_batching(summed, [[rng.standard_normal((6, 2)), 4] for _ in range(3)], (1, None))
    tangents = inert.vmap(lambda x, n: inert.jvp(lambda x: doubling_loop(x, n)[1], (x,),
                                                 (np.ones(3),))[1])
    np.testing.assert_allclose(tangents(np.ones((3, 3)), np.array([0, 1, 2])),
                               np.array([[1.0] * 3, [1.5] * 3, [2.25] * 3]))


def test_vmap_of_grad_of_fori_loop(rng):
    def f(x):
        return inp.sum(fori_loop(0, 4, lambda i, v: inp.sin(v) * x, x))

    check_batching(inert.grad(f), [[rng.standard_normal(3)] for _ in range(4)], (0,))
