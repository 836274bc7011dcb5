"""Shape manipulation: reshape, transpose, concatenate, split, tile, pad, diagonals."""
from __future__ import annotations

import builtins
import math
import numpy as _np

from .. import lax
from ..core import at_user_line
from ._util import (
    _as_dtype, _canon_axes, _canon_axis, _is_array, _operand, _promote_no_broadcast, _shape,
    _shape_arg, _static, _t, asarray, astype, bool_, broadcast_to, ndim, size, where)
from ._creation import eye, zeros_like
from ._sorting import take


def reshape(a, newshape=None, order="C", *, shape=None):
    a = _operand(a)
    newshape = shape if newshape is None else newshape
    newshape = _shape_arg(newshape)
    if order != "C":
        raise NotImplementedError(at_user_line("reshape supports order='C' only"))
    if newshape.count(-1) > 1:
        raise ValueError(at_user_line("reshape can infer at most one dimension (-1)"))
    if -1 in newshape:
        known = math.prod(n for n in newshape if n != -1)
        if known == 0 or size(a) % known:
            raise ValueError(at_user_line(f"cannot reshape array of size {size(a)} into "
                                          f"shape {newshape}"))
        newshape = tuple(size(a) // known if n == -1 else n for n in newshape)
    if math.prod(newshape) != size(a):
        raise ValueError(at_user_line(f"cannot reshape array of size {size(a)} into shape "
                                      f"{newshape}"))
    return lax.reshape(a, newshape)


def ravel(a):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    a = _operand(a)
    axes = tuple(reversed(range(ndim(a)))) if axes is None else tuple(
        _canon_axis(x, ndim(a)) for x in axes)
    if sorted(axes) != list(range(ndim(a))):
        raise ValueError(at_user_line(f"axes {axes} don't match an array of rank {ndim(a)}"))
    return lax.transpose(a, axes)


def swapaxes(a, axis1, axis2):
    perm = list(range(ndim(a)))
    i, j = _canon_axis(axis1, ndim(a)), _canon_axis(axis2, ndim(a))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(_operand(a), perm)


def moveaxis(a, source, destination):
    n = ndim(a)
    src = _canon_axes(source, n)
    dst = _canon_axes(destination, n)
    if len(src) != len(dst):
        raise ValueError(at_user_line("moveaxis needs as many sources as destinations"))
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(_operand(a), order)


def expand_dims(a, axis):
    a = _operand(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_ndim = ndim(a) + len(axes)
    axes = tuple(sorted(_canon_axis(x, out_ndim) for x in axes))
    return lax.expand_dims(a, axes)


def squeeze(a, axis=None):
    a = _operand(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(_shape(a)) if n == 1)
    else:
        axes = _canon_axes(axis, ndim(a))
        bad = [i for i in axes if _shape(a)[i] != 1]
        if bad:
            raise ValueError(at_user_line(
                f"cannot select an axis to squeeze out which has size not equal to one "
                f"(axis {bad[0]} of shape {_shape(a)})"))
    return lax.squeeze(a, axes) if axes else a


def atleast_1d(a):
    a = asarray(a) if not _is_array(a) else a
    return reshape(a, (1,)) if ndim(a) == 0 else a


def atleast_2d(a):
    a = atleast_1d(a)
    return expand_dims(a, 0) if ndim(a) == 1 else a


def concatenate(arrays, axis=0):
    arrays = [_operand(a) for a in arrays]
    if not arrays:
        raise ValueError(at_user_line("need at least one array to concatenate"))
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    arrays = _promote_no_broadcast(arrays)
    if ndim(arrays[0]) == 0:
        raise ValueError(at_user_line("zero-dimensional arrays cannot be concatenated"))
    axis = _canon_axis(axis, ndim(arrays[0]))
    ranks = {ndim(a) for a in arrays}
    if len(ranks) > 1:
        raise ValueError(at_user_line("all the input arrays must have the same number of "
                                      "dimensions"))
    if len({_shape(a)[:axis] + _shape(a)[axis + 1:] for a in arrays}) > 1:
        raise ValueError(at_user_line(
            f"concatenate along axis {axis}: all the other dimensions must match, got "
            "shapes " + ", ".join(str(_shape(a)) for a in arrays)))
    return lax.concatenate(arrays, axis)


def stack(arrays, axis=0):
    arrays = [_operand(a) for a in arrays]
    if not arrays:
        raise ValueError(at_user_line("need at least one array to stack"))
    shapes = {_shape(a) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(at_user_line("all input arrays must have the same shape"))
    axis = _canon_axis(axis, ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1)


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def column_stack(arrays):
    return concatenate([a if ndim(a) >= 2 else reshape(atleast_1d(a), (-1, 1))
                        for a in arrays], 1)


def split(ary, indices_or_sections, axis=0):
    ary = _operand(ary)
    axis = _canon_axis(axis, ndim(ary))
    n = _shape(ary)[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(at_user_line("array split does not result in an equal division"))
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step)) if step else [0] * (indices_or_sections + 1)
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i) if i >= 0 else n + int(i), 0), n)
                        for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        start = [0] * ndim(ary)
        limit = list(_shape(ary))
        start[axis], limit[axis] = lo, builtins.max(lo, hi)
        out.append(lax.slice(ary, start, limit))
    return out


