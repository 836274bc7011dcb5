"""Shape manipulation: reshape, transpose, concatenate, split, tile, pad, diagonals."""
from __future__ import annotations

import builtins
import math
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import Tracer, at_user_line
from ._util import (
    _array, _as_dtype, _canon_axes, _canon_axis, _is_array, _operand, _promote_no_broadcast,
    _shape, _shape_arg, _static, _static_int, _t, asarray, astype, bool_, broadcast_to, ndim,
    size, where)
from ._creation import eye, zeros_like
from ._ufuncs import remainder
from ._sorting import take


def reshape(a, newshape=None, order="C", *, shape=None):
    a = _operand(a)
    newshape = shape if newshape is None else newshape
    newshape = _shape_arg(newshape)
    if order == "F":  # column-major: reverse the axes, reshape row-major, reverse back
        return transpose(reshape(transpose(a), newshape[::-1]))
    if order != "C":
        raise NotImplementedError(at_user_line(f"reshape order {order!r}: supported are 'C' "
                                               "and 'F'"))
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


def atleast_1d(*arys):
    """One array for one argument, else a list of them, as JAX's."""
    if len(arys) != 1:
        return [atleast_1d(a) for a in arys]
    a = asarray(_operand(arys[0]))
    return reshape(a, (1,)) if ndim(a) == 0 else a


def atleast_2d(*arys):
    if len(arys) != 1:
        return [atleast_2d(a) for a in arys]
    a = atleast_1d(arys[0])
    return expand_dims(a, 0) if ndim(a) == 1 else a


def concatenate(arrays, axis=0, dtype=None):
    arrays = [_operand(a) for a in arrays]
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
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


def stack(arrays, axis=0, out=None, dtype=None):
    if out is not None:
        raise NotImplementedError(at_user_line(
            "the 'out' argument is not supported: arrays are immutable (as in JAX)"))
    arrays = [_operand(a) if dtype is None else astype(_operand(a), dtype) for a in arrays]
    if not arrays:
        raise ValueError(at_user_line("need at least one array to stack"))
    shapes = {_shape(a) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(at_user_line("all input arrays must have the same shape"))
    axis = _canon_axis(axis, ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays, dtype=None):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1, dtype)


