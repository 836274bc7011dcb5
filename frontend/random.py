"""tracehlo.random: JAX's stateless, counter-based PRNG, bit for bit.

A key is two uint32 words; every number drawn is the Threefry-2x32 hash of the key and a
counter, built from our own uint32 primitives (add, xor, shifts), as JAX builds its
`threefry2x32`. Counters follow JAX's default `jax_threefry_partitionable=True` mode: the
element at flat index i hashes the 64-bit counter i (high word, low word), and
`random_bits` xors the two output words. The same key gives the same numbers, eagerly
and under jit and vmap; a key is consumed by `split`/`fold_in`, never mutated.

Raw keys (`PRNGKey`) are uint32[2] arrays; typed keys (`key`) are `PRNGKeyArray`s over
uint32[..., 2] data: one pytree leaf to the user, as in JAX, whose data jit, vmap, grad
and the loops trace (pytree.py). Each
sampler, as in JAX, checks its arguments in Python and runs a jit-compiled body with
shape and dtype static (one compile per signature, eagerly too).
"""
import math as _math

import numpy as _np
from jax.dtypes import TypePromotionError as _TypePromotionError
from jax.dtypes import float0 as _float0

from . import dtypes as _dtypes
from . import lax as _lax
from . import numpy as _tnp
from . import pytree as _pytree
from .ad import stop_gradient as _stop_gradient
from .custom_derivatives import custom_jvp as _custom_jvp
from .api import jit as _jit
from .batching import vmap as _vmap
from .nn import softmax as _softmax
from .core import ConcretizationError as _ConcretizationError
from .core import Tracer as _Tracer
from .core import at_user_line as _at_user_line
from .core import known_value as _known_value
from .core import type_of as _type_of
from .numpy._indexing import getitem as _getitem
from .numpy._util import _inexact, _operand, _promote, _promote_no_broadcast
from .numpy import linalg as _linalg

__all__ = ["PRNGKey", "PRNGKeyArray", "ball", "bernoulli", "beta", "binomial", "bits",
           "categorical", "cauchy", "chisquare", "choice", "clone", "dirichlet",
           "double_sided_maxwell", "exponential", "f", "fold_in", "gamma", "generalized_normal",
           "geometric", "gumbel", "key", "key_data", "key_dtype", "key_impl", "laplace",
           "loggamma", "logistic", "lognormal", "maxwell", "multinomial", "multivariate_normal",
           "normal", "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint", "rayleigh",
           "split", "t", "triangular", "truncated_normal", "uniform", "wald", "weibull_min",
           "wrap_key_data"]

_UINT = {8: _np.dtype(_np.uint8), 16: _np.dtype(_np.uint16), 32: _np.dtype(_np.uint32),
         64: _np.dtype(_np.uint64)}


# ---------------------------------------------------------------- keys

class PRNGKeyArray:
    """An array of typed keys (JAX's random.key): shape `data.shape[:-1]`, each key the
    last axis's two uint32 words. A pytree leaf, opened to its data by our transforms."""
    __slots__ = ("_data",)
    dtype = "key<fry>"

    def __init__(self, data):
        self._data = data  # no checks: pytree unflattening passes any leaf

    shape = property(lambda self: _type_of(self._data).shape[:-1])
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: _math.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError(_at_user_line("len() of a single key"))
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        """Indexes the key axes; the word axis always stays whole."""
        index = index if isinstance(index, tuple) else (index,)
        return PRNGKeyArray(_getitem(self._data, index + (slice(None),)))

    def reshape(self, *shape):
        """The keys in a new shape (one tuple, or the sizes; -1 inferred), words whole."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return PRNGKeyArray(_tnp.reshape(self._data, (*shape, 2)))

    def __repr__(self):
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._data}"


def _remake_key(data):
    """Keys over transformed data; over a float0 tangent or cotangent, as in JAX, a float0
    array of the keys' shape (keys are not differentiable)."""
    if getattr(data, "dtype", None) == _float0:
        return _np.zeros(_np.shape(data)[:-1], _float0)
    return PRNGKeyArray(data)


_pytree.register_opaque(PRNGKeyArray, lambda k: k._data, _remake_key)


def _is_uint32_key_data(t) -> bool:
    return t.ndim >= 1 and t.shape[-1] == 2 and t.dtype == _np.uint32


def _check_key(name: str, key, allow_batched=False):
    """(the key's uint32[..., 2] data, whether it was a typed key), with JAX's errors."""
    typed = isinstance(key, PRNGKeyArray)
    data = key._data if typed else key
    if not typed:
        try:
            t = _type_of(data)
        except TypeError:
            raise TypeError(_at_user_line(f"unexpected PRNG key type {type(key)}")) from None
        if not _is_uint32_key_data(t):
            raise TypeError(_at_user_line(
                f"JAX encountered invalid PRNG key data: expected key_data of dtype uint32 "
                f"and shape (..., 2); got {t}"))
        data = _tnp.asarray(data)
    shape = _type_of(data).shape[:-1]
    if shape and not allow_batched:
        raise ValueError(_at_user_line(
            f"{name} accepts a single key, but was given a key array of shape {shape} != (). "
            "Use tracehlo.vmap for batching."))
    return data, typed


def _wrap(data, typed: bool):
    return PRNGKeyArray(data) if typed else data


def _check_seed(ctor: str, seed):
    """The key words of an integer seed, with JAX's errors for anything else."""
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(_at_user_line(f"{ctor} accepts a scalar seed, but was given a PRNG key."))
    if _tnp.ndim(seed):
        raise TypeError(_at_user_line(
            f"{ctor} accepts a scalar seed, but was given an array of shape "
            f"{_tnp.shape(seed)} != (). Use tracehlo.vmap for batching"))
    if isinstance(seed, bool) or not isinstance(seed, int) and \
            _type_of(seed).dtype.kind not in "iu":
        raise TypeError(_at_user_line(f"PRNG key seed must be an integer; got {seed!r}"))
    return _seed_words(seed)


def _seed_words(seed):
    """(high, low) words: the 64-bit pattern of a 64-bit seed, the low 32 bits
    (sign-extended) of a narrower one, as JAX's threefry_seed. A Python int is an int64
    seed, narrowed to int32 without x64 as JAX narrows it. A seed known on the host
    gives host words; a traced one, words computed in the program."""
    value = _np.asarray(_np.int64(seed)).astype(_dtypes.canonicalize(_np.int64)) if \
        isinstance(seed, int) else _known_value(seed)
    if value is not None:
        bits = int(value) % 2 ** 64
        high = bits >> 32 if value.dtype.itemsize == 8 else 0
        return _tnp.asarray(_np.array([high, bits % 2 ** 32], _np.uint32))
    seed = _tnp.asarray(seed)
    high = (_lax.convert_element_type(_lax.shift_right_logical(seed, 32), _np.uint32)
            if _type_of(seed).dtype.itemsize == 8 else _tnp.zeros((), _np.uint32))
    return _tnp.stack([high, _lax.convert_element_type(seed, _np.uint32)])


def PRNGKey(seed):
    """A raw key: uint32[2] holding the seed's bits (JAX's random.PRNGKey)."""
    return _check_seed("PRNGKey", seed)


def key(seed):
    """A typed key (JAX's random.key) for an integer seed."""
    return PRNGKeyArray(_check_seed("key", seed))


def key_data(keys):
    """The uint32[..., 2] words under typed (or raw) keys."""
    return _check_key("key_data", keys, allow_batched=True)[0]


def wrap_key_data(key_bits_array):
    """Typed keys over uint32[..., 2] words."""
    t = _type_of(key_bits_array)
    if not _is_uint32_key_data(t):
        raise TypeError(_at_user_line(
            "JAX encountered invalid PRNG key data: expected key_data of dtype uint32 and "
            f"shape (..., 2); got {t}"))
    return PRNGKeyArray(_tnp.asarray(key_bits_array))


def clone(key):
    """The key itself: JAX's clone marks a key for reuse under its key-reuse checker,
    which tracehlo does not have."""
    return key


def key_impl(keys):
    """The name of the keys' PRNG implementation: Threefry-2x32, the only one here."""
    _check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


# JAX's PRNG implementations, of which tracehlo has Threefry-2x32
_JAX_PRNG_IMPLS = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg",
                   "threefry4x32")


def key_dtype(impl_spec=None):
    """The dtype of typed keys (a typed key's .dtype) of an implementation."""
    if impl_spec is not None and not isinstance(impl_spec, str):
        raise TypeError(_at_user_line(
            f"unrecognized type {type(impl_spec)} for specifying PRNG implementation."))
    if impl_spec in (None, "threefry2x32", PRNGKeyArray.dtype):
        return PRNGKeyArray.dtype
    if impl_spec in _JAX_PRNG_IMPLS:
        raise NotImplementedError(_at_user_line(
            f'PRNG implementation "{impl_spec}": only "threefry2x32" is supported'))
    names = ", ".join(f'"{name}"' for name in _JAX_PRNG_IMPLS)
    raise ValueError(_at_user_line(
        f'unrecognized PRNG implementation "{impl_spec}". Did you mean one of: {names}?'))


# ---------------------------------------------------------------- Threefry-2x32

def _eager_program(fn, static_argnums=(), fusion="xla"):
    """`fn` jit-compiled for calls outside any trace, with XLA's own fusion, as eager
    ops are compiled: XLA fuses as it does for JAX, so the bits are JAX's even where
    they depend on fusion (FMA contraction, excess f16 precision, CHLO decompositions).
    Inside a trace the call is one pjit equation, compiled with the caller's program."""
    return _jit(fn, static_argnums=static_argnums, fusion=fusion)


