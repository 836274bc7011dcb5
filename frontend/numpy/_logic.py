"""Whole-array comparisons (isclose, allclose, array_equal, array_equiv, isin) and type
predicates (isreal, iscomplex, isposinf, isneginf, isscalar, iscomplexobj, isrealobj),
as JAX defines them."""
from __future__ import annotations

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import Tracer, at_user_line
from .. import numpy as t
from ._numeric import _arraylike
from ._util import _const, _is_array, _promote, _promote_dtypes, _shape, _t


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| in a and b's inexact dtype (tolerances converted to
    it, strong, as JAX's); infinities are close only to themselves."""
    _arraylike("isclose", a, b)
    a, b = _promote(a, b, to_inexact=True)
    dt = _t(a).dtype
    real = _np.dtype(_dtypes.finfo(dt).dtype) if _dtypes.is_complex(dt) else dt
    rtol, atol = t.astype(t.asarray(rtol), real), t.astype(t.asarray(atol), real)
    in_range = t.less_equal(t.abs(t.subtract(a, b)), t.add(atol, t.multiply(rtol, t.abs(b))))
    out = t.logical_or(t.equal(a, b), t.logical_and(t.isfinite(b), in_range))
    if equal_nan:
        out = t.logical_or(out, t.logical_and(t.isnan(a), t.isnan(b)))
    return t.asarray(out)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return t.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """False (an array) for different shapes, as JAX: no broadcasting."""
    a1, a2 = t.asarray(a1), t.asarray(a2)
    if _shape(a1) != _shape(a2):
        return t.asarray(False)
    eq = t.equal(a1, a2)
    if equal_nan:
        eq = t.logical_or(eq, t.logical_and(t.isnan(a1), t.isnan(a2)))
    return t.all(eq)


def array_equiv(a1, a2):
    """Equal after broadcasting; False where the shapes do not broadcast."""
    a1, a2 = t.asarray(a1), t.asarray(a2)
    try:
        _np.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return t.asarray(False)
    return t.all(t.equal(a1, a2))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Membership by comparing every pair ('auto', 'compare_all'), or by a binary
    search in the sorted test elements ('binary_search'); 'sort' is JAX's third
    method, computed here as 'binary_search' (the same result)."""
    element, test_elements = _arraylike("isin", element, test_elements)
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(at_user_line(
            f"method={method!r} is not implemented; options are 'compare_all', "
            "'binary_search', 'sort', and 'auto'"))
    a1, a2 = (t.ravel(x) for x in _promote_dtypes(element, test_elements))
    if t.size(a1) == 0 or t.size(a2) == 0:
        return (t.ones if invert else t.zeros)(_shape(element), dtype=t.bool_)
    if method in ("auto", "compare_all"):
        eq = t.equal(t.expand_dims(a1, 1), t.expand_dims(a2, 0))
        out = t.logical_not(t.any(eq, -1)) if invert else t.any(eq, -1)
    else:
        a2 = t.sort(a2)
        found = t.take(a2, t.clip(t.searchsorted(a2, a1), 0, t.size(a2) - 1))
        out = (t.not_equal if invert else t.equal)(a1, found)
    return t.reshape(out, _shape(element))


def isposinf(x, /, out=None):
    return _isposneginf(_np.inf, x, out)


def isneginf(x, /, out=None):
    return _isposneginf(-_np.inf, x, out)


def _isposneginf(infinity, x, out):
    (x,) = _arraylike("isposinf", x)
    if out is not None:
        raise NotImplementedError(at_user_line(
            "The 'out' argument to isneginf/isposinf is not supported."))
    dt = _t(x).dtype
    if _dtypes.is_complex(dt):
        raise ValueError(at_user_line(
            "isposinf/isneginf are not well defined for complex types"))
    if _dtypes.is_inexact(dt):
        return lax.eq(x, _np.array(infinity, dt))  # strong: a bool from a weak x is strong
    return t.full_like(x, False, dtype=t.bool_)


def isreal(x):
    i = t.imag(x)
    return lax.eq(i, _const(i, 0))


def iscomplex(x):
    i = t.imag(x)
    return lax.ne(i, _const(i, 0))


def isscalar(element):
    """True for Python and NumPy scalars and 0-d arrays (traced ones too), as JAX."""
    if _np.isscalar(element):
        return True
    if isinstance(element, Tracer) or _is_array(element):
        return len(_shape(element)) == 0
    return False


def iscomplexobj(x):
    if isinstance(x, (complex, _np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, _np.generic)):
        return False
    return _dtypes.is_complex(_t(x if _is_array(x) else t.asarray(x)).dtype)


def isrealobj(x):
    return not iscomplexobj(x)
