"""Random keys and their bits: numpy's counter-based Philox generator, keyed by the key.

A key is a `uint32[2]` array (JAX's raw key layout), integer-valued and so inactive by
type. Every primitive here is a pure function of its operands: the key's two words
`(w0, w1)` and a *domain* `d` (a 64-bit word saying what the numbers are for) form the
128-bit Philox-4x64 key `[w0 << 32 | w1, d]` of `numpy.random.Philox`, whose counter
starts at 0; its stream of 64-bit words is read from the start. The domains:

* `random_bits` (d = 0): the first `ceil(n / k)` words, each cut into `k = 64 / width`
  numbers of `width` bits, low bits first, for `n` numbers of a `width`-bit dtype;
* `random_split` (d = 1): word `i` is the new key `i`, high half first;
* `random_fold_in` (d = 2 << 32 | data): the first word is the new key, high half first;
* `random_permutation` (d = 3): `numpy.random.Generator(philox).permutation(n)`.

Distinct domains keep the numbers drawn from a key apart from the keys split off it.
Operands may carry leading batch axes (`key.shape == (*lanes, 2)`): each lane is
computed on its own, which is how `vmap` over a batch of keys gives every lane the
numbers its key gives unbatched. Outputs are integers, so every jvp is zero; none of
these is linear, so none has a transpose.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...interpreters.ad import defjvp_zero
from ...interpreters.batching import batch_rules, batch_size
from ..shape.structural import matchaxis, moveaxis

KEY_DTYPE = np.dtype(np.uint32)
BITS_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_SAMPLE, _SPLIT, _FOLD_IN, _PERMUTATION = 0, 1, 2, 3
_LOW32 = np.uint64(0xFFFFFFFF)


def _philox(key_words: np.ndarray, domain: int) -> np.random.Philox:
    """The generator of one key `(w0, w1)` in one domain."""
    w0, w1 = (int(w) for w in key_words)
    return np.random.Philox(key=np.array([w0 << 32 | w1, domain], np.uint64))


def _words_as_keys(words: np.ndarray) -> np.ndarray:
    """64-bit words as keys: the high half first."""
    return np.stack([words >> np.uint64(32), words & _LOW32], axis=-1).astype(KEY_DTYPE)


def _per_lane(fn, key: np.ndarray, out_shape: tuple, dtype, *others) -> np.ndarray:
    """`fn(key_words, *other_lanes)` for every lane of the key's leading axes."""
    lanes = key.shape[:-1]
    if not lanes:
        return fn(key, *others)
    out = np.empty((*lanes, *out_shape), dtype)
    for index in np.ndindex(*lanes):
        out[index] = fn(key[index], *(o[index] for o in others))
    return out


def _check_key(name: str, key: ShapedArray) -> None:
    if key.dtype != KEY_DTYPE:
        raise DTypeError(f"{name}: a key is a uint32 array, not {key.str_short()}")
    if key.ndim < 1 or key.shape[-1] != 2:
        raise ShapeError(f"{name}: a key has shape (2,) (per lane), not {key.str_short()}")


def _key_batch(prim: Primitive):
    """Batching of a primitive of one key operand: the lanes go first, computed one by
    one by the impl."""

    def rule(vals, dims, **params):
        (key,), (dim,) = vals, dims
        return [prim.bind(moveaxis(key, dim, 0), **params)], [0]

    batch_rules[prim] = rule


# ---------------------------------------------------------------------------------
random_bits_p = Primitive("random_bits", operand_names=("key",))


def random_bits(key, shape: tuple[int, ...], dtype) -> object:
    """`shape` random numbers of the unsigned dtype `dtype` (every bit uniform)."""
    return random_bits_p.bind(key, shape=tuple(int(d) for d in shape), dtype=np.dtype(dtype))


