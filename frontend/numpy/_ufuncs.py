"""Elementwise functions (NumPy's ufuncs) with JAX's promotion and edge values."""
from __future__ import annotations

import builtins
import functools
import operator

import numpy as _np
from jax.dtypes import float0 as _float0

from .. import dtypes as _dtypes
from .. import lax
from ..custom_derivatives import custom_jvp
from ..core import Tracer, at_user_line, known_value, tracing
from ._util import (
    _array, _as_dtype, _const, _is_array, _operand, _promote, _promote_inexact, _t, _to_bool,
    astype, bool_, broadcast_arrays, where)
from ._creation import full_like, ones_like


def _unary(op, to_inexact=False, name=None):
    def fn(x):
        (x,) = _promote(x, to_inexact=to_inexact)
        return op(x)
    fn.__name__ = name or op.__name__
    return fn


def _binary(op, to_inexact=False, name=None):
    def fn(x1, x2):
        return op(*_promote(x1, x2, to_inexact=to_inexact))
    fn.__name__ = name or op.__name__
    return fn


def _broadcasting(x1, x2) -> bool:
    """Whether two arrays (not scalars) of different shapes broadcast together."""
    shapes = _np.shape(x1), _np.shape(x2)
    if shapes[0] == shapes[1] or () in shapes:
        return False
    try:
        _np.broadcast_shapes(*shapes)
    except ValueError:
        return False  # the division raises its own error
    return True


def _sin_cos_complex(x, cosine):
    """JAX's expansion of complex sin/cos (its lowering of lax.sin/cos), so edge values
    agree: sinh and cosh of the imaginary part from expm1, and a zero real part exact."""
    a, b = lax.real(x), lax.imag(x)
    two = _like(2, a)
    sn, cs = lax.sin(a), lax.cos(a)
    e1m, e2m = lax.expm1(b), lax.expm1(lax.neg(b))
    snh, csh = lax.div(lax.sub(e1m, e2m), two), lax.div(lax.add(lax.add(e1m, e2m), two), two)
    a_is_zero = lax.eq(a, _like(0, a))
    if cosine:
        re = lax.mul(cs, csh)
        return lax.select(a_is_zero, lax.complex(re, _like(0, a)),
                          lax.complex(re, lax.mul(lax.neg(sn), snh)))
    im = lax.mul(cs, snh)
    return lax.select(a_is_zero, lax.complex(_like(0, a), im), lax.complex(lax.mul(sn, csh), im))


def sin(x):
    (x,) = _promote(x, to_inexact=True)
    return _sin_cos_complex(x, False) if _dtypes.is_complex(_t(x).dtype) else lax.sin(x)


def cos(x):
    (x,) = _promote(x, to_inexact=True)
    return _sin_cos_complex(x, True) if _dtypes.is_complex(_t(x).dtype) else lax.cos(x)


tan = _unary(lax.tan, True)
arcsin, arccos, arctan = (_unary(f, True, n) for f, n in
                          ((lax.asin, "arcsin"), (lax.acos, "arccos"), (lax.atan, "arctan")))
sinh, cosh, tanh = (_unary(f, True) for f in (lax.sinh, lax.cosh, lax.tanh))
arcsinh, arccosh, arctanh = (_unary(f, True, n) for f, n in (
    (lax.asinh, "arcsinh"), (lax.acosh, "arccosh"), (lax.atanh, "arctanh")))
exp, exp2, log, log1p, expm1 = (_unary(f, True) for f in (lax.exp, lax.exp2, lax.log,
                                                          lax.log1p, lax.expm1))
sqrt, cbrt = _unary(lax.sqrt, True), _unary(lax.cbrt, True)
negative = _unary(lax.neg, name="negative")


def sign(x):
    (x,) = _promote(x)
    if _dtypes.is_unsigned(_t(x).dtype):  # stablehlo.sign takes signed types only
        return lax.convert_element_type(lax.ne(x, _as_dtype(0, _t(x).dtype)), _t(x).dtype)
    return lax.sign(x)


arctan2 = _binary(lax.atan2, True, "arctan2")
subtract = _binary(lax.sub, name="subtract")


def _bool_as_logical(op, logical_op, name):
    """JAX's add and multiply of two bools are `or` and `and`: XLA's i1 add wraps
    (True + True is False), which no NumPy user expects."""
    def fn(x1, x2):
        x1, x2 = _promote(x1, x2)
        return (logical_op if _t(x1).dtype == _dtypes.bool_ else op)(x1, x2)
    fn.__name__ = name
    return fn


