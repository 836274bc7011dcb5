"""Sorting and index-based selection (take, take_along_axis) under JAX's index modes."""
from __future__ import annotations

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import at_user_line
from ..primitives.indexing import gather_by_dims
from ._util import (
    _array, _as_dtype, _broadcast_shapes, _canon_axis, _operand, _shape, _t, broadcast_to,
    ndim, size, where)
from ._creation import zeros
from ._ufuncs import greater_equal, less, logical_and, remainder


def sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    a = _operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (size(a),)), 0
    axis = _canon_axis(axis, ndim(a))
    out = lax.sort(a, axis)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """Stable; descending sorts the reversed array and reverses the result, as JAX
    does, so ties keep their order and NaNs come first."""
    a = _operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (size(a),)), 0
    axis = _canon_axis(axis, ndim(a))
    idx = lax.broadcasted_iota(_dtypes.default_int(), _shape(a), axis)
    if descending:
        a, idx = lax.rev(a, (axis,)), lax.rev(idx, (axis,))
    out = lax.sort([a, idx], axis, num_keys=1)[1]
    return lax.rev(out, (axis,)) if descending else out


def _int_indices(idx):
    idx = _operand(idx)
    if not _dtypes.is_int(_t(idx).dtype):
        raise TypeError(at_user_line(f"indices must be integers, got "
                                     f"{_dtypes.SHORT_NAMES[_t(idx).dtype]}"))
    return idx


def _wrap_negative(idx, n):
    idx = _int_indices(idx)
    if _dtypes.is_unsigned(_t(idx).dtype):
        return idx
    zero = _as_dtype(0, _t(idx).dtype)
    return lax.select(lax.lt(idx, zero), lax.add(idx, _as_dtype(n, _t(idx).dtype)), idx)


def _fill_value(dtype):
    """What mode='fill' puts at out-of-bounds indices (JAX's defaults)."""
    if _dtypes.is_inexact(dtype):
        return _np.nan
    if dtype == _dtypes.bool_:
        return True
    info = _np.iinfo(dtype)
    return int(info.max if _dtypes.is_unsigned(dtype) else info.min)


def _gather_along(a, indices, axis, mode, wrap_before_clip, gather):
    """gather(a, in-range indices, gather mode) under a JAX index mode. XLA's gather
    clamps ('clip': the clamped element gets the cotangent); 'fill' (the default) masks
    out-of-bounds indices instead, 'wrap' takes them mod n."""
    mode = "fill" if mode is None else mode
    n = _shape(a)[axis]
    if mode == "wrap":
        return gather(a, remainder(indices, n), "promise_in_bounds")
    if mode == "clip":
        return gather(a, _wrap_negative(indices, n) if wrap_before_clip else indices, "clip")
    if mode not in ("fill", "promise_in_bounds"):
        raise ValueError(at_user_line(f"invalid index mode {mode!r}: expected 'fill', 'clip', "
                                      "'wrap' or 'promise_in_bounds'"))
    indices = _wrap_negative(indices, n)
    out = gather(a, indices, "promise_in_bounds")
    if mode == "promise_in_bounds":
        return out
    valid = logical_and(greater_equal(indices, 0), less(indices, n))
    valid = valid if ndim(valid) == ndim(out) else \
        lax.expand_dims(valid, tuple(range(axis)) + tuple(range(axis + ndim(valid), ndim(out))))
    return where(valid, out, _fill_value(_t(a).dtype))


def take(a, indices, axis=None, mode=None):
    """NumPy's take with JAX's index modes (default 'fill': NaN / INT_MIN / True out
    of bounds; NumPy's 'raise' needs concrete indices and is not supported)."""
    a = _operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (size(a),)), 0
    axis = _canon_axis(axis, ndim(a))
    indices = _int_indices(indices)
    ishape = _shape(indices)
    offset_dims = tuple(range(axis)) + tuple(range(axis + len(ishape), ndim(a) + len(ishape) - 1))
    slice_sizes = tuple(1 if i == axis else n for i, n in enumerate(_shape(a)))
    return _gather_along(a, indices, axis, mode, False, lambda a, i, mode: gather_by_dims(
        a, i, offset_dims=offset_dims, collapsed_slice_dims=(axis,), start_index_map=(axis,),
        slice_sizes=slice_sizes, index_vector_dim=len(ishape), mode=mode))


