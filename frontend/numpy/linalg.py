"""tracehlo.numpy.linalg: norms (factorizations arrive with custom calls later)."""
import numpy as _np

from ..core import at_user_line as _at_user_line
from .. import numpy as _tnp
from ._ufuncs import _abs_square
from ._util import _promote

__all__ = ["norm"]


def norm(x, ord=None, axis=None, keepdims=False):
    x = _tnp.asarray(x) if not hasattr(x, "shape") else x
    (x,) = _promote(x, to_inexact=True)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and _tnp.ndim(x) == 2) or (
                ord == 2 and _tnp.ndim(x) == 1):
            out = _tnp.sqrt(_tnp.sum(_abs_square(x)))
            return _tnp.reshape(out, (1,) * _tnp.ndim(x)) if keepdims else out
        axis = tuple(range(_tnp.ndim(x)))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        a = _tnp.abs(x)
        if ord is None or ord == 2:
            return _tnp.sqrt(_tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord == _np.inf:
            return _tnp.max(a, axis=axes, keepdims=keepdims)
        if ord == -_np.inf:
            return _tnp.min(a, axis=axes, keepdims=keepdims)
        if ord == 0:
            return _tnp.sum(_tnp.astype(_tnp.not_equal(x, 0), x.dtype), axis=axes,
                           keepdims=keepdims)
        if ord == 1:
            return _tnp.sum(a, axis=axes, keepdims=keepdims)
        if isinstance(ord, (int, float)):
            return _tnp.power(_tnp.sum(_tnp.power(a, ord), axis=axes, keepdims=keepdims),
                             1.0 / ord)
    elif len(axes) == 2:
        r, c = (a % _tnp.ndim(x) for a in axes)
        if ord in (None, "fro", "f"):
            return _tnp.sqrt(_tnp.sum(_abs_square(x), axis=axes, keepdims=keepdims))
        if ord in (1, -1):
            col = _tnp.sum(_tnp.abs(x), axis=r, keepdims=True)
            red = _tnp.max if ord == 1 else _tnp.min
            out = red(col, axis=c, keepdims=True)
            return out if keepdims else _tnp.squeeze(out, axis=(r, c))
        if ord in (_np.inf, -_np.inf):
            row = _tnp.sum(_tnp.abs(x), axis=c, keepdims=True)
            red = _tnp.max if ord == _np.inf else _tnp.min
            out = red(row, axis=r, keepdims=True)
            return out if keepdims else _tnp.squeeze(out, axis=(r, c))
    raise NotImplementedError(_at_user_line(
        f"linalg.norm with ord={ord!r} over {len(axes)} axes is not supported"))