def array_split(ary, indices_or_sections, axis=0):
    if isinstance(indices_or_sections, int):
        n = _shape(ary)[_canon_axis(axis, ndim(ary))]
        q, r = builtins.divmod(n, indices_or_sections)
        sizes = [q + 1] * r + [q] * (indices_or_sections - r)
        indices_or_sections = list(_np.cumsum(sizes)[:-1])
    return split(ary, indices_or_sections, axis)


def tile(A, reps):
    A = _operand(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    A = asarray(A) if not _is_array(A) else A
    nd = builtins.max(len(reps), ndim(A))
    A = reshape(A, (1,) * (nd - ndim(A)) + _shape(A))
    reps = (1,) * (nd - len(reps)) + reps
    # broadcast to (r0, n0, r1, n1, ...) then merge pairs
    shp = _shape(A)
    inter = tuple(x for r, n in zip(reps, shp) for x in (r, n))
    out = lax.broadcast_in_dim(A, inter, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(out, tuple(r * n for r, n in zip(reps, shp)))


def repeat(a, repeats, axis=None):
    a = _operand(a)
    if axis is None or ndim(a) == 0:
        a, axis = ravel(a), 0 if axis is None else axis
    axis = _canon_axis(axis, ndim(a))
    if isinstance(repeats, int):
        shp = _shape(a)
        expanded = lax.broadcast_in_dim(a, shp[:axis + 1] + (repeats,) + shp[axis + 1:],
                                        tuple(i if i <= axis else i + 1 for i in range(len(shp))))
        return lax.reshape(expanded, shp[:axis] + (shp[axis] * repeats,) + shp[axis + 1:])
    counts = _np.asarray(_static(repeats, "repeat counts"))
    idx = _np.repeat(_np.arange(_shape(a)[axis]), counts)
    return take(a, asarray(idx.astype(_np.int32)), axis=axis)


def flip(m, axis=None):
    m = _operand(m)
    return lax.rev(m, _canon_axes(axis, ndim(m)))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    a = _operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _shape(a))
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for s, ax in zip(shifts, axes):
        ax = _canon_axis(ax, ndim(a))
        n = _shape(a)[ax]
        s = _static(s, "roll's shift") % n if n else 0
        if s:
            head, tail = split(a, [n - s], ax)
            a = lax.concatenate([tail, head], ax)
    return a


def pad(array, pad_width, mode="constant", constant_values=0):
    array = _operand(array)
    nd = ndim(array)
    pw = _np.broadcast_to(_np.asarray(pad_width, dtype=int), (nd, 2))
    if (pw < 0).any():
        raise ValueError(at_user_line(f"pad widths can't be negative, got {pw.tolist()}"))
    pw = pw.tolist()
    if mode == "constant":
        return lax.pad(array, _as_dtype(constant_values, _t(array).dtype)
                       if isinstance(constant_values, (bool, int, float)) else
                       astype(constant_values, _t(array).dtype),
                       [(lo, hi, 0) for lo, hi in pw])
    if mode == "edge":
        for ax, (lo, hi) in enumerate(pw):
            n = _shape(array)[ax]
            parts = [repeat(lax.slice_in_dim(array, 0, 1, ax), lo, ax)] if lo else []
            parts.append(array)
            if hi:
                parts.append(repeat(lax.slice_in_dim(array, n - 1, n, ax), hi, ax))
            array = lax.concatenate(parts, ax)
        return array
    raise NotImplementedError(at_user_line(f"pad mode {mode!r}: supported are 'constant', "
                                           "'edge'"))


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _operand(a)
    n = ndim(a)
    a = moveaxis(a, (_canon_axis(axis1, n), _canon_axis(axis2, n)), (-2, -1))
    rows, cols = _shape(a)[-2:]
    mask = eye(rows, cols, k=offset, dtype=bool_)
    length = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else
                          builtins.min(rows + offset, cols))
    # Row i holds its element in column i + offset: summing out the other axis leaves
    # the diagonal at positions 0..length-1 (reduce_sum keeps bool a bool).
    picked = lax.reduce_sum(where(mask, a, zeros_like(a)), (n - 1 if offset >= 0 else n - 2,))
    return lax.slice_in_dim(picked, 0, length, n - 2)


def diag(v, k=0):
    v = _operand(v)
    if ndim(v) == 1:
        n = _shape(v)[0] + builtins.abs(k)
        row = lax.pad(v, _as_dtype(0, _t(v).dtype),
                      [(builtins.max(k, 0), builtins.max(-k, 0), 0)])
        mask = eye(n, n, k=k, dtype=bool_)
        spread = broadcast_to(expand_dims(row, 0), (n, n))  # spread[i, j] = row[j]
        return where(mask, spread, zeros_like(spread))
    if ndim(v) == 2:
        return diagonal(v, k)
    raise ValueError(at_user_line("diag needs a 1-D or 2-D array"))