def take_along_axis(arr, indices, axis, mode=None):
    arr = _operand(arr)
    indices = _int_indices(indices)
    if axis is None:
        arr, axis = lax.reshape(arr, (size(arr),)), 0
    axis = _canon_axis(axis, ndim(arr))
    if ndim(indices) != ndim(arr):
        raise ValueError(at_user_line("take_along_axis: indices and arr must have the same "
                                      "number of dimensions"))
    shp = _shape(arr)
    # the indices' shape broadcast with arr's, arr's axis aside
    out_shape = _broadcast_shapes(_shape(indices),
                                  tuple(1 if i == axis else n for i, n in enumerate(shp)))
    if shp[axis] == 0 or 0 in out_shape:  # nothing to take (from): zeros, as JAX gives
        return zeros(out_shape, _t(arr).dtype)
    indices = broadcast_to(indices, out_shape)
    other = tuple(i for i in range(ndim(arr)) if i != axis)
    arr = broadcast_to(arr, tuple(shp[axis] if i == axis else out_shape[i]
                                  for i in range(ndim(arr))))
    # batch over the other axes; gather only along `axis`
    return _gather_along(arr, indices, axis, mode, True, lambda a, i, mode: gather_by_dims(
        a, lax.expand_dims(i, (ndim(i),)), offset_dims=(), collapsed_slice_dims=(axis,),
        start_index_map=(axis,), operand_batching_dims=other,
        start_indices_batching_dims=other, slice_sizes=(1,) * len(shp),
        index_vector_dim=len(shp), mode=mode))


# ---------------------------------------------------------------- partition,
# argpartition, lexsort, sort_complex

def _partition_args(fn, a, kth, axis):
    a = _operand(a)
    if _dtypes.is_complex(_t(a).dtype):
        raise NotImplementedError(at_user_line(
            f"jnp.{fn} for complex dtype is not implemented."))
    axis = _canon_axis(axis, ndim(a))
    kth = _canon_axis(kth, _shape(a)[axis], "kth")
    if _t(a).dtype == _dtypes.bool_:  # JAX negates its input, which bool refuses
        raise TypeError(at_user_line(
            f"jnp.{fn} does not accept bool input; convert it to an integer type first"))
    return a, kth, axis


def partition(a, kth, axis=-1):
    """JAX's layout: the kth + 1 smallest ascending, then the others descending (NaNs
    first), ties (0 and -0) in index order, as JAX's two top_k's give them."""
    a, kth, axis = _partition_args("partition", a, kth, axis)
    n = _shape(a)[axis]
    descending = lax.rev(lax.sort(lax.rev(a, (axis,)), axis), (axis,))  # stable
    return lax.concatenate([lax.slice_in_dim(lax.sort(a, axis), 0, kth + 1, axis=axis),
                            lax.slice_in_dim(descending, 0, n - kth - 1, axis=axis)], axis)


def argpartition(a, kth, axis=-1):
    """JAX's layout: the indices of the kth + 1 smallest in ascending (stable) order,
    then the other indices in increasing index order; int32, as JAX's top_k gives."""
    a, kth, axis = _partition_args("argpartition", a, kth, axis)
    idx = lax.convert_element_type(argsort(a, axis), _dtypes.int32)
    n = _shape(a)[axis]
    return lax.concatenate([lax.slice_in_dim(idx, 0, kth + 1, axis=axis),
                            lax.sort(lax.slice_in_dim(idx, kth + 1, n, axis=axis), axis)],
                           axis)


def lexsort(keys, axis=-1):
    """Indices sorting by the last key, ties broken by the ones before (stable)."""
    keys = tuple(_operand(k) for k in keys)
    if not keys:
        raise TypeError(at_user_line("need sequence of keys with len > 0 in lexsort"))
    if len({_shape(k) for k in keys}) > 1:
        raise ValueError(at_user_line("all keys need to be the same shape"))
    if ndim(keys[0]) == 0:
        return _array(_as_dtype(0, _dtypes.default_int()))
    axis = _canon_axis(axis, ndim(keys[0]))
    iota = lax.broadcasted_iota(_dtypes.default_int(), _shape(keys[0]), axis)
    return lax.sort([*keys[::-1], iota], axis, num_keys=len(keys))[-1]


def sort_complex(a):
    """Sorted along the last axis, as complex (complex128 only from 64-bit types)."""
    a = sort(a)
    dt = _np.dtype(_t(a).dtype)
    wide = dt in (_np.float64, _np.complex128) or _dtypes.is_int(dt) and dt.itemsize == 8
    return lax.convert_element_type(a, _dtypes.canonicalize(
        _np.complex128 if wide else _np.complex64))