add = _bool_as_logical(lax.add, lax.bitwise_or, "add")
multiply = _bool_as_logical(lax.mul, lax.bitwise_and, "multiply")


def _divide(x1, x2):
    return lax.div(*_promote(x1, x2, to_inexact=True))


@functools.lru_cache(maxsize=None)
def _divide_program():
    from ..api import jit  # not at import: the api module needs this one loaded
    return jit(_divide, fusion="xla")


def divide(x1, x2):
    """x1 / x2. Eagerly, arrays of two shapes that broadcast divide in one program
    with XLA's fusion, as jnp.divide does (JAX jits its ufuncs): XLA multiplies by
    the broadcast reciprocal there, so the bits are JAX's (eager softmax's division
    by its sums was an ulp off when the broadcast ran as an op of its own)."""
    if not tracing() and _broadcasting(x1, x2):
        return _divide_program()(x1, x2)
    return _divide(x1, x2)


true_divide = divide
nextafter = _binary(lax.nextafter, True, "nextafter")


def log2(x):
    """log(x) / log(2) as JAX: a strong constant (so log2(3) is strong), dividing each
    part of a complex log (so infinite parts stay finite or infinite, not nan)."""
    return _scaled_log(x, lambda v, dt: lax.div(v, _np.array(_np.log(2), dt)))


def log10(x):
    """log(x) times JAX's strong constant 1 / log(10), part by part for complex x."""
    return _scaled_log(x, lambda v, dt: lax.mul(v, _np.array(0.4342944819032518, dt)))


def _scaled_log(x, scale):
    (x,) = _promote(x, to_inexact=True)
    r = lax.log(x)
    if _dtypes.is_complex(_t(x).dtype):
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(scale(re, _t(re).dtype), scale(im, _t(re).dtype))
    return scale(r, _t(r).dtype)


def rsqrt(x):
    (x,) = _promote(x, to_inexact=True)
    return lax.rsqrt(x)


def absolute(x):
    (x,) = _promote(x)
    if _dtypes.is_unsigned(_t(x).dtype) or _t(x).dtype == _dtypes.bool_:
        return _array(x)
    return lax.abs(x)


abs = absolute


def floor(x):
    (x,) = _promote(x)
    return lax.floor(x) if _dtypes.is_inexact(_t(x).dtype) else _array(x)


def ceil(x):
    (x,) = _promote(x)
    return lax.ceil(x) if _dtypes.is_inexact(_t(x).dtype) else _array(x)


def round(x, decimals=0):
    """JAX's: half to even after scaling by 10**decimals (weak only for a weak scalar;
    float16 scaled in float32); complex parts rounded each; integers unchanged."""
    (x,) = _promote(x)
    dt = _t(x).dtype
    if dt == _dtypes.bool_:
        raise ValueError(at_user_line("round of a bool array: data type bool is not inexact "
                                      "(convert it first, as in JAX)"))
    if not _dtypes.is_inexact(dt):
        if decimals < 0:
            raise NotImplementedError(at_user_line(
                "round of integers to decimals < 0 is not implemented (as in JAX)"))
        return _array(x)
    if decimals > _np.log10(float(_dtypes.finfo(dt).max)):
        return _array(x)  # beyond the type's precision

    def round_real(x):
        if decimals == 0:
            return lax.round(x, "to_nearest_even")
        part = _t(x).dtype
        x = astype(x, _dtypes.float32) if part == _dtypes.float16 else x
        factor = _const(x, 10.0 ** decimals)
        out = lax.div(lax.round(lax.mul(x, factor), "to_nearest_even"), factor)
        return astype(out, part) if part == _dtypes.float16 else out

    if _dtypes.is_complex(dt):
        return lax.complex(round_real(lax.real(x)), round_real(lax.imag(x)))
    return round_real(x)


around = round


def trunc(x):
    (x,) = _promote(x)
    if not _dtypes.is_inexact(_t(x).dtype):
        return _array(x)
    return where(lax.lt(x, 0), lax.ceil(x), lax.floor(x))


def _numeric(x):
    """bool counts as int32 in arithmetic that has no bool form (JAX's
    promote_args_numeric: int32 under x64 too)."""
    return astype(x, _dtypes.int32) if _t(x).dtype == _dtypes.bool_ else x


