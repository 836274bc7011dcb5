"""Elementwise functions (NumPy's ufuncs) with JAX's promotion and edge values."""
from __future__ import annotations

import builtins
import operator

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..custom_derivatives import custom_jvp
from ..core import Tracer, at_user_line, known_value
from ._util import (
    _array, _as_dtype, _const, _is_array, _operand, _promote, _t, _to_bool, astype, bool_,
    where)
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
true_divide = divide = _binary(lax.div, True, "divide")
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
    integer exponent keeps the base's type (lax.pow: weak only if both are); else promote."""
    n = _static_exponent(x2)
    if n is not None:
        return lax.integer_pow(_numeric(_promote(x1)[0]), n)
    x1, x2 = _operand(x1), _operand(x2)
    t1, t2 = _t(x1), _t(x2)
    if _dtypes.is_inexact(t1.dtype) and _dtypes.is_int(t2.dtype) and not t2.weak:
        x1 = _as_dtype(x1, t1.dtype)
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