def _lane_bits(key_words, shape, dtype) -> np.ndarray:
    width = dtype.itemsize * 8
    per_word = 64 // width
    n = math.prod(shape)
    words = _philox(key_words, _SAMPLE).random_raw(-(-n // per_word))
    if per_word == 1:
        return words.reshape(shape)
    shifts = np.arange(per_word, dtype=np.uint64) * np.uint64(width)
    mask = np.uint64((1 << width) - 1)
    parts = (words[:, None] >> shifts) & mask
    return parts.reshape(-1)[:n].astype(dtype).reshape(shape)


def random_bits_impl(key, *, shape, dtype):
    return _per_lane(lambda k: _lane_bits(k, shape, dtype), np.asarray(key), shape, dtype)


def random_bits_abstract_eval(key, *, shape, dtype):
    _check_key("random_bits", key)
    if dtype not in BITS_DTYPES:
        raise DTypeError(f"random_bits: dtype must be an unsigned integer type, not {dtype}")
    return ShapedArray((*key.shape[:-1], *shape), dtype)


impl_rules[random_bits_p] = random_bits_impl
abstract_eval_rules[random_bits_p] = random_bits_abstract_eval
defjvp_zero(random_bits_p)
# transpose: none, random bits are not linear in the key
_key_batch(random_bits_p)

# ---------------------------------------------------------------------------------
random_split_p = Primitive("random_split", operand_names=("key",))


def random_split(key, shape: tuple[int, ...]):
    """`shape` new keys (an array of shape `(*shape, 2)`) derived from `key`."""
    return random_split_p.bind(key, shape=tuple(int(d) for d in shape))


def _lane_split(key_words, shape) -> np.ndarray:
    words = _philox(key_words, _SPLIT).random_raw(math.prod(shape))
    return _words_as_keys(words).reshape((*shape, 2))


def random_split_impl(key, *, shape):
    return _per_lane(lambda k: _lane_split(k, shape), np.asarray(key), (*shape, 2), KEY_DTYPE)


def random_split_abstract_eval(key, *, shape):
    _check_key("random_split", key)
    return ShapedArray((*key.shape[:-1], *shape, 2), KEY_DTYPE)


impl_rules[random_split_p] = random_split_impl
abstract_eval_rules[random_split_p] = random_split_abstract_eval
defjvp_zero(random_split_p)
# transpose: none, not linear
_key_batch(random_split_p)

# ---------------------------------------------------------------------------------
random_fold_in_p = Primitive("random_fold_in", operand_names=("key", "data"))


def random_fold_in(key, data):
    """A new key from `key` and the uint32 `data` (one per lane of the key)."""
    return random_fold_in_p.bind(key, data)


def _lane_fold_in(key_words, data) -> np.ndarray:
    words = _philox(key_words, _FOLD_IN << 32 | int(data)).random_raw(1)
    return _words_as_keys(words)[0]


def random_fold_in_impl(key, data):
    return _per_lane(_lane_fold_in, np.asarray(key), (2,), KEY_DTYPE, np.asarray(data))


def random_fold_in_abstract_eval(key, data):
    _check_key("random_fold_in", key)
    if data.dtype != KEY_DTYPE or data.shape != key.shape[:-1]:
        raise DTypeError(f"random_fold_in: data must be uint32 of shape {key.shape[:-1]} "
                         f"(one per key), not {data.str_short()}")
    return ShapedArray(key.shape, KEY_DTYPE)


def random_fold_in_batch(vals, dims):
    size = batch_size(vals, dims)
    return [random_fold_in_p.bind(*(matchaxis(v, d, 0, size) for v, d in zip(vals, dims)))], [0]


impl_rules[random_fold_in_p] = random_fold_in_impl
abstract_eval_rules[random_fold_in_p] = random_fold_in_abstract_eval
defjvp_zero(random_fold_in_p)
# transpose: none, not linear
batch_rules[random_fold_in_p] = random_fold_in_batch

# ---------------------------------------------------------------------------------
random_permutation_p = Primitive("random_permutation", operand_names=("key",))


def random_permutation(key, n: int):
    """A uniformly random permutation of `0, ..., n - 1` (int64)."""
    return random_permutation_p.bind(key, n=int(n))


def _lane_permutation(key_words, n) -> np.ndarray:
    return np.random.Generator(_philox(key_words, _PERMUTATION)).permutation(n)


def random_permutation_impl(key, *, n):
    return _per_lane(lambda k: _lane_permutation(k, n), np.asarray(key), (n,), np.int64)


def random_permutation_abstract_eval(key, *, n):
    _check_key("random_permutation", key)
    return ShapedArray((*key.shape[:-1], n), np.dtype(np.int64))


impl_rules[random_permutation_p] = random_permutation_impl
abstract_eval_rules[random_permutation_p] = random_permutation_abstract_eval
defjvp_zero(random_permutation_p)
# transpose: none, not linear
_key_batch(random_permutation_p)