def _int_dtype(dtype, error, message: str):
    """`dtype` canonical (the default integer one if None); `error(message)` at the
    user's line, `{dtype}` formatted in, if it is not an integer dtype (each sampler
    raises JAX's own type and words)."""
    dtype = _dtypes.canonicalize(_np.int64 if dtype is None else dtype)
    if not _dtypes.is_int(dtype):
        raise error(_at_user_line(message.format(dtype=dtype)))
    return dtype


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(x, d):
    """x rotated left by d bits (a uint32 amount, JAX's rotate_left)."""
    return _lax.bitwise_or(_lax.shift_left(x, d), _lax.shift_right_logical(
        x, _lax.sub(_np.uint32(32), d)))


def _threefry_rounds(x1, x2, rotations):
    for k in range(4):
        x1 = _lax.add(x1, x2)
        x2 = _lax.bitwise_xor(x1, _rotate_left(x2, _getitem(rotations, k)))
    return x1, x2


def _threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 block cipher (20 rounds) of counters (x1, x2) under key (k1, k2):
    uint32 words, the keys rank 0, the counters any one shape. Five blocks of four
    rounds in a fori_loop, as JAX lowers it for CPU: the random bits then leave a loop
    in our program as in JAX's jitted one, so that the float math on them fuses alike (which
    decides where XLA contracts a multiply and an add into one FMA, so the bits)."""
    ks = (k1, k2, _lax.bitwise_xor(_lax.bitwise_xor(k1, k2), _np.uint32(0x1BD11BDA)))
    x = (_lax.add(x1, ks[0]), _lax.add(x2, ks[1]))

    def block(i, state):
        x, ks, rotations = state
        x1, x2 = _threefry_rounds(*x, rotations[0])
        step = _lax.convert_element_type(_lax.add(i, 1), _np.uint32)
        x = (_lax.add(x1, ks[0]), _lax.add(_lax.add(x2, ks[1]), step))
        return x, ks[1:] + ks[:1], rotations[1:] + rotations[:1]
    rotations = tuple(_np.array(r, _np.uint32) for r in _ROTATIONS)
    x, _, _ = _lax.fori_loop(0, 5, block, (x, ks[1:] + ks[:1], rotations))
    return x


def _halves(x, shape, parts=2):
    """The parts of x along its first axis (of size `parts`), each of `shape`."""
    return [_lax.reshape(_lax.slice_in_dim(x, i, i + 1), shape) for i in range(parts)]


def _words(data):
    """A key's two words as rank-0 uint32 values."""
    return _halves(data, ())


def _counters(shape):
    """The 64-bit flat index of each element of `shape`, as (high, low) uint32 words
    (JAX's iota_2x32_shape). Indices stay below 2**32 here: arrays that large do not fit."""
    size = _math.prod(shape)
    if size >= 2 ** 32:
        raise NotImplementedError(_at_user_line(
            f"random numbers for {size} elements: at most 2**32 - 1 are supported"))
    low = _lax.reshape(_lax.iota(_np.uint32, size), shape) if shape else _tnp.zeros(
        (), _np.uint32)
    return _tnp.zeros(shape, _np.uint32), low


def _hash_counters(data, shape):
    return _threefry2x32(*_words(data), *_counters(shape))


def _random_bits(data, bit_width: int, shape):
    """Uniform bits of one key: uint{bit_width}[shape] (JAX's partitionable random_bits)."""
    hi, lo = _hash_counters(data, shape)
    if bit_width == 64:
        hi, lo = (_lax.convert_element_type(w, _np.uint64) for w in (hi, lo))
        return _lax.bitwise_or(_lax.shift_left(hi, 32), lo)
    bits = _lax.bitwise_xor(hi, lo)
    return bits if bit_width == 32 else _lax.convert_element_type(bits, _UINT[bit_width])


def _split(data, shape):
    hi, lo = _hash_counters(data, shape)
    return _tnp.stack([hi, lo], axis=-1)


def _two_keys(data):
    """split(key) inside a sampler: two uint32[2] keys."""
    return _halves(_split(data, (2,)), (2,))


def _fold_in(data, message):
    hi, lo = _threefry2x32(*_words(data), _tnp.zeros((), _np.uint32), message)
    return _tnp.stack([hi, lo])


_split_jit = _eager_program(_split, static_argnums=1)
_fold_in_jit = _eager_program(_fold_in)
_bits_jit = _eager_program(_random_bits, static_argnums=(1, 2))


def _shape_arg(name, shape):
    try:
        shape = (shape,) if _np.ndim(shape) == 0 else tuple(shape)
        shape = tuple(int(_np.asarray(d).item()) if not isinstance(d, int) else d
                      for d in shape)
    except (TypeError, ValueError):
        raise TypeError(_at_user_line(
            f"{name}: shape must be a tuple of nonnegative integers, got {shape!r}")) from None
    if any(d < 0 for d in shape):
        raise TypeError(_at_user_line(
            f"{name}: shape must be a tuple of nonnegative integers, got {shape}"))
    return shape


def split(key, num=2):
    """`num` (an int, or a shape) new keys from one, along new leading axes."""
    data, typed = _check_key("split", key)
    return _wrap(_split_jit(data, _shape_arg("split", num)), typed)


