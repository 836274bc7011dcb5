"""1-D convolution and correlation, and polynomials as coefficient arrays (highest
power first), as JAX computes them."""
from __future__ import annotations

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import ConcretizationError, Tracer, at_user_line
from .. import numpy as t
from ._indexing import IndexUpdateRef as _At
from ._indexing import getitem as _ix
from ._numeric import _arraylike, _sl
from ._util import _promote_dtypes, _promote_inexact, _shape, _static, _static_int, _t, ndim


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    a, v = _arraylike("convolve", a, v)
    return _conv(a, v, mode, "convolve", preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    a, v = _arraylike("correlate", a, v)
    return _conv(a, v, mode, "correlate", preferred_element_type)


def _conv(x, y, mode, op, preferred_element_type):
    """JAX's _conv, with its convolution as a gather of the padded input's windows and
    a dot with the kernel (no convolution primitive)."""
    if ndim(x) != 1 or ndim(y) != 1:
        raise ValueError(at_user_line(f"{op}() only support 1-dimensional inputs."))
    x, y = (_promote_inexact if preferred_element_type is None else _promote_dtypes)(x, y)
    if _shape(x)[0] == 0 or _shape(y)[0] == 0:
        raise ValueError(at_user_line(
            f"{op}: inputs cannot be empty, got shapes {_shape(x)} and {_shape(y)}."))
    reverse = False
    if op == "correlate":
        y = t.conj(y)
        if _shape(x)[0] < _shape(y)[0]:
            x, y, reverse = y, x, True
    else:
        if _shape(x)[0] < _shape(y)[0]:
            x, y = y, x
        y = t.flip(y)
    m = _shape(y)[0]
    if mode == "valid":
        lo, hi = 0, 0
    elif mode == "same":
        lo, hi = m // 2, m - m // 2 - 1
    elif mode == "full":
        lo, hi = m - 1, m - 1
    else:
        raise ValueError(at_user_line("mode must be one of ['full', 'same', 'valid']"))
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize(preferred_element_type)
        kinds = (_kind(_t(x).dtype), _kind(dt))
        if kinds not in (("i", "i"), ("i", "f"), ("f", "f"), ("c", "c")):
            raise TypeError(at_user_line(
                "Input type is incompatible with `preferred_element_type`. The compatible "
                "combinations of (input_type, preferred_element_type) are (integral, "
                "integral), (integral, floating), (floating, floating), (complex, complex)."))
        if dt.itemsize < _t(x).dtype.itemsize:
            raise TypeError(at_user_line(
                "`preferred_element_type` must not be narrower than the original type."))
        x, y = t.astype(x, dt), t.astype(y, dt)
    xp = t.pad(x, (lo, hi))
    n_out = _shape(xp)[0] - m + 1
    windows = _ix(xp, _np.arange(n_out)[:, None] + _np.arange(m)[None, :])
    out = t.matmul(windows, y)
    return t.flip(out) if reverse else out


def _kind(dt):
    """'i' (bool and integers), 'f' or 'c', as JAX's preferred_element_type check reads them."""
    return "c" if _dtypes.is_complex(dt) else "f" if _dtypes.is_inexact(dt) else "i"


def polyval(p, x, *, unroll=16):
    """Horner's rule as a scan over p's leading axis (JAX's)."""
    p, x = _promote_dtypes(*_arraylike("polyval", p, x))
    shape = t.broadcast_shapes(_shape(p)[1:], _shape(x))
    y = t.zeros(shape, _t(x).dtype)
    y, _ = lax.scan(lambda y, c: (t.add(t.multiply(y, x), c), None), y, p, unroll=unroll)
    return y


def polyadd(a1, a2):
    a1, a2 = _promote_dtypes(*_arraylike("polyadd", a1, a2))
    if _shape(a2)[0] > _shape(a1)[0]:
        a1, a2 = a2, a1
    return _At(a1, slice(-_shape(a2)[0], None)).add(a2)


def polysub(a1, a2):
    a1, a2 = _promote_dtypes(*_arraylike("polysub", a1, a2))
    return polyadd(a1, t.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    a1, a2 = _promote_inexact(*_arraylike("polymul", a1, a2))
    if trim_leading_zeros and (_shape(a1)[0] > 1 or _shape(a2)[0] > 1):
        a1, a2 = _trim_leading_zeros(a1), _trim_leading_zeros(a2)
    if _shape(a1)[0] == 0:
        a1 = t.zeros(1, _t(a2).dtype)
    if _shape(a2)[0] == 0:
        a2 = t.zeros(1, _t(a1).dtype)
    return convolve(a1, a2, mode="full")


def _trim_leading_zeros(a):
    """a without its leading zeros: the length depends on the values, so a must be
    concrete (as JAX's trim_zeros)."""
    values = _np.asarray(_static(a, "trim_leading_zeros=True needs concrete coefficients; "
                                    "polymul's argument"))
    nonzero = _np.flatnonzero(values)
    return _sl(a, 0, int(nonzero[0]) if nonzero.size else values.shape[0])


def polyder(p, m=1):
    (p,) = _arraylike("polyder", p)
    m = _static_int(_static(m, "'m' argument of jnp.polyder"), "'m' argument of jnp.polyder")
    (p,) = _promote_inexact(p)
    if m < 0:
        raise ValueError(at_user_line("Order of derivative must be positive"))
    if m == 0:
        return p
    n, dt = _shape(p)[0], _t(p).dtype
    coeff = t.prod(t.subtract(t.expand_dims(t.arange(m, n, dtype=dt), 0),
                              t.expand_dims(t.arange(m, dtype=dt), 1)), 0)
    return t.multiply(_sl(p, 0, None, -m), t.flip(coeff))


def polyint(p, m=1, k=None):
    m = _static_int(_static(m, "'m' argument of jnp.polyint"), "'m' argument of jnp.polyint")
    p, k = _promote_inexact(*_arraylike("polyint", p, 0 if k is None else k))
    if m < 0:
        raise ValueError(at_user_line("Order of integral must be positive (see polyder)"))
    k = t.atleast_1d(k)
    if _shape(k)[0] == 1:
        k = t.full((m,), _ix(k, 0))
    if _shape(k) != (m,):
        raise ValueError(at_user_line("k must be a scalar or a rank-1 array of length 1 or m."))
    if m == 0:
        return p
    dt = _t(p).dtype
    grid = t.subtract(t.expand_dims(t.arange(_shape(p)[0] + m, dtype=dt), 0),
                      t.expand_dims(t.arange(m, dtype=dt), 1))
    coeff = t.flip(t.prod(t.maximum(1, grid), 0))
    return t.true_divide(t.concatenate((p, k)), coeff)


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (of a square
    matrix: its eigenvalues' polynomial), one convolution per root, as JAX's."""
    (zeros,) = _promote_inexact(*_arraylike("poly", seq_of_zeros))
    zeros = t.atleast_1d(zeros)
    sh = _shape(zeros)
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        zeros = t.linalg.eigvals(zeros)
    if ndim(zeros) != 1:
        raise ValueError(at_user_line("input must be 1d or non-empty square 2d array."))
    dt = _t(zeros).dtype
    a = t.ones((1,) if sh[0] else (), dt)
    for k in range(sh[0]):
        a = convolve(a, t.stack([t.ones((), dt), t.negative(_ix(zeros, k))]), mode="full")
    return a


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) by long division; the remainder keeps u's length unless
    trim_leading_zeros (concrete u and v), which drops leading |c| < sqrt(eps)."""
    u, v = _promote_inexact(*_arraylike("polydiv", u, v))
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = t.divide(1.0, _ix(v, 0))
    q = t.zeros(max(m - n + 1, 1), _t(u).dtype)
    for k in range(m - n + 1):
        d = t.multiply(scale, _ix(u, k))
        q = _At(q, k).set(d)
        u = _At(u, slice(k, k + n + 1)).add(t.negative(t.multiply(d, v)))
    if trim_leading_zeros:
        small = _np.abs(_np.asarray(_static(
            u, "trim_leading_zeros=True needs concrete coefficients; polydiv's argument"))) \
            < _np.sqrt(t.finfo(_t(u).dtype).eps)
        u = _sl(u, 0, int(small.argmin()) if not small.all() else _shape(u)[0])
    return q, u


def roots(p, *, strip_zeros=True):
    """The eigenvalues of p's companion matrix, as JAX's. Leading zeros are stripped,
    which needs concrete coefficients; strip_zeros=False keeps the shape static and
    returns NaN for the roots they stand for."""
    (p,) = _promote_inexact(*_arraylike("roots", p))
    p = t.atleast_1d(p)
    if ndim(p) != 1:
        raise ValueError(at_user_line("Input must be a rank-1 array."))
    if _shape(p)[0] < 2:
        return t.array([], dtype=_complex_of(_t(p).dtype))
    num_leading_zeros = t.where(t.all(p == 0), _shape(p)[0], t.argmin(p == 0))
    if strip_zeros:
        if isinstance(num_leading_zeros, Tracer):
            raise ConcretizationError(at_user_line(
                "The error occurred in the tracehlo.numpy.roots() function. To use this within "
                "a JIT-compiled context, pass strip_zeros=False, but be aware that leading "
                "zeros will result in some returned roots being set to NaN."))
        return _roots_no_zeros(_sl(p, 0, int(num_leading_zeros)))
    return _roots_with_zeros(p, num_leading_zeros)


def _complex_of(dtype):
    return _dtypes.canonicalize(_np.result_type(dtype, _np.complex64))


def _roots_no_zeros(p):
    n = _shape(p)[0]
    if n < 2:
        return t.array([], dtype=_complex_of(_t(p).dtype))
    a = t.diag(t.ones((n - 2,), _t(p).dtype), -1)
    a = _At(a, (0, slice(None))).set(-_sl(p, 0, 1) / _ix(p, 0))
    return t.linalg.eigvals(a)


def _roots_with_zeros(p, num_leading_zeros):
    """Leading zeros rolled to the end (all zeros: ones, so geev sees no zero matrix),
    their zero roots sorted last and set to NaN."""
    n = _shape(p)[0]
    p = t.where(n == num_leading_zeros, 1.0, p)
    r = _roots_no_zeros(t.roll(p, -num_leading_zeros))
    r = lax.sort([r == 0, r], dimension=0, num_keys=1)[1]
    return t.where(t.arange(_shape(r)[0]) < _shape(r)[0] - num_leading_zeros, r,
                   complex(_np.nan, _np.nan))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least squares on x's Vandermonde matrix with its columns scaled to unit norm, as
    JAX's (and NumPy's)."""
    x, y = _arraylike("polyfit", x, y)
    if isinstance(deg, Tracer):
        raise ConcretizationError(at_user_line("deg must be int"))
    deg = int(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError(at_user_line("expected deg >= 0"))
    if ndim(x) != 1:
        raise TypeError(at_user_line("expected 1D vector for x"))
    if _shape(x)[0] == 0:
        raise TypeError(at_user_line("expected non-empty vector for x"))
    if ndim(y) < 1 or ndim(y) > 2:
        raise TypeError(at_user_line("expected 1D or 2D array for y"))
    if _shape(x)[0] != _shape(y)[0]:
        raise TypeError(at_user_line("expected x and y to have same length"))
    if cov and cov != "unscaled" and _shape(x)[0] <= order:  # JAX's check, before the work
        raise ValueError(at_user_line(
            "the number of data points must exceed order to scale the covariance matrix"))
    if rcond is None:
        rcond = _shape(x)[0] * float(t.finfo(_t(x).dtype).eps)
    rcond = float(_static(rcond, "rcond"))
    lhs, rhs = t.vander(x, order), y
    if w is not None:
        (w,) = _promote_inexact(*_arraylike("polyfit", w))
        if ndim(w) != 1:
            raise TypeError(at_user_line("expected a 1-d array for weights"))
        if _shape(w)[0] != _shape(y)[0]:
            raise TypeError(at_user_line("expected w and y to have the same length"))
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if ndim(rhs) == 2 else w)
    scale = t.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = t.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if ndim(c) > 1 else c / scale
    if full:
        return c, resids, rank, s, t.asarray(rcond)
    if not cov:
        return c
    vbase = t.linalg.inv(t.dot(lhs.T, lhs)) / t.outer(scale, scale)
    fac = t.array(1.0) if cov == "unscaled" else resids / (_shape(x)[0] - order)
    if ndim(y) == 1:
        return c, vbase * t.atleast_1d(fac)[None]
    return c, vbase[:, :, None] * t.atleast_1d(fac)[None, None, :]