def _promote_numeric(*args):
    return [_numeric(a) for a in _promote(*args)]


def square(x):
    """x ** 2 as JAX's square (integer_pow's derivative for 2 is square's); complex as
    CHLO's square, which JAX lowers to: (a - b)(a + b) + 2ab i."""
    (x,) = _promote(x)
    x = _numeric(x)
    if _dtypes.is_complex(_t(x).dtype):
        a, b = lax.real(x), lax.imag(x)
        return lax.complex(lax.mul(lax.sub(a, b), lax.add(a, b)),
                           lax.mul(lax.mul(a, b), _like(2, a)))
    return lax.integer_pow(x, 2)


def _abs_square(x):
    """|x|^2, real for complex x: the summand of 2-norms."""
    (x,) = _promote(x)
    if _dtypes.is_complex(_t(x).dtype):
        return lax.real(lax.mul(x, lax.conj(x)))
    return lax.mul(x, x)


def reciprocal(x):
    (x,) = _promote(x, to_inexact=True)
    return lax.integer_pow(x, -1)  # as JAX, so its derivative is JAX's


def maximum(x1, x2):
    """NaN-propagating, as NumPy's maximum (XLA's max propagates NaN too)."""
    return lax.max(*_promote(x1, x2))


def minimum(x1, x2):
    return lax.min(*_promote(x1, x2))


def _pow_int_int(x1, x2):
    """JAX's integer power by an array: six steps of binary exponentiation, so only the
    exponent's low six bits count (a negative exponent gives what JAX gives)."""
    zero, one = _np.zeros((), _t(x2).dtype), _np.ones((), _t(x2).dtype)  # strong, as JAX's
    acc = lax.select(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = lax.select(lax.ne(lax.bitwise_and(x2, one), zero), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def _static_exponent(x2):
    """x2 as a Python int where JAX's power takes it as a concrete integer exponent (a
    host integer scalar, bool included), else None."""
    if isinstance(x2, Tracer):
        return None
    try:
        return operator.index(x2)
    except TypeError:
        return None


def power(x1, x2):
    """JAX's cases: a concrete integer exponent raises x1 alone (integer_pow: `bool_array
    ** 2` is int32); integer bases by JAX's binary exponentiation; a float base with an
    integer exponent stay as they are (lax.pow: the base's type, weak only if both are;
    its derivative is 0 where the exponent is 0); else promote."""
    n = _static_exponent(x2)
    if n is not None:
        return lax.integer_pow(_numeric(_promote(x1)[0]), n)
    x1, x2 = _operand(x1), _operand(x2)
    if _dtypes.is_inexact(_t(x1).dtype) and _dtypes.is_int(_t(x2).dtype):
        if _t(x1).shape and _t(x2).shape and _t(x1).shape != _t(x2).shape:
            x1, x2 = broadcast_arrays(x1, x2)  # NumPy broadcasting, dtypes kept
        return lax.pow(x1, x2)
    x1, x2 = _promote_numeric(x1, x2)
    if _dtypes.is_int(_t(x1).dtype):
        return _pow_int_int(x1, x2)
    return lax.pow(x1, x2)


pow = power


def float_power(x1, x2):
    x1, x2 = _promote(x1, x2, to_inexact=True)
    return lax.pow(x1, x2)


def remainder(x1, x2):
    """NumPy's mod: the result takes the sign of the divisor."""
    x1, x2 = _promote_numeric(x1, x2)
    if _dtypes.is_int(_t(x2).dtype):  # x % 0 is 0, as in JAX (XLA's rem would give x)
        x2 = _where_zero(x2, _like(1, x2), x2)
    r = lax.rem(x1, x2)
    if _dtypes.is_unsigned(_t(r).dtype):
        return r
    zero = _like(0, r)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(x2, zero)))
    return lax.select(fix, lax.add(r, x2), r)


mod = remainder


def fmod(x1, x2):
    """C's fmod: the sign of the dividend; an integer x % 0 is 0, as in JAX (which
    checks before bools count as ints: a bool x % False is XLA's, x)."""
    x1, x2 = _promote(x1, x2)
    if _dtypes.is_int(_t(x2).dtype):
        x2 = _where_zero(x2, _like(1, x2), x2)
    return lax.rem(_numeric(x1), _numeric(x2))


