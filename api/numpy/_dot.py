"""numpy's products on inert values: dot, matmul (`@`), tensordot, inner, outer, vdot,
trace and einsum, all lowered to the one contraction primitive `dot_general` plus
reshapes, transposes and sums.

JAX's keywords are accepted: `precision` is checked and ignored (`_precision`), and
`preferred_element_type` is the dtype the product is computed and returned in.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Sequence
from typing import Any

from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ...primitives.linalg.dot_general import dot_general
from ...primitives.shape import structural as st
from ._array import Array
from ._arrays import (
    broadcast_shapes,
    broadcast_to,
    conj_if_complex,
    normalize_axes,
    promote,
    shape_error,
)
from ._precision import check_precision
from ._reductions import sum
from ._shape import diagonal, ravel, reshape, transpose


def _contract(a, b, a_axes, b_axes):
    return dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), ((), ())))


def _operands(name: str, operands, precision, preferred_element_type) -> list:
    """The operands promoted together, or cast to `preferred_element_type`."""
    check_precision(precision, name)
    operands = promote(*operands)
    if preferred_element_type is None:
        return list(operands)
    return [st.convert_element_type(x, preferred_element_type) for x in operands]


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
        preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.dot: the last axis of `a` with the second-to-last of `b` (its only one
    if `b` is 1-d); a scalar operand multiplies.

    Example:
        >>> jnp.dot(np.ones((2, 3)), np.arange(3.0))
        Array([3., 3.])
    """
    a, b = _operands("dot", (a, b), precision, preferred_element_type)
    nda, ndb = get_aval(a).ndim, get_aval(b).ndim
    if nda == 0 or ndb == 0:
        return ew.mul(a, b)
    return _contract(a, b, [nda - 1], [max(ndb - 2, 0)])


def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.matmul: stacks of matrices, with the leading (batch) axes broadcast.

    Example:
        >>> jnp.matmul(np.ones((5, 2, 3)), np.ones((3, 4))).shape
        (5, 2, 4)
    """
    a, b = _operands("matmul", (a, b), precision, preferred_element_type)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if not sa or not sb:
        raise shape_error("matmul: operands must not be scalars (use multiply)")
    if len(sa) == 1 or len(sb) == 1:
        return _contract(a, b, [len(sa) - 1], [max(len(sb) - 2, 0)])
    batch = broadcast_shapes(sa[:-2], sb[:-2], name="matmul")
    a, b = broadcast_to(a, (*batch, *sa[-2:])), broadcast_to(b, (*batch, *sb[-2:]))
    nb = len(batch)
    return dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Sequence[int]] = 2, *,
              precision: Any = None, preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.tensordot: `axes=n` contracts the last n axes of `a` with the first n of
    `b`; a pair of sequences names them."""
    a, b = _operands("tensordot", (a, b), precision, preferred_element_type)
    nda, ndb = get_aval(a).ndim, get_aval(b).ndim
    if isinstance(axes, int):
        return _contract(a, b, range(nda - axes, nda), range(axes))
    a_axes, b_axes = axes
    return _contract(a, b, normalize_axes(a_axes, nda, "tensordot"),
                     normalize_axes(b_axes, ndb, "tensordot"))


def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
          preferred_element_type: DTypeLike | None = None) -> Array:
    a, b = _operands("inner", (a, b), precision, preferred_element_type)
    nda, ndb = get_aval(a).ndim, get_aval(b).ndim
    if nda == 0 or ndb == 0:
        return ew.mul(a, b)
    return _contract(a, b, [nda - 1], [ndb - 1])


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    a, b = promote(a, b)
    return ew.mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """The dot product of the flattened arrays, the first one conjugated (numpy's)."""
    return dot(conj_if_complex(ravel(a)), ravel(b))


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# ---------------------------------------------------------------------------------
# einsum: each operand's repeated labels become diagonals, a label of size 1 where
# another operand's is larger is dropped (broadcasting), labels no one else needs are
# summed away, and the operands are contracted pairwise from the left (labels still
# needed later are batch dimensions of the dot_general, the rest contract).


