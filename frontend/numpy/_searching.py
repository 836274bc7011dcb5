"""Searching and counting: nonzero, argwhere, unique (and the array API's unique_values,
unique_counts, unique_inverse, unique_all), searchsorted, digitize, histogram, bincount,
put_along_axis.

Results whose length depends on the data (nonzero, unique, bincount) take a static
`size=` (or `length=`) under a trace, as in JAX; eagerly the length is read from the
concrete input when it is not given.
"""
from __future__ import annotations

import builtins
import math
from typing import NamedTuple

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import ConcretizationError, Tracer, at_user_line
from .. import numpy as t
from ._indexing import IndexUpdateRef as _At
from ._indexing import getitem as _ix
from ._util import (
    _canon_axis, _operand, _promote, _promote_inexact, _shape, _static, _static_int, _t, ndim)

# Eager values are jax.Arrays, whose operators and .at are JAX's own: the code below
# calls tracehlo.numpy functions, _ix (x[...]) and _At (x.at[...]) explicitly.


def _concrete_size(x, size_, fn, count):
    """size_ if given, else count(concrete x); a traced x needs it given."""
    if size_ is not None:
        return _static_int(size_, f"{fn}'s size")
    if isinstance(x, Tracer):
        raise ConcretizationError(at_user_line(
            f"The size argument of jnp.{fn} must be statically specified to use "
            f"jnp.{fn} within JAX transformations."))
    return int(count(_np.asarray(x)))