def floor_divide(x1, x2):
    """Integers: JAX's quotient fix-up by signs, so x // 0 is what JAX gives."""
    x1, x2 = _promote_numeric(x1, x2)
    dt = _t(x1).dtype
    if _dtypes.is_unsigned(dt):
        return lax.div(x1, x2)
    if _dtypes.is_int(dt):
        q = lax.div(x1, x2)
        zero = _like(0, q)
        adjust = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)),
                                 lax.ne(lax.rem(x1, x2), zero))
        return lax.select(adjust, lax.sub(q, _like(1, q)), q)
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """CPython's float_divmod (as JAX): exact at multiples, inf for x / 0."""
    mod = lax.rem(x1, x2)
    div = lax.div(_where_zero(x2, x1, lax.sub(x1, mod)), x2)
    fix = lax.bitwise_and(lax.ne(mod, _like(0, mod)), lax.ne(lax.sign(x2), lax.sign(mod)))
    return (lax.round(lax.select(fix, lax.sub(div, _like(1, div)), div), "to_nearest_even"),
            lax.select(fix, lax.add(mod, x2), mod))


def _where_zero(x, if_zero, otherwise):
    """where(x == 0, if_zero, otherwise), decided while tracing when x is known."""
    known = known_value(x)
    if known is not None and known.ndim == 0:
        return if_zero if known == 0 else otherwise
    return where(lax.eq(x, _like(0, x)), if_zero, otherwise)


def _like(value, x):
    """A Python number as a rank-0 operand of x's dtype and weak type."""
    return _as_dtype(value, _t(x).dtype, _t(x).weak)


def divmod(x1, x2):
    return floor_divide(x1, x2), remainder(x1, x2)


def _compare(lax_fn, name):
    """Complex numbers compare lexicographically, real parts first (JAX's order)."""
    def fn(x1, x2):
        x1, x2 = _promote(x1, x2)
        if _dtypes.is_complex(_t(x1).dtype) and lax_fn not in (lax.eq, lax.ne):
            re1, re2 = lax.real(x1), lax.real(x2)
            return lax.select(lax.eq(re1, re2), lax_fn(lax.imag(x1), lax.imag(x2)),
                              lax_fn(re1, re2))
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


equal, not_equal = _compare(lax.eq, "equal"), _compare(lax.ne, "not_equal")
less, less_equal = _compare(lax.lt, "less"), _compare(lax.le, "less_equal")
greater, greater_equal = _compare(lax.gt, "greater"), _compare(lax.ge, "greater_equal")


def _bitwise(lax_fn, name, promote=_promote):
    def fn(x1, x2):
        x1, x2 = promote(x1, x2)
        if _dtypes.is_inexact(_t(x1).dtype):
            raise TypeError(at_user_line(f"{name} needs integer or bool arrays, got "
                                         f"{_dtypes.SHORT_NAMES[_t(x1).dtype]}"))
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")
left_shift = _bitwise(lax.shift_left, "left_shift", _promote_numeric)  # bool shifts as int


def right_shift(x1, x2):
    x1, x2 = _promote_numeric(x1, x2)
    shift = lax.shift_right_logical if _dtypes.is_unsigned(_t(x1).dtype) else \
        lax.shift_right_arithmetic
    return shift(x1, x2)


def invert(x):
    (x,) = _promote(x)
    return lax.bitwise_not(x)


bitwise_not = invert


def logical_and(x1, x2):
    """Promoted first, then compared with 0, as in JAX: an int32 array and a Python
    float give a weak bool."""
    return lax.bitwise_and(*map(_to_bool, _promote(x1, x2)))


def logical_or(x1, x2):
    return lax.bitwise_or(*map(_to_bool, _promote(x1, x2)))


def logical_xor(x1, x2):
    return lax.bitwise_xor(*map(_to_bool, _promote(x1, x2)))


def logical_not(x):
    return lax.bitwise_not(*map(_to_bool, _promote(x)))


def isfinite(x):
    (x,) = _promote(x)
    if not _dtypes.is_inexact(_t(x).dtype):
        return full_like(x, True, dtype=bool_)
    if _dtypes.is_complex(_t(x).dtype):  # both parts finite
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isinf(x):
    (x,) = _promote(x)
    if not _dtypes.is_inexact(_t(x).dtype):
        return full_like(x, False, dtype=bool_)
    if _dtypes.is_complex(_t(x).dtype):  # either part infinite
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), _as_dtype(_np.inf, _t(x).dtype))