def vstack(arrays, dtype=None):
    return concatenate([atleast_2d(a) for a in arrays], 0, dtype)


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
    """Shifts and axes broadcast against each other (as in JAX); a traced shift rolls by
    a dynamic slice of the array repeated twice."""
    a = _operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _shape(a))
    axes = [axis] if _np.ndim(axis) == 0 else list(axis)
    if isinstance(shift, Tracer):
        shift = astype(shift, _dtypes.int32)
        shifts = [shift] if ndim(shift) == 0 else [
            lax.reshape(lax.slice_in_dim(shift, i, i + 1, axis=0), ()) for i in range(size(shift))]
    else:
        shifts = [_static_int(s, "roll's shift") for s in _np.ravel(shift)]
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(at_user_line(f"roll: {len(shifts)} shifts for {len(axes)} axes"))
    count = builtins.max(len(shifts), len(axes))
    for s, ax in zip(shifts * (count // len(shifts)), axes * (count // len(axes))):
        ax = _canon_axis(ax, ndim(a))
        n = _shape(a)[ax]
        if isinstance(s, Tracer):
            s = remainder(s, builtins.max(n, 1))
            start = [0] * ndim(a)
            start[ax] = lax.sub(_as_dtype(n, _dtypes.int32), s)
            a = lax.dynamic_slice(lax.concatenate([a, a], ax), start, _shape(a))
        elif n and s % n:
            head, tail = split(a, [n - s % n], ax)
            a = lax.concatenate([tail, head], ax)
    return a


def pad(array, pad_width, mode="constant", constant_values=0):
    array = _operand(array)
    nd = ndim(array)
    pw = _np.broadcast_to(_np.asarray(pad_width, dtype=int), (nd, 2))
    if (pw < 0).any():
        raise ValueError(at_user_line(f"pad widths can't be negative, got {pw.tolist()}"))
    pw = pw.tolist()
    if nd == 0:  # nothing to pad: the array itself, weak type kept, as JAX
        return _array(array)
    if mode == "constant":
        return _pad_constant(array, pw, constant_values)
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        for ax, (lo, hi) in enumerate(pw):
            if lo or hi:
                if _shape(array)[ax] == 0:
                    raise ValueError(at_user_line(f"can't pad an empty axis in mode {mode!r}"))
                array = (_pad_edge if mode == "edge" else _pad_periodic)(array, ax, lo, hi, mode)
        return array
    raise NotImplementedError(at_user_line(f"pad mode {mode!r}: supported are 'constant', "
                                           "'edge', 'wrap', 'reflect', 'symmetric'"))


def _pad_constant(array, pw, constant_values):
    """One value for every side, or (as JAX) per axis and side, padded axis by axis.
    The value takes the array's dtype and weak type, as in JAX."""
    dt, weak = _t(array).dtype, _t(array).weak
    if _dtypes.is_python_scalar(constant_values) or (
            _is_array(constant_values) and ndim(constant_values) == 0):
        value = _as_dtype(constant_values, dt, weak) if _dtypes.is_python_scalar(
            constant_values) else lax.convert_element_type(asarray(constant_values), dt, weak)
        return lax.pad(array, value, [(lo, hi, 0) for lo, hi in pw])
    values = _np.broadcast_to(_np.asarray(_static(constant_values, "pad's constant_values")),
                              (len(pw), 2))
    for ax, sides in enumerate(pw):
        for side, width in enumerate(sides):
            if width:
                widths = [(0, 0, 0)] * len(pw)
                widths[ax] = (width, 0, 0) if side == 0 else (0, width, 0)
                array = lax.pad(array, _as_dtype(values[ax, side].item(), dt, weak), widths)
    return array


def _pad_edge(array, ax, lo, hi, mode):
    n = _shape(array)[ax]
    parts = [repeat(lax.slice_in_dim(array, 0, 1, axis=ax), lo, ax)] if lo else []
    parts.append(array)
    if hi:
        parts.append(repeat(lax.slice_in_dim(array, n - 1, n, axis=ax), hi, ax))
    return lax.concatenate(parts, ax)


def _pad_periodic(array, ax, lo, hi, mode):
    """wrap, reflect and symmetric repeat one period (the array; it and its mirror
    image without the end points; with them): tile the period and slice."""
    n = _shape(array)[ax]
    mirror = lax.rev(array, (ax,))
    period = {"wrap": [array], "symmetric": [array, mirror],
              "reflect": [array, lax.slice_in_dim(mirror, 1, n - 1, axis=ax)] if n > 1 else [array]}
    period = lax.concatenate(period[mode], ax) if len(period[mode]) > 1 else period[mode][0]
    p = _shape(period)[ax]
    before = -(-lo // p)
    copies = before + -(-(n + hi) // p)
    tiled = lax.concatenate([period] * copies, ax) if copies > 1 else period
    start = before * p - lo
    return lax.slice_in_dim(tiled, start, start + lo + n + hi, axis=ax)


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
    zero = _np.zeros((), _t(a).dtype)  # strong: a weak a's diagonal is strong, as in JAX
    picked = lax.reduce_sum(where(mask, a, zero), (n - 1 if offset >= 0 else n - 2,))
    return lax.slice_in_dim(picked, 0, length, axis=n - 2)


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


def diagflat(v, k=0):
    """v flattened onto the k-th diagonal of a square matrix."""
    return diag(ravel(_operand(v)), k)


def rot90(m, k=1, axes=(0, 1)):
    """Rotation by 90 degrees k times in the plane of axes, from the first towards the
    second."""
    m = _operand(m)
    if ndim(m) < 2:
        raise ValueError(at_user_line(
            "rot90 requires its first argument to have ndim at least two, but got first "
            f"argument of shape {_shape(m)}, which has ndim {ndim(m)}"))
    ax1, ax2 = (_canon_axis(a, ndim(m)) for a in axes)
    if ax1 == ax2:
        raise ValueError(at_user_line("Axes must be different"))
    k = _static_int(k, "rot90's k") % 4
    if k == 0:
        return _array(m)
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(ndim(m)))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return transpose(flip(m, ax2), perm) if k == 1 else flip(transpose(m, perm), ax2)


def rollaxis(a, axis, start=0):
    a = _operand(a)
    n = ndim(a)
    axis = _canon_axis(axis, n)
    start = _static_int(start, "'start' argument of jnp.rollaxis()")
    if not -n <= start <= n:
        raise ValueError(at_user_line(f"start={start} must satisfy {-n}<=start<={n}"))
    start = start + n if start < 0 else start
    return moveaxis(a, axis, start - 1 if start > axis else start)


def permute_dims(a, /, axes):
    a = _operand(a)
    if sorted(_canon_axis(x, ndim(a)) for x in axes) != list(range(ndim(a))):
        raise TypeError(at_user_line(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {tuple(axes)} for operand shape {_shape(a)}."))
    return transpose(a, axes)


def matrix_transpose(x, /):
    x = _operand(x)
    if ndim(x) < 2:
        raise ValueError(at_user_line(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim(x)}"))
    return swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x = asarray(_operand(x))
    axis = _canon_axis(axis, ndim(x))
    return tuple(lax.squeeze(lax.slice_in_dim(x, i, i + 1, axis=axis), (axis,))
                 for i in range(_shape(x)[axis]))


def concat(arrays, /, *, axis=0):
    """The array API's concatenate; one array is read as the list of its slices."""
    if _is_array(arrays):
        arrays = unstack(arrays)
    return concatenate(arrays, axis=axis)


# ---------------------------------------------------------------- atleast_3d, block,
# the directional splits and stacks, resize, trim_zeros

def atleast_3d(*arys):
    """A 1-d array becomes (1, n, 1) and a 2-d one (m, n, 1), as NumPy's."""
    if len(arys) != 1:
        return [atleast_3d(a) for a in arys]
    a = asarray(_operand(arys[0]))
    new = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(ndim(a), ())
    return expand_dims(a, new) if new else a


def _block(xs):
    """(array, depth) of a nested list: the innermost lists concatenate along the last
    axis, each level out along the one before."""
    if isinstance(xs, tuple):
        raise ValueError(at_user_line(f"jnp.block does not allow tuples, got {xs}"))
    if not isinstance(xs, list):
        return asarray(_operand(xs)), 1
    if not xs:
        raise ValueError(at_user_line("jnp.block does not allow empty list arguments"))
    arrays, depths = zip(*[_block(x) for x in xs])
    if builtins.any(d != depths[0] for d in depths[1:]):
        raise ValueError(at_user_line("Mismatched list depths in jnp.block"))
    rank = builtins.max(depths[0], *[ndim(a) for a in arrays])
    arrays = [reshape(a, (1,) * (rank - ndim(a)) + _shape(a)) for a in arrays]
    return concatenate(arrays, axis=-depths[0]), depths[0] + 1


def block(arrays):
    return _block(arrays)[0]


def _split_along(fn, ary, indices_or_sections, axis):
    """split with JAX's rule for sections: an integer count must divide the axis."""
    ary = asarray(_operand(ary))
    if ndim(ary) <= axis:  # IndexError: JAX's, from reading the missing axis
        raise IndexError(at_user_line(
            f"jnp.{fn} needs an array of at least {axis + 1} dimensions, got shape "
            f"{_shape(ary)}"))
    if _np.ndim(indices_or_sections) == 0:
        sections = int(_static(indices_or_sections, f"in jnp.{fn} argument 1"))
        rest = _shape(ary)[axis] % sections
        if rest:
            raise ValueError(at_user_line(
                f"array split does not result in an equal division: rest is {rest}"))
        indices_or_sections = sections
    return split(ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections):
    return _split_along("vsplit", ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
    return _split_along("hsplit", ary, indices_or_sections, 0 if ndim(ary) == 1 else 1)


def dsplit(ary, indices_or_sections):
    return _split_along("dsplit", ary, indices_or_sections, 2)


def dstack(tup, dtype=None):
    """An array stands for the list of its slices along axis 0, as in JAX."""
    return concatenate([atleast_3d(a) for a in (unstack(tup) if _is_array(tup) else tup)],
                       axis=2, dtype=dtype)


def resize(a, new_shape):
    """The flattened a repeated to fill new_shape (zeros where a is empty), as NumPy's."""
    new_shape = _shape_arg(new_shape)
    if builtins.any(n < 0 for n in new_shape):
        raise ValueError(at_user_line("all elements of `new_shape` must be non-negative"))
    a = ravel(asarray(_operand(a)))
    n = math.prod(new_shape)
    if size(a) == 0 or n == 0:
        return zeros_like(a, shape=new_shape)
    return reshape(lax.slice_in_dim(tile(a, -(-n // size(a))), 0, n), new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and trailing ('b') all-zero slices along the
    axes; the result's shape depends on the values, so filt must be concrete."""
    filt = asarray(_operand(filt))
    _static(filt, "Error arose in the `filt` argument of trim_zeros(): filt")
    host = _np.asarray(filt) != 0
    trim = trim.lower()
    start, limit = [0] * ndim(filt), list(_shape(filt))
    for ax in (_canon_axes(axis, ndim(filt)) if "f" in trim or "b" in trim else ()):
        mask = host.any(axis=tuple(i for i in range(ndim(filt)) if i != ax))
        if not mask.any():
            start[ax] = limit[ax] = 0
            continue
        if "f" in trim:
            start[ax] = int(mask.argmax())
        if "b" in trim:
            limit[ax] = len(mask) - int(mask[::-1].argmax())
    return lax.slice(filt, start, limit)