def einsum(subscripts: str, *operands: ArrayLike, optimize: Any = None, precision: Any = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """numpy.einsum, with explicit (`->`) or implicit output, `...` and size-1 axes
    broadcast as numpy's and JAX's are; also numpy's sublist form `einsum(a, [0, 1],
    b, [1, 2], [0, 2])` (`Ellipsis` allowed). `optimize` is accepted and ignored.

    Example:
        >>> jnp.einsum("ij,j->i", np.eye(2), np.array([1.0, 2.0]))
        Array([1., 2.])
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts, *operands))
    operands = _operands("einsum", operands, precision, preferred_element_type)
    inputs, output = _parse_einsum(subscripts, [get_aval(x).ndim for x in operands])
    terms = _broadcast_labels([_take_diagonals(x, labels) for x, labels in zip(operands, inputs)])
    x, labels = terms[0]
    for i, (y, y_labels) in enumerate(terms[1:], start=1):
        later = output + "".join(lbl for _, lbl in terms[i + 1:])
        x, labels = _sum_unneeded(x, labels, later + y_labels)
        y, y_labels = _sum_unneeded(y, y_labels, later + labels)
        x, labels = _contract_labels(x, labels, y, y_labels, later)
    x, labels = _sum_unneeded(x, labels, output)
    return transpose(x, [labels.index(c) for c in output])


def _from_sublists(args: tuple) -> tuple[str, list]:
    """The subscripts string and operands of the sublist form: integer labels 0-51 are
    letters, `Ellipsis` is `...`."""
    pairs, output = args[:len(args) // 2 * 2], args[len(args) // 2 * 2:]
    operands, sublists = list(pairs[0::2]), pairs[1::2]
    subscripts = ",".join(map(_sublist_labels, sublists))
    if output:
        subscripts += "->" + _sublist_labels(output[0])
    return subscripts, operands


def _sublist_labels(sublist) -> str:
    try:
        return "".join("..." if s is Ellipsis else string.ascii_letters[operator.index(s)]
                       for s in sublist)
    except (TypeError, IndexError):
        raise TypeError(f"einsum: a sublist holds integers 0 to 51 and Ellipsis, got "
                        f"{sublist!r}") from None


def _parse_einsum(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    """Operand and output labels, with each `...` spelled as fresh upper-case labels
    (right-aligned across operands, as broadcasting aligns axes)."""
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, output = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise shape_error(f"einsum: {len(inputs)} operand subscripts for {len(ndims)} "
                          "operands")
    fresh = [c for c in string.ascii_uppercase if c not in subscripts]
    n_ellipsis = max([nd - len(s.replace("...", "")) for s, nd in zip(inputs, ndims)
                      if "..." in s], default=0)
    ellipsis = "".join(fresh[:n_ellipsis])
    inputs = [s.replace("...", ellipsis[n_ellipsis - (nd - len(s.replace("...", ""))):])
              for s, nd in zip(inputs, ndims)]
    for s, nd in zip(inputs, ndims):
        if len(s) != nd:
            raise shape_error(f"einsum: subscripts '{s}' for an operand of dimension {nd}")
    if arrow:
        output = output.replace("...", ellipsis)
        unknown = sorted(set(output) - set("".join(inputs)))
        if unknown or len(set(output)) != len(output):
            raise shape_error(f"einsum: output subscripts '{output}' must be distinct labels "
                              f"of the inputs (unknown: {''.join(unknown) or 'none'})")
        return inputs, output
    counts = "".join(inputs)
    once = sorted(c for c in set(counts) if counts.count(c) == 1 and c not in ellipsis)
    return inputs, ellipsis + "".join(once)


def _take_diagonals(x, labels: str):
    """Repeated labels within one operand (`ii`) select a diagonal."""
    for c in labels:
        if labels.count(c) > 1:
            i = labels.index(c)
            j = labels.index(c, i + 1)
            x = diagonal(x, 0, i, j)
            rest = labels[:i] + labels[i + 1:j] + labels[j + 1:]
            return _take_diagonals(x, rest + c)
    return x, labels


def _broadcast_labels(terms: list) -> list:
    """A label of size 1 in one operand and larger in another broadcasts: its axis is
    squeezed out of the operand, whose values do not vary along it (the transpose
    of that squeeze gives the cotangent back its unit axis, summed by the contraction).
    Two sizes other than 1 for one label are an error."""
    sizes: dict = {}
    for x, labels in terms:
        for c, d in zip(labels, get_aval(x).shape):
            if d != 1 and sizes.setdefault(c, d) != d:
                raise shape_error(f"einsum: label '{c}' has sizes {sizes[c]} and {d}, which "
                                  "do not broadcast")
    out = []
    for x, labels in terms:
        drop = [i for i, (c, d) in enumerate(zip(labels, get_aval(x).shape))
                if d == 1 and sizes.get(c, 1) != 1]
        if drop:
            x, labels = st.squeeze(x, drop), "".join(c for i, c in enumerate(labels)
                                                     if i not in drop)
        out.append((x, labels))
    return out


def _sum_unneeded(x, labels: str, needed: str):
    axes = [i for i, c in enumerate(labels) if c not in needed]
    if not axes:
        return x, labels
    return st.reduce_sum(x, axes), "".join(c for c in labels if c in needed)


def _contract_labels(x, x_labels: str, y, y_labels: str, later: str):
    shared = [c for c in x_labels if c in y_labels]
    batch = [c for c in shared if c in later]
    contracting = [c for c in shared if c not in later]
    out = dot_general(x, y, (
        (tuple(map(x_labels.index, contracting)), tuple(map(y_labels.index, contracting))),
        (tuple(map(x_labels.index, batch)), tuple(map(y_labels.index, batch)))))
    free = [c for c in x_labels + y_labels if c not in shared]
    return out, "".join(batch + free)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The dot product of vectors along `axis` (real values: no conjugation)."""
    x1, x2 = promote(x1, x2)
    return sum(ew.mul(x1, x2), axis=axis)


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix times vector over the last axes, batched over the leading ones."""
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Vector times matrix over the last axes, batched over the leading ones."""
    return einsum("...i,...ij->...j", x1, x2)