def isnan(x):
    """x != x for every dtype, as JAX: isnan(3) is a weak bool."""
    (x,) = _promote(x)
    return lax.ne(x, x)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """JAX's clip: bounds as a_min/a_max or min=/max=; complex values refused."""
    a_min, a_max = a_min if min is None else min, a_max if max is None else max
    if builtins.any(_dtypes.is_complex(_t(_operand(v)).dtype)
                    for v in (a, a_min, a_max) if v is not None):
        raise ValueError(at_user_line("Clip received a complex value either through the input "
                                      "or the min/max keywords; complex values have no order"))
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return _array(_operand(a))


def copysign(x1, x2):
    x1, x2 = _promote(x1, x2, to_inexact=True)
    if _dtypes.is_complex(_t(x1).dtype):
        raise TypeError(at_user_line("copysign does not support complex-valued inputs "
                                     "(as in JAX)"))
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def signbit(x):
    (x,) = _promote(x)
    dt = _t(x).dtype
    if _dtypes.is_complex(dt):
        raise ValueError(at_user_line("signbit does not support complex-valued inputs "
                                      "(as in JAX)"))
    if _dtypes.is_inexact(dt):
        bits = lax.bitcast_convert_type(x, _np.dtype(f"i{dt.itemsize}"))
        return lax.lt(bits, 0)
    return lax.lt(x, _np.zeros((), dt))  # a strong zero, as JAX: signbit(3) is strong


def deg2rad(x):
    (x,) = _promote(x, to_inexact=True)
    return lax.mul(x, _np.pi / 180)


def rad2deg(x):
    (x,) = _promote(x, to_inexact=True)
    return lax.mul(x, 180 / _np.pi)


radians, degrees = deg2rad, rad2deg


def hypot(x1, x2):
    """Scaled by the larger magnitude (as JAX), so x1*x1 cannot overflow: hypot(1e25,
    1e25) is finite in f32."""
    x1, x2 = _promote(x1, x2, to_inexact=True)
    if _dtypes.is_complex(_t(x1).dtype):
        raise ValueError(at_user_line("jnp.hypot is not well defined for complex-valued inputs; "
                                      "use abs() of each first"))
    x1, x2 = lax.abs(x1), lax.abs(x2)
    dt = _t(x1).dtype
    inf = _as_dtype(_np.inf, dt)
    either_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    zero, one = _as_dtype(0, dt), _as_dtype(1, dt, _t(x1).weak)
    big_is_zero = lax.eq(big, zero)
    ratio = lax.div(small, where(big_is_zero, one, big))
    scaled = lax.mul(big, lax.sqrt(lax.add(one, lax.mul(ratio, ratio))))
    finite = where(big_is_zero, big, scaled)
    # inf as JAX's lax._const: weak where the result is a weak scalar, so is the result
    return where(either_inf, _const(finite, _np.inf), finite)


def logaddexp(x1, x2):
    x1, x2 = _promote(x1, x2, to_inexact=True)
    return _logaddexp(x1, x2)


@custom_jvp
def _logaddexp(x1, x2):
    """JAX's: for complex values log1p(exp(x1 + x2 - 2 max)) added to the max, the
    imaginary part wrapped into [-pi, pi]; -|x1 - x2| as min - max (the same bits).
    Its derivative is JAX's custom rule below, 1/2 each at a tie."""
    amax = maximum(x1, x2)
    if _dtypes.is_complex(_t(x1).dtype):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, _np.array(2, _t(amax).dtype)))
        out = lax.add(amax, lax.log1p(lax.exp(delta)))
        im = lax.imag(out)
        pi, two_pi = (_np.array(v, _t(im).dtype) for v in (_np.pi, 2 * _np.pi))
        rem = lax.rem(lax.add(im, pi), two_pi)
        rem = lax.select(lax.lt(rem, _np.zeros((), _t(im).dtype)), lax.add(rem, two_pi), rem)
        return lax.complex(lax.real(out), lax.sub(rem, pi))
    return where(isnan(subtract(x1, x2)), add(x1, x2),
                 add(amax, log1p(exp(subtract(minimum(x1, x2), amax)))))


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    """JAX's rule: d/dx_i = exp(x_i - out), a +inf counted as 0 (so inf - inf is no
    nan), smooth where the formula's max has its kink (x1 == x2: 1/2 each)."""
    out = _logaddexp(*primals)
    return out, add(*[multiply(t, exp(subtract(_replace_inf(x), _replace_inf(out))))
                      for x, t in zip(primals, tangents)])