def fold_in(key, data):
    """A new key from a key and a 32-bit integer."""
    words, typed = _check_key("fold_in", key)
    if _tnp.ndim(data):
        raise TypeError(_at_user_line(
            f"fold_in accepts a scalar, but was given an array of shape {_tnp.shape(data)} "
            "!= (). Use tracehlo.vmap for batching."))
    return _wrap(_fold_in_jit(words, _tnp.asarray(data, _np.uint32)), typed)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32, or uint64 with x64)."""
    data, _ = _check_key("bits", key)
    dtype = _dtypes.canonicalize(_np.uint64 if dtype is None else dtype)
    if not _dtypes.is_unsigned(dtype):
        raise ValueError(_at_user_line(
            f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}"))
    return _bits_jit(data, dtype.itemsize * 8, _shape_arg("bits", shape))


# ---------------------------------------------------------------- samplers

def _float_dtype(name: str, dtype, kinds="f"):
    dtype = _dtypes.canonicalize(_np.float64 if dtype is None else dtype)
    if not (_dtypes.is_float(dtype) or "c" in kinds and _dtypes.is_complex(dtype)):
        what = "a float or complex" if "c" in kinds else "a float"
        raise ValueError(_at_user_line(
            f"dtype argument to `{name}` must be {what} dtype, got {dtype}"))
    return dtype


def _broadcast(*xs):
    """Same-dtype arrays broadcast to one shape (lax ops then take them)."""
    shape = _np.broadcast_shapes(*[_tnp.shape(x) for x in xs])
    return [_tnp.broadcast_to(x, shape) for x in xs]


def _uniform_body(data, minval, maxval, shape, dtype):
    """Floats in [minval, maxval): random mantissa bits under the exponent of 1.0 give
    [1, 2); minus 1, scaled and shifted (JAX's _uniform)."""
    finfo = _dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = nbits if nmant >= 8 else 8  # bfloat16: 8 random bits
    uint = _UINT[nbits]
    random = _lax.convert_element_type(_random_bits(data, rng_bits, shape), uint)
    float_bits = _lax.bitwise_or(_lax.shift_right_logical(random, rng_bits - nmant),
                                 int(_np.array(1.0, dtype).view(uint)))
    floats = _lax.sub(_lax.bitcast_convert_type(float_bits, dtype), 1.0)
    minval = _lax.convert_element_type(minval, dtype)
    maxval = _lax.convert_element_type(maxval, dtype)
    scaled = _tnp.add(_tnp.multiply(floats, _tnp.subtract(maxval, minval)), minval)
    return _lax.max(*_broadcast(minval, scaled))


def _broadcast_shape(*shapes):
    """NumPy's broadcast of these shapes, or None where they do not broadcast."""
    try:
        return _np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def _unit_uniform(data, shape, dtype):
    return _uniform_body(data, _np.array(0, dtype), _np.array(1, dtype), shape, dtype)


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        full = _broadcast_shape(shape, *param_shapes)
        if full != shape:
            raise ValueError(_at_user_line(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                "and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {full} for shape argument {shape}."))


_uniform_jit = _eager_program(_uniform_body, static_argnums=(3, 4))


def _param(x):
    """A distribution parameter as an array: a Python scalar weakly typed, as in JAX."""
    return x if isinstance(x, _Tracer) else _tnp.asarray(x)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Floats uniform in [minval, maxval)."""
    data, _ = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _shape_arg("uniform", shape)
    minval, maxval = _param(minval), _param(maxval)
    for bound in (minval, maxval):
        if _broadcast_shape(shape, _tnp.shape(bound)) != shape:
            raise TypeError(_at_user_line(
                f"uniform: minval and maxval must broadcast to the shape {shape}, got one of "
                f"shape {_tnp.shape(bound)}"))
    return _uniform_jit(data, minval, maxval, shape, dtype)


def _normal_real(data, shape, dtype):
    """sqrt(2) erfinv(u) for u uniform in (-1, 1)."""
    lo = _np.nextafter(_np.array(-1.0, dtype), _np.array(0.0, dtype))
    u = _uniform_body(data, lo, _np.array(1.0, dtype), shape, dtype)
    return _lax.mul(_np.array(_np.sqrt(2), dtype), _lax.erf_inv(u))


def _normal_body(data, shape, dtype):
    if not _dtypes.is_complex(dtype):
        return _normal_real(data, shape, dtype)
    real = _np.finfo(dtype).dtype
    key_re, key_im = _two_keys(data)
    re, im = (_lax.convert_element_type(_normal_real(k, shape, real), dtype)
              for k in (key_re, key_im))
    return _tnp.divide(_tnp.add(re, _tnp.multiply(1j, im)), _np.array(_np.sqrt(2), dtype))


_normal_jit = _eager_program(_normal_body, static_argnums=(1, 2))


def normal(key, shape=(), dtype=None):
    """Standard normal floats (complex: real and imaginary parts of variance 1/2)."""
    data, _ = _check_key("normal", key)
    return _normal_jit(data, _shape_arg("normal", shape),
                       _float_dtype("normal", dtype, kinds="fc"))


def _bernoulli_body(data, p, shape, mode):
    dtype = _type_of(p).dtype
    if mode == "high":  # a second uniform refines the first below its resolution
        u1, u2 = _halves(_unit_uniform(data, (2, *shape), dtype), shape)
        u2 = _tnp.multiply(u2, 2.0 ** -_dtypes.finfo(dtype).nmant)
        return _tnp.less(u2, _tnp.subtract(p, u1))
    return _tnp.less(_unit_uniform(data, shape, dtype), p)


_bernoulli_jit = _eager_program(_bernoulli_body, static_argnums=(2, 3))


def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans, True with probability p (of p's shape unless `shape` is given)."""
    if mode not in ("high", "low"):
        raise ValueError(_at_user_line(f"got mode={mode!r}, expected 'high' or 'low'"))
    data, _ = _check_key("bernoulli", key)
    p = _param(p)
    if not _dtypes.is_float(_type_of(p).dtype):
        raise TypeError(_at_user_line(
            f"bernoulli probability `p` must have a floating dtype, got {_type_of(p).dtype}."))
    if shape is None:
        shape = _tnp.shape(p)
    else:
        shape = _shape_arg("bernoulli", shape)
        _check_shape("bernoulli", shape, _tnp.shape(p))
    return _bernoulli_jit(data, p, shape, mode)


def _clip_to(val, dtype):
    """Integer `val` converted to integer `dtype`, clipped to its range, not wrapped."""
    have, want = _dtypes.iinfo(_type_of(val).dtype), _dtypes.iinfo(dtype)
    lo, hi = max(want.min, have.min), min(want.max, have.max)
    return _lax.convert_element_type(_tnp.clip(val, _tnp.asarray(lo, have.dtype),
                                               _tnp.asarray(hi, have.dtype)), dtype)


def _randint_body(data, minval, maxval, shape, dtype):
    """minval + (a 2*nbits-bit random number mod span), as JAX: the modulus of the high
    word is carried by 2**nbits mod span (known to bias spans that are no power of 2)."""
    if not _dtypes.is_int(_type_of(minval).dtype):
        minval = _lax.convert_element_type(minval, _dtypes.default_int())
    if not _dtypes.is_int(_type_of(maxval).dtype):
        maxval = _lax.convert_element_type(maxval, _dtypes.default_int())
    info = _dtypes.iinfo(dtype)
    beyond = _tnp.greater(maxval, _clip_to(_tnp.asarray(info.max, dtype), _type_of(maxval).dtype))
    minval, maxval = _clip_to(minval, dtype), _clip_to(maxval, dtype)
    nbits = info.bits
    k1, k2 = _two_keys(data)
    higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    unsigned = _UINT[nbits]
    span = _lax.convert_element_type(_tnp.subtract(maxval, minval), unsigned)
    span = _tnp.where(_tnp.less_equal(maxval, minval), _tnp.ones_like(span), span)
    span = _tnp.where(_tnp.logical_and(beyond, _tnp.greater(maxval, minval)),
                      _lax.add(span, 1), span)
    multiplier = _lax.rem(_tnp.full(_tnp.shape(span), 2 ** (nbits // 2), unsigned), span)
    multiplier = _lax.rem(_lax.mul(multiplier, multiplier), span)
    higher, lower, span, multiplier = _broadcast(higher, lower, span, multiplier)
    offset = _lax.add(_lax.mul(_lax.rem(higher, span), multiplier), _lax.rem(lower, span))
    offset = _lax.rem(offset, span)
    return _tnp.add(minval, _lax.convert_element_type(offset, dtype))


_randint_jit = _eager_program(_randint_body, static_argnums=(3, 4))


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in [minval, maxval) (int8/int16 are drawn as int32 and narrowed)."""
    data, _ = _check_key("randint", key)
    dtype = _int_dtype(dtype, TypeError, "randint only accepts integer dtypes, got {dtype}")
    shape = _shape_arg("randint", shape)
    minval, maxval = _param(minval), _param(maxval)
    _check_shape("randint", shape, _tnp.shape(minval), _tnp.shape(maxval))
    info = _dtypes.iinfo(dtype)
    if info.bits >= 32:
        return _randint_jit(data, minval, maxval, shape, dtype)
    minval = _tnp.clip(_tnp.astype(minval, _np.int32), int(info.min), int(info.max))
    maxval = _tnp.clip(_tnp.astype(maxval, _np.int32), int(info.min), int(info.max) + 1)
    return _tnp.astype(_randint_jit(data, minval, maxval, shape, _np.dtype(_np.int32)), dtype)


def _exponential_body(data, shape, dtype):
    u = _unit_uniform(data, shape, dtype)
    return _lax.neg(_lax.log1p(_lax.neg(u)))  # log(1 - u): u = 0 is fine, u = 1 never


_exponential_jit = _eager_program(_exponential_body, static_argnums=(1, 2))


def exponential(key, shape=(), dtype=None):
    """Exponentially distributed floats (rate 1)."""
    data, _ = _check_key("exponential", key)
    return _exponential_jit(data, _shape_arg("exponential", shape),
                            _float_dtype("exponential", dtype))


def _truncated_normal_body(data, lower, upper, shape, dtype):
    """Inverse-CDF sampling between erf(lower/√2) and erf(upper/√2), clipped to the open
    interval (rounding may land on a bound)."""
    sqrt2 = _np.array(_np.sqrt(2), dtype)
    lower = _lax.convert_element_type(lower, dtype)
    upper = _lax.convert_element_type(upper, dtype)
    a, b = (_lax.erf(_tnp.divide(bound, sqrt2)) for bound in (lower, upper))
    u = _uniform_body(data, a, b, shape, dtype)
    out = _tnp.multiply(sqrt2, _lax.erf_inv(u))
    return _tnp.clip(out, _lax.nextafter(lower, _np.array(_np.inf, dtype)),
                     _lax.nextafter(upper, _np.array(-_np.inf, dtype)))


_truncated_normal_jit = _eager_program(_truncated_normal_body, static_argnums=(3, 4))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats conditioned on lower < x < upper."""
    data, _ = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    lower, upper = _param(lower), _param(upper)
    if shape is None:
        shape = _np.broadcast_shapes(_tnp.shape(lower), _tnp.shape(upper))
    else:
        shape = _shape_arg("truncated_normal", shape)
        _check_shape("truncated_normal", shape, _tnp.shape(lower), _tnp.shape(upper))
    return _truncated_normal_jit(data, lower, upper, shape, dtype)


def _gumbel_body(data, shape, dtype, mode):
    """-log(-log(u)); mode "high" fills in the low end of u with a second uniform."""
    finfo = _dtypes.finfo(dtype)
    if mode == "high":
        high, low = _halves(_unit_uniform(data, (2, *shape), dtype), shape)
        x = _tnp.where(_tnp.greater_equal(high, 0.5), high, _tnp.add(
            _tnp.add(high, _tnp.multiply(2.0 ** -finfo.nmant, low)), float(finfo.tiny)))
        return _tnp.negative(_tnp.log(_tnp.negative(_tnp.log1p(_tnp.negative(x)))))
    u = _uniform_body(data, _np.array(finfo.tiny, dtype), _np.array(1, dtype), shape, dtype)
    return _tnp.negative(_tnp.log(_tnp.negative(_tnp.log(u))))


_gumbel_jit = _eager_program(_gumbel_body, static_argnums=(1, 2, 3))


def _gumbel_mode(mode):
    mode = "low" if mode is None else mode
    if mode == "highest":
        raise NotImplementedError(_at_user_line("gumbel mode='highest' is not supported"))
    if mode not in ("high", "low"):
        raise ValueError(_at_user_line(f"Must provide valid mode for gumbel got: {mode}"))
    return mode


def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel-distributed floats (mode "low" by default, as JAX's config default)."""
    data, _ = _check_key("gumbel", key)
    return _gumbel_jit(data, _shape_arg("gumbel", shape), _float_dtype("gumbel", dtype),
                       _gumbel_mode(mode))


def _top_k_indices(x, k: int):
    """Indices of the k largest entries along the last axis, largest first, ties in
    index order (lax.top_k's)."""
    order = _tnp.argsort(x, axis=-1, descending=True)
    return _lax.slice_in_dim(order, 0, k, axis=_tnp.ndim(x) - 1)


def _categorical_body(data, logits, axis, shape, replace, mode):
    ndim = _tnp.ndim(logits)
    batch_shape = tuple(n for i, n in enumerate(_tnp.shape(logits)) if i != axis)
    prefix = shape[:len(shape) - len(batch_shape)]
    dtype = _type_of(logits).dtype
    if replace:  # the Gumbel-max trick
        logits_shape = list(shape[len(prefix):])
        logits_shape.insert(axis, _tnp.shape(logits)[axis])
        noise = _gumbel_body(data, (*prefix, *logits_shape), dtype, mode)
        logits = _lax.expand_dims(logits, tuple(range(len(prefix))))
        return _tnp.argmax(_tnp.add(noise, logits), axis=axis - ndim)
    # without replacement: the Gumbel top-k trick
    logits = _tnp.add(logits, _gumbel_body(data, _tnp.shape(logits), dtype, mode))
    k = _math.prod(prefix)
    indices = _top_k_indices(_tnp.moveaxis(logits, axis, -1), k)
    return _tnp.reshape(_tnp.moveaxis(indices, -1, 0), shape)


_categorical_jit = _eager_program(_categorical_body, static_argnums=(2, 3, 4, 5))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities softmax(logits, axis)."""
    data, _ = _check_key("categorical", key)
    logits = _param(logits)
    ndim = _tnp.ndim(logits)
    if not -ndim <= axis < ndim:
        raise ValueError(_at_user_line(
            f"axis {axis} is out of bounds for logits of dimension {ndim}"))
    axis %= ndim
    batch_shape = tuple(n for i, n in enumerate(_tnp.shape(logits)) if i != axis)
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape_arg("categorical", shape)
        _check_shape("categorical", shape, batch_shape)
    if not replace:
        k = _math.prod(shape[:len(shape) - len(batch_shape)])
        if k > _tnp.shape(logits)[axis]:
            raise ValueError(_at_user_line(
                f"Number of samples without replacement ({k}) cannot exceed number of "
                f"categories ({_tnp.shape(logits)[axis]})."))
    _float_dtype("gumbel", _type_of(logits).dtype)
    return _categorical_jit(data, logits, axis, shape, bool(replace), _gumbel_mode(mode))


def _shuffle(data, x, axis):
    """x permuted along `axis`: sorted by random 32-bit keys, in rounds enough that
    collisions of keys are unlikely to matter (JAX's heuristic: 3 log n / log 2**32)."""
    size = _math.prod(_tnp.shape(x))
    rounds = int(_np.ceil(3 * _np.log(max(1, size)) / _np.log(_np.iinfo(_np.uint32).max)))
    for _ in range(rounds):
        data, subkey = _two_keys(data)
        sort_keys = _random_bits(subkey, 32, _tnp.shape(x))
        _, x = _lax.sort([sort_keys, x], dimension=axis, num_keys=1)
    return x


def _permutation_body(data, x, axis, independent):
    if independent or _tnp.ndim(x) == 1:
        return _shuffle(data, x, axis)
    order = _shuffle(data, _tnp.arange(_tnp.shape(x)[axis]), 0)
    return _tnp.take(x, order, axis=axis)


_permutation_jit = _eager_program(_permutation_body, static_argnums=(2, 3))
_arange_shuffle_jit = _eager_program(lambda data, n: _shuffle(data, _tnp.arange(n), 0),
                                     static_argnums=1)


def _static_count(x, what):
    """A count that sets an output shape: a traced one cannot, as in JAX."""
    value = _known_value(x)
    if value is None and not isinstance(x, _Tracer):
        value = _np.asarray(x)
    if value is None:
        raise _ConcretizationError(_at_user_line(
            f"{what} sets the shape of the result, so it must be concrete, but it is traced"))
    if value.dtype.kind not in "iu":
        raise TypeError(_at_user_line("x must be an integer or at least 1-dimensional"))
    return int(value)


def permutation(key, x, axis=0, independent=False):
    """A shuffled copy of x along `axis` (of arange(x) for an integer x)."""
    data, _ = _check_key("permutation", key)
    x = x if isinstance(x, int) else _param(x)
    if _tnp.ndim(x) == 0:
        return _arange_shuffle_jit(data, _static_count(x, "argument x of permutation()"))
    ndim = _tnp.ndim(x)
    if not -ndim <= axis < ndim:
        raise ValueError(_at_user_line(f"axis {axis} is out of bounds for array of dimension "
                                       f"{ndim}"))
    return _permutation_jit(data, x, axis % ndim, bool(independent))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of a's entries along `axis` (of arange(a) for an integer a), uniformly or
    with probabilities p, with or without replacement."""
    data, _ = _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(_at_user_line(
            f"shape argument of tracehlo.random.choice must be a sequence, got {shape}"))
    shape = _shape_arg("choice", shape)
    arr = a if isinstance(a, int) else _param(a)
    scalar = _tnp.ndim(arr) == 0
    if scalar:
        n_inputs = _static_count(arr, "a")
    else:
        ndim = _tnp.ndim(arr)
        if not -ndim <= axis < ndim:
            raise ValueError(_at_user_line(
                f"axis {axis} is out of bounds for array of dimension {ndim}"))
        axis %= ndim
        n_inputs = _tnp.shape(arr)[axis]
    n_draws = _math.prod(shape)
    if n_draws == 0:
        return _tnp.zeros(shape, _type_of(arr).dtype)
    if n_inputs <= 0:
        raise ValueError(_at_user_line("a must be greater than 0 unless no samples are taken"))
    if not replace and n_draws > n_inputs:
        raise ValueError(_at_user_line(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"))
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else _tnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if scalar else arr, axis)
            result = _lax.slice_in_dim(perm, 0, n_draws, axis=0 if scalar else axis)
    else:
        (p,) = _promote(p, to_inexact=True)
        if _tnp.shape(p) != (n_inputs,):
            raise ValueError(_at_user_line(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {_tnp.shape(p)} and a.shape[axis] is {n_inputs}."))
        ind = _choice_p_jit(data, p, shape, bool(replace), _gumbel_mode(mode))
        result = ind if scalar else _tnp.take(arr, ind, axis=axis)
    out_shape = shape if scalar else (
        _tnp.shape(arr)[:axis] + shape + _tnp.shape(arr)[axis + 1:])
    return _tnp.reshape(result, out_shape)


def _choice_p_body(data, p, shape, replace, mode):
    """Indices drawn with probabilities p: by inverting the CDF with replacement, by the
    Gumbel top-k trick without."""
    dtype = _type_of(p).dtype
    if replace:
        cdf = _tnp.cumsum(p)
        u = _unit_uniform(data, shape, dtype)
        r = _tnp.multiply(cdf[-1], _tnp.subtract(1, u))
        # searchsorted(cdf, r), side="left": how many cdf entries lie below r
        below = _tnp.less(cdf, _tnp.expand_dims(r, -1))
        return _tnp.astype(_tnp.sum(below, axis=-1), _dtypes.default_int())
    g = _tnp.add(_gumbel_body(data, _tnp.shape(p), dtype, mode), _tnp.log(p))
    return _tnp.astype(_top_k_indices(g, _math.prod(shape)), _dtypes.default_int())


_choice_p_jit = _eager_program(_choice_p_body, static_argnums=(2, 3, 4))


# ---------------------------------------------------------------- gamma, beta, dirichlet

def _check_safe_cast(name, dtype, *params):
    """JAX's check: a parameter more precise than the samples is an error (JAX's
    TypePromotionError, a ValueError)."""
    for x in params:
        t = _type_of(x)
        if _dtypes.result_type((t.dtype, t.weak), (dtype, False))[0] != dtype:
            raise _TypePromotionError(_at_user_line(
                f"In arguments to {name}, cannot safely cast argument of type {t.dtype} to "
                f"{dtype}"))


def _gamma_one(data, alpha, log_space):
    """One Gamma(alpha) sample by Marsaglia and Tsang's rejection method, in JAX's loop
    structure and key order, so the same candidates are drawn and the same one accepted.
    alpha < 1 is boosted to alpha + 1 and the sample scaled by u**(1/alpha) (in log
    space: plus log(u)/alpha, with log(u) as -exponential so the two spaces agree)."""
    dtype = _type_of(alpha).dtype
    zero, one, two = (_np.array(v, dtype) for v in (0, 1, 2))
    boost_mask = _lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = _lax.select(boost_mask, alpha, _lax.add(alpha, one))
    d = _lax.sub(alpha, _np.array(1 / 3, dtype))
    c = _lax.div(_np.array(1 / 3, dtype), _lax.sqrt(d))

    def rejected(state):
        _, x2, v, u = state
        squeeze = _lax.ge(u, _lax.sub(one, _lax.mul(_np.array(0.0331, dtype), _lax.mul(x2, x2))))
        log_test = _lax.ge(_lax.log(u), _lax.add(
            _lax.mul(x2, _np.array(0.5, dtype)),
            _lax.mul(d, _lax.add(_lax.sub(one, v), _lax.log(v)))))
        return _lax.bitwise_and(squeeze, log_test)

    def next_candidate(state):
        def next_normal(kxv):
            key, subkey = _two_keys(kxv[0])
            x = _normal_body(subkey, (), dtype)
            return key, x, _lax.add(one, _lax.mul(x, c))

        key, x_key, u_key = _halves(_split(state[0], (3,)), (2,), 3)
        _, x, v = _lax.while_loop(lambda kxv: _lax.le(kxv[2], zero), next_normal,
                                  (x_key, zero, _np.array(-1, dtype)))
        return (key, _lax.mul(x, x), _lax.mul(_lax.mul(v, v), v),
                _unit_uniform(u_key, (), dtype))

    data, subkey = _two_keys(data)
    _, _, v, _ = _lax.while_loop(rejected, next_candidate, (data, zero, one, two))
    if log_space:
        log_u = _lax.neg(_exponential_body(subkey, (), dtype))
        log_boost = _lax.select(_lax.bitwise_or(boost_mask, _lax.eq(log_u, zero)), zero,
                                _lax.mul(log_u, _lax.div(one, alpha_orig)))
        return _lax.add(_lax.add(_lax.log(d), _lax.log(v)), log_boost)
    u = _lax.sub(one, _unit_uniform(subkey, (), dtype))
    boost = _lax.select(boost_mask, one, _lax.pow(u, _lax.div(one, alpha_orig)))
    return _lax.mul(_lax.mul(d, v), boost)


def _gamma_body(data, a, shape, dtype, log_space):
    """A key per element (split from the one key), each element's sample drawn by its
    own rejection loop, the loops vmapped into one (JAX's lowering of random_gamma)."""
    a = _tnp.broadcast_to(_lax.convert_element_type(a, dtype), shape)
    n = _math.prod(shape)
    if n == 0:
        return a
    keys = _split(data, (n,))
    samples = _vmap(lambda k, alpha: _gamma_one(k, alpha, log_space))(
        keys, _lax.reshape(a, (n,)))
    return _lax.reshape(samples, shape)


_gamma_jit = _eager_program(_gamma_body, static_argnums=(2, 3, 4))


def _igamma_series_derivative(x, a, enabled):
    """d(sample)/da from the series of the regularized lower incomplete gamma function
    P(a, x), where x <= 1 or x <= a (JAX's _igamma_series, SAMPLE_DERIVATIVE mode): the
    terms and their derivatives in a are summed until the derivative's last term is
    below eps, each element frozen once it has converged."""
    eps = _np.finfo(_type_of(a).dtype).eps

    def body(vals):
        enabled, r, c, ans, dc_da, dans_da = vals
        r_new = r + 1
        dc_da_new = dc_da * (x / r_new) - (c * x) / (r_new * r_new)
        dans_da_new = dans_da + dc_da_new
        c_new = c * (x / r_new)
        more = _lax.bitwise_and(enabled, _lax.gt(_lax.abs(dc_da_new / dans_da_new), eps))
        return (more,) + tuple(_lax.select(enabled, new, old) for new, old in zip(
            (r_new, c_new, ans + c_new, dc_da_new, dans_da_new), vals[1:]))

    ones, zeros = _tnp.ones_like(a), _tnp.zeros_like(a)
    _, _, _, ans, _, dans_da = _lax.while_loop(
        lambda vals: _tnp.any(vals[0]), body, (enabled, a, ones, ones, zeros, zeros))
    dlogax_da = _lax.log(x) - _lax.digamma(a + 1)
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_fraction_derivative(x, a, enabled):
    """d(sample)/da from the continued fraction of the upper incomplete gamma function
    Q(a, x), where x > 1 and x > a (JAX's _igammac_continued_fraction,
    SAMPLE_DERIVATIVE mode), with its rescaling of large convergents and its limit of
    2000 terms."""
    eps = _np.finfo(_type_of(a).dtype).eps
    select = _lax.select

    def body(vals):
        (enabled, ans, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nonzero = _lax.ne(qk, _tnp.zeros_like(qk))
        ans_new = select(nonzero, pk / qk, ans)
        dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da_new = select(nonzero, (dpk_da - ans_new * dqk_da) / qk, dans_da)
        change = select(nonzero, _lax.abs(dans_da_new - dans_da), _tnp.ones_like(dans_da))
        rescale = _lax.gt(_lax.abs(pk), 1 / eps)  # scaled down together: ratios keep
        shifted = [select(rescale, v * eps, v) for v in (  # k-1 becomes k-2, k becomes k-1
            pk, qk, pkm1, qkm1, dpkm1_da, dqkm1_da, dpk_da, dqk_da)]
        frozen = [select(enabled, n, o) for n, o in zip(
            (ans_new, y, z, *shifted, dans_da_new), vals[1:4] + vals[5:])]
        return (_lax.bitwise_and(enabled, _lax.gt(change, eps)), *frozen[:3], c, *frozen[3:])

    y = 1 - a
    z = x + y + 1
    pkm1, qkm1 = x + 1, z * x
    ans = pkm1 / qkm1
    zeros = _tnp.zeros_like(x)
    init = (enabled, ans, y, z, _np.zeros((), _type_of(x).dtype), pkm1, qkm1,
            _tnp.ones_like(x), x, zeros, zeros, zeros, -x, (zeros - ans * -x) / qkm1)
    vals = _lax.while_loop(
        lambda vals: _lax.bitwise_and(_lax.lt(vals[4], 2000), _tnp.any(vals[0])), body, init)
    ans, dans_da = vals[1], vals[13]
    dlogax_da = _lax.log(x) - _lax.digamma(a)
    return (dans_da + ans * dlogax_da) * x


def _random_gamma_grad(a, x):
    """d x / d a for a Gamma(a) sample x at a fixed value of its CDF, P(a, x) (implicit
    reparameterization: -(dP/da) / (dP/dx)), as JAX's lax.random_gamma_grad computes it."""
    dtype = _type_of(a).dtype
    nan = _lax.bitwise_or(_lax.ne(a, a), _lax.ne(x, x))
    x_is_zero = _lax.eq(x, _tnp.zeros_like(x))
    domain_error = _lax.bitwise_or(_lax.lt(x, 0), _lax.le(a, 0))
    use_fraction = _lax.bitwise_and(_lax.gt(x, 1), _lax.gt(x, a))
    log_ax = a * _lax.log(x) - x - _lax.lgamma(a)
    underflow = _lax.lt(log_ax, -_np.log(_np.finfo(dtype).max))
    enabled = _lax.bitwise_not(_lax.bitwise_or(_lax.bitwise_or(x_is_zero, domain_error),
                                               _lax.bitwise_or(underflow, nan)))
    out = _lax.select(
        use_fraction,
        _igammac_fraction_derivative(x, a, _lax.bitwise_and(enabled, use_fraction)),
        _igamma_series_derivative(x, a, _lax.bitwise_and(enabled,
                                                         _lax.bitwise_not(use_fraction))))
    out = _lax.select(x_is_zero, _tnp.zeros_like(out), out)
    return _lax.select(_lax.bitwise_or(domain_error, nan), _tnp.full_like(out, _np.nan), out)


def _gamma_grad_body(a, sample, log_space):
    """d sample / d a; in log space d log(sample) / d a, the sample's exp kept above 0."""
    if not log_space:
        return _random_gamma_grad(a, sample)
    x = _lax.exp(sample)
    x = _lax.select(_lax.eq(x, _tnp.zeros_like(x)),
                    _tnp.full_like(x, _np.finfo(_type_of(x).dtype).tiny), x)
    return _random_gamma_grad(a, x) / x


_gamma_grad_jit = _eager_program(_gamma_grad_body, static_argnums=(2,))


def _gamma_samples(data, a, dtype, log_space):
    return _gamma_jit(data, a, _tnp.shape(a), dtype, log_space)


_gamma_samples = _custom_jvp(_gamma_samples, nondiff_argnums=(2, 3))


@_gamma_samples.defjvp
def _gamma_samples_jvp(dtype, log_space, primals, tangents):
    """The rejection loop's own derivative is not the sample's: as JAX, the sample is
    differentiated implicitly, through the CDF it was drawn at (_random_gamma_grad)."""
    data, a = primals
    sample = _gamma_samples(data, a, dtype, log_space)
    return sample, tangents[1] * _gamma_grad_jit(a, sample, log_space)


def _gamma_draw(data, a, shape, dtype, log_space):
    """Gamma samples of `shape`, differentiable in `a` by the custom_jvp rule (staged
    programs keep it: custom_derivatives.py). gamma, beta and dirichlet draw them here."""
    return _gamma_samples(data, _tnp.broadcast_to(_lax.convert_element_type(a, dtype), shape),
                          dtype, log_space)


def _gamma(name, key, a, shape, dtype, log_space):
    data, _ = _check_key(name, key)
    dtype = _float_dtype("gamma", dtype)
    a = _param(a)
    if shape is None:
        shape = _tnp.shape(a)
    else:
        shape = _shape_arg(name, shape)
        _check_shape("gamma", shape, _tnp.shape(a))
    return _gamma_draw(data, a, shape, dtype, log_space)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1)-distributed floats (of a's shape unless `shape` is given)."""
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """The log of Gamma(a, 1) samples, computed in log space: accurate where a << 1
    puts the samples themselves below the smallest float."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def _beta_of_log_gammas(log_a, log_b):
    """Ga / (Ga + Gb) from two log-gamma samples, scaled by the larger so neither
    underflows (JAX's _beta)."""
    log_max = _lax.max(log_a, log_b)
    scaled_a, scaled_b = (_lax.exp(_lax.sub(x, log_max)) for x in (log_a, log_b))
    return _lax.div(scaled_a, _lax.add(scaled_a, scaled_b))


_beta_of_log_gammas_jit = _eager_program(_beta_of_log_gammas)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b)-distributed floats in [0, 1], differentiable in a and b."""
    data, _ = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    a, b = _param(a), _param(b)
    _check_safe_cast("beta", dtype, a, b)
    if shape is None:
        shape = _np.broadcast_shapes(_tnp.shape(a), _tnp.shape(b))
    else:
        shape = _shape_arg("beta", shape)
        _check_shape("beta", shape, _tnp.shape(a), _tnp.shape(b))
    key_a, key_b = _halves(_split_jit(data, (2,)), (2,))
    return _beta_of_log_gammas_jit(_gamma_draw(key_a, a, shape, dtype, True),
                                   _gamma_draw(key_b, b, shape, dtype, True))


# softmax of log-gamma samples: normalising in log space keeps small alphas' samples
# from underflowing to 0/0
_dirichlet_of_log_gammas_jit = _eager_program(lambda log_gammas: _softmax(log_gammas, -1))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Points on the simplex, Dirichlet(alpha) along alpha's last axis, differentiable in
    alpha; `shape` is the batch shape (alpha.shape[:-1] by default)."""
    data, _ = _check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha = _param(alpha)
    if _tnp.ndim(alpha) < 1:
        raise ValueError(_at_user_line(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {_tnp.ndim(alpha)}"))
    if shape is None:
        shape = _tnp.shape(alpha)[:-1]
    else:
        shape = _shape_arg("dirichlet", shape)
        _check_shape("dirichlet", shape, _tnp.shape(alpha)[:-1])
    return _dirichlet_of_log_gammas_jit(
        _gamma_draw(data, alpha, shape + _tnp.shape(alpha)[-1:], dtype, True))


# ---------------------------------------------------------------- multivariate normal

def _multivariate_normal_body(data, mean, cov, shape, dtype, method):
    """mean + F z for cov = F Fᴴ and z standard normal, F by `method` as JAX's: the
    Cholesky factor, U sqrt(s) of an SVD or V sqrt(w) of an eigendecomposition. On CPU
    the factors are LAPACK's and the product einsum's one dot_general, as JAX's: the
    samples are JAX's bit for bit."""
    if method == "svd":
        u, s, _ = _linalg.svd(cov)
        factor = _tnp.multiply(u, _tnp.sqrt(_tnp.expand_dims(s, -2)))
    elif method == "eigh":
        w, v = _linalg.eigh(cov)
        factor = _tnp.multiply(v, _tnp.sqrt(_tnp.expand_dims(w, -2)))
    else:
        factor = _linalg.cholesky(cov)
    z = _normal_body(data, shape + _tnp.shape(mean)[-1:], dtype)
    return _tnp.add(mean, _tnp.einsum("...ij,...j->...i", factor, z))


_multivariate_normal_jit = _eager_program(_multivariate_normal_body, static_argnums=(3, 4, 5))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal vectors with mean `mean` (..., n) and covariance `cov` (..., n, n);
    `shape` is the batch shape (the broadcast of the two's batch shapes by default)."""
    data, _ = _check_key("multivariate_normal", key)
    mean, cov = _promote_no_broadcast([_param(mean), _param(cov)])
    if not _dtypes.is_inexact(_type_of(mean).dtype):
        mean, cov = (_tnp.astype(x, _dtypes.default_float()) for x in (mean, cov))
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(_at_user_line("method must be one of {'svd', 'eigh', 'cholesky'}"))
    dtype = _float_dtype("multivariate_normal", _type_of(mean).dtype if dtype is None else dtype)
    if _tnp.ndim(mean) < 1:
        raise ValueError(_at_user_line(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {_tnp.ndim(mean)}"))
    if _tnp.ndim(cov) < 2:
        raise ValueError(_at_user_line(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {_tnp.ndim(cov)}"))
    n = _tnp.shape(mean)[-1]
    if _tnp.shape(cov)[-2:] != (n, n):
        raise ValueError(_at_user_line(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {_tnp.shape(cov)}."))
    batch = (_tnp.shape(mean)[:-1], _tnp.shape(cov)[:-2])
    if shape is None:
        shape = _np.broadcast_shapes(*batch)
    else:
        shape = _shape_arg("multivariate_normal", shape)
        _check_shape("normal", shape, *batch)
    return _multivariate_normal_jit(data, mean, cov, shape, dtype, method)


def _orthogonal_body(data, n, m, shape, dtype):
    """Q of the QR of a normal matrix, its columns' signs fixed by R's diagonal
    (Mezzadri's method, as JAX's); transposed when it has more columns than rows."""
    z = _normal_body(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = _linalg.qr(z)
    x = _tnp.multiply(q, _tnp.expand_dims(_tnp.sign(_linalg.diagonal(r)), -2))
    return _tnp.matrix_transpose(x) if n < m else x


_orthogonal_jit = _eager_program(_orthogonal_body, static_argnums=(1, 2, 3, 4))


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A matrix (..., n, m) uniform on the orthogonal (unitary, for complex dtypes)
    group, or semi-orthogonal when n != m."""
    data, _ = _check_key("orthogonal", key)
    shape = _shape_arg("orthogonal", shape)
    dtype = _float_dtype("orthogonal", dtype, kinds="fc")
    n = _static_count(n, "orthogonal's n")
    m = n if m is None else _static_count(m, "orthogonal's m")
    return _orthogonal_jit(data, n, m, shape, dtype)


# ---------------------------------------------------------------- more distributions
# Each body is JAX's formula op for op (lax ops where JAX's are, NumPy-style ops with
# their promotion where JAX's are jnp's), so XLA sees the same program and the bits agree.

def _params_shape(name, shape, *params):
    """The result shape: `shape`, which the parameters must broadcast to, or else theirs."""
    shapes = [_tnp.shape(x) for x in params]
    if shape is None:
        return _np.broadcast_shapes(*shapes)
    shape = _shape_arg(name, shape)
    _check_shape(name, shape, *shapes)
    return shape


def _open_interval_uniform(data, shape, dtype, minval):
    """Uniform in [minval, 1), minval a host float rounded to dtype as JAX rounds it."""
    return _uniform_body(data, _np.asarray(minval).astype(dtype), _np.array(1, dtype), shape,
                         dtype)


def _laplace_body(data, shape, dtype):
    u = _open_interval_uniform(data, shape, dtype, -1.0 + _dtypes.finfo(dtype).epsneg)
    return _lax.mul(_lax.sign(u), _lax.log1p(_lax.neg(_lax.abs(u))))


def _logistic_body(data, shape, dtype):
    x = _open_interval_uniform(data, shape, dtype, _dtypes.finfo(dtype).tiny)
    return _lax.sub(_lax.log(x), _lax.log1p(_lax.neg(x)))


def _cauchy_body(data, shape, dtype):
    u = _open_interval_uniform(data, shape, dtype, _dtypes.finfo(dtype).eps)
    return _lax.tan(_lax.mul(_np.array(_np.pi, dtype), _lax.sub(u, _np.array(0.5, dtype))))


def _maxwell_body(data, shape, dtype):
    """The norm of three standard normals."""
    return _tnp.linalg.norm(_normal_body(data, (*shape, 3), dtype), axis=-1)


def _rademacher_body(data, shape, dtype):
    heads = _tnp.astype(_bernoulli_body(data, _tnp.asarray(0.5), shape, "low"), dtype)
    return _tnp.astype(_tnp.subtract(_tnp.multiply(2, heads), 1), dtype)


_laplace_jit, _logistic_jit, _cauchy_jit, _rademacher_jit = (
    _eager_program(body, static_argnums=(1, 2)) for body in (
        _laplace_body, _logistic_body, _cauchy_body, _rademacher_body))
# The norm's reduce fused with our erf_inv polynomial by XLA's fusion differs from JAX's
# in ~7% of f32 samples (measured: 67-93 of 1000, 8 keys); compiled with our passes, as
# under tracehlo.jit, 0 of 8000 do.
_maxwell_jit = _eager_program(_maxwell_body, static_argnums=(1, 2), fusion="tracehlo")


def laplace(key, shape=(), dtype=None):
    """Laplace-distributed floats: density exp(-|x|) / 2."""
    data, _ = _check_key("laplace", key)
    return _laplace_jit(data, _shape_arg("laplace", shape), _float_dtype("laplace", dtype))


def logistic(key, shape=(), dtype=None):
    """Logistic-distributed floats: log(u) - log(1 - u)."""
    data, _ = _check_key("logistic", key)
    return _logistic_jit(data, _shape_arg("logistic", shape), _float_dtype("logistic", dtype))


def cauchy(key, shape=(), dtype=None):
    """Cauchy-distributed floats: tan(pi (u - 1/2))."""
    data, _ = _check_key("cauchy", key)
    return _cauchy_jit(data, _shape_arg("cauchy", shape), _float_dtype("cauchy", dtype))


def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell-distributed floats."""
    data, _ = _check_key("maxwell", key)
    return _maxwell_jit(data, _shape_arg("maxwell", shape), _float_dtype("maxwell", dtype))


def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with probability 1/2 each, of any dtype (the default integer one)."""
    data, _ = _check_key("rademacher", key)
    dtype = _dtypes.canonicalize(_np.int64 if dtype is None else dtype)
    return _rademacher_jit(data, _shape_arg("rademacher", shape), dtype)


def _double_sided_maxwell_body(data, loc, scale, shape, dtype):
    """JAX's shapes: `shape` (or the parameters' shape, if empty) followed by the
    parameters' shape."""
    params_shape = _np.broadcast_shapes(_tnp.shape(loc), _tnp.shape(scale))
    shape = (shape or params_shape) + params_shape
    maxwell_key, rademacher_key = _two_keys(data)
    sign = _rademacher_body(rademacher_key, shape, dtype)
    return _tnp.add(_tnp.multiply(_tnp.multiply(sign, _maxwell_body(maxwell_key, shape, dtype)),
                                  scale), loc)


_double_sided_maxwell_jit = _eager_program(_double_sided_maxwell_body, static_argnums=(3, 4),
                                           fusion="tracehlo")  # maxwell's reduce: above


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell-distributed floats about loc, of width scale."""
    data, _ = _check_key("double_sided_maxwell", key)
    return _double_sided_maxwell_jit(data, _param(loc), _param(scale),
                                     _shape_arg("double_sided_maxwell", shape),
                                     _float_dtype("double_sided_maxwell", dtype))


def _weibull_min_body(data, scale, concentration, shape, dtype):
    u = _unit_uniform(data, shape, dtype)
    return _tnp.multiply(_tnp.power(_tnp.negative(_tnp.log1p(_tnp.negative(u))),
                                    _tnp.divide(1.0, concentration)), scale)


_weibull_min_jit = _eager_program(_weibull_min_body, static_argnums=(3, 4))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull-distributed floats by the inverse CDF (scale, concentration > 0)."""
    data, _ = _check_key("weibull_min", key)
    return _weibull_min_jit(data, _param(scale), _param(concentration),
                            _shape_arg("weibull_min", shape), _float_dtype("weibull_min", dtype))


def _pareto_body(data, b, shape, dtype):
    e = _exponential_body(data, shape, dtype)
    return _lax.exp(_tnp.divide(e, _lax.convert_element_type(b, dtype)))


def _lognormal_body(data, sigma, shape, dtype):
    return _lax.exp(_tnp.multiply(_normal_body(data, shape, dtype),
                                  _lax.convert_element_type(sigma, dtype)))


def _rayleigh_body(data, scale, shape, dtype):
    u = _unit_uniform(data, shape, dtype)
    scale = _tnp.broadcast_to(_tnp.astype(scale, dtype), shape)
    return _lax.mul(scale, _lax.sqrt(_lax.mul(_lax.log(u), _np.array(-2, dtype))))


def _wald_body(data, mean, shape, dtype):
    """The inverse Gaussian by Michael, Schucany and Haas's transformation."""
    k1, k2 = _two_keys(data)
    mean = _tnp.broadcast_to(_tnp.astype(mean, dtype), shape)
    v = _normal_body(k1, shape, dtype)
    z = _unit_uniform(k2, shape, dtype)
    y = _lax.mul(v, v)  # JAX's integer_pow(v, 2), which XLA computes as v * v
    mean_sq = _lax.mul(mean, mean)
    sqrt_term = _lax.sqrt(_tnp.add(_tnp.multiply(_tnp.multiply(4, mean), y),
                                   _tnp.multiply(mean_sq, _lax.mul(y, y))))
    x = _tnp.subtract(_tnp.add(mean, _tnp.divide(_tnp.multiply(mean_sq, y), 2)),
                      _tnp.multiply(_tnp.divide(mean, 2), sqrt_term))
    return _lax.select(_lax.le(z, _tnp.divide(mean, _tnp.add(mean, x))), x,
                       _tnp.divide(mean_sq, x))


def _chisquare_body(data, df, shape, dtype):
    """Twice a Gamma(df / 2) sample, drawn in log space."""
    half_df = _lax.div(_lax.convert_element_type(df, dtype), _np.array(2, dtype))
    log_g = _gamma_draw(data, half_df, shape, dtype, True)
    return _lax.mul(_tnp.exp(log_g), _np.array(2, dtype))


def _t_body(data, df, shape, dtype):
    key_n, key_g = _two_keys(data)
    n = _normal_body(key_n, shape, dtype)
    half_df = _lax.div(_lax.convert_element_type(df, dtype), _np.array(2, dtype))
    g = _gamma_draw(key_g, half_df, shape, dtype, False)
    return _tnp.multiply(n, _tnp.sqrt(_tnp.divide(half_df, g)))


def _f_body(data, dfnum, dfden, shape, dtype):
    dfden = _lax.convert_element_type(dfden, dtype)
    dfnum = _lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = _two_keys(data)
    num = _lax.div(_chisquare_body(key_dfn, dfnum, shape, dtype), dfnum)
    den = _lax.div(_chisquare_body(key_dfd, dfden, shape, dtype), dfden)
    return _lax.div(*_broadcast(num, den))


def _triangular_body(data, left, mode, right, shape, dtype):
    left, mode, right = (_tnp.broadcast_to(_lax.convert_element_type(x, dtype), shape)
                         for x in (left, mode, right))
    fc = _tnp.divide(_tnp.subtract(mode, left), _tnp.subtract(right, left))
    u = _unit_uniform(data, shape, dtype)
    out1 = _tnp.add(left, _lax.sqrt(_tnp.multiply(
        _tnp.multiply(u, _tnp.subtract(right, left)), _tnp.subtract(mode, left))))
    out2 = _tnp.subtract(right, _lax.sqrt(_tnp.multiply(
        _tnp.multiply(_tnp.subtract(1, u), _tnp.subtract(right, left)),
        _tnp.subtract(right, mode))))
    return _lax.select(_tnp.less(u, fc), out1, out2)


_pareto_jit, _lognormal_jit, _rayleigh_jit, _wald_jit, _chisquare_jit, _t_jit = (
    _eager_program(body, static_argnums=(2, 3)) for body in (
        _pareto_body, _lognormal_body, _rayleigh_body, _wald_body, _chisquare_body, _t_body))
_f_jit = _eager_program(_f_body, static_argnums=(3, 4))
_triangular_jit = _eager_program(_triangular_body, static_argnums=(4, 5))


def _parametrized(name, key, dtype, shape, *params, kinds="f"):
    """(key data, params as arrays, result shape, dtype), checked as JAX checks them."""
    data, _ = _check_key(name, key)
    dtype = _float_dtype(name, dtype, kinds)
    params = [_param(x) for x in params]
    shape = _params_shape(name, shape, *params)
    _check_safe_cast(name, dtype, *params)
    return data, params, shape, dtype


def pareto(key, b, shape=None, dtype=None):
    """Pareto-distributed floats in [1, inf) of shape parameter b > 0."""
    data, (b,), shape, dtype = _parametrized("pareto", key, dtype, shape, b)
    return _pareto_jit(data, b, shape, dtype)


def lognormal(key, sigma=_np.float32(1), shape=None, dtype=None):
    """exp of normal samples of standard deviation sigma (complex dtypes too)."""
    data, (sigma,), shape, dtype = _parametrized("lognormal", key, dtype, shape, sigma,
                                                 kinds="fc")
    return _lognormal_jit(data, sigma, shape, dtype)


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh-distributed floats of the given scale."""
    data, (scale,), shape, dtype = _parametrized("rayleigh", key, dtype, shape, scale)
    return _rayleigh_jit(data, scale, shape, dtype)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats of the given mean and shape parameter 1."""
    data, (mean,), shape, dtype = _parametrized("wald", key, dtype, shape, mean)
    return _wald_jit(data, mean, shape, dtype)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square-distributed floats of df degrees of freedom."""
    data, (df,), shape, dtype = _parametrized("chisquare", key, dtype, shape, df)
    return _chisquare_jit(data, df, shape, dtype)


def t(key, df, shape=None, dtype=None):
    """Student's t-distributed floats of df degrees of freedom."""
    data, (df,), shape, dtype = _parametrized("t", key, dtype, shape, df)
    return _t_jit(data, df, shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distributed floats of dfnum and dfden degrees of freedom."""
    data, (dfnum, dfden), shape, dtype = _parametrized("f", key, dtype, shape, dfnum, dfden)
    return _f_jit(data, dfnum, dfden, shape, dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular-distributed floats on [left, right] peaking at mode."""
    data, params, shape, dtype = _parametrized("triangular", key, dtype, shape, left, mode,
                                               right)
    return _triangular_jit(data, *params, shape, dtype)


def _geometric_body(data, p, shape, dtype):
    """The number of Bernoulli(p) trials up to the first success, by the inverse CDF."""
    u = _unit_uniform(data, shape, _type_of(p).dtype)
    u = _tnp.where(_tnp.equal(u, 0), 1, u)
    log_one_minus_p = _tnp.broadcast_to(_lax.log1p(_tnp.negative(p)), shape)
    g = _tnp.add(_lax.floor(_lax.div(_lax.log(u), log_one_minus_p)), 1)
    return _tnp.astype(g, dtype)


_geometric_jit = _eager_program(_geometric_body, static_argnums=(2, 3))


def geometric(key, p, shape=None, dtype=None):
    """Geometric-distributed integers >= 1 of success probability p."""
    data, _ = _check_key("geometric", key)
    dtype = _int_dtype(dtype, ValueError,
                       "dtype argument to `geometric` must be an int dtype, got {dtype}")
    (p,) = _promote(_param(p), to_inexact=True)
    return _geometric_jit(data, p, _params_shape("geometric", shape, p), dtype)


def _generalized_normal_body(data, p, shape, dtype):
    """A Gamma(1/p) sample to the power 1/p, of random sign."""
    k_gamma, k_sign = _two_keys(data)
    inv_p = _tnp.divide(1, p)
    g = _gamma_draw(k_gamma, inv_p, shape, dtype, False)
    return _tnp.multiply(_rademacher_body(k_sign, shape, dtype), _tnp.power(g, inv_p))


def _ball_body(data, p, d, shape, dtype):
    """Uniform in the unit p-ball of R^d: generalized normals over their p-norm made
    larger by an exponential sample."""
    k1, k2 = _two_keys(data)
    g = _generalized_normal_body(k1, p, (*shape, d), dtype)
    e = _exponential_body(k2, shape, dtype)
    radius = _tnp.power(_tnp.add(_tnp.sum(_tnp.power(_tnp.abs(g), p), axis=-1), e),
                        _tnp.divide(1, p))
    return _tnp.divide(g, _tnp.expand_dims(radius, -1))


_generalized_normal_jit = _eager_program(_generalized_normal_body, static_argnums=(2, 3))
_ball_jit = _eager_program(_ball_body, static_argnums=(2, 3, 4))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats: density proportional to exp(-|x|**p)."""
    data, _ = _check_key("generalized_normal", key)
    dtype = _dtypes.canonicalize(_np.float64 if dtype is None else dtype)
    return _generalized_normal_jit(data, _param(p), _shape_arg("generalized_normal", shape),
                                   dtype)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit p-norm ball of dimension d, of shape `shape + (d,)`."""
    data, _ = _check_key("ball", key)
    dtype = _dtypes.canonicalize(_np.float64 if dtype is None else dtype)
    d = _static_count(d, "d")
    return _ball_jit(data, _param(p), d, _shape_arg("ball", shape), dtype)


# ---------------------------------------------------------------- poisson, binomial, multinomial
# JAX's loops (threefry keys only), op for op: every element's loop runs until the last is
# done, with JAX's key splits, so the same uniforms are drawn and the same bits come out.
# Counts are step functions of their parameters, of derivative 0 as in JAX (through
# floor): the parameters' gradient stops at the samplers, which keeps the loops out of
# reverse mode (our while loop gives every float carry a tangent, and has no vjp).

def _below_max_iters(i, dtype):
    """JAX's `i < max_iters`, max_iters the largest value of the result dtype: the
    counter is compared in that dtype."""
    info = _dtypes.finfo(dtype) if _dtypes.is_float(dtype) else _dtypes.iinfo(dtype)
    return _lax.lt(_lax.convert_element_type(i, dtype), _np.array(info.max, dtype))


def _counter():
    """A loop's iteration count, from 0 in the default int (JAX's weak Python 0)."""
    return _np.zeros((), _dtypes.default_int())


def _poisson_knuth(data, lam, shape, dtype):
    """Knuth's method: logs of uniforms added until the sum drops below -lam."""
    f32 = _np.dtype(_np.float32)

    def body(carry):
        i, k, data, log_prod = carry
        data, subkey = _two_keys(data)
        k = _lax.select(log_prod > -lam, k + 1, k)
        u = _unit_uniform(subkey, shape, f32)
        return i + 1, k, data, log_prod + _lax.log(u)

    def more(carry):
        return _tnp.any(carry[3] > -lam) & _below_max_iters(carry[0], dtype)
    init = (_counter(), _tnp.zeros(shape, dtype), data, _tnp.zeros(shape, f32))
    return _lax.while_loop(more, body, init)[1] - 1


def _poisson_rejection(data, lam, shape, dtype):
    """Hörmann's transformed rejection (PTRS), for lam >= 10."""
    f32 = _np.dtype(_np.float32)
    log_lam = _lax.log(lam)
    b = 0.931 + 2.53 * _lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, data = carry
        data, key_u, key_v = _halves(_split(data, (3,)), (2,), 3)
        u = _unit_uniform(key_u, shape, f32) - 0.5
        v = _unit_uniform(key_v, shape, f32)
        u_shifted = 0.5 - _lax.abs(u)
        k = _lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = _lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - _lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, _lax.select(accept, k, k_out), accepted | accept, data

    def more(carry):
        return _tnp.any(~carry[2]) & _below_max_iters(carry[0], dtype)
    init = (_counter(), _tnp.full(shape, -1, f32), _tnp.zeros(shape, bool), data)
    return _lax.convert_element_type(_lax.while_loop(more, body, init)[1], dtype)


def _poisson_body(data, lam, shape, dtype):
    """Knuth's method below lam = 10 (and at NaN), the rejection method above: both
    loops run, each on placeholder rates where the other's apply."""
    lam = _lax.convert_element_type(_tnp.broadcast_to(lam, shape), _np.float32)
    use_knuth = (lam != lam) | (lam < 10)
    knuth = _poisson_knuth(data, _lax.select(use_knuth, lam, _tnp.zeros_like(lam)), shape, dtype)
    rejection = _poisson_rejection(
        data, _lax.select(use_knuth, _tnp.full_like(lam, 1e5), lam), shape, dtype)
    result = _lax.select(use_knuth, knuth, rejection)
    return _lax.select(lam == 0, _tnp.zeros_like(result), result)


_poisson_jit = _eager_program(_poisson_body, static_argnums=(2, 3))


def poisson(key, lam, shape=None, dtype=None):
    """Poisson-distributed integers of rate lam (drawn in float32, as JAX draws them)."""
    data, _ = _check_key("poisson", key)
    dtype = _int_dtype(dtype, ValueError, "Invalid integer data type {dtype.char!r}: "
                       "poisson's dtype must be an integer dtype")
    lam = _param(_operand(lam))
    if shape is None:
        shape = _tnp.shape(lam)
    else:
        shape = _shape_arg("poisson", shape)
        _check_shape("poisson", shape, _tnp.shape(lam))
    return _poisson_jit(data, _stop_gradient(lam), shape, dtype)


_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_approx_tail(k):
    """log(k!) less its Stirling approximation: tabulated up to k = 9, else the series'
    first terms (at k clamped to 9, as JAX computes them)."""
    dtype = _type_of(k).dtype
    use_table = k <= 9
    k = _lax.clamp(_np.array(0, dtype), k, _np.array(9, dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    index = _lax.convert_element_type(_lax.floor(k), _np.int32)
    return _lax.select(use_table, _getitem(_tnp.asarray(_np.array(_STIRLING_TAIL, dtype)),
                                           (index,)), approx)


def _binomial_inversion(data, count, prob, shape, dtype):
    """Geometric waiting times summed until they pass count (where count * p <= 10)."""
    log1minusprob = _lax.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, data = carry
        subkey, data = _two_keys(data)
        num_geom_out = _lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _unit_uniform(subkey, shape, _type_of(prob).dtype)
        geom = _lax.ceil(_lax.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, data

    def more(carry):
        return _tnp.any(carry[2] <= count) & _below_max_iters(carry[0], dtype)
    zeros = _tnp.zeros(shape, _type_of(prob).dtype)
    k = _lax.while_loop(more, body, (_counter(), zeros, zeros, data))[1]
    return _lax.convert_element_type(k - 1, dtype)


def _btrs(data, count, prob, shape, dtype):
    """Hörmann's transformed rejection with squeeze (BTRS), where count * p > 10."""
    stddev = _lax.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = _lax.floor((count + 1) * prob)
    pdtype = _type_of(prob).dtype

    def body(carry):
        i, k_out, accepted, data = carry
        data, key_u, key_v = _halves(_split(data, (3,)), (2,), 3)
        u = _unit_uniform(key_u, shape, pdtype)
        v = _unit_uniform(key_v, shape, pdtype)
        u = u - 0.5
        us = 0.5 - _lax.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = _lax.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = _lax.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * _lax.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * _lax.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * _lax.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, _lax.select(accept, k, k_out), accepted | accept, data

    def more(carry):
        return _tnp.any(~carry[2]) & _below_max_iters(carry[0], dtype)
    init = (_counter(), _tnp.full(shape, -1, pdtype), _tnp.zeros(shape, bool), data)
    return _lax.convert_element_type(_lax.while_loop(more, body, init)[1], dtype)


def _binomial_body(data, count, prob, shape, dtype):
    """Inversion where count * q <= 10 (q the smaller of p and 1 - p), BTRS elsewhere
    (both loops run, on placeholders where the other applies); NaN for a NaN or negative
    count or q, inf for an infinite count; count - sample where p >= 1/2."""
    count = _tnp.broadcast_to(_lax.convert_element_type(count, _type_of(prob).dtype), shape)
    prob = _tnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = _lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = (count != count) | (count < 0.0)
    count_inf = _tnp.isinf(count)
    q_is_nan = q != q
    q_l_0 = q < 0.0
    q = _lax.select(q_is_nan | q_l_0, _tnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = _lax.floor(count)
    samples = _lax.select(
        use_inversion,
        _binomial_inversion(data, _lax.select(use_inversion, count, _tnp.zeros_like(count)),
                            q, shape, dtype),
        _btrs(data, _lax.select(use_inversion, _tnp.full_like(count, 1e4), count),
              _lax.select(use_inversion, _tnp.full_like(q, 0.5), q), shape, dtype))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = _lax.select(invalid, _tnp.full_like(samples, _np.nan), samples)
    samples = _lax.select(count_inf & ~invalid, _tnp.full_like(samples, _np.inf), samples)
    return _lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                       _lax.convert_element_type(count, dtype) - samples)


_binomial_jit = _eager_program(_binomial_body, static_argnums=(3, 4))


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p)-distributed counts as floats, drawn in p's (inexact) dtype."""
    data, _ = _check_key("binomial", key)
    n = _param(_operand(n))
    (p,) = _promote(p, to_inexact=True)
    dtype = _float_dtype("binomial", dtype)
    shape = _params_shape("binomial", shape, n, p)
    return _binomial_jit(data, *_stop_gradient((n, p)), shape, dtype)


def _multinomial_body(data, n, p, shape, dtype, unroll):
    """One binomial per outcome, in a scan: the trials left, of the probability left."""
    n, p = _tnp.broadcast_to(n, shape[:-1]), _tnp.moveaxis(_tnp.broadcast_to(p, shape), -1, 0)
    remaining_probs = _lax.cumsum(p, 0, reverse=True)
    ratios = p / _tnp.where(remaining_probs == 0, 1, remaining_probs)

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = _binomial_body(key, remainder, _tnp.clip(ratio, 0, 1), shape[:-1],
                               _type_of(remainder).dtype)
        return remainder - count, count
    _, counts = _lax.scan(step, n, (ratios, _split(data, (shape[-1],))), unroll=unroll)
    return _tnp.astype(_tnp.moveaxis(counts, 0, -1), dtype)


_multinomial_jit = _eager_program(_multinomial_body, static_argnums=(3, 4, 5))


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n trials over the outcomes along p's last axis; `shape` is the whole
    result's shape, outcomes last (p.shape by default)."""
    data, _ = _check_key("multinomial", key)
    n, p = _promote_no_broadcast([_operand(n), _operand(p)])
    t = _type_of(p)
    if not _dtypes.is_inexact(t.dtype):
        n, p = (_lax.convert_element_type(x, _inexact(t.dtype), weak_type=t.weak)
                for x in (n, p))
    if _tnp.ndim(p) == 0:
        raise ValueError(_at_user_line(
            "axis -1 is out of bounds for array of dimension 0: multinomial's p needs an "
            "axis of outcomes"))
    shape = _tnp.shape(p) if shape is None else _shape_arg("multinomial", shape)
    _check_shape("multinomial", shape, _tnp.shape(p))
    _check_shape("multinomial", shape[:-1], _tnp.shape(n))
    dtype = _dtypes.canonicalize(_dtypes.default_float() if dtype is None else dtype)
    return _multinomial_jit(data, *_stop_gradient((n, p)), shape, dtype, unroll)