def nonzero(a, *, size=None, fill_value=None):
    """Per-axis coordinates of the nonzero elements in row-major order, padded with
    fill_value (default 0; one per axis allowed) or truncated to size."""
    a = _operand(a)
    if ndim(a) == 0:
        raise ValueError(at_user_line("Calling nonzero on 0d arrays is not allowed. Use "
                                      "jnp.atleast_1d(scalar).nonzero() instead."))
    n = _concrete_size(a, size, "nonzero", _np.count_nonzero)
    mask = t.not_equal(t.ravel(a), t.zeros((), a.dtype))
    index = _dtypes.default_int()  # JAX's: int64 under x64
    slot = t.where(mask, t.subtract(t.cumsum(mask, dtype=index), 1), n)  # n: dropped
    flat = _At(t.zeros(n, index), slot).set(t.arange(_shape(mask)[0], dtype=index))
    filled = t.greater_equal(t.arange(n, dtype=index), t.sum(mask, dtype=index))
    fills = fill_value if _np.ndim(fill_value) else (fill_value,) * ndim(a)
    if len(fills) != ndim(a):
        raise ValueError(at_user_line(f"fill_value must be a scalar or a tuple of length "
                                      f"{ndim(a)}; got {fill_value!r}"))
    out, stride = [], 1
    for k in reversed(range(ndim(a))):
        coord = t.remainder(t.floor_divide(flat, stride), _shape(a)[k]) if _shape(a)[k] \
            else flat
        stride *= _shape(a)[k]
        out.append(coord if fills[k] is None else t.where(filled, t.asarray(
            fills[k], index), coord))
    return tuple(reversed(out))


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(t.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """(count, ndim) coordinates of the nonzero elements, as JAX."""
    a = _operand(a)
    coords = nonzero(t.atleast_1d(a), size=size, fill_value=fill_value)
    out = t.stack(coords, axis=1)
    return t.reshape(_ix(out, (slice(None), slice(0))), (_shape(out)[0], 0)) \
        if ndim(a) == 0 else out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted distinct values of the flattened ar (axis=None), or its distinct slices
    along axis in lexicographic order, as JAX: with size, padding repeats the first
    value (its index, count 0) unless fill_value is given; NaNs are one value when
    equal_nan. Slices are sorted by one multi-key sort (a key per element of a slice)."""
    ar = _operand(ar)
    shape = _shape(ar)
    if size is not None:
        size = _static_int(size, "unique's size")
    flat = axis is None
    if flat:
        ar, axis = t.ravel(ar), 0
    axis = _canon_axis(axis, ndim(ar))
    n = _shape(ar)[axis]
    if n == 0 and size and fill_value is None:
        raise ValueError(at_user_line("jnp.unique: for zero-sized input with nonzero size "
                                      "argument, fill_value must be specified"))
    aux = t.moveaxis(ar, axis, 0)
    if _dtypes.is_complex(aux.dtype):  # a NaN only in the imaginary part sorts as JAX's
        aux = t.where(t.isnan(aux), t.asarray(_np.nan, aux.dtype), aux)
    width = _np.prod(_shape(aux)[1:], dtype=int)
    if width == 0:  # empty slices: one group, as JAX
        perm, aux = t.zeros(1, _dtypes.default_int()), t.reshape(aux, (1,) + _shape(aux)[1:])
    elif n:
        rows = t.reshape(aux, (n, width))
        keys = [_ix(rows, (slice(None), j)) for j in range(width)]
        perm = lax.sort(keys + [t.arange(n, dtype=_dtypes.default_int())], 0,
                        num_keys=width)[-1]
        aux = t.take(aux, perm, axis=0)
    else:
        perm = t.zeros(0, _dtypes.default_int())
    nonempty = bool(n and width)
    if nonempty:
        head, tail = _ix(aux, slice(1, None)), _ix(aux, slice(None, -1))
        differs = t.not_equal(head, tail)
        if equal_nan and _dtypes.is_inexact(aux.dtype):
            differs = t.logical_and(differs, t.logical_not(t.logical_and(t.isnan(head),
                                                                          t.isnan(tail))))
        if ndim(aux) > 1:
            differs = t.any(differs, axis=tuple(range(1, ndim(aux))))
        mask = t.concatenate([t.ones(1, t.bool_), differs])
    else:
        mask = t.zeros(_shape(aux)[0], t.bool_)
    m = _concrete_size(ar, size, "unique", lambda _: _np.count_nonzero(_np.asarray(mask)))
    starts = nonzero(mask, size=m)[0]
    result = t.take(aux, starts, axis=0, mode="clip") if nonempty else aux
    if size is not None and fill_value is not None:
        fill = t.asarray(fill_value, result.dtype)
        if _shape(result)[0]:
            valid = t.less(t.arange(m), t.sum(mask, dtype=t.int32))
            result = t.where(t.expand_dims(valid, tuple(range(1, ndim(result)))), result, fill)
        else:
            result = t.full((m,) + _shape(result)[1:], fill, result.dtype)
    out = [t.moveaxis(result, 0, axis)]
    if return_index:
        out.append(t.take(perm, starts, mode="clip") if nonempty else perm)
    if return_inverse:
        index = _dtypes.default_int()
        inverse = t.zeros(n, index)
        if nonempty:
            inverse = _At(inverse, perm).set(t.subtract(t.cumsum(mask, dtype=index), 1))
        out.append(t.reshape(inverse, shape) if flat else inverse)
    if return_counts:
        if nonempty:
            bounds = nonzero(mask, size=m + 1)[0]  # group starts, then 0 padding
            rest = _ix(bounds, slice(1, None))
            bounds = t.concatenate([_ix(bounds, slice(0, 1)),
                                    t.where(t.not_equal(rest, 0), rest, _shape(mask)[0])])
            out.append(t.subtract(_ix(bounds, slice(1, None)), _ix(bounds, slice(None, -1))))
        else:
            out.append(t.full(1 if n else 0, n, _dtypes.default_int()))
    return out[0] if len(out) == 1 else tuple(out)


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_values(x, /, *, size=None, fill_value=None):
    """The array API's unique: NaNs distinct (equal_nan=False), as JAX's."""
    return unique(_operand(x), equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    return _UniqueCountsResult(*unique(_operand(x), return_counts=True, equal_nan=False,
                                       size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return _UniqueInverseResult(*unique(_operand(x), return_inverse=True, equal_nan=False,
                                        size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    return _UniqueAllResult(*unique(_operand(x), return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False, size=size,
                                    fill_value=fill_value))


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of v into sorted 1-d a, NaNs ordered last as in the sorts.
    Every method is the same unrolled binary search (ceil(log2(n + 1)) gathers):
    they differ only in speed in JAX."""
    if side not in ("left", "right"):
        raise ValueError(at_user_line(f"side={side!r} is not supported; expected 'left' "
                                      "or 'right'"))
    if method not in _SEARCH_METHODS:
        raise ValueError(at_user_line(f"method={method!r} is not supported; expected one "
                                      f"of {_SEARCH_METHODS}"))
    a, v = _operand(a), _operand(v)
    if ndim(a) != 1:
        raise ValueError(at_user_line(f"a should be 1-dimensional; got shape {_shape(a)}"))
    if sorter is not None:
        a = t.take(a, sorter)
    dt = t.result_type(a, v)
    a, v = t.astype(a, dt), t.astype(v, dt)

    def before(x, y):  # x sorts strictly before y, NaNs last
        lt = t.less(x, y)
        if _dtypes.is_inexact(dt):
            lt = t.logical_or(lt, t.logical_and(t.isnan(y), t.logical_not(t.isnan(x))))
        return lt

    n = _shape(a)[0]
    lo, hi = t.zeros(_shape(v), t.int32), t.full(_shape(v), n, t.int32)
    for _ in range(n.bit_length()):
        mid = t.floor_divide(t.add(lo, hi), 2)
        at_mid = t.take(a, mid, mode="clip")
        go_right = before(at_mid, v) if side == "left" else t.logical_not(before(v, at_mid))
        active = t.less(lo, hi)
        lo = t.where(t.logical_and(active, go_right), t.add(mid, 1), lo)
        hi = t.where(t.logical_and(active, t.logical_not(go_right)), mid, hi)
    return lo


def digitize(x, bins, right=False, *, method=None):
    """The bin of each x; bins may increase or decrease (NumPy's rule)."""
    x, bins = _operand(x), _operand(bins)
    if ndim(bins) != 1:
        raise ValueError(at_user_line(f"digitize: bins must be a 1-dimensional array; got "
                                      f"shape {_shape(bins)}"))
    n = _shape(bins)[0]
    if n == 0:
        return t.zeros(_shape(x), t.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    return t.where(t.greater_equal(_ix(bins, -1), _ix(bins, 0)),
                   searchsorted(bins, x, side=side, **kw),
                   t.subtract(n, searchsorted(t.flip(bins), x, side=side, **kw)))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Edges as given (in a's inexact dtype), or `bins` equal bins over range (a's
    extent by default; widened by 0.5 each way when empty)."""
    if isinstance(bins, str):
        raise NotImplementedError(at_user_line("string values for `bins` not implemented."))
    a = _operand(a)
    dt = _t(_promote(a, to_inexact=True)[0]).dtype
    if isinstance(bins, Tracer) or _np.ndim(bins) > 0:
        if _np.ndim(bins) != 1:
            raise ValueError(at_user_line("bins must be an integer or a 1-d array"))
        return t.asarray(bins, dtype=dt)
    count = _static_int(_static(bins, "bins argument of histogram_bin_edges"),
                        "histogram's bins")
    lo, hi = (t.min(a), t.max(a)) if range is None else range
    lo, hi = t.asarray(lo, dtype=dt), t.asarray(hi, dtype=dt)
    same = t.equal(lo, hi)
    return t.linspace(t.where(same, t.subtract(lo, 0.5), lo),
                      t.where(same, t.add(hi, 0.5), hi), count + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, edges) of the flattened a over static bins (a count or the edges); the
    last bin includes its right edge, as NumPy."""
    a, = _promote(t.ravel(a), to_inexact=True)
    if weights is not None:
        weights = t.ravel(_operand(weights))
        if _shape(weights) != _shape(a):
            raise ValueError(at_user_line("weights should have the same shape as a."))
    edges = histogram_bin_edges(a, bins, range)
    slot = searchsorted(edges, a, side="right")
    nedges = _shape(edges)[0]
    slot = t.where(t.equal(a, _ix(edges, -1)), nedges - 1, slot)
    if weights is None:
        weights = t.ones_like(a)
    counts = _ix(_At(t.zeros(nedges, weights.dtype), slot).add(weights), slice(1, None))
    if density:
        widths = t.subtract(_ix(edges, slice(1, None)), _ix(edges, slice(None, -1)))
        counts = t.divide(t.divide(counts, widths), t.sum(counts))
    return counts, edges


def bincount(x, weights=None, minlength=0, *, length=None):
    """Occurrences of each value of the non-negative ints x (weighted sums with
    weights) in `length` bins; values past the last bin are dropped."""
    x = _operand(x)
    if not _dtypes.is_int(x.dtype):
        raise TypeError(at_user_line(f"x argument to bincount must have an integer type; "
                                     f"got {_np.dtype(x.dtype).name}"))
    if ndim(x) != 1:
        raise ValueError(at_user_line("only 1-dimensional input supported."))
    minlength = _static_int(minlength, "bincount's minlength")
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationError(at_user_line(
                "bincount's length must be static under a trace: the error occurred "
                "because of argument 'x' of jnp.bincount. To avoid this error, pass a "
                "static `length` argument."))
        host = _np.asarray(x)
        length = builtins.max(minlength, int(host.max()) + 1 if host.size else 0)
    length = _static_int(length, "bincount's length")
    if weights is None:
        weights = t.ones((), _dtypes.default_int())
    else:
        weights = _operand(weights)
        if _shape(weights) != _shape(x):
            raise ValueError(at_user_line("shape of weights must match shape of x."))
    return _At(t.zeros(length, weights.dtype), t.clip(x, 0)).add(weights, mode="drop")


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values written at indices along axis (functional: inplace=False is
    required, as JAX's arrays are immutable)."""
    if inplace:
        raise ValueError(at_user_line(
            "tracehlo.numpy.put_along_axis cannot modify arrays in-place, because "
            "tracehlo arrays are immutable. Pass inplace=False to instead return an updated array."))
    arr, indices = _operand(arr), _operand(indices)
    if axis is None:
        shape = _shape(arr)
        return t.reshape(put_along_axis(t.ravel(arr), t.ravel(indices), t.ravel(values), 0,
                                        inplace=False, mode=mode), shape)
    axis = _canon_axis(axis, ndim(arr))
    if ndim(indices) != ndim(arr):
        raise ValueError(at_user_line("put_along_axis: indices and arr must have the same "
                                      "number of dimensions"))
    index = tuple(indices if k == axis else t.reshape(
        t.arange(n, dtype=t.int32), tuple(n if j == k else 1 for j in range(ndim(arr))))
        for k, n in enumerate(_shape(arr)))
    return _At(arr, index).set(values, mode=mode)


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, [edges per dimension]) of the N points of an (N, D) sample, each
    dimension binned as histogram_bin_edges bins it."""
    sample = _operand(sample)
    if weights is None:
        (sample,) = _promote(sample, to_inexact=True)
    else:
        weights = _operand(weights)
        if _shape(weights) != _shape(sample)[:1]:
            raise ValueError(at_user_line("should have one weight for each sample."))
        sample, weights = _promote_inexact(sample, weights)
    n, d = _shape(sample)
    if range is not None and (len(range) != d or builtins.any(
            r is not None and _np.shape(r)[0] != 2 for r in range)):
        raise ValueError(at_user_line(
            f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; "
            f"got range={range}"))
    try:
        per_dim = list(bins)
    except TypeError:  # one count for every dimension
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError(at_user_line("should be a bin for each dimension."))
    slots, edges = [], []
    for i in builtins.range(d):
        x = _ix(sample, (slice(None), i))
        e = histogram_bin_edges(x, per_dim[i], None if range is None else range[i])
        slot = searchsorted(e, x, side="right")
        slots.append(t.where(t.equal(x, _ix(e, -1)), t.subtract(slot, 1), slot))
        edges.append(e)
    nbins = tuple(_shape(e)[0] + 1 for e in edges)
    flat = t.ravel_multi_index(tuple(slots), nbins, mode="clip")
    hist = t.reshape(bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = _ix(hist, d * (slice(1, -1),))
    if density:
        hist = t.astype(hist, _t(sample).dtype)
        hist = t.divide(hist, t.sum(hist))
        for width in t.ix_(*[t.diff(e) for e in edges]):
            hist = t.divide(hist, width)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """histogramdd of the points (x, y); one array of bins serves both axes."""
    x, y = _operand(x), _operand(y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        bins = [t.asarray(bins)] * 2
    hist, edges = histogramdd(t.transpose(t.asarray([x, y])), bins, range, weights, density)
    return hist, edges[0], edges[1]


def _tile_to_size(a, n):
    """The 1-d a repeated (and cut) to length n."""
    return _ix(t.tile(a, -(-n // _shape(a)[0])), slice(None, n))


def _refuse_inplace(fn):
    raise ValueError(at_user_line(
        f"jnp.{fn} cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array."))


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the values v (cycled) at the flat indices ind; out-of-range indices are
    dropped by default, clipped or wrapped by mode."""
    if inplace:
        _refuse_inplace("put")
    arr, ind, v = (_operand(x) for x in (a, ind, v))
    ind, v = t.ravel(ind), t.ravel(v)
    if not (t.size(arr) and t.size(ind) and t.size(v)):
        return t.asarray(arr)
    v = _tile_to_size(v, t.size(ind))
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind, scatter_mode = t.clip(ind, 0, t.size(arr) - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, scatter_mode = t.remainder(ind, t.size(arr)), "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError(at_user_line("The 'raise' mode to jnp.put is not supported."))
    else:
        raise ValueError(at_user_line(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}"))
    return _At(arr, t.unravel_index(ind, _shape(arr))).set(v, mode=scatter_mode)


def place(arr, mask, vals, *, inplace=True):
    """arr with vals (cycled) written, in order, where mask is true."""
    data, mask, vals = (t.asarray(_operand(x)) for x in (arr, mask, vals))
    vals = t.ravel(vals)
    if inplace:
        _refuse_inplace("place")
    if t.size(data) != t.size(mask):
        raise ValueError(at_user_line("place: arr and mask must be the same size"))
    if not t.size(vals):
        raise ValueError(at_user_line("Cannot place values from an empty array"))
    if not t.size(data):
        return data
    n = t.size(mask)
    (where_,) = nonzero(t.ravel(mask), size=n, fill_value=n)
    out = _At(t.ravel(data), where_).set(_tile_to_size(vals, n), mode="drop")
    return t.reshape(out, _shape(data))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with val (cycled) on its main diagonal."""
    if inplace:
        raise NotImplementedError(at_user_line(
            "JAX arrays are immutable, must use inplace=False"))
    if wrap:
        raise NotImplementedError(at_user_line(
            "wrap=True is not implemented, must use wrap=False"))
    a, val = (t.asarray(_operand(x)) for x in (a, val))
    if ndim(a) < 2:
        raise ValueError(at_user_line("array must be at least 2-d"))
    if ndim(a) > 2 and builtins.any(n != _shape(a)[0] for n in _shape(a)[1:]):
        raise ValueError(at_user_line("All dimensions of input must be of equal length"))
    n = builtins.min(_shape(a))
    val = val if ndim(val) == 0 else _tile_to_size(t.ravel(val), n)
    return _At(a, t.diag_indices(n, ndim(a))).set(val)