def _replace_inf(x):
    """0 where x (its real part) is +inf, else x."""
    re = real(x)
    return where(lax.eq(re, _like(_np.inf, re)), _like(0, x), x)


def conj(x):
    (x,) = _promote(x)
    return lax.conj(x) if _dtypes.is_complex(_t(x).dtype) else _array(x)


conjugate = conj


def real(x):
    (x,) = _promote(x)
    return lax.real(x) if _dtypes.is_complex(_t(x).dtype) else _array(x)


def imag(x):
    (x,) = _promote(x)
    if _dtypes.is_complex(_t(x).dtype):
        return lax.imag(x)
    return lax.convert_element_type(full_like(x, 0), _t(x).dtype, weak_type=_t(x).weak)


# the array API's names (and NumPy 2's) for the functions above
acos, acosh, asin, asinh, atan, atanh = arccos, arccosh, arcsin, arcsinh, arctan, arctanh
atan2 = arctan2
bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift


def fabs(x, /):
    (x,) = _promote(x, to_inexact=True)
    if _dtypes.is_complex(_t(x).dtype):
        raise TypeError(at_user_line("ufunc 'fabs' does not support complex dtypes"))
    return lax.abs(x)


def fmax(x1, x2):
    """The larger, ignoring a NaN in either (NaN only where both are)."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2):
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def rint(x, /):
    """Round half to even; integers and bools become the default float, as in JAX."""
    (x,) = _promote(x)
    dt = _t(x).dtype
    if not _dtypes.is_inexact(dt):
        return lax.convert_element_type(x, _dtypes.default_float())
    if _dtypes.is_complex(dt):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, "to_nearest_even")


def positive(x, /):
    (x,) = _promote(x)
    return _array(x)


def heaviside(x1, x2, /):
    """0 below zero, 1 above, x2 at zero (NaN stays NaN)."""
    x1, x2 = _promote_inexact(_operand(x1), _operand(x2))
    zero, one = _const(x1, 0), _const(x1, 1)
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), one,
                                               where(isnan(x1), x1, x2)))


def frexp(x, /):
    """(mantissa in [0.5, 1), exponent) from the float's bits, as JAX computes them."""
    (x,) = _promote_inexact(_operand(x))
    if _dtypes.is_complex(_t(x).dtype):
        raise TypeError(at_user_line("frexp does not support complex-valued inputs"))
    return _frexp(x)


@custom_jvp
def _frexp(x):
    dt = _t(x).dtype
    info = _dtypes.finfo(dt)
    int_dt = _np.dtype(f"int{info.bits}")
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    tiny = lax.lt(lax.abs(x), _np.array(info.tiny, dt))  # subnormal: scale up first
    x1 = lax.bitcast_convert_type(where(tiny, lax.mul(x, _np.array(1 << info.nmant, dt)), x),
                                  int_dt)
    x2 = where(tiny, _np.array(-info.nmant, int_dt), _np.array(0, int_dt))
    c = lambda v: _np.array(v, int_dt)  # noqa: E731
    x2 = lax.add(x2, lax.add(lax.sub(lax.bitwise_and(
        lax.shift_right_arithmetic(x1, c(info.nmant)), c(mask)), c(bias)), c(1)))
    x1 = lax.bitwise_and(x1, lax.bitwise_not(c(mask << info.nmant)))
    x1 = lax.bitwise_or(x1, c((bias - 1) << info.nmant))
    x1 = lax.bitcast_convert_type(x1, dt)
    special = logical_or(logical_or(isinf(x), isnan(x)), lax.eq(x, _np.array(0, dt)))
    x2 = where(special, _np.array(0, int_dt), x2)
    return where(special, x, x1), lax.convert_element_type(x2, _dtypes.int32)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    return (m, e), (lax.mul(t, lax.exp2(lax.neg(lax.convert_element_type(e, _t(t).dtype)))),
                    _np.zeros(_t(e).shape, _float0))


