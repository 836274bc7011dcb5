"""Index arrays: meshgrid, indices, ix_, the triangle and diagonal indices, and
unravel_index / ravel_multi_index, with JAX's dtypes and static-argument rules."""
from __future__ import annotations

import math

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import ConcretizationError, Tracer, at_user_line
from .. import numpy as t
from ._numeric import _arraylike
from ._util import _promote_dtypes, _static, _static_int, _shape, _t, ndim


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    args = _arraylike("meshgrid", *xi)
    if not copy:
        raise ValueError(at_user_line("jnp.meshgrid only supports copy=True"))
    if indexing not in ("xy", "ij"):
        raise ValueError(at_user_line(
            f"Valid values for indexing are 'xy' and 'ij', got {indexing}"))
    if any(ndim(a) != 1 for a in args):
        raise ValueError(at_user_line(
            "Arguments to jnp.meshgrid must be 1D, got shapes "
            f"{[_shape(a) for a in args]}"))
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    shape = [1 if sparse else _shape(a)[0] for a in args]
    out = [lax.broadcast_in_dim(
        a, [*shape[:i], _shape(a)[0], *shape[i + 1:]] if sparse else shape, (i,))
        for i, a in enumerate(args)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def indices(dimensions, dtype=None, sparse=False):
    dt = _dtypes.default_int() if dtype is None else _dtypes.canonicalize(dtype)
    dims = tuple(_static_int(_static(d, "dimensions argument of jnp.indices"),
                             "dimensions argument of jnp.indices") for d in dimensions)
    n = len(dims)
    out = [lax.broadcast_in_dim(lax.iota(dt, d), (1,) * i + (d,) + (1,) * (n - i - 1)
                                if sparse else dims, (i,)) for i, d in enumerate(dims)]
    if sparse:
        return tuple(out)
    return t.stack(out, 0) if out else t.asarray(_np.array([], dt))


def ix_(*args):
    """Open-mesh index arrays: the i-th of n has its values along axis i."""
    args = _arraylike("ix", *args)
    out = []
    for i, a in enumerate(args):
        if ndim(a) != 1:
            raise ValueError(at_user_line(
                f"Arguments to jnp.ix_ must be 1-dimensional, got shape {_shape(a)}"))
        if _t(a).dtype == _dtypes.bool_:
            raise NotImplementedError(at_user_line(
                "Boolean arguments to jnp.ix_ are not implemented"))
        shape = [1] * len(args)
        shape[i] = _shape(a)[0]
        out.append(t.zeros(shape, _dtypes.canonicalize(_np.intp)) if t.size(a) == 0 else
                   lax.broadcast_in_dim(a, shape, (i,)))
    return tuple(out)


def _dims(n, k, m, fn):
    what = f"argument of jnp.{fn}"
    n, k = (_static_int(_static(v, f"{name} {what}"), f"{name} {what}")
            for name, v in (("n", n), ("k", k)))
    m = n if m is None else _static_int(_static(m, f"m {what}"), f"m {what}")
    return n, k, m


def tril_indices(n, k=0, m=None):
    """Constants: n, k and m are static, so NumPy computes them (no nonzero to run)."""
    n, k, m = _dims(n, k, m, "tril_indices")
    return tuple(t.asarray(i.astype(_dtypes.default_int())) for i in _np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    n, k, m = _dims(n, k, m, "triu_indices")
    return tuple(t.asarray(i.astype(_dtypes.default_int())) for i in _np.triu_indices(n, k, m))


def _shape_of_2d(arr, fn):
    s = arr.shape if hasattr(arr, "shape") else _shape(_arraylike(fn, arr)[0])
    if len(s) != 2:
        raise ValueError(at_user_line("Only 2-D inputs are accepted"))
    return s


def tril_indices_from(arr, k=0):
    s = _shape_of_2d(arr, "tril_indices_from")
    return tril_indices(s[0], k=k, m=s[1])


def triu_indices_from(arr, k=0):
    s = _shape_of_2d(arr, "triu_indices_from")
    return triu_indices(s[0], k=k, m=s[1])


def diag_indices(n, ndim=2):
    n = _static_int(_static(n, "'n' argument of jnp.diag_indices()"), "n")
    ndim = _static_int(_static(ndim, "'ndim' argument of jnp.diag_indices()"), "ndim")
    if n < 0:
        raise ValueError(at_user_line(f"n argument to diag_indices must be nonnegative, "
                                      f"got {n}"))
    if ndim < 0:
        raise ValueError(at_user_line(f"ndim argument to diag_indices must be nonnegative, "
                                      f"got {ndim}"))
    dt = _dtypes.default_int() if n <= _np.iinfo(_np.int32).max else _np.dtype(_np.int64)
    return (lax.iota(dt, n),) * ndim


def diag_indices_from(arr):
    (arr,) = _arraylike("diag_indices_from", arr)
    if ndim(arr) < 2:
        raise ValueError(at_user_line("input array must be at least 2-d"))
    if len(set(_shape(arr))) != 1:
        raise ValueError(at_user_line("All dimensions of input must be of equal length"))
    return diag_indices(_shape(arr)[0], ndim=ndim(arr))


def unravel_index(indices, shape):
    """Coordinates of flat indices in shape; out-of-range indices clamp to the first
    or last coordinate (JAX's rule; NumPy raises)."""
    (idx,) = _arraylike("unravel_index", indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(_np.ndim(s) != 0 for s in shape):
        raise ValueError(at_user_line(
            "unravel_index: shape should be a scalar or 1D sequence."))
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        idx, out[i] = t.divmod(idx, s)
    oob_pos = t.greater(idx, 0)
    oob_neg = t.asarray(False) if _dtypes.is_unsigned(_t(idx).dtype) else t.less(idx, -1)
    return tuple(t.where(oob_pos, s - 1, t.where(oob_neg, 0, i)) for s, i in zip(shape, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of coordinates; mode='raise' needs concrete coordinates (as in
    JAX), 'clip' and 'wrap' work traced."""
    if len(multi_index) != len(dims):
        raise ValueError(at_user_line(
            f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}"))
    dims = tuple(_static_int(_static(d, "in `dims` argument of ravel_multi_index()"), "dims")
                 for d in dims)
    idx = _arraylike("ravel_multi_index", *multi_index)
    dt = _dtypes.canonicalize(dtype) if dtype is not None else _dtypes.result_type(
        *[(_t(i).dtype, _t(i).weak) for i in idx], (_dtypes.default_int(), True))[0]
    if not _dtypes.is_int(dt):
        raise ValueError(at_user_line(f"dtype={dt} is not an integer type."))
    if math.prod(dims) - 1 > _np.iinfo(dt).max:
        raise ValueError(at_user_line(
            f"jnp.ravel_multi_index: dtype={dt} not large enough to hold flattened index "
            f"for dims={dims}. Use the dtype argument to pass a suitable dtype (e.g. "
            "dtype=np.min_scalar_type(prod(dims)))."))
    for i in idx:
        if mode == "raise" and isinstance(i, Tracer):
            raise ConcretizationError(at_user_line(
                "ravel_multi_index with mode='raise' needs concrete coordinates (it was "
                "traced, under jit or a transformation). Use mode='wrap' or mode='clip' "
                "instead."))
        if not _dtypes.is_int(_t(i).dtype):
            raise TypeError(at_user_line("only int indices permitted"))
    if mode == "raise":
        if any(bool(_np.any((_np.asarray(i) < 0) | (_np.asarray(i) >= d)))
               for i, d in zip(idx, dims)):
            raise ValueError(at_user_line("invalid entry in coordinates array"))
    elif mode == "clip":
        idx = [t.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [t.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(at_user_line(
            f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'."))
    if order == "F":
        strides = _np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = _np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(at_user_line(f"invalid order={order!r}. Expected 'C' or 'F'"))
    result = t.asarray(_np.array(0, dt))
    for i, s in zip(idx, strides):
        result = t.add(result, t.multiply(t.astype(i, dt), int(s)))
    return result


# ---------------------------------------------------------------- mgrid, ogrid, r_, c_,
# s_, index_exp, mask_indices

def _grid_1d(s, op):
    """arange(start, stop, step) of a static slice; a complex step j*n means n points
    by linspace, end included (NumPy's convention)."""
    start, stop, step = (_static(v, f"slice {name} of jnp.{op}") for name, v in
                         (("start", s.start), ("stop", s.stop), ("step", s.step)))
    start, step = start or 0, step or 1
    if _np.iscomplex(step):
        return t.linspace(start, stop, int(abs(step)))
    return t.arange(start, stop, step)


class _Grid:
    """mgrid (dense) and ogrid (sparse): meshgrid, 'ij' indexing, of the slices' ranges."""

    def __init__(self, sparse, op):
        self.sparse, self.op = sparse, op

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, self.op)
        ranges = [_grid_1d(k, self.op) for k in key]
        out = meshgrid(*_promote_dtypes(*ranges), indexing="ij", sparse=self.sparse) \
            if ranges else []
        if self.sparse:
            return out
        return t.stack(out, 0) if out else t.arange(0)


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _AxisConcat:
    """r_ and c_: slices, scalars and arrays concatenated along an axis; a leading
    string directive 'axis,ndmin,trans1d' (or 'r' / 'c': a row or column matrix)
    changes the defaults, as NumPy's."""

    def __init__(self, axis, ndmin, trans1d, op):
        self.axis, self.ndmin, self.trans1d, self.op = axis, ndmin, trans1d, op

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if isinstance(key[0], str):
            directive, key = key[0], key[1:]
            if directive in ("r", "c"):
                params[-1] = "rc".index(directive)
            else:
                vec = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(at_user_line(
                        f"could not understand directive {directive!r}")) from err
        axis, ndmin, trans1d, matrix = params
        out = []
        for item in key:
            if isinstance(item, slice):
                new, item_ndim = _grid_1d(item, self.op), 0
            elif isinstance(item, str):
                raise ValueError(at_user_line(
                    "string directive must be placed at the beginning"))
            else:
                new = t.asarray(item)
                item_ndim = ndim(new)
            if ndim(new) < ndmin:
                new = t.reshape(new, (1,) * (ndmin - ndim(new)) + _shape(new))
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                new = t.transpose(new, order[shift:] + order[:shift])
            out.append(new)
        res = t.concatenate(out, axis=axis)
        return t.expand_dims(res, matrix) if matrix != -1 and ndim(res) == 1 else res

    def __len__(self):
        return 0


r_ = _AxisConcat(0, 1, -1, "r_")
c_ = _AxisConcat(-1, 2, 0, "c_")
s_ = _np.s_
index_exp = _np.index_exp


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where mask_func(ones((n, n)), k) is nonzero (tril, triu, ...)."""
    return tuple(t.nonzero(mask_func(t.ones((n, n)), k), size=size))