def ldexp(x1, x2, /):
    """x1 * 2**x2 through frexp, so no intermediate power overflows (JAX's)."""
    x1, x2 = _operand(x1), _operand(x2)
    dt1, dt2 = _t(x1).dtype, _t(x2).dtype
    if _dtypes.is_complex(dt1) or _dtypes.is_inexact(dt2):
        raise ValueError(at_user_line(f"ldexp not supported for input types "
                                      f"{(_np.dtype(dt1), _np.dtype(dt2))}"))
    (x1,) = _promote(x1, to_inexact=True)
    m, e = frexp(x1)
    e = astype(add(astype(e, _t(x2).dtype), x2), _t(x1).dtype)
    positive_e = greater(e, 0)
    m = where(positive_e, multiply(m, 2), m)
    e = where(positive_e, subtract(e, 1), e)
    x = multiply(m, power(_like(2, m), e))
    return where(logical_or(isinf(x1), equal(x1, 0)), x1, x)


def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign."""
    (x,) = _promote_inexact(_operand(x))
    if out is not None:
        raise NotImplementedError(at_user_line(
            "The 'out' argument to jnp.modf is not supported."))
    whole = where(lax.ge(x, _const(x, 0)), floor(x), ceil(x))
    return subtract(x, whole), whole


def gcd(x1, x2):
    """Euclid's algorithm on all elements at once, in a while loop (JAX's)."""
    x1, x2 = _promote(x1, x2)
    if not _dtypes.is_int(_t(x1).dtype):
        raise ValueError(at_user_line("Arguments to jnp.gcd must be integers."))
    from ._reductions import any as any_  # _reductions builds on this module

    def body(xs):
        a, b = xs
        nz = not_equal(b, 0)
        a, b = where(nz, b, a), where(nz, lax.rem(a, where(nz, b, _const(b, 1))), _const(b, 0))
        return where(less(a, b), b, a), where(less(a, b), a, b)

    out, _ = lax.while_loop(lambda xs: any_(not_equal(xs[1], 0)), body,
                            tuple(broadcast_arrays(absolute(x1), absolute(x2))))
    return out


def lcm(x1, x2):
    x1, x2 = _promote(x1, x2)
    x1, x2 = absolute(x1), absolute(x2)
    if not _dtypes.is_int(_t(x1).dtype):
        raise ValueError(at_user_line("Arguments to jnp.lcm must be integers."))
    d = gcd(x1, x2)
    return where(equal(d, 0), _const(d, 0),
                 multiply(x1, floor_divide(x2, where(equal(d, 0), _const(d, 1), d))))


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0 with JAX's derivatives there (its Maclaurin series)."""
    (x,) = _promote_inexact(_operand(x))
    eq_zero = lax.eq(x, _const(x, 0))
    pi_x = lax.mul(_const(x, _np.pi), x)
    safe = where(eq_zero, _const(x, 1), pi_x)
    return where(eq_zero, _sinc_maclaurin(0)(pi_x), lax.div(lax.sin(safe), safe))


_SINC_TERMS = {}


def _sinc_maclaurin(k):
    """The k-th derivative of sinc at 0 as a function of x (zero times x, so it has x's
    type), whose derivative is the (k+1)-th: every order of grad is right at 0."""
    if k not in _SINC_TERMS:
        @custom_jvp
        def term(x):
            c = 0 if k % 2 else (-1) ** (k // 2) / (k + 1)
            return lax.add(lax.mul(x, _const(x, 0)), _const(x, c))

        @term.defjvp
        def term_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return term(x), lax.mul(_sinc_maclaurin(k + 1)(x), t)

        _SINC_TERMS[k] = term
    return _SINC_TERMS[k]


def logaddexp2(x1, x2, /):
    x1, x2 = _promote(x1, x2, to_inexact=True)
    return _logaddexp2(x1, x2)


@custom_jvp
def _logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2) as JAX's lax logaddexp2; its derivative JAX's rule below."""
    amax = maximum(x1, x2)
    invln2 = _const(amax, 1 / _np.log(2))
    if _dtypes.is_complex(_t(x1).dtype):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, _const(amax, 2)))
        out = lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(delta))))
        im = lax.imag(out)
        period = _np.array(_np.pi / _np.log(2), _t(im).dtype)
        rem = lax.rem(lax.add(im, period), lax.mul(period, _np.array(2, _t(im).dtype)))
        rem = lax.select(lax.lt(rem, _np.zeros((), _t(im).dtype)),
                         lax.add(rem, lax.mul(period, _np.array(2, _t(im).dtype))), rem)
        return lax.complex(lax.real(out), lax.sub(rem, period))
    delta = lax.sub(x1, x2)
    return where(isnan(delta), lax.add(x1, x2),
                 lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))))


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    out = _logaddexp2(*primals)
    return out, add(*[multiply(t, exp2(subtract(_replace_inf(x), _replace_inf(out))))
                      for x, t in zip(primals, tangents)])


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to nan, infinities to the dtype's extremes (or posinf/neginf), per part for
    complex x."""
    (x,) = _promote(x)
    dt = _t(x).dtype
    if not _dtypes.is_inexact(dt):
        return _array(x)
    if _dtypes.is_complex(dt):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = _dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    as_dt = lambda v: astype(v, dt) if isinstance(v, Tracer) or _is_array(v) else \
        _np.array(v, dt)  # noqa: E731
    inf = _np.array(_np.inf, dt)
    out = where(isnan(x), as_dt(nan), x)
    out = where(lax.eq(out, inf), as_dt(posinf), out)
    return where(lax.eq(out, lax.neg(inf)), as_dt(neginf), out)


def spacing(x, /):
    """The distance to the next float away from zero (JAX's: float16 towards +inf)."""
    (x,) = _promote(x, to_inexact=True)
    dt = _t(x).dtype
    if _dtypes.is_complex(dt):
        raise ValueError(at_user_line("jnp.spacing is not defined for complex inputs."))
    x = _as_dtype(x, dt)  # strong, as JAX's result (nextafter's is)
    inf = _const(x, _np.inf)
    if dt == _dtypes.float16:
        return lax.sub(lax.nextafter(x, inf), x)
    result = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    return where(lax.eq(result, _const(result, 0)),
                 copysign(_const(x, _dtypes.finfo(dt).smallest_subnormal), x), result)


# Cephes' Chebyshev coefficients of i0e (exp(-|x|) i0(x)) on [0, 8] and (8, inf), as
# JAX's bessel_i0e uses them; float64 takes the longer series, whose tail is float32's
_I0E_A = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1]
_I0E_B = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1]


def i0(x):
    """The modified Bessel function of the first kind, order 0: exp(|x|) i0e(|x|), with
    i0e by JAX's Chebyshev series (half floats computed in float32), differentiated
    through the series."""
    (x,) = _promote_inexact(_operand(x))
    dt = _t(x).dtype
    if not _dtypes.is_float(dt):
        raise ValueError(at_user_line(f"Unsupported input type to jnp.i0: {dt}"))
    return lax.convert_element_type(_i0(x), dt, weak_type=_t(x).weak)  # i0(2) is weak


@custom_jvp
def _i0(x):
    dt = _t(x).dtype
    ax = lax.abs(x)
    wide = dt if dt in (_dtypes.float32, _dtypes.float64) else _dtypes.float32
    a = lax.convert_element_type(ax, wide)
    long = wide == _dtypes.float64
    c = lambda v: _np.array(v, wide)  # noqa: E731
    small = lax.le(a, c(8.0))
    le_8 = _chebyshev(lax.sub(lax.mul(c(0.5), a), c(2.0)), _I0E_A if long else _I0E_A[-18:])
    a_big = where(small, c(9.0), a)  # no 1/sqrt(0) in the branch not taken: its gradient
    gt_8 = lax.div(_chebyshev(lax.sub(lax.div(c(32.0), a_big), c(2.0)),
                              _I0E_B if long else _I0E_B[-7:]), lax.sqrt(a_big))
    i0e = lax.convert_element_type(where(small, le_8, gt_8), dt)
    return lax.mul(lax.exp(ax), i0e)


@_i0.defjvp
def _i0_jvp(primals, tangents):
    """The series' derivative, 0 at 0 (where |x| has its kink), as JAX's rule."""
    from ..ad import jvp  # ad builds on the primitives, which build on this package
    out, t_out = jvp(_i0.fun, primals, tangents)
    return out, where(lax.eq(primals[0], _const(primals[0], 0)), _const(t_out, 0), t_out)


def _chebyshev(x, coefficients):
    """Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl)."""
    zero = lax.sub(x, x)
    b0 = b1 = b2 = zero
    for coefficient in coefficients:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(x, b1), b2), _np.array(coefficient, _t(x).dtype))
    return lax.mul(_np.array(0.5, _t(x).dtype), lax.sub(b0, b2))


def bitwise_count(x, /):
    """The number of 1 bits of |x|, as uint8 (NumPy's rule)."""
    (x,) = _promote_numeric(x)
    return astype(lax.population_count(absolute(x)), _dtypes.uint8)
